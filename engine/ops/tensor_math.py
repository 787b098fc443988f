"""The math namespace formulas run against under create_graph: Tensors, every step an op.

The same formulas run on raw arrays through namespaces.ArrayMath. TensorMath calls the ops
themselves, so it sits above them; the executor, below, is handed it once (namespaces.py).
"""

from __future__ import annotations

import numpy

from .. import backend
from ..tensor import Tensor, wrap
from . import derivatives as D
from .linalg import functions as linalg
from .namespaces import array_math, overlaps, sum_to_dims, view_positions
from .nn import functions as nn_functions
from .op import apply_op, tied_to
from .pointwise import core as pointwise_core
from .shaping import core as shaping_core


class TensorMath:
    """Formulas on Tensors: every step is an op, so the backward is itself differentiable."""

    __slots__ = ()

    @staticmethod
    def exp(x):
        return x.exp()

    @staticmethod
    def log(x):
        return x.log()

    @staticmethod
    def log1p(x):
        return x.log1p()

    @staticmethod
    def sin(x):
        return x.sin()

    @staticmethod
    def cos(x):
        return x.cos()

    @staticmethod
    def sign(x):
        return x.sign()

    @staticmethod
    def tanh(x):
        return x.tanh()

    @staticmethod
    def sigmoid(x):
        return x.sigmoid()

    @staticmethod
    def erf(x):
        return x.erf()

    @staticmethod
    def softmax(x, dim):
        return nn_functions.safe_softmax(x, dim)

    @staticmethod
    def erfinv(x):
        return x.erfinv()

    @staticmethod
    def sinh(x):
        return x.sinh()

    @staticmethod
    def cosh(x):
        return x.cosh()

    @staticmethod
    def rsqrt(x):
        return x.rsqrt()

    @staticmethod
    def isfinite(x):
        return x.isfinite()

    @staticmethod
    def xlogy(x, y):
        return x.xlogy(y)

    @staticmethod
    def div_floor(a, b):
        return a.div(b, rounding_mode="floor")

    @staticmethod
    def div_trunc(a, b):
        return a.div(b, rounding_mode="trunc")

    @staticmethod
    def unfold(x, kernel, stride, pads, dilation):
        return nn_functions.im2col(x, kernel, stride, pads, dilation)

    @staticmethod
    def fold(cols, shape, kernel, stride, pads, dilation):
        return nn_functions.col2im(cols, shape, kernel, stride, pads, dilation)

    @staticmethod
    def where(cond, a, b):
        """`a` where `cond`, else `b`; one of the two is a Tensor (a gradient), the other may be a number."""
        if isinstance(a, Tensor):
            return a.where(cond, b)
        return b.where(~cond, a)

    @staticmethod
    def threshold_backward(g, x, threshold):
        return pointwise_core.threshold_backward(g, x, threshold)

    @staticmethod
    def tie(grad, x, op):
        """grad recorded as depending on x too (derivative zero), by `op` (op.tied_to_self)."""
        return tied_to(grad, x, op)

    @staticmethod
    def leaky_relu_backward(g, x, negative_slope):
        return pointwise_core.leaky_relu_backward(g, x, negative_slope)

    @staticmethod
    def slice_backward(g, shape, key):
        """g placed at a slice of zeros (SliceBackwardBackward0, as torch records slice_backward)."""
        return apply_op(D.SLICE_GRAD, (g,), (tuple(shape), key, True))

    @staticmethod
    def select_backward(g, shape, key):
        return apply_op(D.SELECT_GRAD, (g,), (tuple(shape), key, True))

    @staticmethod
    def div_scalar(x, number):
        """x / a Python number, recorded as torch's div.Scalar (DivBackward1), as its formulas divide."""
        return apply_op(D.DIV_SCALAR, (x,), (number,))

    @staticmethod
    def softmax_backward_data(g, output, dim):
        """softmax's backward as an op of (grad, output) (SoftmaxBackwardDataBackward0), as torch records it."""
        return apply_op(D.SOFTMAX_BACKWARD_DATA, (g, output), (dim,))

    @staticmethod
    def zeros(shape, like):
        return like.new_zeros(shape)

    @staticmethod
    def sum(x, dims, keepdim):
        return x.sum(dims, keepdim=keepdim)

    @staticmethod
    def mean(x, dims, keepdim):
        return x.mean(dims, keepdim=keepdim)

    @staticmethod
    def sum_to(x, shape):
        if x.shape == shape:
            return x
        dims, lead = sum_to_dims(x.shape, shape)
        out = x.sum(dims, keepdim=True)
        return out.reshape(shape) if lead else out

    @staticmethod
    def expand(x, shape):
        return x.expand(shape)

    @staticmethod
    def permute(x, dims):
        return x.permute(dims)

    @staticmethod
    def transpose(x, d0, d1):
        return x.transpose(d0, d1)

    @staticmethod
    def cast(x, np_dtype):
        return x.to(backend.dtype_of(numpy.empty(0, np_dtype)))

    @staticmethod
    def to(x, dt, device):
        return x.to(device=device, dtype=dt)

    @staticmethod
    def embed(g, shape, view_fn):
        out = g.new_zeros(shape)
        region = shaping_core.view_of(out, view_fn)
        if g.__class__ is not Tensor or overlaps(region._data):  # a batch of gradients (vmap) is placed too
            return shaping_core.index_grad(
                g, shape, view_positions(backend.xp_of(g._data), shape, view_fn), False
            )
        region.copy_(g)
        return out

    @staticmethod
    def zero_at(g, key):
        out = g.clone()
        out[key] = 0.0
        return out

    @staticmethod
    def index_grad(g, shape, key, basic):
        return shaping_core.index_grad(g, shape, key, basic)

    # -- reductions and scans
    @staticmethod
    def cumsum(x, dim):
        return x.cumsum(dim)

    @staticmethod
    def cumprod(x, dim):
        return x.cumprod(dim)

    @staticmethod
    def logcumsumexp(x, dim):
        return x.logcumsumexp(dim)

    @staticmethod
    def flip(x, dims):
        return x.flip(dims)

    @staticmethod
    def roll(x, shifts, dims):
        return x.roll(shifts, dims)

    @staticmethod
    def rot90(x, k, dims):
        return x.rot90(k, dims)

    @staticmethod
    def diagonal(x, offset, dim1, dim2):
        return x.diagonal(offset, dim1, dim2)

    @staticmethod
    def cat(xs, dim):
        return shaping_core.cat(xs, dim)

    @staticmethod
    def stack(xs, dim):
        return shaping_core.stack(xs, dim)

    @staticmethod
    def scatter_reduce(x, dim, index, src, reduce, include_self, key, src_key):
        return x.scatter_reduce(dim, wrap(index), src, reduce, include_self=include_self)

    # -- linear algebra: masks are constants, so the recorded ops are where / sum / the rows
    @staticmethod
    def eye(n, like):
        return wrap(array_math(like._data).eye(n, like._data))

    @staticmethod
    def tril(x, k=0):
        return x.where(array_math(x._data).xp.tri(*x.shape[-2:], k, dtype=bool), 0.0)

    @staticmethod
    def triu(x, k=0):
        return x.where(~array_math(x._data).xp.tri(*x.shape[-2:], k - 1, dtype=bool), 0.0)

    @staticmethod
    def solve(a, b):
        return linalg.linalg_solve(a, b)

    @staticmethod
    def det(a):
        return a.det()

    @staticmethod
    def svd(a):
        return linalg.reduced_svd(a)
