"""Adamax: torch.optim.Adamax's single-tensor update, in the same order of operations."""

from __future__ import annotations

from collections.abc import Iterable

from .. import backend
from .optimizer import Optimizer, as_scalar, bump, check_hyperparameters, lerp_


class Adamax(Optimizer):
    """m = lerp(m, g, 1 - b1); u = max(b2 u, |g| + eps); p -= lr / (1 - b1^t) * m / u (Adam in the infinity norm)."""

    def __init__(
        self,
        params: Iterable,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _step(self, group: dict) -> None:
        lr, (beta1, beta2), eps = as_scalar(group["lr"]), group["betas"], group["eps"]
        weight_decay = group["weight_decay"]
        for p, grad in self._gradients(group):
            state = self._state(p, group, ("exp_avg", "exp_inf"))
            param, exp_avg, exp_inf = p._data, state["exp_avg"]._data, state["exp_inf"]._data
            xp = backend.xp_of(param)
            state["step"]._data += 1
            if weight_decay != 0:
                grad = grad + weight_decay * param
            lerp_(exp_avg, grad, 1 - beta1)
            exp_inf *= beta2
            norm = xp.abs(grad)
            norm += eps
            xp.maximum(exp_inf, norm, out=exp_inf)
            clr = lr / (1 - beta1 ** float(state["step"]._data))
            param += -clr * exp_avg / exp_inf
            bump(p, *state.values())
