"""Adadelta: torch.optim.Adadelta's single-tensor update, in the same order of operations."""

from __future__ import annotations

from collections.abc import Iterable

from .. import backend
from .optimizer import Optimizer, as_scalar, bump, check_hyperparameters


class Adadelta(Optimizer):
    """v = rho v + (1 - rho) g^2; d = sqrt(u + eps) / sqrt(v + eps) * g; u = rho u + (1 - rho) d^2; p -= lr d."""

    _CAPTURABLE_DEVICES = "['cuda', 'xpu', 'hpu', 'privateuseone']"

    def __init__(
        self,
        params: Iterable,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyperparameters(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _step(self, group: dict) -> None:
        lr, rho, eps, weight_decay = as_scalar(group["lr"]), group["rho"], group["eps"], group["weight_decay"]
        for p, grad in self._gradients(group):
            state = self._state(p, group, ("square_avg", "acc_delta"))
            param, square_avg, acc_delta = p._data, state["square_avg"]._data, state["acc_delta"]._data
            xp = backend.xp_of(param)
            state["step"]._data += 1
            if weight_decay != 0:
                grad = grad + weight_decay * param
            square_avg *= rho
            square_avg += (1 - rho) * grad * grad
            std = xp.sqrt(square_avg + eps)
            delta = xp.sqrt(acc_delta + eps)
            delta /= std
            delta *= grad
            acc_delta *= rho
            acc_delta += (1 - rho) * delta * delta
            param += -lr * delta
            bump(p, *state.values())
