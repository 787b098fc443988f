"""The nn rows of the derivative table (ops/derivatives.py gathers them; op.py `row`)."""

from __future__ import annotations

from ..namespaces import array_math
from ..op import BIASED_PRODUCT, ELEMENTWISE, SYMMETRIC, Op, no_forward_ad, row, tied_to_self, with_jvp
from ..pointwise import kernels as pointwise_kernels
from ..reductions import kernels as reductions_kernels
from . import formulas as F
from . import kernels as K

# fmt: off

# --- convolution, pooling, norms, embedding, padding ---------------------------------------------
# Rows behind engine.nn.functional. Statistics, indices and masks that a forward needs are
# worked out by engine/nn/functional and passed in as attrs, the way MAX_DIM gets its indices.
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
def avg_pool(name: str) -> Op:
    """An average pooling of any dimension (AvgPool2DBackward0, AvgPool3DBackward0), tied to self as in torch."""
    tie = tied_to_self(name)
    return row(name,
               lambda xp, self, self_sym_sizes, kernel_size, stride, pads, output_size, divisor, ceil_mode,
                      count_include_pad, divisor_override:
                   K.window_sum(xp, self, kernel_size, stride, pads, output_size) / divisor,
               saves=("self",),
               attrs=("self_sym_sizes", "kernel_size", "stride", "pads", "output_size", "divisor", "ceil_mode",
                      "count_include_pad", "divisor_override"),
               self=lambda m, g, self, self_sym_sizes, kernel_size, stride, pads, output_size, divisor, ceil_mode,
                           count_include_pad, divisor_override:
                   m.tie(F.avg_pool_backward(m, g, self_sym_sizes, kernel_size, stride, pads, divisor), self, tie))


AVG_POOL = avg_pool("AvgPool2DBackward0")
NATIVE_BATCH_NORM = row("NativeBatchNormBackward0",
                        lambda xp, input, weight, bias, training, eps, result1, result2:
                            K.batch_norm(input, weight, bias, result1, result2),
                        inputs=("input", "weight", "bias"), saves=("input", "weight"),
                        attrs=("training", "eps", "result1", "result2"),
                        joint=F.batch_norm_backward)
NATIVE_LAYER_NORM = row("NativeLayerNormBackward0",
                        lambda xp, input, weight, bias, normalized_shape, eps, result1, result2, xhat:
                            K.layer_norm(input, weight, bias, result1, result2, xhat),
                        inputs=("input", "weight", "bias"), saves=("input", "weight"),
                        attrs=("normalized_shape", "eps", "result1", "result2", "xhat"), keeps=("xhat",),
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
# --- activations, distances, losses, norms, pooling, upsampling, attention ----------------------
# Rows behind the rest of engine.nn.functional, in the same way: PyTorch's node where it has a
# dedicated one; compositions (softsign, softmin, normalize, kl_div, ...) stay in nn/functional.
SILU = row("SiluBackward0", lambda xp, self: K.silu(xp, self), saves=("self",), self=F.silu_backward)
MISH = row("MishBackward0", lambda xp, self: K.mish(xp, self), saves=("self",), self=F.mish_backward)
# hardsigmoid and hardtanh: their backwards are ops of (grad, self) in torch, so a mask of self is tied
# to self (under create_graph the gradient requires grad, as torch's does).
HARDSIGMOID_TIE = tied_to_self("HardsigmoidBackward0")
HARDSIGMOID = row("HardsigmoidBackward0", lambda xp, self: K.hardsigmoid(xp, self), saves=("self",),
                  self=lambda m, g, self:
                      m.tie(m.where((self > -3) & (self < 3), g / 6, 0.0), self, HARDSIGMOID_TIE))
HARDSWISH = row("HardswishBackward0", lambda xp, self: self * K.hardsigmoid(xp, self), saves=("self",),
                self=lambda m, g, self: m.where(self < -3, 0.0, m.where(self <= 3, g * (self / 3 + 0.5), g)))
HARDTANH_TIE = tied_to_self("HardtanhBackward0")
HARDTANH = row("HardtanhBackward0",
               lambda xp, self, min_val, max_val: xp.clip(self, min_val, max_val).astype(self.dtype, copy=False),
               saves=("self",), attrs=("min_val", "max_val"),
               self=lambda m, g, self, min_val, max_val:
                   m.tie(m.where((self > min_val) & (self < max_val), g, 0.0), self, HARDTANH_TIE))
ELU = row("EluBackward0", lambda xp, self, alpha, scale, input_scale: K.elu(xp, self, alpha, scale, input_scale),
          saves=("self",), attrs=("alpha", "scale", "input_scale"), self=F.elu_backward)
ELU_ = row("EluBackward1", lambda xp, self, alpha, scale, input_scale: K.elu(xp, self, alpha, scale, input_scale),
           saves=("result",), attrs=("alpha", "scale", "input_scale"), self=F.elu_result_backward)
CELU = row("CeluBackward0", lambda xp, self, alpha: K.elu(xp, self, alpha, 1.0, 1.0 / alpha),
           saves=("self",), attrs=("alpha",),
           self=lambda m, g, self, alpha: F.elu_backward(m, g, self, alpha, 1.0, 1.0 / alpha))
CELU_ = row("CeluBackward1", lambda xp, self, alpha: K.elu(xp, self, alpha, 1.0, 1.0 / alpha),
            saves=("result",), attrs=("alpha",),
            self=lambda m, g, result, alpha: F.elu_result_backward(m, g, result, alpha, 1.0, 1.0 / alpha))
LOG_SIGMOID = row("LogSigmoidBackward0", lambda xp, self: pointwise_kernels.log_sigmoid(xp, self), saves=("self",),
                  self=lambda m, g, self: g * m.sigmoid(-self))
SOFTPLUS = row("SoftplusBackward0", lambda xp, self, beta, threshold: K.softplus(xp, self, beta, threshold),
               saves=("self",), attrs=("beta", "threshold"),
               self=lambda m, g, self, beta, threshold:
                   m.where(self * beta > threshold, g, g * m.sigmoid(self * beta)))
GLU = row("GluBackward0", lambda xp, self, dim: K.glu(xp, self, dim), saves=("self",), attrs=("dim",),
          self=F.glu_backward)

# ATen's own compositions record these where a Python-level expression would not (`x + eps` inside
# pairwise_distance is add.Scalar, AddBackward1; a C++ clamp_min is ClampMinBackward0).
ADD_SCALAR = row("AddBackward1", lambda xp, self, other: self + other, attrs=("other",),
                 self=lambda m, g, other: g)
SUB_SCALAR = row("SubBackward1", lambda xp, self, other: self - other, attrs=("other",),
                 self=lambda m, g, other: g)
CLAMP_MIN = row("ClampMinBackward0", lambda xp, self, min: xp.maximum(self, min), saves=("self",), attrs=("min",),
                self=lambda m, g, self, min: m.where(self >= min, g, 0.0))
CLAMP_MIN_TENSOR = row("ClampMinBackward1", lambda xp, self, min: xp.maximum(self, min), inputs=("self", "min"),
                       saves=("self", "min"), **ELEMENTWISE,
                       self=lambda m, g, self, min: m.where(self >= min, g, 0.0),
                       min=lambda m, g, self, min: m.where(self < min, g, 0.0))
P_NORM = row("NormBackward1", lambda xp, self, p, dim, keepdim: reductions_kernels.vector_norm(xp, self, p, dim, keepdim),
             saves=("self", "result"), attrs=("p", "dim", "keepdim"), self=F.p_norm_backward)
CDIST = row("CdistBackward0", lambda xp, x1, x2, p: K.cdist(xp, x1, x2, p), inputs=("x1", "x2"),
            saves=("x1", "x2", "result"), attrs=("p",), broadcasts=True, joint=F.cdist_backward)
EUCLIDEAN_DIST = row("EuclideanDistBackward0", lambda xp, x1, x2: K.euclidean_dist(xp, x1, x2), inputs=("x1", "x2"),
                     saves=("x1", "x2", "result"), joint=F.euclidean_dist_backward)
HUBER_LOSS = row("HuberLossBackward0",
                 lambda xp, self, target, reduction, delta: K.huber_loss(xp, self, target, reduction, delta),
                 inputs=("self", "target"), saves=("self", "target"), attrs=("reduction", "delta"), broadcasts=True,
                 self=F.huber_backward,
                 target=lambda m, g, self, target, reduction, delta: -F.huber_backward(m, g, self, target, reduction,
                                                                                       delta))
SOFT_MARGIN_LOSS = row("SoftMarginLossBackward0",
                       lambda xp, self, target, reduction: K.reduce(xp.log1p(xp.exp(-self * target)), reduction),
                       saves=("self",), attrs=("target", "reduction"),
                       self=lambda m, g, self, target, reduction:
                           m.sigmoid(self * -target) * (F.reduced_grad(g, self, reduction) * -target))

AVG_POOL3D = avg_pool("AvgPool3DBackward0")
NATIVE_GROUP_NORM = row("NativeGroupNormBackward0",
                        lambda xp, input, weight, bias, N, C, HxW, group, eps, result1, result2:
                            K.group_norm(input, weight, bias, group, result1, result2),
                        inputs=("input", "weight", "bias"), saves=("input", "weight"),
                        attrs=("N", "C", "HxW", "group", "eps", "result1", "result2"),
                        joint=F.group_norm_backward)


def adaptive_avg_pool(name: str) -> Op:
    """An adaptive average pooling: one averaging matrix per pooled dim, tied to self as in torch."""
    tie = tied_to_self(name)
    return row(name, lambda xp, self, matrices: K.along_trailing_dims(xp, self, matrices),
               saves=("self",), attrs=("matrices",),
               self=lambda m, g, self, matrices: m.tie(F.along_trailing_dims_transposed(m, g, matrices), self, tie))


ADAPTIVE_AVG_POOL = {name: adaptive_avg_pool(name)
                     for name in ("AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool3DBackward0")}
ADAPTIVE_MAX_POOL_TIE = tied_to_self("AdaptiveMaxPool2DBackward0")
ADAPTIVE_MAX_POOL2D = row("AdaptiveMaxPool2DBackward0", lambda xp, self, self_sym_sizes, result1: xp.take(self, result1),
                          saves=("self",), attrs=("self_sym_sizes", "result1"), frees=("result1",),
                          self=lambda m, g, self, self_sym_sizes, result1: m.tie(
                              F.scatter_flat(m, g, self_sym_sizes, result1, False), self, ADAPTIVE_MAX_POOL_TIE))
MAX_UNPOOL2D = row("MaxUnpool2DBackward0",
                   lambda xp, self, indices, output_size: K.max_unpool(xp, self, indices, output_size),
                   attrs=("indices", "output_size"), frees=("indices",),
                   self=lambda m, g, indices, output_size: g.reshape((-1,))[indices])
PIXEL_SHUFFLE = row("PixelShuffleBackward0",
                    lambda xp, self, upscale_factor: K.fresh(xp, F.pixel_shuffle(array_math(self), self, upscale_factor),
                                                             self),
                    attrs=("upscale_factor",),
                    self=lambda m, g, upscale_factor: F.pixel_unshuffle(m, g, upscale_factor))
PIXEL_UNSHUFFLE = row("PixelUnshuffleBackward0",
                      lambda xp, self, downscale_factor:
                          K.fresh(xp, F.pixel_unshuffle(array_math(self), self, downscale_factor), self),
                      attrs=("downscale_factor",),
                      self=lambda m, g, downscale_factor: F.pixel_shuffle(m, g, downscale_factor))

EMBEDDING_BAG = row("EmbeddingBagBackward0",
                    lambda xp, weight, per_sample_weights, indices, bags, coef, num_bags, mode, max_indices,
                           grad_scale: K.embedding_bag(xp, weight, per_sample_weights, indices, bags, coef, num_bags,
                                                       mode, max_indices),
                    inputs=("weight", "per_sample_weights"), saves=("weight", "per_sample_weights"),
                    attrs=("indices", "bags", "coef", "num_bags", "mode", "max_indices", "grad_scale"),
                    frees=("indices", "max_indices"), joint=F.embedding_bag_backward)

CONV_TRANSPOSE = row("ConvolutionBackward0",
                     lambda xp, input, weight, bias, stride, padding, dilation, groups, output_padding:
                         K.conv_transpose(xp, input, weight, bias, stride, padding, dilation, groups, output_padding),
                     inputs=("input", "weight", "bias"), saves=("input", "weight"),
                     attrs=("stride", "padding", "dilation", "groups", "output_padding"),
                     input=F.conv_transpose_input_backward, weight=F.conv_transpose_weight_backward,
                     bias=lambda m, g, input, weight, stride, padding, dilation, groups, output_padding:
                         m.sum(g, F.channel_dims(g), False))

def upsample(name: str) -> Op:
    """An upsampling: a gather along the trailing dims (nearest), or one interpolation matrix per dim."""
    if "Nearest" in name:
        return row(name, lambda xp, self, self_sym_sizes, output_size, key: self[key],
                   attrs=("self_sym_sizes", "output_size", "key"),
                   self=lambda m, g, self_sym_sizes, output_size, key: m.index_grad(g, self_sym_sizes, key, False))
    return row(name, lambda xp, self, output_size, matrices: K.along_trailing_dims(xp, self, matrices),
               attrs=("output_size", "matrices"),
               self=lambda m, g, output_size, matrices: F.along_trailing_dims_transposed(m, g, matrices))


UPSAMPLE = {name: upsample(name) for name in (
    "UpsampleNearest1DBackward0", "UpsampleNearest2DBackward0", "UpsampleNearest3DBackward0",
    "UpsampleNearestExact1DBackward0", "UpsampleNearestExact2DBackward0", "UpsampleNearestExact3DBackward0",
    "UpsampleLinear1DBackward0", "UpsampleBilinear2DBackward0", "UpsampleTrilinear3DBackward0",
    "UpsampleBicubic2DBackward0")}

SAFE_SOFTMAX = row("SafeSoftmaxBackward0", lambda xp, self, dim: K.safe_softmax(xp, self, dim),
                   saves=("result",), attrs=("dim",),
                   self=lambda m, g, result, dim: result * (g - m.sum(g * result, (dim,), True)))
SDPA_FLASH_CPU = row("ScaledDotProductFlashAttentionForCpuBackward0",
                     lambda xp, query, key, value, attn_mask, scale, groups, logsumexp:
                         K.attention(xp, query, key, value, attn_mask, scale, groups, logsumexp),
                     inputs=("query", "key", "value"), saves=("query", "key", "value"),
                     attrs=("attn_mask", "scale", "groups", "logsumexp"), keeps=("logsumexp",),
                     joint=F.attention_backward)

# Forward AD (ops/forward_mode.py): unary elementwise activations, their backward formula on the tangent.
with_jvp(SYMMETRIC, SILU, MISH, HARDSIGMOID, HARDSWISH, HARDTANH, ELU, ELU_, CELU, CELU_, LOG_SIGMOID, SOFTPLUS,
         ADD_SCALAR, SUB_SCALAR, CLAMP_MIN)
with_jvp(BIASED_PRODUCT, CONVOLUTION, CONV_TRANSPOSE)
# rows torch has no forward AD for: its error
with_jvp(no_forward_ad("_scaled_dot_product_flash_attention_for_cpu"), SDPA_FLASH_CPU)
with_jvp(no_forward_ad("_embedding_bag"), EMBEDDING_BAG)
