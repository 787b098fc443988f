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

from .namespaces import reduced_shape
from .op import Op, node_class


def row(node_name, forward, inputs=("self",), saves=(), attrs=(), broadcast=False, joint=None, **grads):
    node = node_class(node_name, tuple(grads.get(i) for i in inputs), joint, saves, inputs, attrs)
    return Op(forward, node, inputs, saves, broadcast)


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
          inputs=("self", "other"), attrs=("alpha",), broadcast=True,
          self=lambda m, g, alpha: g,
          other=lambda m, g, alpha: g if alpha == 1 else g * alpha)
SUB = row("SubBackward0", lambda xp, a, b, alpha: a - b if alpha == 1 else a - alpha * b,
          inputs=("self", "other"), attrs=("alpha",), broadcast=True,
          self=lambda m, g, alpha: g,
          other=lambda m, g, alpha: -g if alpha == 1 else -g * alpha)
RSUB = row("RsubBackward1", lambda xp, a, other, alpha: other - alpha * a,
           attrs=("other", "alpha"),
           self=lambda m, g, other, alpha: -g if alpha == 1 else -g * alpha)
MUL = row("MulBackward0", lambda xp, a, b: a * b,
          inputs=("self", "other"), saves=("self", "other"), broadcast=True,
          self=lambda m, g, self, other: g * other,
          other=lambda m, g, self, other: g * self)
DIV = row("DivBackward0", lambda xp, a, b: a / b,
          inputs=("self", "other"), saves=("self", "other"), broadcast=True,
          self=lambda m, g, self, other: g / other,
          other=lambda m, g, self, other: -g * self / (other * other))
NEG = row("NegBackward0", lambda xp, a: -a,
          self=lambda m, g: -g)
RECIPROCAL = row("ReciprocalBackward0", lambda xp, a: 1.0 / a, saves=("result",),
                 self=lambda m, g, result: -g * (result * result))
POW_SCALAR = row("PowBackward0", lambda xp, a, e: a ** e, saves=("self",), attrs=("exponent",),
                 self=lambda m, g, self, e: g * (e * self ** (e - 1)) if e != 0 else g * 0.0)
POW_TENSOR = row("PowBackward1", lambda xp, a, e: a ** e,
                 inputs=("self", "exponent"), saves=("self", "exponent", "result"), broadcast=True,
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
            inputs=("self", "other"), attrs=("condition",), broadcast=True,
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
