"""The reductions rows' backward formulas longer than a line (PyTorch's FunctionsManual).

Written against the math namespace `m`, so each runs on raw arrays or, recorded, on Tensors.
"""

from __future__ import annotations

import math

import numpy

from ...tensor import Tensor
from ..namespaces import raw, reduced_shape


def unreduce(g, shape, dims, keepdim):
    """A reduction's incoming gradient, reshaped so it broadcasts against the input."""
    return g if keepdim else g.reshape(reduced_shape(shape, dims))


def count(shape, dims) -> int:
    return math.prod(shape[d] for d in dims)


def log_softmax_jvp(m, tangents, inputs, attrs, result):
    """Forward AD: t - sum(softmax * t) along dim (the Jacobian is I - 1 softmaxᵀ)."""
    (t,), (dim,) = tangents, attrs
    return t - m.sum(m.exp(result) * t, dim, True)


def log_softmax_backward(m, g, result, dim):
    """g - softmax * sum(g): on raw arrays in one new array (cross_entropy's backward runs it every step)."""
    if isinstance(g, Tensor) or isinstance(result, Tensor) or g.dtype != result.dtype or result.ndim == 0:
        return g - m.exp(result) * m.sum(g, dim, True)
    out = m.xp.exp(result)
    out *= m.sum(g, dim, True)
    return m.xp.subtract(g, out, out=out)


# -- reductions and scans -----------------------------------------------------------------------


def cast_count(count, like):
    """A count of elements (an integer array or Tensor) in the dtype of `like`, for dividing by."""
    return count.astype(like.dtype) if not isinstance(count, Tensor) else count


def evenly_distributed(m, g, self, result):
    """g shared equally by the elements equal to `result` (NaN counting as equal to a NaN result).

    The backward of the reductions that pick a value without saying where (max(), median()).
    """
    mask = (self == result) | ((self != self) & (result != result))
    return m.where(mask, g / cast_count(mask.sum(), g), 0.0)


def scaled_by_count(m, g, self, result, dim, keepdim):
    """amax/amin: g split equally between the elements of a slice equal to its result."""
    mask = self == unreduce(result, self.shape, dim, keepdim)
    count = cast_count(m.sum(mask, dim, True), g)
    return unreduce(g, self.shape, dim, keepdim) / count * mask


def extremes_backward(m, g, self, dim, keepdim):
    """aminmax: each output's gradient shared by the elements equal to it (its g is None if it got none).

    Like every joint formula, it returns one gradient per input: here a 1-tuple.
    """
    out = None
    data = raw(self)
    for grad, value in zip(g, (data.min(axis=dim, keepdims=keepdim), data.max(axis=dim, keepdims=keepdim))):
        if grad is not None:
            part = scaled_by_count(m, grad, self, value, dim, keepdim)
            out = part if out is None else out + part
    return (out,)


def reverse_cumsum(m, x, dim):
    """Sums from each position to the end of `dim`: cumsum's adjoint."""
    return m.flip(m.cumsum(m.flip(x, dim), dim), dim)


def cumsum_backward(m, g, dim, dtype):
    return g if g.ndim == 0 else reverse_cumsum(m, g, dim)


def exclusive_cumprod(m, x, dim):
    """The product of the elements before each position along `dim` (1 at the first), zeros included."""
    n = x.shape[dim]
    lead = (slice(None),) * dim
    shape = tuple(x.shape)
    first = m.index_grad(
        m.zeros(shape[:dim] + (1,) + shape[dim + 1 :], x) + 1, shape, lead + (slice(0, 1),), True
    )
    if n == 1:
        return first
    before = m.cumprod(x[lead + (slice(0, n - 1),)], dim)
    return first + m.index_grad(before, shape, lead + (slice(1, n),), True)


def product_of_others(m, x, dim):
    """For each element, the product of the others along `dim`: right even where some are zero."""
    return exclusive_cumprod(m, x, dim) * m.flip(exclusive_cumprod(m, m.flip(x, dim), dim), dim)


def prod_backward(m, g, self, result, dim, keepdim, dtype):
    """prod's gradient: result / self where no element is zero, else the product of the others."""
    if self.ndim == 0:
        return g
    dims = tuple(range(self.ndim)) if dim is None else (dim,)
    gk = unreduce(g, self.shape, dims, keepdim)
    zeros = (raw(self) == 0).sum()
    if not zeros:
        return gk * unreduce(result, self.shape, dims, keepdim) / self
    if dim is None:  # over every element: flattened; with two zeros or more, nothing (as torch, raw)
        if zeros > 1 and not isinstance(self, Tensor):
            return m.zeros(self.shape, self)
        return gk * product_of_others(m, self.reshape((-1,)), 0).reshape(self.shape)
    return gk * product_of_others(m, self, dim)


def cumprod_backward(m, g, self, result, dim, dtype):
    """cumprod's gradient: d out_j / d x_i = prod_{k <= j, k != i} x_k, summed over j >= i against g.

    Without zeros, reverse_cumsum(g * result) / self. With zeros: on raw arrays, the elements
    before each slice's first zero get that formula, the first zero the sum over the products
    with it left out, the rest nothing; recorded (create_graph), a sum over positions whose
    own derivative is cumprod's second derivative.
    """
    if self.ndim == 0 or self.shape[dim] <= 1:
        return g
    data = raw(self)
    zeros = data == 0
    if not zeros.any():
        return reverse_cumsum(m, g * result, dim) / self
    if isinstance(self, Tensor):
        return _cumprod_backward_recorded(m, g, self, dim)
    xp = m.xp
    seen = xp.cumsum(zeros, axis=dim)  # zeros up to and including each position
    before = seen == 0
    first = zeros & (seen == 1)
    safe = xp.where(before, self, 1)
    # before the first zero: the terms from the zero on are 0 (so a NaN after it does not leak back)
    left = reverse_cumsum(m, xp.where(before, g * result, 0), dim) / safe
    # at the first zero: the products with it left out, 0 from a second zero on
    without_first = xp.cumprod(xp.where(first, 1, self), axis=dim)
    at_first = reverse_cumsum(m, g * xp.where(seen == 1, without_first, 0), dim)
    return xp.where(before, left, xp.where(first, at_first, 0))


def _cumprod_backward_recorded(m, g, self, dim):
    """cumprod's gradient as recorded ops, one position of `dim` at a time (quadratic in its size)."""
    n = self.shape[dim]
    lead = (slice(None),) * dim
    shape = tuple(self.shape)
    out = None
    for i in range(n):
        here = lead + (slice(i, i + 1),)
        term = g[here]  # j = i: the product of the elements before i
        if i + 1 < n:
            after = lead + (slice(i + 1, n),)
            term = term + m.sum(g[after] * m.cumprod(self[after], dim), (dim,), True)
        if i > 0:
            term = term * prod_keepdim(m, self[lead + (slice(0, i),)], dim)
        part = m.index_grad(term, shape, here, True)
        out = part if out is None else out + part
    return out


def prod_keepdim(m, x, dim):
    """The product along `dim`, kept as a size-1 dim: the last entry of cumprod."""
    n = x.shape[dim]
    return m.cumprod(x, dim)[(slice(None),) * dim + (slice(n - 1, n),)]


def logcumsumexp_backward(m, g, self, result, dim):
    """sum_{j >= i} g_j exp(self_i - result_j), in log space: positive and negative parts of g apart.

    Each part is exp(self_i + reverse_logcumsumexp(log|g_j| - result_j)), which never overflows;
    a part with no element is `lowest` (not -inf) in log space, as torch's formula has it.
    """
    if g.ndim == 0:
        return g
    lowest = float(numpy.finfo(raw(self).dtype).min)
    magnitude = m.log(m.where(g == 0, 1.0, abs(g)))
    out = 0.0
    for part, sign in ((g > 0, 1.0), (g < 0, -1.0)):
        logs = m.where(part, magnitude, lowest) - result
        reverse = m.flip(m.logcumsumexp(m.flip(logs, dim), dim), dim)
        out = out + sign * m.exp(reverse + self)
    return out


def logsumexp_backward(m, g, self, result, dim, keepdim):
    return unreduce(g, self.shape, dim, keepdim) * m.exp(self - unreduce(result, self.shape, dim, keepdim))


def picked_backward(m, g, self_sym_sizes, dim, keepdim, indices):
    """The gradient of a reduction that picks one element per slice (max(dim), median(dim), mode):
    g placed at the picked `indices` (a key), zeros elsewhere."""
    return m.index_grad(unreduce(g, self_sym_sizes, (dim,), keepdim), self_sym_sizes, indices, True)


def nansum_backward(m, g, self, dim, keepdim, dtype):
    """g where self is not NaN: a product, as torch's, so an infinite g (nanmean of NaNs only) gives NaN."""
    return unreduce(g, self.shape, dim, keepdim) * (self == self)


def var_mean_backward(m, g, self, dim, correction, keepdim):
    """var_mean: the variance's gradient plus the mean's."""
    g_var, g_mean = g
    part = None if g_var is None else var_backward(m, g_var, self, dim, correction, keepdim)
    return plus_mean_backward(m, part, g_mean, self, dim, keepdim)


def std_mean_backward(m, g, self, result0, dim, correction, keepdim):
    """std_mean: the standard deviation's gradient (torch saves the std, result0) plus the mean's."""
    g_std, g_mean = g
    part = None if g_std is None else std_backward(m, g_std, self, result0, dim, correction, keepdim)
    return plus_mean_backward(m, part, g_mean, self, dim, keepdim)


def plus_mean_backward(m, part, g_mean, self, dim, keepdim):
    """The joint gradient of (statistic, mean): `part`, the statistic's (None if its output got no
    gradient), plus the mean's; a 1-tuple, one gradient per input as joint formulas return."""
    if g_mean is not None:
        of_mean = mean_backward(m, g_mean, self, dim, keepdim)
        part = of_mean if part is None else part + of_mean
    return (part,)


def dof(shape, dims, correction) -> float:
    """Degrees of freedom of a variance: the count less the correction (its reciprocal may be inf)."""
    return count(shape, dims) - correction


def var_backward(m, g, self, dim, correction, keepdim):
    n = dof(self.shape, dim, correction)
    scale = 2.0 / n if n else math.inf
    return scale * unreduce(g, self.shape, dim, keepdim) * (self - m.mean(self, dim, True))


def std_backward(m, g, self, result, dim, correction, keepdim):
    """d std = d var / (2 std), and 0 where the std is 0 (as torch has it)."""
    rk = unreduce(result, self.shape, dim, keepdim)
    return var_backward(
        m,
        m.where(rk == 0, 0.0, unreduce(g, self.shape, dim, keepdim) / (2 * rk)),
        self,
        dim,
        correction,
        True,
    )


def mean_backward(m, g, self, dim, keepdim):
    return m.expand(unreduce(g, self.shape, dim, keepdim), tuple(self.shape)) / count(self.shape, dim)


def vector_norm_backward(m, g, self, result, ord, dim, keepdim):
    """linalg.vector_norm's gradient by order, as torch's norm_backward: 0 where the norm is 0,
    split equally between the largest (smallest) magnitudes for ord inf (-inf), none for ord 0."""
    if ord == 0:
        return None
    gk = unreduce(g, self.shape, dim, keepdim)
    if ord == 1:
        return gk * m.sign(self)
    rk = unreduce(result, self.shape, dim, keepdim)
    if math.isinf(ord):
        magnitude = abs(self)
        mask = (magnitude == rk) | (magnitude != magnitude)
        return m.sign(self) * (gk / cast_count(m.sum(mask, dim, True), gk) * mask)
    if ord < 1:
        scaled = m.where(self == 0, 0.0, m.sign(self) * abs(self) ** (ord - 1))
        return scaled * gk * rk ** (1 - ord)
    if ord == 2:
        return self * m.where(rk == 0, 0.0, gk / rk)
    if ord < 2:
        return m.where(rk == 0, 0.0, m.sign(self) * abs(self) ** (ord - 1) * gk / rk ** (ord - 1))
    return m.where(rk == 0, 0.0, self * abs(self) ** (ord - 2) * gk / rk ** (ord - 1))


def dist_backward(m, g, self, other, result, p):
    diff = self - other
    return vector_norm_backward(m, g, diff, result, p, tuple(range(diff.ndim)), False)


def dist_other_backward(m, g, self, other, result, p):
    grad = dist_backward(m, g, self, other, result, p)
    return None if grad is None else -grad


def pairwise_grad(m, g, tie, loses):
    """maximum/minimum: all of g to the winner, half to each side of a tie (as torch splits it)."""
    return m.where(loses, 0.0, m.where(tie, g / 2, g))
