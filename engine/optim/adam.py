"""Adam and AdamW: torch.optim.Adam's single-tensor update, in the same order of operations."""

from __future__ import annotations

from collections.abc import Iterable

import numpy

from .. import backend
from ..tensor import wrap
from .optimizer import Optimizer, bump, check_hyperparameters, lerp_


class Adam(Optimizer):
    """m = lerp(m, g, 1 - b1); v = b2 v + (1 - b2) g^2; p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).

    weight_decay adds wd * p to g (Adam) or first scales p by 1 - lr * wd (AdamW, decoupled).
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def _init_state(self, p, amsgrad: bool) -> dict:
        state = self.state[p]
        if not state:
            xp = backend.xp_of(p._data)
            state["step"] = wrap(numpy.array(0.0, dtype=numpy.float32))
            state["exp_avg"] = wrap(xp.zeros_like(p._data))
            state["exp_avg_sq"] = wrap(xp.zeros_like(p._data))
            if amsgrad:
                state["max_exp_avg_sq"] = wrap(xp.zeros_like(p._data))
        return state

    def _step(self, group: dict) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
        decoupled = group["decoupled_weight_decay"]
        for p, grad in self._gradients(group):
            state = self._init_state(p, amsgrad)
            step_t, exp_avg, exp_avg_sq = state["step"], state["exp_avg"]._data, state["exp_avg_sq"]._data
            step_t._data += 1
            param = p._data
            if weight_decay != 0:
                if decoupled:
                    param *= 1 - lr * weight_decay
                else:
                    grad = grad + weight_decay * param
            lerp_(exp_avg, grad, 1 - beta1)
            exp_avg_sq *= beta2
            exp_avg_sq += (1 - beta2) * grad * grad
            step = float(step_t._data)
            bias_correction1 = 1 - beta1**step
            bias_correction2_sqrt = (1 - beta2**step) ** 0.5
            xp = backend.xp_of(param)
            if amsgrad:
                max_sq = state["max_exp_avg_sq"]._data
                xp.maximum(max_sq, exp_avg_sq, out=max_sq)
                denom = xp.sqrt(max_sq) / bias_correction2_sqrt
            else:
                denom = xp.sqrt(exp_avg_sq) / bias_correction2_sqrt
            denom += eps
            param += (-(lr / bias_correction1) * exp_avg) / denom
            bump(p, state["exp_avg"], state["exp_avg_sq"], step_t)


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2), as torch.optim.AdamW."""

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )
