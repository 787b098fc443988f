"""The derivative table: every differentiable op, declared once.

Each row gives the forward on raw arrays (`xp` is numpy or cupy) and, per input, the
backward formula, in the spirit of PyTorch's tools/autograd/derivatives.yaml. A formula
is `(m, grad, *saved, *attrs) -> grad for that input`; it runs on raw arrays or on
Tensors (see namespaces.py), so double backward comes for free. Rows flagged
`broadcast` have their input gradients summed back to the input shapes in one place
(FormulaNode.apply). Node names are PyTorch's, because users search for them.
"""

from __future__ import annotations

import math

from ..tensor import Tensor
from . import nn_kernels as K
from .namespaces import reduced_shape
from .op import Op, node_class


def row(node_name, forward, inputs=("self",), saves=(), attrs=(), broadcast=False, joint=None, **grads):
    """One op. `broadcast`: inputs broadcast against each other, so gradients are summed back to
    each input's shape and cast back to its dtype; "elementwise" also promotes the operands'
    dtypes as torch does (float32 + int64 -> float32, where numpy says float64)."""
    node = node_class(node_name, tuple(grads.get(i) for i in inputs), joint, saves, inputs, attrs)
    return Op(forward, node, inputs, saves, bool(broadcast), promote=broadcast == "elementwise")


def _unreduce(g, shape, dims, keepdim):
    """A reduction's incoming gradient, reshaped so it broadcasts against the input."""
    return g if keepdim else g.reshape(reduced_shape(shape, dims))


def _count(shape, dims) -> int:
    return math.prod(shape[d] for d in dims)


def _clamp_mask(x, lo, hi):
    if lo is None:
        return x <= hi
    if hi is None:
        return x >= lo
    return (x >= lo) & (x <= hi)


def _clamp_min_grad(m, g, self, lo, hi):
    """clamp.Tensor's gradient for `min`: where it clamped (and, given `max`, where min < max)."""
    below = self < lo
    return m.where(below if hi is None else below & (lo < hi), g, 0.0)


def _clamp_max_grad(m, g, self, lo, hi):
    """For `max`: where it clamped, and everywhere min > max (the result is then `max`)."""
    above = self > hi
    return m.where(above if lo is None else above | (hi < lo), g, 0.0)


def _pairwise_grad(m, g, tie, loses):
    """maximum/minimum: all of g to the winner, half to each side of a tie (as torch splits it)."""
    return m.where(loses, 0.0, m.where(tie, g / 2, g))


def _norm_grad(m, g, x, result, p, dims, keepdim):
    gk = _unreduce(g, x.shape, dims, keepdim)
    rk = _unreduce(result, x.shape, dims, keepdim)
    if p == 1:
        return gk * m.sign(x)
    scale = m.where(rk == 0, 0.0, gk / rk if p == 2 else gk / rk ** (p - 1))
    return x * scale if p == 2 else x * abs(x) ** (p - 2) * scale


# fmt: off
# --- arithmetic --------------------------------------------------------------------------
ADD = row("AddBackward0", lambda xp, a, b, alpha: a + b if alpha == 1 else a + alpha * b,
          inputs=("self", "other"), attrs=("alpha",), broadcast="elementwise",
          self=lambda m, g, alpha: g,
          other=lambda m, g, alpha: g if alpha == 1 else g * alpha)
SUB = row("SubBackward0", lambda xp, a, b, alpha: a - b if alpha == 1 else a - alpha * b,
          inputs=("self", "other"), attrs=("alpha",), broadcast="elementwise",
          self=lambda m, g, alpha: g,
          other=lambda m, g, alpha: -g if alpha == 1 else -g * alpha)
RSUB = row("RsubBackward1", lambda xp, a, other, alpha: other - alpha * a,
           attrs=("other", "alpha"),
           self=lambda m, g, other, alpha: -g if alpha == 1 else -g * alpha)
MUL = row("MulBackward0", lambda xp, a, b: a * b,
          inputs=("self", "other"), saves=("self", "other"), broadcast="elementwise",
          self=lambda m, g, self, other: g * other,
          other=lambda m, g, self, other: g * self)
DIV = row("DivBackward0", lambda xp, a, b: a / b,
          inputs=("self", "other"), saves=("self", "other"), broadcast="elementwise",
          self=lambda m, g, self, other: g / other,
          other=lambda m, g, self, other: -g * self / (other * other))
NEG = row("NegBackward0", lambda xp, a: -a,
          self=lambda m, g: -g)
RECIPROCAL = row("ReciprocalBackward0", lambda xp, a: 1.0 / a, saves=("result",),
                 self=lambda m, g, result: -g * (result * result))
POW_SCALAR = row("PowBackward0", lambda xp, a, e: a ** e, saves=("self",), attrs=("exponent",),
                 self=lambda m, g, self, e: g * (e * self ** (e - 1)) if e != 0 else g * 0.0)
POW_TENSOR = row("PowBackward1", lambda xp, a, e: a ** e,
                 inputs=("self", "exponent"), saves=("self", "exponent", "result"), broadcast="elementwise",
                 self=lambda m, g, self, e, result: g * (e * self ** (e - 1)),
                 exponent=lambda m, g, self, e, result: g * m.where(
                     (self == 0) & (e >= 0), 0.0, result * m.log(self)))
RPOW = row("PowBackward2", lambda xp, e, base: base ** e,
           inputs=("exponent",), saves=("result",), attrs=("self",),
           exponent=lambda m, g, result, base: g * (result * math.log(base)))

# --- matrix products -----------------------------------------------------------------------
MM = row("MmBackward0", lambda xp, a, b: a @ b, inputs=("self", "mat2"), saves=("self", "mat2"),
         self=lambda m, g, self, mat2: g @ m.transpose(mat2, 0, 1),
         mat2=lambda m, g, self, mat2: m.transpose(self, 0, 1) @ g)
MV = row("MvBackward0", lambda xp, a, v: a @ v, inputs=("self", "vec"), saves=("self", "vec"),
         self=lambda m, g, self, vec: g.reshape((-1, 1)) * vec.reshape((1, -1)),
         vec=lambda m, g, self, vec: m.transpose(self, 0, 1) @ g)
DOT = row("DotBackward0", lambda xp, a, b: a @ b, inputs=("self", "tensor"), saves=("self", "tensor"),
          self=lambda m, g, self, tensor: g * tensor,
          tensor=lambda m, g, self, tensor: g * self)
BMM = row("BmmBackward0", lambda xp, a, b: xp.matmul(a, b),
          inputs=("self", "mat2"), saves=("self", "mat2"), broadcast=True,
          self=lambda m, g, self, mat2: g @ m.transpose(mat2, -1, -2),
          mat2=lambda m, g, self, mat2: m.transpose(self, -1, -2) @ g)

# --- pointwise -----------------------------------------------------------------------------
EXP = row("ExpBackward0", lambda xp, a: xp.exp(a), saves=("result",),
          self=lambda m, g, result: g * result)
LOG = row("LogBackward0", lambda xp, a: xp.log(a), saves=("self",),
          self=lambda m, g, self: g / self)
LOG1P = row("Log1PBackward0", lambda xp, a: xp.log1p(a), saves=("self",),
            self=lambda m, g, self: g / (self + 1))
SQRT = row("SqrtBackward0", lambda xp, a: xp.sqrt(a), saves=("result",),
           self=lambda m, g, result: g / (2 * result))
SIN = row("SinBackward0", lambda xp, a: xp.sin(a), saves=("self",),
          self=lambda m, g, self: g * m.cos(self))
COS = row("CosBackward0", lambda xp, a: xp.cos(a), saves=("self",),
          self=lambda m, g, self: g * -m.sin(self))
TANH = row("TanhBackward0", lambda xp, a: xp.tanh(a), saves=("result",),
           self=lambda m, g, result: g * (1 - result * result))
SIGMOID = row("SigmoidBackward0", lambda xp, a: 1 / (1 + xp.exp(-a)), saves=("result",),
              self=lambda m, g, result: g * (result * (1 - result)))
RELU = row("ReluBackward0", lambda xp, a: xp.maximum(a, 0), saves=("result",),
           self=lambda m, g, result: g * (result > 0))
ABS = row("AbsBackward0", lambda xp, a: xp.abs(a), saves=("self",),
          self=lambda m, g, self: g * m.sign(self))
SIGN = row("SignBackward0", lambda xp, a: xp.sign(a),
           self=lambda m, g: g * 0.0)
CLAMP = row("ClampBackward1", lambda xp, a, lo, hi: xp.clip(a, lo, hi), saves=("self",),
            attrs=("min", "max"),
            self=lambda m, g, self, lo, hi: g * _clamp_mask(self, lo, hi))
CLAMP_TENSOR = row("ClampBackward0", lambda xp, a, lo, hi: xp.clip(a, lo, hi),
                   inputs=("self", "min", "max"), saves=("self", "min", "max"), broadcast="elementwise",
                   self=lambda m, g, self, lo, hi: m.where(_clamp_mask(self, lo, hi), g, 0.0),
                   min=_clamp_min_grad, max=_clamp_max_grad)
MAXIMUM = row("MaximumBackward0", lambda xp, a, b: xp.maximum(a, b),
              inputs=("self", "other"), saves=("self", "other"), broadcast="elementwise",
              self=lambda m, g, self, other: _pairwise_grad(m, g, self == other, self < other),
              other=lambda m, g, self, other: _pairwise_grad(m, g, self == other, self > other))
MINIMUM = row("MinimumBackward0", lambda xp, a, b: xp.minimum(a, b),
              inputs=("self", "other"), saves=("self", "other"), broadcast="elementwise",
              self=lambda m, g, self, other: _pairwise_grad(m, g, self == other, self > other),
              other=lambda m, g, self, other: _pairwise_grad(m, g, self == other, self < other))

# --- reductions ----------------------------------------------------------------------------
SUM = row("SumBackward0", lambda xp, a, shape: a.sum(), attrs=("self_sym_sizes",),
          self=lambda m, g, shape: m.expand(g, shape))
SUM_DIM = row("SumBackward1", lambda xp, a, shape, dims, keepdim: a.sum(axis=dims, keepdims=keepdim),
              attrs=("self_sym_sizes", "dim", "keepdim"),
              self=lambda m, g, shape, dims, keepdim: m.expand(_unreduce(g, shape, dims, keepdim), shape))
MEAN = row("MeanBackward0", lambda xp, a, shape, n: a.mean(), attrs=("self_sym_sizes", "self_sym_numel"),
           self=lambda m, g, shape, n: m.expand(g, shape) / n)
MEAN_DIM = row("MeanBackward1", lambda xp, a, shape, dims, keepdim: a.mean(axis=dims, keepdims=keepdim),
               attrs=("self_sym_sizes", "dim", "keepdim"),
               self=lambda m, g, shape, dims, keepdim:
                   m.expand(_unreduce(g, shape, dims, keepdim), shape) / _count(shape, dims))
VAR = row("VarBackward0", lambda xp, a, dims, c, keepdim: a.var(axis=dims, ddof=c, keepdims=keepdim),
          saves=("self",), attrs=("dim", "correction", "keepdim"),
          self=lambda m, g, self, dims, c, keepdim: (2.0 / (_count(self.shape, dims) - c))
              * _unreduce(g, self.shape, dims, keepdim) * (self - m.mean(self, dims, True)))
STD = row("StdBackward0", lambda xp, a, dims, c, keepdim: a.std(axis=dims, ddof=c, keepdims=keepdim),
          saves=("self", "result"), attrs=("dim", "correction", "keepdim"),
          self=lambda m, g, self, result, dims, c, keepdim: _unreduce(g, self.shape, dims, keepdim)
              * (self - m.mean(self, dims, True))
              / (_unreduce(result, self.shape, dims, keepdim) * (_count(self.shape, dims) - c)))
MAX = row("MaxBackward1", lambda xp, a: a.max(), saves=("self", "result"),
          self=lambda m, g, self, result: g * (self == result) / (self == result).sum())
MIN = row("MinBackward1", lambda xp, a: a.min(), saves=("self", "result"),
          self=lambda m, g, self, result: g * (self == result) / (self == result).sum())
MAX_DIM = row("MaxBackward0", lambda xp, a, shape, dim, keepdim, key: a.max(axis=dim, keepdims=keepdim),
              attrs=("self_sym_sizes", "dim", "keepdim", "indices"),
              self=lambda m, g, shape, dim, keepdim, key:
                  m.index_grad(_unreduce(g, shape, (dim,), keepdim), shape, key, True))
MIN_DIM = row("MinBackward0", lambda xp, a, shape, dim, keepdim, key: a.min(axis=dim, keepdims=keepdim),
              attrs=("self_sym_sizes", "dim", "keepdim", "indices"),
              self=lambda m, g, shape, dim, keepdim, key:
                  m.index_grad(_unreduce(g, shape, (dim,), keepdim), shape, key, True))
NORM = row("LinalgVectorNormBackward0",
           lambda xp, a, p, dims, keepdim: (xp.abs(a) ** p).sum(axis=dims, keepdims=keepdim) ** (1.0 / p)
           if p != 2 else xp.sqrt((a * a).sum(axis=dims, keepdims=keepdim)),
           saves=("self", "result"), attrs=("ord", "dim", "keepdim"), self=_norm_grad)
SOFTMAX = row("SoftmaxBackward0", lambda xp, a, dim: _softmax(xp, a, dim), saves=("result",), attrs=("dim",),
              self=lambda m, g, result, dim: result * (g - m.sum(g * result, dim, True)))
LOG_SOFTMAX = row("LogSoftmaxBackward0", lambda xp, a, dim: _log_softmax(xp, a, dim),
                  saves=("result",), attrs=("dim",),
                  self=lambda m, g, result, dim: g - m.exp(result) * m.sum(g, dim, True))

# --- shapes and views (forwards return views of the input) --------------------------------
VIEW = row("ViewBackward0", lambda xp, a, shape, new: a.reshape(new), attrs=("self_sym_sizes", "size"),
           self=lambda m, g, shape, new: g.reshape(shape))
UNSAFE_VIEW = row("UnsafeViewBackward0", lambda xp, a, shape, new: a.reshape(new),
                  attrs=("self_sym_sizes", "size"),
                  self=lambda m, g, shape, new: g.reshape(shape))
T = row("TBackward0", lambda xp, a: a.T, self=lambda m, g: g if g.ndim < 2 else m.transpose(g, 0, 1))
TRANSPOSE = row("TransposeBackward0", lambda xp, a, d0, d1: xp.swapaxes(a, d0, d1), attrs=("dim0", "dim1"),
                self=lambda m, g, d0, d1: m.transpose(g, d0, d1))
PERMUTE = row("PermuteBackward0", lambda xp, a, dims, inverse: a.transpose(dims), attrs=("dims", "inverse"),
              self=lambda m, g, dims, inverse: m.permute(g, inverse))
EXPAND = row("ExpandBackward0", lambda xp, a, shape, new: xp.broadcast_to(a, new),
             attrs=("self_sym_sizes", "size"),
             self=lambda m, g, shape, new: m.sum_to(g, shape))
SQUEEZE = {name: row(name, lambda xp, a, shape, new: a.reshape(new), attrs=("self_sym_sizes", "size"),
                     self=lambda m, g, shape, new: g.reshape(shape))
           for name in ("SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "SqueezeBackward4",
                        "UnsqueezeBackward0")}
SELECT = row("SelectBackward0", lambda xp, a, shape, dim, index, key: a[key],
             attrs=("self_sym_sizes", "dim", "index", "key"),
             self=lambda m, g, shape, dim, index, key: m.index_grad(g, shape, key, True))
SLICE = row("SliceBackward0", lambda xp, a, shape, dim, start, end, step, key: a[key],
            attrs=("self_sym_sizes", "dim", "start", "end", "step", "key"),
            self=lambda m, g, shape, dim, start, end, step, key: m.index_grad(g, shape, key, True))
ALIAS = row("AliasBackward0", lambda xp, a: a[...], self=lambda m, g: g)
AS_STRIDED = row("AsStridedBackward0", lambda xp, a, shape, view_fn: view_fn(xp, a),
                 attrs=("self_sym_sizes", "view_fn"),
                 self=lambda m, g, shape, view_fn: m.embed(g, shape, view_fn))

# --- copies --------------------------------------------------------------------------------
CLONE = row("CloneBackward0", lambda xp, a: a.copy(), self=lambda m, g: g)
TO_COPY = row("ToCopyBackward0", lambda xp, a, dtype, device, old_dtype, old_device: _to(a, dtype, device),
              attrs=("dtype", "device", "self_dtype", "self_device"),
              self=lambda m, g, dtype, device, old_dtype, old_device: m.to(g, old_dtype, old_device))
INDEX = row("IndexBackward0", lambda xp, a, shape, key: a[key], attrs=("self_sym_sizes", "indices"),
            self=lambda m, g, shape, key: m.index_grad(g, shape, key, False))
INDEX_GRAD = row("IndexBackwardBackward0",
                 lambda xp, g, shape, key, basic: _index_grad_forward(xp, g, shape, key, basic),
                 inputs=("grad",), attrs=("self_sym_sizes", "indices", "basic"),
                 grad=lambda m, g, shape, key, basic: g[key])
CAT = row("CatBackward0", lambda xp, *a: xp.concatenate(a[:-2], axis=a[-2]), attrs=("dim", "sizes"),
          joint=lambda m, g, dim, sizes: _split(g, dim, sizes))
STACK = row("StackBackward0", lambda xp, *a: xp.stack(a[:-2], axis=a[-2]), attrs=("dim", "n"),
            joint=lambda m, g, dim, n: [g[(slice(None),) * dim + (i,)] for i in range(n)])
WHERE = row("WhereBackward0", lambda xp, a, b, cond: xp.where(cond, a, b),
            inputs=("self", "other"), attrs=("condition",), broadcast="elementwise",
            self=lambda m, g, cond: m.where(cond, g, 0.0),
            other=lambda m, g, cond: m.where(cond, 0.0, g))

# --- in-place building blocks (applied through ops.inplace) ---------------------------------
COPY = row("CopyBackwards", lambda xp, a, src: xp.broadcast_to(src, a.shape).astype(a.dtype, copy=True),
           inputs=("self", "src"), broadcast=True,
           self=lambda m, g: g * 0.0,
           src=lambda m, g: g)
FILL = row("FillBackward0", lambda xp, a, value: xp.full_like(a, value), attrs=("value",),
           self=lambda m, g, value: g * 0.0)
ZERO = row("ZeroBackward0", lambda xp, a: xp.zeros_like(a), self=lambda m, g: g * 0.0)
INDEX_PUT = row("IndexPutBackward0", lambda xp, a, v, key: _index_put(a, v, key),
                inputs=("self", "values"), attrs=("indices",), broadcast=True,
                self=lambda m, g, key: m.zero_at(g, key),
                values=lambda m, g, key: g[key])
# fmt: on


def _to(a, dtype, device):
    from .. import backend

    return backend.to_device(a, device).astype(dtype.np, copy=False)


def _softmax(xp, a, dim):
    e = xp.exp(a - a.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _log_softmax(xp, a, dim):
    shifted = a - a.max(axis=dim, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))


def _split(g, dim, sizes):
    out, start = [], 0
    for n in sizes:
        out.append(g[(slice(None),) * dim + (slice(start, start + n),)])
        start += n
    return out


def _index_put(a, v, key):
    out = a.copy()
    out[key] = v
    return out


def _index_grad_forward(xp, g, shape, key, basic):
    from .namespaces import array_math

    return array_math(g).index_grad(g, shape, key, basic)


# =========================================================================================
# --- nn ----------------------------------------------------------------------------------
# Rows behind engine.nn.functional. Forwards call nn_kernels.py on raw arrays; formulas
# stay generic over `m`, so every layer and loss is twice differentiable. Statistics,
# indices and masks that a forward needs are worked out by engine/nn/functional and
# passed in as attrs, the way MAX_DIM gets its indices.
# =========================================================================================


def _raw(x):
    return x._data if isinstance(x, Tensor) else x


def _numel(x) -> int:
    return math.prod(x.shape)


def _reduce(xp, loss, reduction):
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _reduced_grad(g, like, reduction):
    """The incoming loss gradient per element: g (none, sum) or g / numel (mean)."""
    return g / _numel(like) if reduction == "mean" else g


def _addmm(xp, bias, a, b):
    out = a @ b
    out += bias
    return out


def _mat2_grad(m, g, mat1, mat2):
    """mat1^T @ g, laid out like mat2: a transposed weight (F.linear) gets a row-major weight grad."""
    raw = _raw(mat2)
    if raw.ndim == 2 and raw.flags.f_contiguous and not raw.flags.c_contiguous:
        return m.transpose(m.transpose(g, 0, 1) @ mat1, 0, 1)
    return m.transpose(mat1, 0, 1) @ g


def _gelu_grad(m, g, x, approximate):
    if approximate == "tanh":
        beta, kappa = math.sqrt(2.0 / math.pi), 0.044715
        x_sq = x * x
        t = m.tanh(beta * (x + kappa * x_sq * x))
        left = 0.5 * x
        return g * (0.5 * (1 + t) + left * (1 - t * t) * beta * (1 + 3 * kappa * x_sq))
    cdf = 0.5 * (1 + m.erf(x * (1 / math.sqrt(2.0))))
    pdf = m.exp(-0.5 * x * x) * (1 / math.sqrt(2.0 * math.pi))
    return g * (cdf + x * pdf)


# -- convolution: im2col, a batched matmul per group; the grads are the adjoint steps ------


def _conv_parts(g, weight, groups):
    n, o = g.shape[0], weight.shape[0]
    length = math.prod(g.shape[2:])
    g4 = g.reshape((n, groups, o // groups, length))
    w3 = weight.reshape((groups, o // groups, -1))  # (G, O/G, C/G * K)
    return n, length, g4, w3


def _conv_input_grad(m, g, input, weight, stride, padding, dilation, groups, cache):
    if not isinstance(g, Tensor) and all(s == 1 for s in stride):  # raw and unstrided: the fast kernel
        return K.conv_input_grad(m.xp, g, weight, input.shape, padding, dilation, groups)
    n, length, g4, w3 = _conv_parts(g, weight, groups)
    cols = m.transpose(w3, 1, 2) @ g4  # (N, G, C/G * K, L)
    return m.fold(
        cols.reshape((n, -1, length)), input.shape, weight.shape[2:], stride, K.symmetric(padding), dilation
    )


def _conv_weight_grad(m, g, input, weight, stride, padding, dilation, groups, cache):
    """sum_n g[n] @ cols[n]^T; a raw backward takes the forward's columns (once), a recorded one re-unfolds."""
    n, length, g4, w3 = _conv_parts(g, weight, groups)
    cols = None
    if cache is not None and not isinstance(g, Tensor):
        cols, cache[0] = cache[0], None
    if cols is None:
        cols = m.unfold(input, weight.shape[2:], stride, K.symmetric(padding), dilation)
    cols = cols.reshape((n, groups, -1, length))
    return m.sum(g4 @ m.transpose(cols, 2, 3), (0,), False).reshape(weight.shape)


def _channel_dims(x) -> tuple:
    return (0,) + tuple(range(2, x.ndim))


# -- pooling --------------------------------------------------------------------------------


def _scatter_flat(m, g, shape, flat, unique):
    """Zeros of `shape` with g added at flat indices (one op, so it has a backward too)."""
    numel = math.prod(shape)
    return m.index_grad(g.reshape((-1,)), (numel,), flat.reshape(-1), unique).reshape(shape)


def _avg_pool_grad(m, g, shape, kernel, stride, pads, divisor):
    """Each output's gradient / divisor, spread over its window (fold); batched or not alike."""
    nd = len(kernel)
    planes, spatial = math.prod(shape[:-nd]), tuple(shape[-nd:])
    length, k = math.prod(g.shape[-nd:]), math.prod(kernel)
    spread = m.expand((g / divisor).reshape((1, planes, 1, length)), (1, planes, k, length))
    cols = spread.reshape((1, planes * k, length))
    return m.fold(cols, (1, planes) + spatial, kernel, stride, pads, (1,) * nd).reshape(shape)


# -- normalization: raw backwards reuse the forward's statistics; recorded ones recompute
# them from the input, so the statistics are differentiated too (double backward) ------------


def _bn_forward(xp, x, w, b, training, eps, mean, invstd):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    scale = invstd if w is None else invstd * w
    shift = -mean * scale if b is None else b - mean * scale
    out = x * scale.reshape(shape)
    out += shift.reshape(shape)
    return out


def _bn_backward(m, g, x, w, training, eps, mean, invstd):
    dims = _channel_dims(x)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if training and isinstance(x, Tensor):
        mean = m.mean(x, dims, True)
        centred = x - mean
        invstd = (m.mean(centred * centred, dims, True) + eps) ** -0.5
    else:
        mean, invstd = mean.reshape(shape), invstd.reshape(shape)
        centred = x - mean
    xhat = centred * invstd
    gw = g if w is None else g * w.reshape(shape)
    if training:
        gx = (gw - m.mean(gw, dims, True) - xhat * m.mean(gw * xhat, dims, True)) * invstd
    else:
        gx = gw * invstd
    gweight = None if w is None else m.sum(g * xhat, dims, False)
    return gx, gweight, m.sum(g, dims, False)


def _ln_forward(xp, x, w, b, normalized_shape, eps, mean, rstd):
    out = (x - mean) * rstd
    if w is not None:
        out *= w
    if b is not None:
        out += b
    return out


def _ln_backward(m, g, x, w, normalized_shape, eps, mean, rstd):
    dims = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    if isinstance(x, Tensor):
        mean = m.mean(x, dims, True)
        centred = x - mean
        rstd = (m.mean(centred * centred, dims, True) + eps) ** -0.5
    else:
        centred = x - mean
    xhat = centred * rstd
    gw = g if w is None else g * w
    gx = (gw - m.mean(gw, dims, True) - xhat * m.mean(gw * xhat, dims, True)) * rstd
    gweight = None if w is None else m.sum_to(g * xhat, tuple(w.shape))
    return gx, gweight, m.sum_to(g, tuple(normalized_shape))


# -- losses ----------------------------------------------------------------------------------


def _nll_forward(xp, x, key, coef, reduction, total):
    """-x[n, target[n]] * weight[target[n]] (0 where ignored), reduced; `key` picks the targets."""
    loss = x[key] * coef
    if reduction == "none":
        return -loss
    total_loss = -loss.sum()
    return total_loss / total if reduction == "mean" else total_loss


def _smooth_l1(xp, a, b, reduction, beta):
    d = xp.abs(a - b)
    return _reduce(xp, xp.where(d < beta, (0.5 / beta) * d * d, d - 0.5 * beta), reduction)


def _smooth_l1_grad(m, g, self, target, reduction, beta):
    d = self - target
    return m.where(abs(d) < beta, d / beta, m.sign(d)) * _reduced_grad(g, d, reduction)


def _bce(xp, x, t, weight, reduction):
    loss = (t - 1) * xp.maximum(xp.log(1 - x), -100) - t * xp.maximum(xp.log(x), -100)
    return _reduce(xp, loss if weight is None else loss * weight, reduction)


def _bce_grad(m, g, x, t, weight, reduction):
    denom = (1 - x) * x
    out = (x - t) / m.where(denom < 1e-12, 1e-12, denom) * _reduced_grad(g, x, reduction)
    return out if weight is None else out * weight


def _bce_target_grad(m, g, x, t, weight, reduction):
    out = (m.log(1 - x) - m.log(x)) * _reduced_grad(g, x, reduction)
    return out if weight is None else out * weight


def _bce_logits(xp, x, t, weight, pos_weight, reduction):
    log_sig = K.log_sigmoid(xp, x)
    if pos_weight is None:
        loss = (1 - t) * x - log_sig
    else:
        loss = (1 - t) * x - ((pos_weight - 1) * t + 1) * log_sig
    return _reduce(xp, loss if weight is None else loss * weight, reduction)


def _log_sigmoid(m, x):
    return m.where(x < 0, x, 0.0) - m.log(1 + m.exp(-abs(x)))


def _bce_logits_grad(m, g, x, t, weight, pos_weight, reduction):
    s = m.sigmoid(x)
    if pos_weight is None:
        out = s - t
    else:
        pt = t * pos_weight
        out = (pt + 1 - t) * s - pt
    out = out * _reduced_grad(g, x, reduction)
    return out if weight is None else out * weight


def _bce_logits_target_grad(m, g, x, t, weight, pos_weight, reduction):
    if pos_weight is None:
        out = -x
    else:
        out = _log_sigmoid(m, -x) - _log_sigmoid(m, x) * pos_weight
    out = out * _reduced_grad(g, x, reduction)
    return out if weight is None else out * weight


# -- padding -----------------------------------------------------------------------------------


def _constant_pad(xp, a, pad, value, new_shape, out_key, in_key):
    out = xp.full(new_shape, value, dtype=a.dtype)
    out[out_key] = a[in_key]
    return out


def _constant_pad_grad(m, g, pad, value, new_shape, out_key, in_key, shape):
    piece = g[out_key]
    return piece if tuple(piece.shape) == shape else m.index_grad(piece, shape, in_key, True)


def _index_pad_row(name):
    return row(
        name,
        lambda xp, a, padding, shape, key: a[key],
        attrs=("padding", "self_sym_sizes", "key"),
        self=lambda m, g, padding, shape, key: m.index_grad(g, shape, key, False),
    )


# fmt: off
ADDMM = row("AddmmBackward0", _addmm, inputs=("self", "mat1", "mat2"), saves=("mat1", "mat2"), broadcast=True,
            self=lambda m, g, mat1, mat2: g,
            mat1=lambda m, g, mat1, mat2: g @ m.transpose(mat2, 0, 1),
            mat2=_mat2_grad)
MUL_SCALAR = row("MulBackward1", lambda xp, a, other: a * other, attrs=("other",),
                 self=lambda m, g, other: g * other)
DIV_SCALAR = row("DivBackward1", lambda xp, a, other: a / other, attrs=("other",),
                 self=lambda m, g, other: g / other)
MASKED_FILL = row("MaskedFillBackward0", lambda xp, a, mask, value: xp.where(mask, value, a),
                  attrs=("mask", "value"),
                  self=lambda m, g, mask, value: m.where(mask, 0.0, g))
LEAKY_RELU = row("LeakyReluBackward0", lambda xp, a, slope: xp.where(a > 0, a, a * slope),
                 saves=("self",), attrs=("negative_slope",),
                 self=lambda m, g, self, slope: m.where(self > 0, g, g * slope))
GELU = row("GeluBackward0", lambda xp, a, approximate: K.gelu(xp, a, approximate),
           saves=("self",), attrs=("approximate",), self=_gelu_grad)
ERF = row("ErfBackward0", lambda xp, a: K.erf(xp, a), saves=("self",),
          self=lambda m, g, self: g * (2 / math.sqrt(math.pi)) * m.exp(-self * self))

CONVOLUTION = row("ConvolutionBackward0", K.conv_forward, inputs=("input", "weight", "bias"),
                  saves=("input", "weight"), attrs=("stride", "padding", "dilation", "groups", "columns"),
                  input=_conv_input_grad, weight=_conv_weight_grad,
                  bias=lambda m, g, input, weight, *attrs: m.sum(g, _channel_dims(g), False))
IM2COL = row("Im2ColBackward0",
             lambda xp, a, shape, kernel, stride, pads, dilation: K.im2col(xp, a, kernel, stride, pads, dilation),
             attrs=("self_sym_sizes", "kernel_size", "stride", "padding", "dilation"),
             self=lambda m, g, shape, kernel, stride, pads, dilation: m.fold(g, shape, kernel, stride, pads, dilation))
COL2IM = row("Col2ImBackward0",
             lambda xp, a, shape, kernel, stride, pads, dilation: K.col2im(xp, a, shape, kernel, stride, pads,
                                                                           dilation),
             attrs=("output_size", "kernel_size", "stride", "padding", "dilation"),
             self=lambda m, g, shape, kernel, stride, pads, dilation: m.unfold(g, kernel, stride, pads, dilation))
MAX_POOL = row("MaxPool2DWithIndicesBackward0",
               lambda xp, a, shape, kernel, stride, padding, dilation, ceil_mode, flat, unique: xp.take(a, flat),
               attrs=("self_sym_sizes", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "result1",
                      "unique"),
               self=lambda m, g, shape, kernel, stride, padding, dilation, ceil_mode, flat, unique:
                   _scatter_flat(m, g, shape, flat, unique))
AVG_POOL = row("AvgPool2DBackward0",
               lambda xp, a, shape, kernel, stride, pads, out, divisor, *rest:
                   K.window_sum(xp, a, kernel, stride, pads, out) / divisor,
               attrs=("self_sym_sizes", "kernel_size", "stride", "pads", "output_size", "divisor", "ceil_mode",
                      "count_include_pad", "divisor_override"),
               self=lambda m, g, shape, kernel, stride, pads, out, divisor, *rest:
                   _avg_pool_grad(m, g, shape, kernel, stride, pads, divisor))

NATIVE_BATCH_NORM = row("NativeBatchNormBackward0", _bn_forward, inputs=("input", "weight", "bias"),
                        saves=("input", "weight"), attrs=("training", "eps", "result1", "result2"),
                        joint=_bn_backward)
NATIVE_LAYER_NORM = row("NativeLayerNormBackward0", _ln_forward, inputs=("input", "weight", "bias"),
                        saves=("input", "weight"), attrs=("normalized_shape", "eps", "result1", "result2"),
                        joint=_ln_backward)
EMBEDDING = row("EmbeddingBackward0", lambda xp, w, n, idx, *rest: xp.take(w, idx, axis=0),
                attrs=("weight_sym_argsize_0", "indices", "padding_idx", "scale_grad_by_freq", "grad_scale"),
                self=lambda m, g, n, idx, padding_idx, by_freq, scale: m.index_grad(
                    (g if scale is None else g * scale).reshape((-1, g.shape[-1])), (n, g.shape[-1]),
                    idx.reshape(-1), False))

MSE_LOSS = row("MseLossBackward0", lambda xp, a, b, reduction: _reduce(xp, (a - b) * (a - b), reduction),
               inputs=("self", "target"), saves=("self", "target"), attrs=("reduction",), broadcast=True,
               self=lambda m, g, self, target, reduction:
                   (self - target) * (2.0 * _reduced_grad(g, self, reduction)),
               target=lambda m, g, self, target, reduction:
                   (self - target) * (-2.0 * _reduced_grad(g, self, reduction)))
SMOOTH_L1_LOSS = row("SmoothL1LossBackward0", _smooth_l1, inputs=("self", "target"), saves=("self", "target"),
                     attrs=("reduction", "beta"), broadcast=True,
                     self=_smooth_l1_grad,
                     target=lambda m, g, *args: -_smooth_l1_grad(m, g, *args))
NLL_LOSS = {name: row(name, lambda xp, x, shape, key, coef, reduction, total: _nll_forward(xp, x, key, coef,
                                                                                      reduction, total),
                      attrs=("self_sym_sizes", "indices", "coef", "reduction", "total_weight"),
                      self=lambda m, g, shape, key, coef, reduction, total:
                          m.index_grad(g * (-coef / total if reduction == "mean" else -coef), shape, key, True))
            for name in ("NllLossBackward0", "NllLoss2DBackward0")}
BINARY_CROSS_ENTROPY = row("BinaryCrossEntropyBackward0", _bce, inputs=("self", "target"),
                           saves=("self", "target"), attrs=("weight", "reduction"), broadcast=True,
                           self=_bce_grad, target=_bce_target_grad)
BCE_WITH_LOGITS = row("BinaryCrossEntropyWithLogitsBackward0", _bce_logits, inputs=("self", "target"),
                      saves=("self", "target"), attrs=("weight", "pos_weight", "reduction"), broadcast=True,
                      self=_bce_logits_grad, target=_bce_logits_target_grad)

CONSTANT_PAD = row("ConstantPadNdBackward0",
                   lambda xp, a, pad, value, new_shape, out_key, in_key, shape:
                       _constant_pad(xp, a, pad, value, new_shape, out_key, in_key),
                   attrs=("pad", "value", "result_sym_sizes", "out_key", "in_key", "self_sym_sizes"),
                   self=_constant_pad_grad)
INDEX_PAD = {name: _index_pad_row(name)
             for kind in ("Reflection", "Replication") for name in (f"{kind}Pad{k}DBackward0" for k in (1, 2, 3))}
# fmt: on
