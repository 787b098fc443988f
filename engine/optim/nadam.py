"""NAdam: torch.optim.NAdam's single-tensor update, in the same order of operations."""

from __future__ import annotations

from collections.abc import Iterable

from .. import backend
from .optimizer import Optimizer, as_scalar, bump, check_hyperparameters, lerp_


class NAdam(Optimizer):
    """Adam with Nesterov momentum: mu_t = b1 (1 - 0.96^(t psi) / 2), the update mixes g and m with
    -lr (1 - mu_t) / (1 - prod mu) and -lr mu_{t+1} / (1 - prod mu * mu_{t+1}), over sqrt(v / (1 - b2^t)) + eps."""

    _STATE_SCALARS = {"mu_product": 1.0}  # a 0-d tensor in the step's dtype, as torch keeps it
    _CAPTURABLE_STATE = "params, mu_products and state_steps"

    def __init__(
        self,
        params: Iterable,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyperparameters(
            lr=lr, eps=eps, betas=betas, weight_decay=weight_decay, momentum_decay=momentum_decay
        )
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _step(self, group: dict) -> None:
        lr, (beta1, beta2), eps = as_scalar(group["lr"]), group["betas"], group["eps"]
        weight_decay, momentum_decay = group["weight_decay"], group["momentum_decay"]
        decoupled = group["decoupled_weight_decay"]
        for p, grad in self._gradients(group):
            state = self._state(p, group, ("exp_avg", "exp_avg_sq"))
            param, exp_avg, exp_avg_sq = p._data, state["exp_avg"]._data, state["exp_avg_sq"]._data
            mu_product = state["mu_product"]._data
            state["step"]._data += 1
            step = float(state["step"]._data)
            bias_correction2 = 1 - beta2**step
            if weight_decay != 0:
                if decoupled:
                    param *= 1 - lr * weight_decay
                else:
                    grad = grad + weight_decay * param
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product *= mu  # in the 0-d tensor's own precision
            lerp_(exp_avg, grad, 1 - beta1)
            exp_avg_sq *= beta2
            exp_avg_sq += (1 - beta2) * grad * grad
            denom = backend.xp_of(param).sqrt(exp_avg_sq / bias_correction2)
            product = float(mu_product)
            product_next = product * mu_next
            denom += eps
            param += (-lr * (1.0 - mu) / (1.0 - product)) * grad / denom
            param += ((-lr * mu_next) / (1.0 - product_next)) * exp_avg / denom
            bump(p, *state.values())
