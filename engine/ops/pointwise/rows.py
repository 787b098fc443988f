"""The pointwise rows of the derivative table (ops/derivatives.py gathers them; op.py `row`)."""

from __future__ import annotations

import math

from ..op import ELEMENTWISE, LINEAR, SYMMETRIC, Op, row, with_jvp
from ..shaping import formulas as shaping_formulas
from . import formulas as F
from . import kernels as K

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
RSUB = row("RsubBackward1", lambda xp, self, other, alpha: -(self * alpha) + other, attrs=("other", "alpha"),
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
RECIPROCAL = row("ReciprocalBackward0", lambda xp, self: xp.reciprocal(self), saves=("result",),
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
SIGMOID = row("SigmoidBackward0", lambda xp, self: xp.reciprocal(xp.exp(-K.floating(self)) + 1), saves=("result",),
              self=lambda m, g, result: g * (result * (1 - result)))
RELU = row("ReluBackward0", lambda xp, self: xp.maximum(self, 0), saves=("result",),
           self=lambda m, g, result: m.threshold_backward(g, result, 0))
LEAKY_RELU = row("LeakyReluBackward0", lambda xp, self, negative_slope: K.where(xp, self > 0, self, self * negative_slope),
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
GELU = row("GeluBackward0", lambda xp, self, approximate, cdf: K.gelu(xp, self, approximate, cdf),
           saves=("self",), attrs=("approximate", "cdf"), keeps=("cdf",), self=F.gelu_backward)
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
WHERE = row("WhereBackward0", lambda xp, self, other, condition: K.where(xp, condition, self, other),
            inputs=("self", "other"), attrs=("condition",), frees=("condition",), **ELEMENTWISE,
            self=lambda m, g, condition: m.where(condition, g, 0.0),
            other=lambda m, g, condition: m.where(condition, 0.0, g))

# --- elementwise ---------------------------------------------------------------------------------
# Rows behind functions.py. Integer and bool inputs never require grad, so a forward may
# compute them in the default dtype (K.floating) without a node of its own. Rounding ops have zero
# gradients; ops PyTorch does not differentiate record a NotImplemented node that raises in backward.
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
def refused_in_place(name: str, op: Op) -> Op:
    """asinh_ (acosh_, atanh_) of a tensor that requires grad: PyTorch's node refuses its backward."""
    message = f"the derivative for 'inplace version of {name}' is not implemented."
    return row(f"{name.capitalize()}Backward1", op.forward,
               self=lambda m, g: shaping_formulas.not_implemented(message, NotImplementedError))


INPLACE_NOT_DIFFERENTIABLE = {name: refused_in_place(name, op)
                              for name, op in (("asinh", ASINH), ("acosh", ACOSH), ("atanh", ATANH))}
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
NO_FLOOR_DIVIDE = "derivative for aten::floor_divide is not implemented"
NO_REMAINDER = "derivative for aten::remainder is not implemented"
FLOOR_DIVIDE = row(NOT_IMPLEMENTED, lambda xp, self, other: K.div_rounded(xp, self, other, "floor"),
                   inputs=("self", "other"), **ELEMENTWISE,
                   self=lambda m, g: shaping_formulas.not_implemented(NO_FLOOR_DIVIDE),
                   other=lambda m, g: shaping_formulas.not_implemented(NO_FLOOR_DIVIDE))
FLOOR_DIVIDE_NUMBER = row(NOT_IMPLEMENTED, lambda xp, self, other: K.div_rounded(xp, self, other, "floor"),
                          attrs=("other",), self=lambda m, g, other: shaping_formulas.not_implemented(NO_FLOOR_DIVIDE))
REMAINDER_NUMBER_SELF = row(NOT_IMPLEMENTED, lambda xp, other, self: K.remainder(xp, self, other),
                            inputs=("other",), attrs=("self",),
                            other=lambda m, g, self: shaping_formulas.not_implemented(NO_REMAINDER))

# Forward AD (ops/forward_mode.py): unary elementwise rows have a diagonal Jacobian, so their tangent is
# their backward formula applied to the input's tangent (ELEMENTWISE rows get the same without a mark).
with_jvp(SYMMETRIC, EXP, LOG, LOG1P, SQRT, SIN, COS, TANH, SIGMOID, RELU, LEAKY_RELU, GELU, ERF, ABS, SIGN, CLAMP,
         RECIPROCAL, POW_SCALAR, FLOOR, CEIL, TRUNC, ROUND, ROUND_DECIMALS, FRAC, RSQRT, TAN, ASIN, ACOS, ATAN, SINH,
         COSH, ASINH, ACOSH, ATANH, EXPM1, EXP2, LOG2, LOG10, ERFC, ERFINV, NAN_TO_NUM)
with_jvp(LINEAR, NEG)
