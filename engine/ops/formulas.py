"""The backward formulas too long for one line of the table (PyTorch keeps its in FunctionsManual).

Each is written against the math namespace `m`, so it runs on raw arrays or, recorded, on
Tensors. Those used directly as a row's formula take that row's argument names, in the
row's order: `(m, g, *saves, *attrs)`, which the table checks when it is built.
"""

from __future__ import annotations

import math

from ..tensor import Tensor
from . import kernels as K
from .namespaces import reduced_shape


def unreduce(g, shape, dims, keepdim):
    """A reduction's incoming gradient, reshaped so it broadcasts against the input."""
    return g if keepdim else g.reshape(reduced_shape(shape, dims))


def count(shape, dims) -> int:
    return math.prod(shape[d] for d in dims)


def raw(x):
    return x._data if isinstance(x, Tensor) else x


# -- pointwise --------------------------------------------------------------------------------


def clamp_mask(self, min, max):
    if min is None:
        return self <= max
    if max is None:
        return self >= min
    return (self >= min) & (self <= max)


def clamp_min_grad(m, g, self, min, max):
    """clamp.Tensor's gradient for `min`: where it clamped (and, given `max`, where min < max)."""
    below = self < min
    return m.where(below if max is None else below & (min < max), g, 0.0)


def clamp_max_grad(m, g, self, min, max):
    """For `max`: where it clamped, and everywhere min > max (the result is then `max`)."""
    above = self > max
    return m.where(above if min is None else above | (max < min), g, 0.0)


def pairwise_grad(m, g, tie, loses):
    """maximum/minimum: all of g to the winner, half to each side of a tie (as torch splits it)."""
    return m.where(loses, 0.0, m.where(tie, g / 2, g))


def gelu_backward(m, g, self, approximate):
    if approximate == "tanh":
        beta, kappa = math.sqrt(2.0 / math.pi), 0.044715
        x_sq = self * self
        t = m.tanh(beta * (self + kappa * x_sq * self))
        left = 0.5 * self
        return g * (0.5 * (1 + t) + left * (1 - t * t) * beta * (1 + 3 * kappa * x_sq))
    cdf = 0.5 * (1 + m.erf(self * (1 / math.sqrt(2.0))))
    pdf = m.exp(-0.5 * self * self) * (1 / math.sqrt(2.0 * math.pi))
    return g * (cdf + self * pdf)


# -- reductions and products ------------------------------------------------------------------


def norm_backward(m, g, self, result, ord, dim, keepdim):
    gk = unreduce(g, self.shape, dim, keepdim)
    rk = unreduce(result, self.shape, dim, keepdim)
    if ord == 1:
        return gk * m.sign(self)
    scale = m.where(rk == 0, 0.0, gk / rk if ord == 2 else gk / rk ** (ord - 1))
    return self * scale if ord == 2 else self * abs(self) ** (ord - 2) * scale


def addmm_mat2_backward(m, g, mat1, mat2):
    """mat1^T @ g, laid out like mat2: a transposed weight (F.linear) gets a row-major weight grad."""
    data = raw(mat2)
    if data.ndim == 2 and data.flags.f_contiguous and not data.flags.c_contiguous:
        return m.transpose(m.transpose(g, 0, 1) @ mat1, 0, 1)
    return m.transpose(mat1, 0, 1) @ g


def split_backward(g, dim, sizes):
    out, start = [], 0
    for n in sizes:
        out.append(g[(slice(None),) * dim + (slice(start, start + n),)])
        start += n
    return out


# -- convolution: im2col, a batched matmul per group; the grads are the adjoint steps ---------


def _conv_parts(g, weight, groups):
    n, o = g.shape[0], weight.shape[0]
    length = math.prod(g.shape[2:])
    g4 = g.reshape((n, groups, o // groups, length))
    w3 = weight.reshape((groups, o // groups, -1))  # (G, O/G, C/G * K)
    return n, length, g4, w3


def conv_input_backward(m, g, input, weight, stride, padding, dilation, groups, columns):
    if not isinstance(g, Tensor) and all(s == 1 for s in stride):  # raw and unstrided: the fast kernel
        return K.conv_input_grad(m.xp, g, weight, input.shape, padding, dilation, groups)
    n, length, g4, w3 = _conv_parts(g, weight, groups)
    cols = m.transpose(w3, 1, 2) @ g4  # (N, G, C/G * K, L)
    return m.fold(
        cols.reshape((n, -1, length)), input.shape, weight.shape[2:], stride, K.symmetric(padding), dilation
    )


def conv_weight_backward(m, g, input, weight, stride, padding, dilation, groups, columns):
    """sum_n g[n] @ cols[n]^T; a raw backward takes the forward's columns (once), a recorded one re-unfolds."""
    n, length, g4, w3 = _conv_parts(g, weight, groups)
    cols = None
    if columns is not None and not isinstance(g, Tensor):
        cols, columns[0] = columns[0], None
    if cols is None:
        cols = m.unfold(input, weight.shape[2:], stride, K.symmetric(padding), dilation)
    cols = cols.reshape((n, groups, -1, length))
    return m.sum(g4 @ m.transpose(cols, 2, 3), (0,), False).reshape(weight.shape)


def channel_dims(x) -> tuple:
    return (0,) + tuple(range(2, x.ndim))


# -- pooling ------------------------------------------------------------------------------------


def scatter_flat(m, g, shape, flat, unique):
    """Zeros of `shape` with g added at flat indices (one op, so it has a backward too)."""
    numel = math.prod(shape)
    return m.index_grad(g.reshape((-1,)), (numel,), flat.reshape(-1), unique).reshape(shape)


def avg_pool_backward(m, g, shape, kernel, stride, pads, divisor):
    """Each output's gradient / divisor, spread over its window (fold); batched or not alike."""
    nd = len(kernel)
    planes, spatial = math.prod(shape[:-nd]), tuple(shape[-nd:])
    length, k = math.prod(g.shape[-nd:]), math.prod(kernel)
    spread = m.expand((g / divisor).reshape((1, planes, 1, length)), (1, planes, k, length))
    cols = spread.reshape((1, planes * k, length))
    return m.fold(cols, (1, planes) + spatial, kernel, stride, pads, (1,) * nd).reshape(shape)


# -- normalization: raw backwards reuse the forward's statistics; recorded ones recompute
# them from the input, so the statistics are differentiated too (double backward) ------------


def batch_norm_backward(m, g, input, weight, training, eps, result1, result2):
    """`result1`, `result2`: the forward's batch mean and inverse standard deviation."""
    dims = channel_dims(input)
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if training and isinstance(input, Tensor):
        mean = m.mean(input, dims, True)
        centred = input - mean
        invstd = (m.mean(centred * centred, dims, True) + eps) ** -0.5
    else:
        mean, invstd = result1.reshape(shape), result2.reshape(shape)
        centred = input - mean
    xhat = centred * invstd
    gw = g if weight is None else g * weight.reshape(shape)
    if training:
        gx = (gw - m.mean(gw, dims, True) - xhat * m.mean(gw * xhat, dims, True)) * invstd
    else:
        gx = gw * invstd
    gweight = None if weight is None else m.sum(g * xhat, dims, False)
    return gx, gweight, m.sum(g, dims, False)


def layer_norm_backward(m, g, input, weight, normalized_shape, eps, result1, result2):
    """`result1`, `result2`: the forward's mean and reciprocal standard deviation."""
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    if isinstance(input, Tensor):
        mean = m.mean(input, dims, True)
        centred = input - mean
        rstd = (m.mean(centred * centred, dims, True) + eps) ** -0.5
    else:
        centred, rstd = input - result1, result2
    xhat = centred * rstd
    gw = g if weight is None else g * weight
    gx = (gw - m.mean(gw, dims, True) - xhat * m.mean(gw * xhat, dims, True)) * rstd
    gweight = None if weight is None else m.sum_to(g * xhat, tuple(weight.shape))
    return gx, gweight, m.sum_to(g, tuple(normalized_shape))


# -- losses -------------------------------------------------------------------------------------


def reduced_grad(g, like, reduction):
    """The incoming loss gradient per element: g (none, sum) or g / numel (mean)."""
    return g / math.prod(like.shape) if reduction == "mean" else g


def smooth_l1_backward(m, g, self, target, reduction, beta):
    d = self - target
    return m.where(abs(d) < beta, d / beta, m.sign(d)) * reduced_grad(g, d, reduction)


def smooth_l1_target_backward(m, g, self, target, reduction, beta):
    return -smooth_l1_backward(m, g, self, target, reduction, beta)


def binary_cross_entropy_backward(m, g, self, target, weight, reduction):
    denom = (1 - self) * self
    out = (self - target) / m.where(denom < 1e-12, 1e-12, denom) * reduced_grad(g, self, reduction)
    return out if weight is None else out * weight


def binary_cross_entropy_target_backward(m, g, self, target, weight, reduction):
    out = (m.log(1 - self) - m.log(self)) * reduced_grad(g, self, reduction)
    return out if weight is None else out * weight


def _log_sigmoid(m, x):
    return m.where(x < 0, x, 0.0) - m.log(1 + m.exp(-abs(x)))


def binary_cross_entropy_with_logits_backward(m, g, self, target, weight, pos_weight, reduction):
    s = m.sigmoid(self)
    if pos_weight is None:
        out = s - target
    else:
        pt = target * pos_weight
        out = (pt + 1 - target) * s - pt
    out = out * reduced_grad(g, self, reduction)
    return out if weight is None else out * weight


def binary_cross_entropy_with_logits_target_backward(m, g, self, target, weight, pos_weight, reduction):
    if pos_weight is None:
        out = -self
    else:
        out = _log_sigmoid(m, -self) - _log_sigmoid(m, self) * pos_weight
    out = out * reduced_grad(g, self, reduction)
    return out if weight is None else out * weight


# -- padding ------------------------------------------------------------------------------------


def constant_pad_backward(m, g, pad, value, result_sym_sizes, out_key, in_key, self_sym_sizes):
    piece = g[out_key]
    if tuple(piece.shape) == self_sym_sizes:
        return piece
    return m.index_grad(piece, self_sym_sizes, in_key, True)


# -- elementwise (ops/pointwise.py) -------------------------------------------------------------


def zero_grad(m, g):
    """The gradient of a piecewise-constant op (floor, sign, a rounded division): zeros, as torch's."""
    return m.zeros(g.shape, g)


def not_implemented(name: str):
    """The backward of an op PyTorch records as NotImplemented (floor_divide, a number % a tensor)."""
    raise RuntimeError(f"derivative for aten::{name} is not implemented")


def copysign_backward(m, g, self, result):
    """d copysign(self, other) / d self = result / self (+-1), 0 where self is 0, as torch."""
    return g * m.where(self == 0, 0.0, result / self)


def pow_number_base_backward(m, g, exponent, result, self):
    """d base ** exponent / d exponent for a Python number base: result * log(base), 0 where a zero
    base meets an exponent >= 0 (NaN for a negative base, as C's log gives it, not an error)."""
    if self == 0:
        return g * m.where(exponent >= 0, 0.0, result * -math.inf)
    return g * (result * K.log_number(self))


def inplace_not_implemented(name: str):
    """The formula of asinh_ / acosh_ / atanh_, which PyTorch does not differentiate in place: it raises."""

    def formula(m, g):
        raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not implemented.")

    return formula


def pow_exponent_backward(m, g, self, exponent, result):
    """d self ** exponent / d exponent = result * log(self), the base in the result's dtype (as torch
    promotes it: a float32 base loses no digits to a float64 exponent); 0 where a zero base meets an
    exponent >= 0."""
    dtype = raw(result).dtype
    base = self if raw(self).dtype == dtype else m.cast(self, dtype)
    return g * m.where((self == 0) & (exponent >= 0), 0.0, result * m.log(base))


def xlogy_self_backward(m, g, self, other):
    """d xlogy(self, other) / d self = xlogy(self != 0, other): log(other), 0 where self is 0, computed in
    the gradient's dtype (torch's is float64 for a float64 self and a number `other`)."""
    return g * m.xlogy(m.cast(self != 0, raw(g).dtype), other)
