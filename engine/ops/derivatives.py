"""The derivative table: every differentiable op, declared once (PyTorch's derivatives.yaml).

The language of a row
---------------------
    NAME = row("NodeBackward0", forward, inputs=(...), saves=(...), attrs=(...),
               broadcasts=..., promotes=..., <input>=formula, ...)

- `"NodeBackward0"`: the node's name, PyTorch's, because users search for it.
- `inputs`: the differentiable arguments, in order, with PyTorch's names (`self`, `other`,
  `mat2`, ...). `variadic=True`: one input that is a list of tensors (`cat`'s `tensors`).
- `attrs`: the non-tensor arguments (and forward results a backward needs, `result1`, ...),
  kept on the node as `_saved_<name>`, in the order the caller passes them.
- `saves`: the tensors the backward reads: inputs by name, and `result` for the output
  (`_saved_<name>` too). An input is saved only when the formula of an input that requires
  grad reads it, as PyTorch saves conditionally.
- `frees`: attrs that PyTorch's node keeps as saved tensors (an index, a mask): freed with
  the saved values after backward, so a second backward through the node raises PyTorch's
  error, and so does reading `_saved_<name>` afterwards.
- `forward(xp, *inputs, *attrs)`: the op on raw arrays; `xp` is numpy or cupy.
- `<input>=formula(m, g, *saves, *attrs)`: that input's gradient, given the output's
  gradient `g`; `joint=` instead: one formula returning every input's gradient. Formulas
  run on raw arrays (`m` an ArrayMath) or, under create_graph=True, on Tensors (`m` the
  TensorMath, every step recorded), so every row is twice differentiable. Operators,
  `[...]` and `.reshape` work on both; everything else goes through `m` (namespaces.py).
- `broadcasts=True`: the inputs broadcast against each other, so each input's gradient is
  summed back to its shape and cast back to its dtype (in FormulaNode.apply, one place).
  `promotes=True`: the operands' dtypes are promoted as torch does (promotion.py).

Every name is checked when the row is built: forward and formulas must take exactly these
parameters, by name, with no `*args`, so a malformed row fails at import, not in a user's
backward. Formulas longer than a line live in formulas.py; forwards in kernels.py.

Adding an op
------------
1. A row here.
2. Its function in functions.py (or nn/functional/), calling `apply_op(ROW, inputs, attrs)`,
   decorated `@method` when torch has it as a Tensor method too, `@method(inplace=True)` to
   also get the in-place variant `name_`. Public functions of functions.py are exported as
   `engine.<name>` by themselves (`__all__`); nn functions go in nn/functional/__init__.py.
3. Tests: tests/test_op_grads.py (finite differences, first and second order) and, with
   torch installed, the comparison against torch.
"""

from __future__ import annotations

import math

from . import formulas as F
from . import kernels as K
from .namespaces import array_math
from .op import Op, node_class


def row(
    node_name,
    forward,
    inputs=("self",),
    saves=(),
    attrs=(),
    *,
    broadcasts=False,
    promotes=False,
    variadic=False,
    joint=None,
    frees=(),
    **formulas,
) -> Op:
    """One op of the table; checks every name (see the module docstring)."""
    node = node_class(node_name, inputs, saves, attrs, formulas, joint, forward, variadic, frees)
    return Op(forward, node, broadcasts=broadcasts, promotes=promotes, variadic=variadic)


ELEMENTWISE = {"broadcasts": True, "promotes": True}


def tied_to_self(forward_node_name: str) -> Op:
    """The node PyTorch records for the backward of a row linear in its input (a pool, a pad, a loss).

    Its backward is an op of (grad, self), so under create_graph the gradient depends on self, with
    derivative zero, and requires grad whenever self does. Here the row's formula result (its graph
    on the incoming gradient) is tied to self by this node: identity for it, zeros for self.
    """
    return row(
        forward_node_name.replace("Backward0", "BackwardBackward0"),
        lambda xp, grad_input, self, self_sym_sizes: grad_input.copy(),
        inputs=("grad_input", "self"),
        attrs=("self_sym_sizes",),
        grad_input=lambda m, g, self_sym_sizes: g,
        self=lambda m, g, self_sym_sizes: m.zeros(self_sym_sizes, g),
    )


# fmt: off
# --- arithmetic --------------------------------------------------------------------------------
ADD = row("AddBackward0", lambda xp, self, other, alpha: self + other if alpha == 1 else self + alpha * other,
          inputs=("self", "other"), attrs=("alpha",), **ELEMENTWISE,
          self=lambda m, g, alpha: g,
          other=lambda m, g, alpha: g if alpha == 1 else g * alpha)
SUB = row("SubBackward0", lambda xp, self, other, alpha: self - other if alpha == 1 else self - alpha * other,
          inputs=("self", "other"), attrs=("alpha",), **ELEMENTWISE,
          self=lambda m, g, alpha: g,
          other=lambda m, g, alpha: -g if alpha == 1 else -g * alpha)
RSUB = row("RsubBackward1", lambda xp, self, other, alpha: other - alpha * self, attrs=("other", "alpha"),
           self=lambda m, g, other, alpha: -g if alpha == 1 else -g * alpha)
MUL = row("MulBackward0", lambda xp, self, other: self * other,
          inputs=("self", "other"), saves=("self", "other"), **ELEMENTWISE,
          self=lambda m, g, self, other: g * other,
          other=lambda m, g, self, other: g * self)
MUL_SCALAR = row("MulBackward1", lambda xp, self, other: self * other, attrs=("other",),
                 self=lambda m, g, other: g * other)
DIV = row("DivBackward0", lambda xp, self, other: self / other,
          inputs=("self", "other"), saves=("self", "other"), **ELEMENTWISE,
          self=lambda m, g, self, other: g / other,
          other=lambda m, g, self, other: -g * self / (other * other))
DIV_SCALAR = row("DivBackward1", lambda xp, self, other: self / other, attrs=("other",),
                 self=lambda m, g, other: g / other)
NEG = row("NegBackward0", lambda xp, self: -self,
          self=lambda m, g: -g)
RECIPROCAL = row("ReciprocalBackward0", lambda xp, self: 1.0 / self, saves=("result",),
                 self=lambda m, g, result: -g * (result * result))
POW_SCALAR = row("PowBackward0", lambda xp, self, exponent: K.power(self, exponent), saves=("self",), attrs=("exponent",),
                 self=lambda m, g, self, exponent:
                     g * (exponent * self ** (exponent - 1)) if exponent != 0 else F.zero_grad(m, g))
# d(x ** y)/dx at x == 0, y == 0 is 0, not 0 * inf. torch masks every y == 0; masking only where x == 0
# too gives the same gradients and keeps the mixed second derivative at y == 0 (1 / x), not 0.
POW_TENSOR = row("PowBackward1", lambda xp, self, exponent: K.power(self, exponent),
                 inputs=("self", "exponent"), saves=("self", "exponent", "result"), **ELEMENTWISE,
                 self=lambda m, g, self, exponent, result:
                     m.where((exponent == 0) & (self == 0), 0.0, g * (exponent * self ** (exponent - 1))),
                 exponent=F.pow_exponent_backward)
RPOW = row("PowBackward2", lambda xp, exponent, self: K.power(self, exponent),
           inputs=("exponent",), saves=("exponent", "result"), attrs=("self",),
           exponent=F.pow_number_base_backward)

# --- matrix products ---------------------------------------------------------------------------
MM = row("MmBackward0", lambda xp, self, mat2: self @ mat2, inputs=("self", "mat2"), saves=("self", "mat2"),
         self=lambda m, g, self, mat2: g @ m.transpose(mat2, 0, 1),
         mat2=lambda m, g, self, mat2: m.transpose(self, 0, 1) @ g)
MV = row("MvBackward0", lambda xp, self, vec: self @ vec, inputs=("self", "vec"), saves=("self", "vec"),
         self=lambda m, g, self, vec: g.reshape((-1, 1)) * vec.reshape((1, -1)),
         vec=lambda m, g, self, vec: m.transpose(self, 0, 1) @ g)
DOT = row("DotBackward0", lambda xp, self, tensor: self @ tensor, inputs=("self", "tensor"),
          saves=("self", "tensor"),
          self=lambda m, g, self, tensor: g * tensor,
          tensor=lambda m, g, self, tensor: g * self)
BMM = row("BmmBackward0", lambda xp, self, mat2: xp.matmul(self, mat2),
          inputs=("self", "mat2"), saves=("self", "mat2"), broadcasts=True,
          self=lambda m, g, self, mat2: g @ m.transpose(mat2, -1, -2),
          mat2=lambda m, g, self, mat2: m.transpose(self, -1, -2) @ g)
ADDMM = row("AddmmBackward0", lambda xp, self, mat1, mat2: K.addmm(self, mat1, mat2),
            inputs=("self", "mat1", "mat2"), saves=("mat1", "mat2"), broadcasts=True,
            self=lambda m, g, mat1, mat2: g,
            mat1=lambda m, g, mat1, mat2: g @ m.transpose(mat2, 0, 1),
            mat2=F.addmm_mat2_backward)

# --- pointwise ---------------------------------------------------------------------------------
EXP = row("ExpBackward0", lambda xp, self: xp.exp(K.floating(self)), saves=("result",),
          self=lambda m, g, result: g * result)
LOG = row("LogBackward0", lambda xp, self: xp.log(K.floating(self)), saves=("self",),
          self=lambda m, g, self: g / self)
LOG1P = row("Log1PBackward0", lambda xp, self: xp.log1p(K.floating(self)), saves=("self",),
            self=lambda m, g, self: g / (self + 1))
SQRT = row("SqrtBackward0", lambda xp, self: xp.sqrt(K.floating(self)), saves=("result",),
           self=lambda m, g, result: g / (2 * result))
SIN = row("SinBackward0", lambda xp, self: xp.sin(K.floating(self)), saves=("self",),
          self=lambda m, g, self: g * m.cos(self))
COS = row("CosBackward0", lambda xp, self: xp.cos(K.floating(self)), saves=("self",),
          self=lambda m, g, self: g * -m.sin(self))
TANH = row("TanhBackward0", lambda xp, self: xp.tanh(K.floating(self)), saves=("result",),
           self=lambda m, g, result: g * (1 - result * result))
SIGMOID = row("SigmoidBackward0", lambda xp, self: 1 / (1 + xp.exp(-K.floating(self))), saves=("result",),
              self=lambda m, g, result: g * (result * (1 - result)))
RELU = row("ReluBackward0", lambda xp, self: xp.maximum(self, 0), saves=("result",),
           self=lambda m, g, result: m.threshold_backward(g, result, 0))
LEAKY_RELU = row("LeakyReluBackward0", lambda xp, self, negative_slope: xp.where(self > 0, self, self * negative_slope),
                 saves=("self",), attrs=("negative_slope",),
                 self=lambda m, g, self, negative_slope: m.leaky_relu_backward(g, self, negative_slope))
# The backwards of relu and leaky_relu are ops of (grad, self), as in PyTorch: under create_graph the
# gradient depends on self (with derivative zero), so it requires grad even where it is all zeros.
THRESHOLD_BACKWARD = row("ThresholdBackwardBackward0",
                         lambda xp, grad_output, self, threshold: grad_output * (self > threshold),
                         inputs=("grad_output", "self"), saves=("self",), attrs=("threshold",),
                         grad_output=lambda m, g, self, threshold: m.threshold_backward(g, self, threshold),
                         self=lambda m, g, self, threshold: m.zeros(g.shape, g))
LEAKY_RELU_BACKWARD = row("LeakyReluBackwardBackward0",
                          lambda xp, grad_output, self, negative_slope:
                              xp.where(self > 0, grad_output, grad_output * negative_slope),
                          inputs=("grad_output", "self"), saves=("self",), attrs=("negative_slope",),
                          grad_output=lambda m, g, self, negative_slope:
                              m.leaky_relu_backward(g, self, negative_slope),
                          self=lambda m, g, self, negative_slope: m.zeros(g.shape, g))
GELU = row("GeluBackward0", lambda xp, self, approximate: K.gelu(xp, self, approximate),
           saves=("self",), attrs=("approximate",), self=F.gelu_backward)
ERF = row("ErfBackward0", lambda xp, self: K.erf(xp, K.floating(self)), saves=("self",),
          self=lambda m, g, self: g * (2 / math.sqrt(math.pi)) * m.exp(-self * self))
ABS = row("AbsBackward0", lambda xp, self: K.absolute(xp, self), saves=("self",),
          self=lambda m, g, self: g * m.sign(self))
SIGN = row("SignBackward0", lambda xp, self: K.sign(xp, self), self=F.zero_grad)
CLAMP = row("ClampBackward1", lambda xp, self, min, max: xp.clip(self, min, max), saves=("self",),
            attrs=("min", "max"),
            self=lambda m, g, self, min, max: g * F.clamp_mask(self, min, max))
CLAMP_TENSOR = row("ClampBackward0", lambda xp, self, min, max: xp.clip(self, min, max),
                   inputs=("self", "min", "max"), saves=("self", "min", "max"), **ELEMENTWISE,
                   self=lambda m, g, self, min, max: m.where(F.clamp_mask(self, min, max), g, 0.0),
                   min=F.clamp_min_grad, max=F.clamp_max_grad)
MAXIMUM = row("MaximumBackward0", lambda xp, self, other: xp.maximum(self, other),
              inputs=("self", "other"), saves=("self", "other"), **ELEMENTWISE,
              self=lambda m, g, self, other: F.pairwise_grad(m, g, self == other, self < other),
              other=lambda m, g, self, other: F.pairwise_grad(m, g, self == other, self > other))
MINIMUM = row("MinimumBackward0", lambda xp, self, other: xp.minimum(self, other),
              inputs=("self", "other"), saves=("self", "other"), **ELEMENTWISE,
              self=lambda m, g, self, other: F.pairwise_grad(m, g, self == other, self > other),
              other=lambda m, g, self, other: F.pairwise_grad(m, g, self == other, self < other))
WHERE = row("WhereBackward0", lambda xp, self, other, condition: xp.where(condition, self, other),
            inputs=("self", "other"), attrs=("condition",), frees=("condition",), **ELEMENTWISE,
            self=lambda m, g, condition: m.where(condition, g, 0.0),
            other=lambda m, g, condition: m.where(condition, 0.0, g))
MASKED_FILL = row("MaskedFillBackward0", lambda xp, self, mask, value: xp.where(mask, value, self),
                  attrs=("mask", "value"),
                  self=lambda m, g, mask, value: m.where(mask, 0.0, g))

# --- reductions --------------------------------------------------------------------------------
SUM = row("SumBackward0", lambda xp, self, self_sym_sizes: self.sum(), attrs=("self_sym_sizes",),
          self=lambda m, g, self_sym_sizes: m.expand(g, self_sym_sizes))
SUM_DIM = row("SumBackward1",
              lambda xp, self, self_sym_sizes, dim, keepdim: self.sum(axis=dim, keepdims=keepdim),
              attrs=("self_sym_sizes", "dim", "keepdim"),
              self=lambda m, g, self_sym_sizes, dim, keepdim:
                  m.expand(F.unreduce(g, self_sym_sizes, dim, keepdim), self_sym_sizes))
MEAN = row("MeanBackward0", lambda xp, self, self_sym_sizes, self_sym_numel: self.mean(),
           attrs=("self_sym_sizes", "self_sym_numel"),
           self=lambda m, g, self_sym_sizes, self_sym_numel: m.expand(g, self_sym_sizes) / self_sym_numel)
MEAN_DIM = row("MeanBackward1",
               lambda xp, self, self_sym_sizes, dim, keepdim: self.mean(axis=dim, keepdims=keepdim),
               attrs=("self_sym_sizes", "dim", "keepdim"),
               self=lambda m, g, self_sym_sizes, dim, keepdim:
                   m.expand(F.unreduce(g, self_sym_sizes, dim, keepdim), self_sym_sizes)
                   / F.count(self_sym_sizes, dim))
VAR = row("VarBackward0",
          lambda xp, self, dim, correction, keepdim: self.var(axis=dim, ddof=correction, keepdims=keepdim),
          saves=("self",), attrs=("dim", "correction", "keepdim"),
          self=lambda m, g, self, dim, correction, keepdim: (2.0 / (F.count(self.shape, dim) - correction))
              * F.unreduce(g, self.shape, dim, keepdim) * (self - m.mean(self, dim, True)))
STD = row("StdBackward0",
          lambda xp, self, dim, correction, keepdim: self.std(axis=dim, ddof=correction, keepdims=keepdim),
          saves=("self", "result"), attrs=("dim", "correction", "keepdim"),
          self=lambda m, g, self, result, dim, correction, keepdim: F.unreduce(g, self.shape, dim, keepdim)
              * (self - m.mean(self, dim, True))
              / (F.unreduce(result, self.shape, dim, keepdim) * (F.count(self.shape, dim) - correction)))
MAX = row("MaxBackward1", lambda xp, self: self.max(), saves=("self", "result"),
          self=lambda m, g, self, result: g * (self == result) / (self == result).sum())
MIN = row("MinBackward1", lambda xp, self: self.min(), saves=("self", "result"),
          self=lambda m, g, self, result: g * (self == result) / (self == result).sum())
MAX_DIM = row("MaxBackward0",
              lambda xp, self, self_sym_sizes, dim, keepdim, indices: self.max(axis=dim, keepdims=keepdim),
              attrs=("self_sym_sizes", "dim", "keepdim", "indices"), frees=("indices",),
              self=lambda m, g, self_sym_sizes, dim, keepdim, indices: m.index_grad(
                  F.unreduce(g, self_sym_sizes, (dim,), keepdim), self_sym_sizes, indices, True))
MIN_DIM = row("MinBackward0",
              lambda xp, self, self_sym_sizes, dim, keepdim, indices: self.min(axis=dim, keepdims=keepdim),
              attrs=("self_sym_sizes", "dim", "keepdim", "indices"), frees=("indices",),
              self=lambda m, g, self_sym_sizes, dim, keepdim, indices: m.index_grad(
                  F.unreduce(g, self_sym_sizes, (dim,), keepdim), self_sym_sizes, indices, True))
NORM = row("LinalgVectorNormBackward0",
           lambda xp, self, ord, dim, keepdim: xp.sqrt((self * self).sum(axis=dim, keepdims=keepdim)) if ord == 2
           else (xp.abs(self) ** ord).sum(axis=dim, keepdims=keepdim) ** (1.0 / ord),
           saves=("self", "result"), attrs=("ord", "dim", "keepdim"), self=F.norm_backward)
SOFTMAX = row("SoftmaxBackward0", lambda xp, self, dim: K.softmax(xp, self, dim),
              saves=("result",), attrs=("dim",),
              self=lambda m, g, result, dim: result * (g - m.sum(g * result, dim, True)))
LOG_SOFTMAX = row("LogSoftmaxBackward0", lambda xp, self, dim: K.log_softmax(xp, self, dim),
                  saves=("result",), attrs=("dim",),
                  self=lambda m, g, result, dim: g - m.exp(result) * m.sum(g, dim, True))

# --- shapes and views (forwards return views of the input) -----------------------------------
VIEW = row("ViewBackward0", lambda xp, self, self_sym_sizes, size: self.reshape(size),
           attrs=("self_sym_sizes", "size"),
           self=lambda m, g, self_sym_sizes, size: g.reshape(self_sym_sizes))
UNSAFE_VIEW = row("UnsafeViewBackward0", lambda xp, self, self_sym_sizes, size: self.reshape(size),
                  attrs=("self_sym_sizes", "size"),
                  self=lambda m, g, self_sym_sizes, size: g.reshape(self_sym_sizes))
SQUEEZE = {name: row(name, lambda xp, self, self_sym_sizes, size: self.reshape(size),
                     attrs=("self_sym_sizes", "size"),
                     self=lambda m, g, self_sym_sizes, size: g.reshape(self_sym_sizes))
           for name in ("SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "SqueezeBackward4",
                        "UnsqueezeBackward0")}
T = row("TBackward0", lambda xp, self: self.T,
        self=lambda m, g: g if g.ndim < 2 else m.transpose(g, 0, 1))
TRANSPOSE = row("TransposeBackward0", lambda xp, self, dim0, dim1: xp.swapaxes(self, dim0, dim1),
                attrs=("dim0", "dim1"),
                self=lambda m, g, dim0, dim1: m.transpose(g, dim0, dim1))
PERMUTE = row("PermuteBackward0", lambda xp, self, dims, inverse: self.transpose(dims), attrs=("dims", "inverse"),
              self=lambda m, g, dims, inverse: m.permute(g, inverse))
EXPAND = row("ExpandBackward0", lambda xp, self, self_sym_sizes, size: xp.broadcast_to(self, size),
             attrs=("self_sym_sizes", "size"),
             self=lambda m, g, self_sym_sizes, size: m.sum_to(g, self_sym_sizes))
SELECT = row("SelectBackward0", lambda xp, self, self_sym_sizes, dim, index, key: self[key],
             attrs=("self_sym_sizes", "dim", "index", "key"),
             self=lambda m, g, self_sym_sizes, dim, index, key: m.index_grad(g, self_sym_sizes, key, True))
SLICE = row("SliceBackward0", lambda xp, self, self_sym_sizes, dim, start, end, step, key: self[key],
            attrs=("self_sym_sizes", "dim", "start", "end", "step", "key"),
            self=lambda m, g, self_sym_sizes, dim, start, end, step, key:
                m.index_grad(g, self_sym_sizes, key, True))
ALIAS = row("AliasBackward0", lambda xp, self: self[...], self=lambda m, g: g)
AS_STRIDED = row("AsStridedBackward0", lambda xp, self, self_sym_sizes, view_fn: view_fn(xp, self),
                 attrs=("self_sym_sizes", "view_fn"),
                 self=lambda m, g, self_sym_sizes, view_fn: m.embed(g, self_sym_sizes, view_fn))

# --- copies, indexing, joining -------------------------------------------------------------------
CLONE = row("CloneBackward0", lambda xp, self: self.copy(), self=lambda m, g: g)
TO_COPY = row("ToCopyBackward0",
              lambda xp, self, dtype, device, self_dtype, self_device: K.to_copy(self, dtype, device),
              attrs=("dtype", "device", "self_dtype", "self_device"),
              self=lambda m, g, dtype, device, self_dtype, self_device: m.to(g, self_dtype, self_device))
INDEX = row("IndexBackward0", lambda xp, self, self_sym_sizes, indices: self[indices],
            attrs=("self_sym_sizes", "indices"), frees=("indices",),
            self=lambda m, g, self_sym_sizes, indices: m.index_grad(g, self_sym_sizes, indices, False))
INDEX_GRAD = row("IndexBackwardBackward0",
                 lambda xp, grad, self_sym_sizes, indices, basic:
                     array_math(grad).index_grad(grad, self_sym_sizes, indices, basic),
                 inputs=("grad",), attrs=("self_sym_sizes", "indices", "basic"),
                 grad=lambda m, g, self_sym_sizes, indices, basic: g[indices])
CAT = row("CatBackward0", lambda xp, tensors, dim, sizes: xp.concatenate(tensors, axis=dim),
          inputs=("tensors",), variadic=True, attrs=("dim", "sizes"),
          joint=lambda m, g, dim, sizes: F.split_backward(g, dim, sizes))
STACK = row("StackBackward0", lambda xp, tensors, dim, n: xp.stack(tensors, axis=dim),
            inputs=("tensors",), variadic=True, attrs=("dim", "n"),
            joint=lambda m, g, dim, n: [g[(slice(None),) * dim + (i,)] for i in range(n)])

# --- in-place building blocks (applied through ops.inplace) ------------------------------------
COPY = row("CopyBackwards", lambda xp, self, src: xp.broadcast_to(src, self.shape).astype(self.dtype, copy=True),
           inputs=("self", "src"), broadcasts=True,
           self=lambda m, g: g * 0.0,
           src=lambda m, g: g)
FILL = row("FillBackward0", lambda xp, self, value: xp.full_like(self, value), attrs=("value",),
           self=lambda m, g, value: g * 0.0)
ZERO = row("ZeroBackward0", lambda xp, self: xp.zeros_like(self), self=lambda m, g: g * 0.0)
INDEX_PUT = row("IndexPutBackward0", lambda xp, self, values, indices: K.index_put(self, values, indices),
                inputs=("self", "values"), attrs=("indices",), frees=("indices",), broadcasts=True,
                self=lambda m, g, indices: m.zero_at(g, indices),
                values=lambda m, g, indices: g[indices])

# =================================================================================================
# --- nn ------------------------------------------------------------------------------------------
# Rows behind engine.nn.functional. Statistics, indices and masks that a forward needs are
# worked out by engine/nn/functional and passed in as attrs, the way MAX_DIM gets its indices.
# =================================================================================================
CONVOLUTION = row("ConvolutionBackward0",
                  lambda xp, input, weight, bias, stride, padding, dilation, groups, columns:
                      K.conv_forward(xp, input, weight, bias, stride, padding, dilation, groups, columns),
                  inputs=("input", "weight", "bias"), saves=("input", "weight"),
                  attrs=("stride", "padding", "dilation", "groups", "columns"),
                  input=F.conv_input_backward, weight=F.conv_weight_backward,
                  bias=lambda m, g, input, weight, stride, padding, dilation, groups, columns:
                      m.sum(g, F.channel_dims(g), False))
IM2COL = row("Im2ColBackward0",
             lambda xp, self, self_sym_sizes, kernel_size, stride, padding, dilation:
                 K.im2col(xp, self, kernel_size, stride, padding, dilation),
             attrs=("self_sym_sizes", "kernel_size", "stride", "padding", "dilation"),
             self=lambda m, g, self_sym_sizes, kernel_size, stride, padding, dilation:
                 m.fold(g, self_sym_sizes, kernel_size, stride, padding, dilation))
COL2IM = row("Col2ImBackward0",
             lambda xp, self, output_size, kernel_size, stride, padding, dilation:
                 K.col2im(xp, self, output_size, kernel_size, stride, padding, dilation),
             attrs=("output_size", "kernel_size", "stride", "padding", "dilation"),
             self=lambda m, g, output_size, kernel_size, stride, padding, dilation:
                 m.unfold(g, kernel_size, stride, padding, dilation))
MAX_POOL_TIE = tied_to_self("MaxPool2DWithIndicesBackward0")
MAX_POOL = row("MaxPool2DWithIndicesBackward0",
               lambda xp, self, self_sym_sizes, kernel_size, stride, padding, dilation, ceil_mode, result1, unique:
                   xp.take(self, result1),
               saves=("self",),
               attrs=("self_sym_sizes", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "result1",
                      "unique"), frees=("result1",),
               self=lambda m, g, self, self_sym_sizes, kernel_size, stride, padding, dilation, ceil_mode, result1,
                           unique:
                   m.tie(F.scatter_flat(m, g, self_sym_sizes, result1, unique), self, MAX_POOL_TIE))
AVG_POOL_TIE = tied_to_self("AvgPool2DBackward0")
AVG_POOL = row("AvgPool2DBackward0",
               lambda xp, self, self_sym_sizes, kernel_size, stride, pads, output_size, divisor, ceil_mode,
                      count_include_pad, divisor_override:
                   K.window_sum(xp, self, kernel_size, stride, pads, output_size) / divisor,
               saves=("self",),
               attrs=("self_sym_sizes", "kernel_size", "stride", "pads", "output_size", "divisor", "ceil_mode",
                      "count_include_pad", "divisor_override"),
               self=lambda m, g, self, self_sym_sizes, kernel_size, stride, pads, output_size, divisor, ceil_mode,
                           count_include_pad, divisor_override:
                   m.tie(F.avg_pool_backward(m, g, self_sym_sizes, kernel_size, stride, pads, divisor), self,
                         AVG_POOL_TIE))
NATIVE_BATCH_NORM = row("NativeBatchNormBackward0",
                        lambda xp, input, weight, bias, training, eps, result1, result2:
                            K.batch_norm(input, weight, bias, result1, result2),
                        inputs=("input", "weight", "bias"), saves=("input", "weight"),
                        attrs=("training", "eps", "result1", "result2"),
                        joint=F.batch_norm_backward)
NATIVE_LAYER_NORM = row("NativeLayerNormBackward0",
                        lambda xp, input, weight, bias, normalized_shape, eps, result1, result2:
                            K.layer_norm(input, weight, bias, result1, result2),
                        inputs=("input", "weight", "bias"), saves=("input", "weight"),
                        attrs=("normalized_shape", "eps", "result1", "result2"),
                        joint=F.layer_norm_backward)
EMBEDDING = row("EmbeddingBackward0",
                lambda xp, weight, weight_sym_argsize_0, indices, padding_idx, scale_grad_by_freq, grad_scale:
                    xp.take(weight, indices, axis=0),
                inputs=("weight",),
                attrs=("weight_sym_argsize_0", "indices", "padding_idx", "scale_grad_by_freq", "grad_scale"),
                frees=("indices",),
                weight=lambda m, g, weight_sym_argsize_0, indices, padding_idx, scale_grad_by_freq, grad_scale:
                    m.index_grad((g if grad_scale is None else g * grad_scale).reshape((-1, g.shape[-1])),
                                 (weight_sym_argsize_0, g.shape[-1]), indices.reshape(-1), False))
CONSTANT_PAD = row("ConstantPadNdBackward0",
                   lambda xp, self, pad, value, result_sym_sizes, out_key, in_key, self_sym_sizes:
                       K.constant_pad(xp, self, value, result_sym_sizes, out_key, in_key),
                   attrs=("pad", "value", "result_sym_sizes", "out_key", "in_key", "self_sym_sizes"),
                   self=F.constant_pad_backward)
def index_pad(name: str) -> Op:
    """A reflection or replication pad: a gather by `key`, tied to self under create_graph as in torch."""
    tie = tied_to_self(name)
    return row(name, lambda xp, self, padding, self_sym_sizes, key: self[key],
               saves=("self",), attrs=("padding", "self_sym_sizes", "key"),
               self=lambda m, g, self, padding, self_sym_sizes, key:
                   m.tie(m.index_grad(g, self_sym_sizes, key, False), self, tie))


INDEX_PAD = {name: index_pad(name)
             for kind in ("Reflection", "Replication") for name in (f"{kind}Pad{k}DBackward0" for k in (1, 2, 3))}

# --- losses --------------------------------------------------------------------------------------
MSE_LOSS = row("MseLossBackward0",
               lambda xp, self, target, reduction: K.reduce((self - target) * (self - target), reduction),
               inputs=("self", "target"), saves=("self", "target"), attrs=("reduction",), broadcasts=True,
               self=lambda m, g, self, target, reduction:
                   (self - target) * (2.0 * F.reduced_grad(g, self, reduction)),
               target=lambda m, g, self, target, reduction:
                   (self - target) * (-2.0 * F.reduced_grad(g, self, reduction)))
SMOOTH_L1_LOSS = row("SmoothL1LossBackward0",
                     lambda xp, self, target, reduction, beta: K.smooth_l1_loss(xp, self, target, reduction, beta),
                     inputs=("self", "target"), saves=("self", "target"), attrs=("reduction", "beta"),
                     broadcasts=True,
                     self=F.smooth_l1_backward, target=F.smooth_l1_target_backward)
def nll_loss(name: str) -> Op:
    """nll_loss: the picked entries, weighted and reduced; tied to self under create_graph as in torch."""
    tie = tied_to_self(name)
    return row(name, lambda xp, self, self_sym_sizes, indices, coef, reduction, total_weight:
                   K.nll_loss(self, indices, coef, reduction, total_weight),
               saves=("self",), attrs=("self_sym_sizes", "indices", "coef", "reduction", "total_weight"),
               frees=("total_weight",),
               self=lambda m, g, self, self_sym_sizes, indices, coef, reduction, total_weight: m.tie(
                   m.index_grad(g * (-coef / total_weight if reduction == "mean" else -coef), self_sym_sizes,
                                indices, True), self, tie))


NLL_LOSS = {name: nll_loss(name) for name in ("NllLossBackward0", "NllLoss2DBackward0")}
BINARY_CROSS_ENTROPY = row("BinaryCrossEntropyBackward0",
                           lambda xp, self, target, weight, reduction:
                               K.binary_cross_entropy(xp, self, target, weight, reduction),
                           inputs=("self", "target"), saves=("self", "target"), attrs=("weight", "reduction"),
                           broadcasts=True,
                           self=F.binary_cross_entropy_backward, target=F.binary_cross_entropy_target_backward)
BCE_WITH_LOGITS = row("BinaryCrossEntropyWithLogitsBackward0",
                      lambda xp, self, target, weight, pos_weight, reduction:
                          K.binary_cross_entropy_with_logits(xp, self, target, weight, pos_weight, reduction),
                      inputs=("self", "target"), saves=("self", "target"),
                      attrs=("weight", "pos_weight", "reduction"), broadcasts=True,
                      self=F.binary_cross_entropy_with_logits_backward,
                      target=F.binary_cross_entropy_with_logits_target_backward)

# =================================================================================================
# --- elementwise ---------------------------------------------------------------------------------
# Rows behind engine/ops/pointwise.py. Integer and bool inputs never require grad, so a forward may
# compute them in the default dtype (K.floating) without a node of its own. Rounding ops have zero
# gradients; ops PyTorch does not differentiate record a NotImplemented node that raises in backward.
# =================================================================================================
FLOOR = row("FloorBackward0", lambda xp, self: K.integral_rounding(xp.floor, self, "floor_vml_cpu"),
            self=F.zero_grad)
CEIL = row("CeilBackward0", lambda xp, self: K.integral_rounding(xp.ceil, self, "ceil_vml_cpu"),
           self=F.zero_grad)
TRUNC = row("TruncBackward0", lambda xp, self: K.integral_rounding(xp.trunc, self, "trunc_vml_cpu"),
            self=F.zero_grad)
ROUND = row("RoundBackward0", lambda xp, self: K.integral_rounding(xp.rint, self, "round_vml_cpu"),
            self=F.zero_grad)
ROUND_DECIMALS = row("RoundBackward1", lambda xp, self, decimals: K.round_decimals(xp, self, decimals),
                     attrs=("decimals",), self=lambda m, g, decimals: F.zero_grad(m, g))
FRAC = row("FracBackward0", lambda xp, self: K.frac(xp, self), self=lambda m, g: g)
SGN = row("SgnBackward0", lambda xp, self: K.sign(xp, self), saves=("self", "result"),
          self=lambda m, g, self, result: F.zero_grad(m, g))
RSQRT = row("RsqrtBackward0", lambda xp, self: 1 / xp.sqrt(K.floating(self)), saves=("result",),
            self=lambda m, g, result: -0.5 * g * (result * result * result))
TAN = row("TanBackward0", lambda xp, self: xp.tan(K.floating(self)), saves=("result",),
          self=lambda m, g, result: g * (1 + result * result))
ASIN = row("AsinBackward0", lambda xp, self: xp.arcsin(K.floating(self)), saves=("self",),
           self=lambda m, g, self: g * m.rsqrt(1 - self * self))
ACOS = row("AcosBackward0", lambda xp, self: xp.arccos(K.floating(self)), saves=("self",),
           self=lambda m, g, self: g * -m.rsqrt(1 - self * self))
ATAN = row("AtanBackward0", lambda xp, self: xp.arctan(K.floating(self)), saves=("self",),
           self=lambda m, g, self: g / (self * self + 1))
SINH = row("SinhBackward0", lambda xp, self: xp.sinh(K.floating(self)), saves=("self",),
           self=lambda m, g, self: g * m.cosh(self))
COSH = row("CoshBackward0", lambda xp, self: xp.cosh(K.floating(self)), saves=("self",),
           self=lambda m, g, self: g * m.sinh(self))
ASINH = row("AsinhBackward0", lambda xp, self: xp.arcsinh(K.floating(self)), saves=("self",),
            self=lambda m, g, self: g * m.rsqrt(self * self + 1))
ACOSH = row("AcoshBackward0", lambda xp, self: xp.arccosh(K.floating(self)), saves=("self",),
            self=lambda m, g, self: g * m.rsqrt(self * self - 1))
ATANH = row("AtanhBackward0", lambda xp, self: xp.arctanh(K.floating(self)), saves=("self",),
            self=lambda m, g, self: g / (1 - self * self))
EXPM1 = row("Expm1Backward0", lambda xp, self: xp.expm1(K.floating(self)), saves=("result",),
            self=lambda m, g, result: g * (result + 1))
EXP2 = row("Exp2Backward0", lambda xp, self: xp.exp2(K.floating(self)), saves=("result",),
           self=lambda m, g, result: g * (result * math.log(2.0)))
LOG2 = row("Log2Backward0", lambda xp, self: xp.log2(K.floating(self)), saves=("self",),
           self=lambda m, g, self: g / (self * math.log(2.0)))
LOG10 = row("Log10Backward0", lambda xp, self: xp.log10(K.floating(self)), saves=("self",),
            self=lambda m, g, self: g / (self * math.log(10.0)))
ERFC = row("ErfcBackward0", lambda xp, self: K.erfc(xp, K.floating(self)), saves=("self",),
           self=lambda m, g, self: g * (-2 / math.sqrt(math.pi)) * m.exp(-self * self))
ERFINV = row("ErfinvBackward0", lambda xp, self: K.erfinv(xp, K.floating(self)), saves=("self",),
             self=lambda m, g, self: g * (0.5 * math.sqrt(math.pi)) * m.exp(m.erfinv(self) ** 2))
# asinh_, acosh_ and atanh_ of a tensor that requires grad: PyTorch records a node whose backward refuses.
INPLACE_NOT_DIFFERENTIABLE = {
    name: row(f"{name.capitalize()}Backward1", op.forward, self=F.inplace_not_implemented(name))
    for name, op in (("asinh", ASINH), ("acosh", ACOSH), ("atanh", ATANH))
}
NAN_TO_NUM = row("NanToNumBackward0",
                 lambda xp, self, nan, posinf, neginf: K.nan_to_num(xp, self, nan, posinf, neginf),
                 saves=("self",), attrs=("nan", "posinf", "neginf"),
                 self=lambda m, g, self, nan, posinf, neginf: g * m.isfinite(self))

ATAN2 = row("Atan2Backward0", lambda xp, self, other: xp.arctan2(K.floating(self), K.floating(other)),
            inputs=("self", "other"), saves=("self", "other"), **ELEMENTWISE,
            self=lambda m, g, self, other: g * other / (self * self + other * other),
            other=lambda m, g, self, other: g * -self / (self * self + other * other))
COPYSIGN = row("CopysignBackward0", lambda xp, self, other: xp.copysign(K.floating(self), K.floating(other)),
               inputs=("self", "other"), saves=("self", "result"), **ELEMENTWISE,
               self=F.copysign_backward,
               other=lambda m, g, self, result: F.zero_grad(m, g))
COPYSIGN_SCALAR = row("CopysignBackward1", lambda xp, self, other: xp.copysign(K.floating(self), other),
                      saves=("self", "result"), attrs=("other",),
                      self=lambda m, g, self, result, other: F.copysign_backward(m, g, self, result))
FMOD = row("FmodBackward1", lambda xp, self, other: K.fmod(xp, self, other),
           inputs=("self", "other"), saves=("self", "other"), **ELEMENTWISE,
           self=lambda m, g, self, other: g,
           other=lambda m, g, self, other: -g * m.div_trunc(self, other))
FMOD_SCALAR = row("FmodBackward0", lambda xp, self, other: K.fmod(xp, self, other), attrs=("other",),
                  self=lambda m, g, other: g)
REMAINDER = row("RemainderBackward1", lambda xp, self, other: K.remainder(xp, self, other),
                inputs=("self", "other"), saves=("self", "other"), **ELEMENTWISE,
                self=lambda m, g, self, other: g,
                other=lambda m, g, self, other: -g * m.div_floor(self, other))
REMAINDER_SCALAR = row("RemainderBackward0", lambda xp, self, other: K.remainder(xp, self, other),
                       attrs=("other",), self=lambda m, g, other: g)
HYPOT = row("HypotBackward0", lambda xp, self, other: K.float_only(xp.hypot, self, other, "hypot_cpu"),
            inputs=("self", "other"), saves=("self", "other", "result"), **ELEMENTWISE,
            self=lambda m, g, self, other, result: g * self / result,
            other=lambda m, g, self, other, result: g * other / result)
LOGADDEXP = row("LogaddexpBackward0",
                lambda xp, self, other: K.float_only(xp.logaddexp, self, other, "logaddexp_cpu"),
                inputs=("self", "other"), saves=("self", "other"), **ELEMENTWISE,
                self=lambda m, g, self, other: g / (1 + m.exp(other - self)),
                other=lambda m, g, self, other: g / (1 + m.exp(self - other)))
LOGADDEXP2 = row("Logaddexp2Backward0",
                 lambda xp, self, other: K.float_only(xp.logaddexp2, self, other, "logaddexp2_cpu"),
                 inputs=("self", "other"), saves=("self", "other"), **ELEMENTWISE,
                 self=lambda m, g, self, other: g / (1 + 2 ** (other - self)),
                 other=lambda m, g, self, other: g / (1 + 2 ** (self - other)))
XLOGY = row("XlogyBackward0", lambda xp, self, other: K.xlogy(xp, self, other),
            inputs=("self", "other"), saves=("self", "other"), **ELEMENTWISE,
            self=lambda m, g, self, other: F.xlogy_self_backward(m, g, self, other),
            other=lambda m, g, self, other: g * self / other)
XLOGY_NUMBER_SELF = row("XlogyBackward1", lambda xp, other, self: K.xlogy(xp, self, other),
                        inputs=("other",), saves=("other",), attrs=("self",),
                        other=lambda m, g, other, self: g * self / other)
XLOGY_NUMBER_OTHER = row("XlogyBackward2", lambda xp, self, other: K.xlogy(xp, self, other),
                         saves=("self",), attrs=("other",),
                         self=F.xlogy_self_backward)
LERP = row("LerpBackward0", lambda xp, self, end, weight: K.lerp(xp, self, end, weight, "lerp_kernel_scalar"),
           inputs=("self", "end"), attrs=("weight",), broadcasts=True,
           self=lambda m, g, weight: g * (1 - weight),
           end=lambda m, g, weight: g * weight)
LERP_TENSOR = row("LerpBackward1",
                  lambda xp, self, end, weight: K.lerp(xp, self, end, weight, "lerp_kernel_tensor"),
                  inputs=("self", "end", "weight"), saves=("self", "end", "weight"), broadcasts=True,
                  self=lambda m, g, self, end, weight: g * (1 - weight),
                  end=lambda m, g, self, end, weight: g * weight,
                  weight=lambda m, g, self, end, weight: g * (end - self))
DIV_MODE = row("DivBackward2",
               lambda xp, self, other, rounding_mode: K.div_rounded(xp, self, other, rounding_mode),
               inputs=("self", "other"), saves=("self", "other"), attrs=("rounding_mode",), **ELEMENTWISE,
               self=lambda m, g, self, other, rounding_mode:
                   F.zero_grad(m, g) if rounding_mode else g / other,
               other=lambda m, g, self, other, rounding_mode:
                   F.zero_grad(m, g) if rounding_mode else -g * ((self / other) / other))
NOT_IMPLEMENTED = "engine::autograd::NotImplemented"  # PyTorch's node for an op it cannot differentiate
FLOOR_DIVIDE = row(NOT_IMPLEMENTED, lambda xp, self, other: K.div_rounded(xp, self, other, "floor"),
                   inputs=("self", "other"), **ELEMENTWISE,
                   self=lambda m, g: F.not_implemented("floor_divide"),
                   other=lambda m, g: F.not_implemented("floor_divide"))
FLOOR_DIVIDE_NUMBER = row(NOT_IMPLEMENTED, lambda xp, self, other: K.div_rounded(xp, self, other, "floor"),
                          attrs=("other",), self=lambda m, g, other: F.not_implemented("floor_divide"))
REMAINDER_NUMBER_SELF = row(NOT_IMPLEMENTED, lambda xp, other, self: K.remainder(xp, self, other),
                            inputs=("other",), attrs=("self",),
                            other=lambda m, g, self: F.not_implemented("remainder"))
# fmt: on
