"""engine.optim.lr_scheduler: torch's learning-rate schedules, with the same values step for step.

A scheduler rewrites `group["lr"]` of its optimizer's param groups. Most schedules are
chainable: `get_lr` derives the next rate from the group's current one, so two schedulers on
one optimizer compose, as in torch; `step(epoch)` (deprecated in torch, with its warning) uses
the closed form where the schedule has one. As in torch, creating a scheduler takes its first
step, and a first `scheduler.step()` before any `optimizer.step()` warns that the first value
of the schedule was skipped; the optimizer's `step` is wrapped to notice.
"""

from __future__ import annotations

import functools
import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from ..tensor import Tensor
from .optimizer import Optimizer

__all__ = [
    "CosineAnnealingLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "OneCycleLR",
    "ReduceLROnPlateau",
    "StepLR",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)
OVERRIDDEN_STEP_WARNING = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before "
    "`lr_scheduler.step()`. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)
STEP_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
    "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
    "will result in PyTorch skipping the first value of the learning rate schedule. "
    "See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)
GET_LR_WARNING = "To get the last learning rate computed by the scheduler, please use `get_last_lr()`."


def _copy(value):
    """A learning rate as a value that does not alias the group's (a Tensor lr is cloned)."""
    return value.clone() if isinstance(value, Tensor) else value


def _group_values(optimizer: Optimizer, key: str) -> list:
    return [_copy(group[key]) for group in optimizer.param_groups]


def _set_group_value(group: dict, key: str, value) -> None:
    """group[key] = value, written into a Tensor lr in place so that it keeps its identity."""
    if isinstance(group[key], Tensor):
        group[key].fill_(value.item() if isinstance(value, Tensor) else value)
    else:
        group[key] = value


def _per_group(name: str, optimizer: Optimizer, value) -> list:
    """One value per param group: a list of exactly that many, or one value for all."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(value)} values, param_groups has {len(optimizer.param_groups)}."
            )
        return [_copy(v) for v in value]
    return [_copy(value) for _ in optimizer.param_groups]


def _check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _record_optimizer_steps(optimizer: Optimizer) -> None:
    """Wrap `optimizer.step` (once) so that calling it sets `optimizer._opt_called`."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    method = optimizer.step.__func__
    owner = weakref.ref(optimizer)  # no cycle through the instance's own attribute

    @functools.wraps(method)
    def step(*args, **kwargs):
        opt = owner()
        opt._opt_called = True
        return method(opt, *args, **kwargs)

    step._wrapped_by_lr_sched = True
    optimizer.step = step


class LRScheduler:
    """Base class: `get_lr` gives the next rates, `step` applies them; `get_last_lr`, `state_dict`."""

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", _copy(group["lr"]))
            elif "initial_lr" not in group:
                raise KeyError(
                    f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler with "
                    "last_epoch >= 0.\n"
                    "This typically happens when:\n"
                    "1. You're trying to resume training from a checkpoint but haven't properly loaded the "
                    "optimizer state\n"
                    "2. You're using last_epoch >= 0 for a fresh training run (not recommended)"
                )
        self.base_lrs: list = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _record_optimizer_steps(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list:
        """The rates the last step set, one per param group."""
        return self._last_lr

    def get_lr(self) -> list:
        raise NotImplementedError

    def _warn_if_called_by_user(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(GET_LR_WARNING, UserWarning, stacklevel=3)

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to `epoch`, deprecated) and write the new rates into the optimizer."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(OVERRIDDEN_STEP_WARNING, UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(STEP_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


_LRScheduler = LRScheduler  # torch's old name


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch), one function for all groups or one per group."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable | list, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(
                    f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"
                )
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """As the base's, with each lambda's `__dict__` when it is a callable object (functions are not saved)."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy() for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)

    def get_lr(self) -> list:
        self._warn_if_called_by_user()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class StepLR(LRScheduler):
    """lr *= gamma every `step_size` epochs."""

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_called_by_user()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr *= gamma at each milestone (twice at a milestone given twice)."""

    def __init__(
        self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_called_by_user()
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """lr goes linearly from start_factor * initial_lr to end_factor * initial_lr over `total_iters` epochs."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_called_by_user()
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        change = self.end_factor - self.start_factor
        factor = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        done = min(self.total_iters, self.last_epoch)
        change = self.end_factor - self.start_factor
        return [base * (self.start_factor + change * done / self.total_iters) for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr *= gamma every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_called_by_user()
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr follows half a cosine from initial_lr down to eta_min over T_max epochs (and back up, periodically)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_called_by_user()
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:  # resumed at last_epoch: where the cosine is there
            height = 1 + math.cos(self.last_epoch * math.pi / self.T_max)
            return [self.eta_min + (base - self.eta_min) * height / 2 for base in self.base_lrs]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:  # the bottom of the cosine
            rise = 1 - math.cos(math.pi / self.T_max)
            return [
                group["lr"] + (base - self.eta_min) * rise / 2
                for base, group in zip(self.base_lrs, groups, strict=True)
            ]
        ratio = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / (
            1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)
        )
        return [ratio * (group["lr"] - self.eta_min) + self.eta_min for group in groups]

    def _get_closed_form_lr(self) -> list:
        return [
            self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base in self.base_lrs
        ]


class ReduceLROnPlateau(LRScheduler):
    """lr *= factor once the metric given to `step(metric)` has not improved for `patience` epochs."""

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: list[float] | float = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record this epoch's metric; reduce the rates after `patience` epochs without improvement."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new param group "
                    "being added to the optimizer. Please modify the `min_lrs` field to match the length of the "
                    "`optimizer` param groups."
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                _set_group_value(group, "lr", new)

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.threshold_mode == "rel":
            return (
                a < best * (1.0 - self.threshold) if self.mode == "min" else a > best * (self.threshold + 1.0)
            )
        return a < best - self.threshold if self.mode == "min" else a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


class OneCycleLR(LRScheduler):
    """The 1cycle policy: lr rises from max_lr / div_factor to max_lr over pct_start of `total_steps`, then
    anneals to initial_lr / final_div_factor (three phases: back to initial_lr first); momentum (or beta1)
    moves the opposite way between max_momentum and base_momentum."""

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        self.total_steps = self._count_steps(total_steps, epochs, steps_per_epoch)
        first = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                _phase(first, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(
                    float(2 * pct_start * self.total_steps) - 2,
                    "max_lr",
                    "initial_lr",
                    "base_momentum",
                    "max_momentum",
                ),
                _phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                _phase(first, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            tops = _per_group("max_momentum", optimizer, max_momentum)
            bases = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for top, base, group in zip(tops, bases, optimizer.param_groups, strict=True):
                    self._set_momentum(group, top)
                    group["max_momentum"] = top
                    group["base_momentum"] = base
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _count_steps(total_steps, epochs, steps_per_epoch) -> int:
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            return total_steps
        if epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            return epochs * steps_per_epoch
        raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")

    def _set_momentum(self, group: dict, value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list:
        self._warn_if_called_by_user()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"Tried to step {step} times. The specified number of total steps is {self.total_steps}"
            )
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                        )
                        self._set_momentum(group, momentum)
                    break
                start = end
        return lrs


def _phase(end_step: float, start_lr: str, end_lr: str, start_momentum: str, end_momentum: str) -> dict:
    """One phase of OneCycleLR: where it ends and which group keys it anneals between."""
    return {
        "end_step": end_step,
        "start_lr": start_lr,
        "end_lr": end_lr,
        "start_momentum": start_momentum,
        "end_momentum": end_momentum,
    }
