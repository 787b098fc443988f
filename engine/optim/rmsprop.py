"""RMSprop: torch.optim.RMSprop's single-tensor update, in the same order of operations."""

from __future__ import annotations

from collections.abc import Iterable

from .. import backend
from .optimizer import Optimizer, as_scalar, bump, check_hyperparameters, lerp_


class RMSprop(Optimizer):
    """v = alpha v + (1 - alpha) g^2 (minus the squared running mean of g when centered);
    p -= lr g / (sqrt(v) + eps), or through a momentum buffer b = momentum b + g / (sqrt(v) + eps)."""

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyperparameters(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    @staticmethod
    def _buffers(group: dict) -> list[str]:
        return (
            ["square_avg"] + ["momentum_buffer"] * (group["momentum"] > 0) + ["grad_avg"] * group["centered"]
        )

    def _step(self, group: dict) -> None:
        lr, alpha, eps = as_scalar(group["lr"]), group["alpha"], group["eps"]
        weight_decay, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
        for p, grad in self._gradients(group):
            state = self._state(p, group, self._buffers(group))
            param, square_avg = p._data, state["square_avg"]._data
            xp = backend.xp_of(param)
            state["step"]._data += 1
            if weight_decay != 0:
                grad = grad + weight_decay * param
            square_avg *= alpha
            square_avg += (1 - alpha) * grad * grad
            if centered:
                grad_avg = state["grad_avg"]._data
                lerp_(grad_avg, grad, 1 - alpha)
                avg = xp.sqrt(square_avg + -1 * grad_avg * grad_avg)
            else:
                avg = xp.sqrt(square_avg)
            avg += eps
            if momentum > 0:
                buf = state["momentum_buffer"]._data
                buf *= momentum
                buf += grad / avg
                param += -lr * buf
            else:
                param += -lr * grad / avg
            bump(p, *state.values())
