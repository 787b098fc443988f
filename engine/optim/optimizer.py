"""Optimizer: parameter groups, per-parameter state, zero_grad and state_dict, as torch.optim's.

Subclasses implement `step`; updates are written into the parameters' arrays in place
(no graph, as torch's steps run under no_grad) and bump the parameters' versions.
"""

from __future__ import annotations

import copy
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

import numpy

from .. import backend
from ..autograd import grad_mode
from ..nn.parameter import zero_grads
from ..tensor import Tensor, typename, wrap

# How torch.optim names each hyperparameter in its "Invalid ...: value" errors.
_LABELS = {"lr": "learning rate", "eps": "epsilon value"}


def check_hyperparameters(**values) -> None:
    """torch.optim's argument checks, in the order given: each value >= 0, betas in [0, 1), rho in [0, 1]."""
    for name, value in values.items():
        if name == "betas":
            for i, beta in enumerate(value):
                if not 0.0 <= beta < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
            continue
        if name == "lr" and isinstance(value, Tensor) and value.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= value or (name == "rho" and value > 1.0):
            raise ValueError(f"Invalid {_LABELS.get(name, name + ' value')}: {value}")


def as_scalar(value):
    """A hyperparameter as a number; a Tensor lr as a numpy scalar of its dtype, so that the step's scalar
    arithmetic runs in that precision, as torch's does on the 0-d tensor."""
    return backend.to_numpy(value._data)[()] if isinstance(value, Tensor) else value


def step_counter(value: float = 0.0, like=None, fused: bool = False) -> Tensor:
    """The 0-d `step` state: float64 when that is the default dtype, else float32 (always float32 when
    fused), as torch; on the CPU, or beside the parameter array `like` (capturable, fused)."""
    default = backend.get_default_dtype() is backend.float64 and not fused
    dtype = numpy.float64 if default else numpy.float32
    if like is None:
        return wrap(numpy.array(value, dtype=dtype))
    return wrap(backend.xp_of(like).full((), value, dtype=dtype))


def lerp_(target, end, weight: float) -> None:
    """target.lerp_(end, weight), as ATen's CPU kernel computes it (exact at both ends)."""
    if weight < 0.5:
        target += weight * (end - target)
    else:
        target[...] = end - (end - target) * (1 - weight)


def bump(*tensors: Tensor) -> None:
    """Record an in-place change of each tensor (what torch's in-place ops do to `_version`)."""
    for t in tensors:
        t._vc.version += 1


class Optimizer:
    """Base class: holds `param_groups` (dicts with "params" and hyperparameters) and `state`."""

    def __init__(self, params: Iterable, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                + typename(params)
            )
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering of tensors "
                "in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are missing"
                )
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is " + typename(param)
                )
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        if len(tensors) != len(set(tensors)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will cause an "
                "error; see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        seen = set()
        for group in self.param_groups:
            seen.update(group["params"])
        if not seen.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Grads become None (the default, as in PyTorch 2.x), or are zeroed in place."""
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def _step(self, group: dict) -> None:
        raise NotImplementedError

    # What `_state` makes and checks; torch's words for its capturable check, per optimizer.
    _STATE_SCALARS: dict[str, float] = {}  # 0-d state after "step", with its first value
    _CAPTURABLE_STATE = "params and state_steps"
    _CAPTURABLE_DEVICES = "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']"

    def _state(self, p: Tensor, group: dict, buffers) -> dict:
        """p's state for this step, made on first use: a 0-d "step" (beside p when capturable), the
        `_STATE_SCALARS`, then zero `buffers` shaped like p. capturable=True needs p on the GPU, as in torch."""
        state = self.state[p]
        capturable = group.get("capturable", False)
        if not state:
            like = p._data if capturable else None
            state["step"] = step_counter(like=like)
            for name, value in self._STATE_SCALARS.items():
                state[name] = step_counter(value, like)
            for name in buffers:
                state[name] = wrap(backend.xp_of(p._data).zeros_like(p._data))
        if capturable and p.device.type != "cuda":
            raise AssertionError(
                f"If capturable=True, {self._CAPTURABLE_STATE} must be on supported devices: "
                f"{self._CAPTURABLE_DEVICES}."
            )
        return state

    @staticmethod
    def _gradients(group: dict):
        """(parameter, its gradient array) for each parameter that has a grad, negated under maximize."""
        maximize = group["maximize"]
        for p in group["params"]:
            if p._grad is not None:
                grad = p._grad._data
                yield p, (-grad if maximize else grad)

    def step(self, closure: Callable[[], Any] | None = None):
        """One update of every parameter that has a grad; `closure` re-evaluates the loss first."""
        if any(group.get("differentiable") for group in self.param_groups):
            raise NotImplementedError(
                "differentiable=True is not supported: engine.optim updates parameters in place without "
                "recording the step for autograd"
            )
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        with grad_mode.no_grad():
            for group in self.param_groups:
                self._step(group)
        return loss

    # -- state dict -------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}, indices in group order."""
        mapping: dict[int, int] = {}
        start = 0

        def pack(group: dict) -> dict:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )

        # the step's dtype and place: fused and capturable keep it beside the parameter, in float32
        beside = {i for g in saved_groups if g.get("fused") or g.get("capturable") for i in g["params"]}

        def cast(param, value, key=None, index=None):
            if isinstance(value, Tensor):
                if key == "step":  # never cast otherwise
                    if index in beside:
                        return value.to(dtype=backend.float32, device=param.device)
                    return value
                if param.is_floating_point():
                    return value.to(dtype=param.dtype, device=param.device)
                return value.to(device=param.device)
            if isinstance(value, dict):
                return {k: cast(param, v, k, index) for k, v in value.items()}
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v, index=k)
            else:
                state[k] = v
        for group, new in zip(groups, saved_groups):
            new["params"] = group["params"]
            if "param_names" in group and "param_names" not in new:
                new["param_names"] = group["param_names"]
        self.state = state
        self.param_groups = saved_groups

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"
