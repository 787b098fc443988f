"""engine.autograd.forward_ad: forward-mode AD with torch.autograd.forward_ad's API.

A dual tensor is a primal carrying a tangent at the open level (autograd/forward_grad.py); every op
applied to it computes its output's tangent too (ops/forward_mode.py). As in PyTorch 2.13, one
level is open at a time, and closing it drops every tangent.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..ops.tangents import tangent_of
from ..tensor import Tensor
from . import forward_grad
from .grad_mode import _DecoratorContextManager

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]


def enter_dual_level() -> int:
    """Open a forward grad level, used by default by the other functions here."""
    return forward_grad.enter_level()


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the level (only the latest), deleting every tangent made at it."""
    forward_grad.exit_level(level)


def _level(level: int | None) -> int:
    return forward_grad.level[0] if level is None else level


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(n) for n in t.shape) + "]"


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of `tensor` carrying `tangent` (as it is) at the level; backward differentiable."""
    level = _level(level)
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level "
            "exists, make sure to enter_dual_level() first."
        )
    if not tensor.is_floating_point():  # the engine has no complex dtypes
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not tangent.is_floating_point():
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if level != forward_grad.level[0]:
        raise RuntimeError("Invalid level given to _make_dual")
    if tangent_of(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
            f"level {level} is not supported."
        )
    if tangent.shape != tensor.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, "
            f"this is not supported. Tensor is of size {_sizes(tensor)} while the given forward gradient "
            f"is of size {_sizes(tangent)}."
        )
    if tangent.device != tensor.device:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different device than that of the original "
            f"Tensor, this is not supported. Tensor is on {tensor.device} while the given forward "
            f"gradient is on {tangent.device}."
        )
    dual = tensor.view(tensor.shape)
    forward_grad.set_tangent(dual, tangent)
    return dual


class UnpackedDualTensor(NamedTuple):
    """What `unpack_dual` returns: the primal, and the tangent (None when there is none)."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """`tensor`'s primal (a view without the tangent) and its tangent as it is; backward differentiable."""
    level = _level(level)
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if level != forward_grad.level[0]:
        raise RuntimeError("Invalid level given to _fw_primal")
    tangent = tangent_of(tensor)
    with forward_grad.suspended():
        primal = tensor.view(tensor.shape)
    return UnpackedDualTensor(primal, tangent)


class dual_level(_DecoratorContextManager):
    """Context manager (or decorator) in which forward AD happens; tangents are deleted on exit."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        exit_dual_level()
