"""SGD with momentum, dampening, Nesterov and weight decay: torch.optim.SGD's update, step for step."""

from __future__ import annotations

from collections.abc import Iterable

from ..tensor import wrap
from .optimizer import Optimizer


class SGD(Optimizer):
    """g += wd * p; buf = momentum * buf + (1 - dampening) * g (buf = g at first); p -= lr * (g + momentum * buf
    if nesterov else buf)."""

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)

    def _step(self, group: dict) -> None:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        for p, grad in self._gradients(group):
            if weight_decay != 0:
                grad = grad + weight_decay * p._data
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = wrap(grad.copy())
                else:
                    b = buf._data
                    b *= momentum
                    b += grad if dampening == 0 else (1 - dampening) * grad
                    buf._vc.version += 1
                grad = grad + momentum * buf._data if nesterov else buf._data
            p._data += -lr * grad
            p._vc.version += 1
