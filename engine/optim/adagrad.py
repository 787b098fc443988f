"""Adagrad: torch.optim.Adagrad's single-tensor update, in the same order of operations."""

from __future__ import annotations

from collections.abc import Iterable

from .. import backend
from ..tensor import wrap
from .optimizer import Optimizer, as_scalar, bump, check_hyperparameters, step_counter


class Adagrad(Optimizer):
    """s += g^2; p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps), s starting at initial_accumulator_value."""

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_hyperparameters(
            lr=lr,
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            eps=eps,
        )
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:  # unlike the others, Adagrad makes its state up front
            for p in group["params"]:
                self._init_state(p, group["fused"])

    def _init_state(self, p, fused=False) -> dict:
        state = self.state[p]
        if not state:
            state["step"] = step_counter(like=p._data, fused=True) if fused else step_counter()
            # torch fills the sum from the constructor's value, whatever the parameter's group says
            initial = self.defaults["initial_accumulator_value"]
            state["sum"] = wrap(backend.xp_of(p._data).full_like(p._data, initial))
        return state

    def _step(self, group: dict) -> None:
        lr, lr_decay, eps, weight_decay = (
            as_scalar(group["lr"]),
            group["lr_decay"],
            group["eps"],
            group["weight_decay"],
        )
        for p, grad in self._gradients(group):
            state = self._init_state(p, group["fused"])
            param, state_sum = p._data, state["sum"]._data
            state["step"]._data += 1
            step = float(state["step"]._data)
            if weight_decay != 0:
                grad = grad + weight_decay * param
            clr = lr / (1 + (step - 1) * lr_decay)
            state_sum += 1 * grad * grad
            std = backend.xp_of(param).sqrt(state_sum)
            std += eps
            param += -clr * grad / std
            bump(p, *state.values())
