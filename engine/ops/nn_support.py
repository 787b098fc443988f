"""What engine.nn's rows need from the ops layer: ops PyTorch has as torch.<name> / Tensor.<name>
(clamp_min), and the Tensor methods TensorMath calls to record an nn backward as one op.

Kept apart from functions.py, with the nn rows' own needs only; tensor_methods.py imports it,
so its methods are installed with the rest.
"""

from __future__ import annotations

import numpy

from .. import backend
from ..tensor import Tensor
from . import derivatives as D
from .api import exported, public
from .functions import as_operand, broadcast_check, norm_dim
from .inplace import apply_inplace
from .op import apply_op
from .promotion import result_type


@public
def clamp_min(input, min):
    """max(input, min): ClampMinBackward0 for a number bound, ClampMinBackward1 for a Tensor one."""
    if isinstance(min, Tensor):
        broadcast_check(input, min)
        return apply_op(D.CLAMP_MIN_TENSOR, (input, min))
    dtype = result_type((input, min))
    if dtype != input._data.dtype:  # an integer tensor and a float bound: torch's result type
        input = input.to(backend.dtype_of(numpy.empty(0, dtype)))
    return apply_op(D.CLAMP_MIN, (input,), (min,))


@public(function=False)
def clamp_min_(input, min):
    if isinstance(min, Tensor):
        return apply_inplace(input, D.CLAMP_MIN_TENSOR, (min,))
    return apply_inplace(input, D.CLAMP_MIN, (), (min,))


def add_scalar(input, other):
    """input + other for a number `other`, recorded as ATen's add.Scalar (AddBackward1)."""
    return apply_op(D.ADD_SCALAR, (as_operand(input),), (other,))


def sub_scalar(input, other):
    """input - other for a number `other`, recorded as ATen's sub.Scalar (SubBackward1)."""
    return apply_op(D.SUB_SCALAR, (as_operand(input),), (other,))


def safe_softmax(input, dim):
    """softmax that gives 0 along a row of -inf (SafeSoftmaxBackward0), as attention uses it."""
    return apply_op(D.SAFE_SOFTMAX, (input,), (norm_dim(dim, input.dim()),))


__all__ = exported(__name__)
