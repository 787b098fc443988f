"""Activations: relu, leaky_relu, gelu, tanh, sigmoid, softmax, log_softmax."""

from __future__ import annotations

import warnings

from ...ops import derivatives as D
from ...ops import functions
from ...ops.inplace import apply_inplace
from ...ops.op import apply_op
from ...tensor import Tensor


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return apply_inplace(input, D.RELU) if inplace else apply_op(D.RELU, (input,))


def relu_(input: Tensor) -> Tensor:
    return apply_inplace(input, D.RELU)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    if inplace:
        return apply_inplace(input, D.LEAKY_RELU, (), (negative_slope,))
    return apply_op(D.LEAKY_RELU, (input,), (negative_slope,))


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return apply_op(D.GELU, (input,), (approximate,))


def tanh(input: Tensor) -> Tensor:
    return functions.tanh(input)


def sigmoid(input: Tensor) -> Tensor:
    return functions.sigmoid(input)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's implicit dim (deprecated, with its warning): 0 for 0-, 1- and 3-D input, else 1."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. "
        "Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return functions.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return functions.log_softmax(input, dim, dtype)
