"""The raw-array math namespace the derivative formulas are written against, and where the executor finds both.

A formula like `g * m.cos(self)` runs on raw arrays (`ArrayMath`, fast, when no graph
of the backward is needed) or on Tensors (`TensorMath` in tensor_math.py, recorded, for
create_graph=True). Operators (+ - * / ** @, comparisons, `[...]`, `.reshape`) are shared by
both types; everything else goes through `m`.

ArrayMath calls only raw-array kernels, so this module sits below the executor and the ops:
it imports nothing that records.
"""

from __future__ import annotations

import math

import numpy

from .. import backend
from ..tensor import Tensor
from .linalg import kernels as linalg_kernels
from .nn import kernels as nn_kernels
from .pointwise import kernels as pointwise_kernels
from .reductions import kernels as reductions_kernels
from .shaping import kernels as shaping_kernels


def reduced_shape(shape, dims) -> tuple:
    """`shape` with `dims` kept as size 1: where a reduction's gradient is unsqueezed to."""
    return tuple(1 if d in dims else n for d, n in enumerate(shape))


def overlaps(view) -> bool:
    """Whether a view of an array sees some element more than once (a stride 0 of an expand); an
    empty one sees none (numpy gives empty arrays zero strides)."""
    strides = view.strides
    return (
        0 in strides
        and view.size > 0
        and any(stride == 0 and n > 1 for stride, n in zip(strides, view.shape))
    )


def view_positions(xp, shape, view_fn):
    """For each element of the view `view_fn` of an array of `shape`: the index it reads."""
    return xp.unravel_index(view_fn(xp, xp.arange(math.prod(shape)).reshape(shape)), shape)


def sum_to_dims(shape, target) -> tuple[tuple, bool]:
    """The axes to sum so a broadcast `shape` reduces back to `target`."""
    lead = len(shape) - len(target)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(target) if n == 1 and shape[lead + i] != 1
    )
    return dims, lead > 0


class ArrayMath:
    """Formulas on raw xp arrays."""

    __slots__ = ("xp",)

    def __init__(self, xp):
        self.xp = xp

    def exp(self, x):
        return self.xp.exp(x)

    def log(self, x):
        return self.xp.log(x)

    def log1p(self, x):
        return self.xp.log1p(x)

    def sin(self, x):
        return self.xp.sin(x)

    def cos(self, x):
        return self.xp.cos(x)

    def sign(self, x):
        return self.xp.sign(x)

    def tanh(self, x):
        return self.xp.tanh(x)

    def sigmoid(self, x):
        return 1 / (1 + self.xp.exp(-x))

    def erf(self, x):
        return pointwise_kernels.erf(self.xp, x)

    def softmax(self, x, dim):
        """A softmax that is 0 along a row of -inf (attention's fully masked rows)."""
        return nn_kernels.safe_softmax(self.xp, x, dim)

    def erfinv(self, x):
        return pointwise_kernels.erfinv(self.xp, x)

    def sinh(self, x):
        return self.xp.sinh(x)

    def cosh(self, x):
        return self.xp.cosh(x)

    def rsqrt(self, x):
        return 1 / self.xp.sqrt(x)

    def isfinite(self, x):
        return self.xp.isfinite(x)

    def xlogy(self, x, y):
        return pointwise_kernels.xlogy(self.xp, x, y)

    def div_floor(self, a, b):
        return pointwise_kernels.div_rounded(self.xp, a, b, "floor")

    def div_trunc(self, a, b):
        return pointwise_kernels.div_rounded(self.xp, a, b, "trunc")

    def unfold(self, x, kernel, stride, pads, dilation):
        return nn_kernels.im2col(self.xp, x, kernel, stride, pads, dilation)

    def fold(self, cols, shape, kernel, stride, pads, dilation):
        return nn_kernels.col2im(self.xp, cols, shape, kernel, stride, pads, dilation)

    def where(self, cond, a, b):
        return self.xp.where(cond, a, b)

    def threshold_backward(self, g, x, threshold):
        return g * (x > threshold)

    def tie(self, grad, x, op):
        return grad

    def leaky_relu_backward(self, g, x, negative_slope):
        return self.xp.where(x > 0, g, g * negative_slope)

    def zeros(self, shape, like):
        return self.xp.zeros(shape, dtype=like.dtype)

    def sum(self, x, dims, keepdim):
        return x.sum(axis=dims, keepdims=keepdim)

    def mean(self, x, dims, keepdim):
        return x.mean(axis=dims, keepdims=keepdim)

    def sum_to(self, x, shape):
        if x.shape == shape:
            return x
        dims, lead = sum_to_dims(x.shape, shape)
        out = x.sum(axis=dims, keepdims=True)
        return out.reshape(shape) if lead else out

    def expand(self, x, shape):
        return self.xp.broadcast_to(x, shape)

    def permute(self, x, dims):
        return x.transpose(dims)

    def transpose(self, x, d0, d1):
        return self.xp.swapaxes(x, d0, d1)

    def cast(self, x, np_dtype):
        return x.astype(np_dtype)

    def to(self, x, dt, device):
        return backend.cast(backend.to_device(x, device), dt, copy=False)

    def slice_backward(self, g, shape, key):
        return self.index_grad(g, shape, key, True)

    def select_backward(self, g, shape, key):
        return self.index_grad(g, shape, key, True)

    def div_scalar(self, x, number):
        return x / number

    def softmax_backward_data(self, g, output, dim):
        return output * (g - self.sum(g * output, dim, True))

    def index_grad(self, g, shape, key, basic):
        """Zeros of `shape` with g added at `key` (duplicates in an advanced key add up)."""
        out = self.xp.zeros(shape, dtype=g.dtype)
        if basic:
            out[key] = g
        else:
            backend.scatter_add(out, key, g)  # numpy.add.at / cupyx.scatter_add
        return out

    def embed(self, g, shape, view_fn):
        """Zeros of the base's `shape` with g written where the view `view_fn` looks
        (added up where the view sees an element more than once, as an expanded view does)."""
        out = self.xp.zeros(shape, dtype=g.dtype)
        region = view_fn(self.xp, out)
        if overlaps(region):
            return self.index_grad(g, shape, view_positions(self.xp, shape, view_fn), False)
        region[...] = g
        return out

    def zero_at(self, g, key):
        out = g.copy()
        out[key] = 0
        return out

    # -- reductions and scans
    def cumsum(self, x, dim):
        return self.xp.cumsum(x, axis=dim)

    def cumprod(self, x, dim):
        return self.xp.cumprod(x, axis=dim)

    def logcumsumexp(self, x, dim):
        return reductions_kernels.logcumsumexp(self.xp, x, dim)

    def flip(self, x, dims):
        return self.xp.flip(x, dims)

    def roll(self, x, shifts, dims):
        return self.xp.roll(x, shifts, dims or None)

    def rot90(self, x, k, dims):
        return self.xp.rot90(x, k, dims)

    def diagonal(self, x, offset, dim1, dim2):
        return shaping_kernels.diagonal(self.xp, x, offset, dim1, dim2)

    def cat(self, xs, dim):
        return self.xp.concatenate(xs, axis=dim)

    def stack(self, xs, dim):
        return self.xp.stack(xs, axis=dim)

    def scatter_reduce(self, x, dim, index, src, reduce, include_self, key, src_key):
        return shaping_kernels.scatter(self.xp, x, key, src[src_key], reduce, include_self)

    # -- linear algebra: formulas of the decompositions (linalg/formulas.py)
    def eye(self, n, like):
        return self.xp.eye(n, dtype=like.dtype)

    def tril(self, x, k=0):
        return self.xp.tril(x, k)

    def triu(self, x, k=0):
        return self.xp.triu(x, k)

    def solve(self, a, b):
        try:
            return self.xp.linalg.solve(a, b)
        except numpy.linalg.LinAlgError:  # singular: LAPACK's inf and nan, as torch's solvers give
            x = linalg_kernels.lu_solve(backend.to_numpy(a), backend.to_numpy(b))
            return backend.to_device(x, backend.device_of(a))

    def det(self, a):
        return self.xp.linalg.det(a)

    def svd(self, a):
        return self.xp.linalg.svd(a, full_matrices=False)


_ARRAY_MATH: dict = {}

# The executor runs formulas under create_graph on Tensors through TensorMath (ops/tensor_math.py),
# which calls the ops; they sit above the executor, so ops/tensor_methods.py hands it over once, with
# `use_tensor_math`, when engine is imported. The executor reads it here, at run time.
TENSOR_MATH = None


def use_tensor_math(math) -> None:
    """Make `math` the namespace formulas run against under create_graph."""
    global TENSOR_MATH
    TENSOR_MATH = math


def array_math(array) -> ArrayMath:
    """The ArrayMath for an array's module (numpy or cupy), made once per module."""
    xp = backend.xp_of(array)
    found = _ARRAY_MATH.get(xp)
    if found is None:
        found = _ARRAY_MATH[xp] = ArrayMath(xp)
    return found


def raw(x):
    return x._data if isinstance(x, Tensor) else x
