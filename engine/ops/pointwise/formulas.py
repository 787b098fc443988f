"""The pointwise rows' backward formulas longer than a line (PyTorch's FunctionsManual).

Each is written against the math namespace `m`, so it runs on raw arrays or, recorded, on
Tensors. Those used directly as a row's formula take that row's argument names, in the
row's order: `(m, g, *saves, *attrs)`, which the table checks when it is built.
"""

from __future__ import annotations

import math

from ...tensor import Tensor
from ..namespaces import raw
from . import kernels as K

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


def gelu_backward(m, g, self, approximate, cdf):
    """`cdf`: the box the forward filled with Phi(self) (raw arrays); under create_graph it is recomputed."""
    if cdf is not None and cdf[0] is not None and not isinstance(g, Tensor):
        xp = m.xp
        pdf = self * self
        pdf *= -0.5
        xp.exp(pdf, out=pdf)
        pdf *= self
        pdf *= 1 / math.sqrt(2.0 * math.pi)
        pdf += cdf[0]
        pdf *= g
        return pdf
    if approximate == "tanh":
        beta, kappa = math.sqrt(2.0 / math.pi), 0.044715
        x_sq = self * self
        t = m.tanh(beta * (self + kappa * x_sq * self))
        left = 0.5 * self
        return g * (0.5 * (1 + t) + left * (1 - t * t) * beta * (1 + 3 * kappa * x_sq))
    cdf = 0.5 * (1 + m.erf(self * (1 / math.sqrt(2.0))))
    pdf = m.exp(-0.5 * self * self) * (1 / math.sqrt(2.0 * math.pi))
    return g * (cdf + self * pdf)


# -- elementwise (functions.py) -------------------------------------------------------------


def zero_grad(m, g):
    """The gradient of a piecewise-constant op (floor, sign, a rounded division): zeros, as torch's."""
    return m.zeros(g.shape, g)


def copysign_backward(m, g, self, result):
    """d copysign(self, other) / d self = result / self (+-1), 0 where self is 0, as torch."""
    return g * m.where(self == 0, 0.0, result / self)


def pow_number_base_backward(m, g, exponent, result, self):
    """d base ** exponent / d exponent for a Python number base: result * log(base), 0 where a zero
    base meets an exponent >= 0 (NaN for a negative base, as C's log gives it, not an error)."""
    if self == 0:
        return g * m.where(exponent >= 0, 0.0, result * -math.inf)
    return g * (result * K.log_number(self))


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
