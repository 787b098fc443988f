"""Activations: one row each where PyTorch has a node of its own, compositions where ATen composes."""

from __future__ import annotations

import warnings

from ...ops import derivatives as D
from ...ops import operands
from ...ops.inplace import apply_inplace
from ...ops.op import apply_op, kept_box
from ...ops.pointwise import core as pointwise_core
from ...ops.reductions import core as reductions_core
from ...tensor import Tensor
from ._utils import check_kernel_dtype


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
    # Exact GELU's normal cdf, kept from the forward for the backward when there will be one.
    cdf = kept_box(input) if approximate == "none" else None
    return apply_op(D.GELU, (input,), (approximate, cdf))


def tanh(input: Tensor) -> Tensor:
    return pointwise_core.tanh(input)


def sigmoid(input: Tensor) -> Tensor:
    return pointwise_core.sigmoid(input)


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
    return reductions_core.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return reductions_core.log_softmax(input, dim, dtype)


# ----------------------------------------------------- activations as rows of the table

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _pointwise(kernel: str, op, input: Tensor, attrs: tuple = (), inplace: bool = False, op_=None) -> Tensor:
    """A float-only row, out of place or (with `op_`, PyTorch's in-place node where it has one) in place."""
    check_kernel_dtype(kernel, input)
    if inplace:
        return apply_inplace(input, op if op_ is None else op_, (), attrs)
    return apply_op(op, (input,), attrs)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _pointwise("silu", D.SILU, input, inplace=inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _pointwise("mish", D.MISH, input, inplace=inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _pointwise("hardsigmoid", D.HARDSIGMOID, input, inplace=inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _pointwise("hardswish", D.HARDSWISH, input, inplace=inplace)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype.name == "bool":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if inplace:
        return apply_inplace(input, D.HARDTANH, (), (min_val, max_val))
    return apply_op(D.HARDTANH, (input,), (min_val, max_val))


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _pointwise("elu", D.ELU, input, (alpha, 1.0, 1.0), inplace, D.ELU_)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _pointwise("elu", D.ELU, input, (SELU_ALPHA, SELU_SCALE, 1.0), inplace, D.ELU_)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _pointwise("elu", D.CELU, input, (alpha,), inplace, D.CELU_)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def logsigmoid(input: Tensor) -> Tensor:
    return _pointwise("log_sigmoid", D.LOG_SIGMOID, input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return _pointwise("softplus", D.SOFTPLUS, input, (beta, threshold))


def glu(input: Tensor, dim: int = -1) -> Tensor:
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = operands.norm_dim(dim, input.dim())
    check_kernel_dtype("glu", input)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    return apply_op(D.GLU, (input,), (d,))


def softsign(input: Tensor) -> Tensor:
    """input / (|input| + 1), composed as ATen does (DivBackward0, AddBackward0, AbsBackward0)."""
    if input.dtype.name == "bool":
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return input / (pointwise_core.abs(input) + 1)


def tanhshrink(input: Tensor) -> Tensor:
    return input - pointwise_core.tanh(input)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-input): SoftmaxBackward0 over NegBackward0, as in PyTorch."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return reductions_core.softmax(-input, dim, dtype)
