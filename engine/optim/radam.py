"""RAdam: torch.optim.RAdam's single-tensor update, in the same order of operations."""

from __future__ import annotations

from collections.abc import Iterable

from .. import backend
from .optimizer import Optimizer, as_scalar, bump, check_hyperparameters, lerp_


class RAdam(Optimizer):
    """Rectified Adam: while the variance estimate is unreliable (rho_t <= 5) the step is SGD with momentum,
    p -= lr m / (1 - b1^t); after, Adam's step scaled by the rectification term r_t."""

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _step(self, group: dict) -> None:
        lr, (beta1, beta2), eps = as_scalar(group["lr"]), group["betas"], group["eps"]
        weight_decay, decoupled = group["weight_decay"], group["decoupled_weight_decay"]
        for p, grad in self._gradients(group):
            state = self._state(p, group, ("exp_avg", "exp_avg_sq"))
            param, exp_avg, exp_avg_sq = p._data, state["exp_avg"]._data, state["exp_avg_sq"]._data
            state["step"]._data += 1
            step = float(state["step"]._data)
            if weight_decay != 0:
                if decoupled:
                    param *= 1 - lr * weight_decay
                else:
                    grad = grad + weight_decay * param
            lerp_(exp_avg, grad, 1 - beta1)
            exp_avg_sq *= beta2
            exp_avg_sq += (1 - beta2) * grad * grad
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            corrected = exp_avg / bias_correction1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
            if rho_t > 5.0:
                denom = backend.xp_of(param).sqrt(exp_avg_sq)
                denom += eps
                adaptive_lr = 1 / denom * bias_correction2**0.5  # torch's scalar / tensor: reciprocal, then *
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                param += -1.0 * (corrected * lr * adaptive_lr * rect)
            else:
                param += -1.0 * (corrected * lr)
            bump(p, *state.values())
