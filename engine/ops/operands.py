"""The argument handling every family's functional API shares: operands (Python numbers stay
scalars, as torch's wrapped numbers), broadcasting checks, dims.
"""

from __future__ import annotations

import builtins
import numbers

from .. import backend
from ..tensor import Tensor, wrap
from . import creation
from .op import broadcast_error, check_same_device
from .pointwise import kernels as pointwise_kernels
from .promotion import result_type


def as_operand(x):
    """Tensors pass; Python numbers stay scalars (like torch's wrapped numbers); arrays wrap."""
    if isinstance(x, (Tensor, numbers.Number)):
        return x
    if backend.is_array(x):
        return wrap(x)
    return creation.tensor(x)


def broadcast_check(a, b) -> None:
    """Raise PyTorch's errors for two tensors that can't meet in one elementwise op."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        check_same_device(a, b)
        error = broadcast_error((a, b))
        if error is not None:
            raise error


def norm_dim(dim: int, ndim: int) -> int:
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def norm_dims(dim, ndim: int) -> tuple:
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (list, tuple)):
        return tuple(sorted({norm_dim(d, ndim) for d in dim}))
    return (norm_dim(dim, ndim),)


def with_number(a, number, typed: bool = True):
    """A tensor and a Python number as torch computes them: the tensor in the result dtype (an integer
    tensor meeting a float, a bool one meeting an int; these never require grad, so no node), and with
    `typed` an integer number as a scalar of that dtype (-3 wraps for uint8, as in torch)."""
    if a._data.dtype.kind == "f":  # a float tensor keeps its dtype whatever the number
        return a, number
    dt = result_type((a, number))
    if dt != a._data.dtype:
        a = wrap(a._data.astype(dt))
    return a, pointwise_kernels.typed_number(number, dt) if typed and dt.kind != "f" else number


def number_operands(a, b, typed: bool = True) -> tuple:
    """The two operands of a row taking a Python number on either side (`with_number`)."""
    if not isinstance(b, Tensor):
        return with_number(a, b, typed)
    if not isinstance(a, Tensor):
        b, a = with_number(b, a, typed)
    return a, b
