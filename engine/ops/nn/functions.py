"""The nn family's functional API outside engine.nn.functional: clamp_min (torch.<name> and
Tensor.<name>), add/sub of a number recorded as ATen's Scalar overloads, and the ops TensorMath
records an nn backward with (im2col, col2im, safe_softmax).
"""

from __future__ import annotations

import numpy

from ... import backend
from ...tensor import Tensor
from .. import derivatives as D
from ..api import exported, public
from ..inplace import apply_inplace
from ..op import apply_op
from ..operands import as_operand, broadcast_check, norm_dim
from ..promotion import result_type


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


def im2col(x, kernel, stride, pads, dilation):
    """Sliding blocks as columns (Im2ColBackward0); F.unfold after its argument checks."""
    return apply_op(D.IM2COL, (x,), (tuple(x.shape), kernel, stride, pads, dilation))


def col2im(cols, shape, kernel, stride, pads, dilation):
    """Columns added back into an image of `shape` (Col2ImBackward0), im2col's adjoint."""
    return apply_op(D.COL2IM, (cols,), (tuple(shape), kernel, stride, pads, dilation))


__all__ = exported(__name__)
