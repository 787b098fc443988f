"""The pointwise rows' raw-array forwards (numpy or cupy, via `xp`): erf and its relatives,
torch's rounding, division and integer rules. Nothing here knows about Tensors or autograd.
"""

from __future__ import annotations

import math

import numpy

from ... import backend

SQRT_PI = math.sqrt(math.pi)


# ------------------------------------------------------------------------------ pointwise


def _erf_series(xp, s):
    """erf(s) for 0 <= s < 2.5: 2/sqrt(pi) exp(-s^2) s sum_k (2s^2)^k / (2k+1)!! (positive terms)."""
    y = 2.0 * s * s
    acc = xp.ones_like(s)
    for k in range(36, 0, -1):
        acc = 1.0 + acc * y / (2 * k + 1)
    return (2.0 / SQRT_PI) * xp.exp(-s * s) * s * acc


def _erfc_fraction(xp, t):
    """erfc(t) for t >= 2.5: exp(-t^2) / sqrt(pi) / (t + 1/2 / (t + 1 / (t + 3/2 / ...)))."""
    f = t.copy()
    for k in range(26, 0, -1):
        f = t + (k / 2.0) / f
    return xp.exp(-t * t) / (SQRT_PI * f)


def _erf_parts(xp, x):
    """(|x| in float64, erf(|x|) where |x| < 2.5 else erfc(|x|), the mask |x| < 2.5)."""
    a = xp.abs(x).astype(numpy.float64)
    out = xp.empty_like(a)
    small = a < 2.5
    out[small] = _erf_series(xp, a[small])
    large = ~small
    out[large] = _erfc_fraction(xp, a[large])
    return a, out, small


# erf(x) = x P(x^2) / Q(x^2) for |x| <= 4: a rational least-squares fit refined toward minimax, relative
# error under 2e-9 in float64 arithmetic, so float32 results are at most one rounding off (about 6e-8);
# beyond 4, erf rounds to +-1 in float32. About 30 elementwise passes, against 150 for the series.
_ERF_SINGLE_P = (
    1.1283791683082531,
    0.16637806479542117,
    0.050857120247547266,
    0.0029324331747744236,
    0.0003043472952329405,
    -4.075182230582759e-07,
    -4.578483649252136e-08,
)
_ERF_SINGLE_Q = (
    1.0,
    0.4807820964968448,
    0.10533136619745133,
    0.013441317945773518,
    0.001033534737857549,
    4.055523160251907e-05,
    -6.369692463331716e-07,
)


# Phi(x) = 1/2 + tanh(x P(x^2)) / 2 for float32 GELU: P fits atanh(erf(x / sqrt 2)) / x on [0, 6], weighted
# least squares refined toward minimax of GELU's absolute error; numpy's float32 tanh is one fast
# pass and saturates to +-1, so Phi is 0 (GELU -0.0) in the far negative tail and never below 0.
# Evaluated in float32, GELU is within 7e-8 of exact on [-8, 8] (torch's float32 kernel: 1.2e-6), in
# about half the passes of erf's rational fit. Clipped at 5.79, where x P(x^2) >= 10.5: numpy's SIMD
# float32 tanh is exactly +-1 only from 10 on (libm's from 9.01), and the tail must be exactly 0.
_PHI_TANH_P = (
    0.7978842161296489,
    0.03633428346425835,
    -3.312995518208869e-05,
    -5.5240170048154255e-05,
    3.969111034843143e-06,
    -1.3344650624583723e-07,
    1.8056185754794998e-09,
)
_PHI_TANH_BOUND = 5.79


def polynomial(xp, t, coefficients):
    """sum c_k t^k by Horner's rule, in place on one new array (coefficients lowest degree first)."""
    acc = t * coefficients[-1]  # the first step makes the array: no pass filling it with a constant
    acc += coefficients[-2]
    for c in coefficients[-3::-1]:
        acc *= t
        acc += c
    return acc


def _erf_single(xp, x):
    """erf for float32 and narrower: the rational fit above, evaluated in float64."""
    a = xp.clip(x, -4.0, 4.0, dtype=numpy.float64)  # one pass: casting first costs a second
    z = a * a
    a *= polynomial(xp, z, _ERF_SINGLE_P)
    a /= polynomial(xp, z, _ERF_SINGLE_Q)
    return a.astype(x.dtype)


def erf(xp, x):
    """erf with array ops only (numpy has none): the rational fit for float32 and narrower; for float64
    a series below 2.5 and erfc's continued fraction above, to float64 accuracy."""
    device_erf = backend.device_special(xp, "erf")  # CuPy's kernel where there is one
    if device_erf is not None:
        return device_erf(x)
    if x.dtype.itemsize <= 4:
        return _erf_single(xp, x)
    _, part, small = _erf_parts(xp, x)
    result = xp.where(small, part, 1.0 - part)
    return (xp.sign(x) * result).astype(x.dtype, copy=False)


def erfc(xp, x):
    """1 - erf(x), computed directly where erf is close to 1 (so erfc(5) keeps its digits)."""
    device_erfc = backend.device_special(xp, "erfc")
    if device_erfc is not None:
        return device_erfc(x)
    _, part, small = _erf_parts(xp, x)
    upper = xp.where(small, 1.0 - part, part)  # erfc(|x|)
    return xp.where(x < 0, 2.0 - upper, upper).astype(x.dtype, copy=False)


def erfinv(xp, y):
    """The inverse of erf: an approximate start refined by Halley's method on erf(x) = |y|.

    The start, sqrt(sqrt(c^2 - w / a) - c) with w = log(1 - y^2), c = 2 / (pi a) + w / 2 and
    a = 0.147, is within 0.2%; each step x -= u / (1 + x u), u = (erf(x) - |y|) / erf'(x),
    triples the correct digits. Near |y| = 1 the residual is taken as (1 - |y|) - erfc(x),
    both exact there, so the tail keeps its digits.
    """
    device_erfinv = backend.device_special(xp, "erfinv")
    if device_erfinv is not None:
        return device_erfinv(y)
    y64 = y.astype(numpy.float64)
    a = xp.abs(y64)
    q = 1.0 - a
    inside = a < 1
    w = xp.log(xp.where(inside, q * (1.0 + a), 1.0))
    c = 2.0 / (math.pi * 0.147) + w / 2.0
    x = xp.sqrt(xp.sqrt(c * c - w / 0.147) - c)
    central = a <= 0.5
    for _ in range(3):
        _, part, small = _erf_parts(xp, x)
        erf_x = xp.where(small, part, 1.0 - part)
        erfc_x = xp.where(small, 1.0 - part, part)
        residual = xp.where(central, erf_x - a, q - erfc_x)
        u = residual / ((2.0 / SQRT_PI) * xp.exp(-x * x))
        x = x - u / (1.0 + x * u)
    x = xp.where(inside, x, xp.where(a == 1, math.inf, math.nan))
    return xp.copysign(x, y64).astype(y.dtype, copy=False)


def log_sigmoid(xp, x):
    """log(sigmoid(x)) without overflow: min(x, 0) - log1p(exp(-|x|))."""
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


def normal_cdf(xp, x):
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2, a new array; float32 on the CPU through the fit above."""
    if xp is numpy and x.dtype == numpy.float32:
        a = numpy.clip(x, -_PHI_TANH_BOUND, _PHI_TANH_BOUND)  # NaN stays NaN; clip is one fast pass
        phi = polynomial(xp, a * a, _PHI_TANH_P)
        phi *= a
        numpy.tanh(phi, out=phi)
        phi *= 0.5
        phi += 0.5
        return phi
    phi = erf(xp, x * (1.0 / math.sqrt(2.0)))
    phi += 1.0
    phi *= 0.5  # exact: x * 0.5 * (erf + 1) and x * ((erf + 1) * 0.5) round alike
    return phi


def gelu(xp, x, approximate, cdf=None):
    """x Phi(x); exact GELU puts Phi(x), the normal cdf, in the box `cdf` when given, for the backward."""
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return x * 0.5 * (xp.tanh(inner) + 1.0)  # array first: numpy keeps its dtype's tag (bfloat16)
    phi = normal_cdf(xp, x)
    if cdf is not None:
        cdf[0] = phi
    out = x * phi  # -inf * 0 is NaN, as torch's float32 GELU
    if xp is numpy and x.dtype == numpy.float32 and not out.max(initial=-math.inf) < math.inf:  # one read
        xp.copyto(out, math.nan, where=x == math.inf)  # torch's CPU float32 kernel: GELU(inf) is NaN too
    return out


def where(xp, condition, a, b):
    return backend.bfloat16_like(xp.where(condition, a, b), [x for x in (a, b) if hasattr(x, "dtype")])


# ---------------------------------------------------------- elementwise (functions.py)
# Forwards of the elementwise rows, with torch's dtype rules: ops that always give floats compute
# integers and bools in the default dtype (`floating`), the others refuse the dtypes torch has no
# kernel for, in torch's words (`not_implemented`).


def scalar_type(np_dtype) -> str:
    """How torch's messages name a dtype: Float, Long, Bool."""
    return backend.dtype_of(numpy.empty(0, np_dtype)).scalar_type


def not_implemented(kernel: str, np_dtype) -> NotImplementedError:
    """torch's error for a dtype its kernel has no loop for: '"hypot_cpu" not implemented for 'Long''."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type(np_dtype)}'")


def typed_number(value, np_dtype):
    """A Python number as a scalar of `np_dtype`, wrapped as C casts it (uint8 300 -> 44), as torch does;
    a host scalar, which numpy and CuPy arrays both take."""
    return numpy.asarray(value).astype(np_dtype)[()]


def floating(x):
    """`x` (an array or a Python number), integers and bools in the default dtype (torch's sin(int) is float32)."""
    if not hasattr(x, "dtype") or x.dtype.kind == "f":
        return x
    return x.astype(backend.get_default_dtype().np)


def dtype_of(a, b):
    """The dtype of a binary op's operands (already promoted; one may be a Python number)."""
    return a.dtype if hasattr(a, "dtype") else b.dtype


def integral_rounding(fn, x, kernel: str):
    """floor / ceil / trunc / round: integers are already whole (a copy, as torch's), bools refused."""
    kind = x.dtype.kind
    if kind == "f":
        return fn(x)
    if kind == "b":
        raise not_implemented(kernel, x.dtype)
    return x.copy()


def round_decimals(xp, x, decimals):
    """Round half to even at 10^-decimals, as torch: rint(x * 10^d) / 10^d (or rint(x / 10^-d) * 10^-d)."""
    if x.dtype.kind != "f":
        raise not_implemented("round_vml_cpu" if decimals == 0 else "round_cpu", x.dtype)
    work = x.astype(numpy.float32) if x.dtype == numpy.float16 else x  # half computes in float
    scale = float(10 ** abs(decimals))  # a Python float: the array keeps its dtype
    out = xp.rint(work / scale) * scale if decimals < 0 else xp.rint(work * scale) / scale
    return out.astype(x.dtype, copy=False)


def absolute(xp, x):
    if x.dtype.kind == "b":
        raise not_implemented("abs_cpu", x.dtype)
    return xp.abs(x)


def frac(xp, x):
    if x.dtype.kind != "f":
        raise not_implemented("frac_cpu", x.dtype)
    return x - xp.trunc(x)


def sign(xp, x):
    """-1, 0 or 1 in x's dtype; 0 for NaN and a bool unchanged, as torch's (numpy's sign gives NaN)."""
    if x.dtype.kind == "b":
        return x.copy()
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def _division_dtype(a, b, kernel: str):
    """The dtype of an integer-capable division (bools refused, as torch's `kernel`); an integer
    division by zero raises, as torch's on the CPU, where numpy would warn and give 0."""
    dt = dtype_of(a, b)
    if dt.kind == "b":
        raise not_implemented(kernel, dt)
    if dt.kind != "f" and (bool((b == 0).any()) if hasattr(b, "any") else b == 0):
        raise RuntimeError("ZeroDivisionError")
    return dt


def div_rounded(xp, a, b, rounding_mode):
    """torch.div with a rounding mode, "trunc" or "floor" (checked by the caller); None: true division
    (integers in the default dtype)."""
    if rounding_mode is None:
        return floating(a) / floating(b)
    dt = _division_dtype(a, b, f"div_{rounding_mode}_cpu")
    if dt.kind == "f":
        return xp.floor_divide(a, b) if rounding_mode == "floor" else xp.trunc(a / b)
    q = xp.floor_divide(a, b)
    if rounding_mode == "trunc":  # C division: towards zero, so a negative inexact quotient goes up by one
        q = q + ((q < 0) & (q * b != a))
    return q


def fmod(xp, a, b):
    """C's fmod: the remainder takes the sign of the dividend."""
    _division_dtype(a, b, "fmod_cpu")
    return xp.fmod(a, b)


def remainder(xp, a, b):
    """Python's modulus (the sign of the divisor), computed as torch does: fmod, then + b where the
    signs differ (so an exact multiple keeps fmod's signed zero)."""
    if _division_dtype(a, b, "remainder_cpu").kind != "f":
        return xp.remainder(a, b)
    mod = xp.fmod(a, b)
    return xp.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


def float_only(fn, a, b, kernel: str):
    """A binary op torch computes on floating dtypes only (hypot, logaddexp)."""
    dt = dtype_of(a, b)
    if dt.kind != "f":
        raise not_implemented(kernel, dt)
    return fn(a, b)


def log_number(v) -> float:
    """log of a Python number as C's log gives it: -inf at 0, NaN below (math.log raises)."""
    return math.log(v) if v > 0 else -math.inf if v == 0 else math.nan


def xlogy(xp, x, y):
    """x * log(y), 0 where x == 0 (even for y == 0), NaN where y is NaN; integers in the default dtype."""
    x = floating(x)
    if hasattr(y, "dtype"):
        y = floating(y)
        log_y = xp.log(y)
    else:
        log_y = log_number(y)
    out = xp.where(x == 0, 0.0, x * log_y)
    return xp.where(y != y, math.nan, out)


def lerp(xp, start, end, weight, kernel: str):
    """start + weight (end - start) for |weight| < 0.5, else end - (end - start)(1 - weight), as torch."""
    if start.dtype.kind != "f":
        raise not_implemented(kernel, start.dtype)
    diff = end - start
    if hasattr(weight, "dtype") and weight.dtype != start.dtype:  # a 0-dim weight of another dtype
        weight = weight.astype(start.dtype)
    if not hasattr(weight, "dtype"):  # a Python number: in the inputs' dtype, as torch's opmath
        weight = start.dtype.type(weight)
        return start + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
    return xp.where(xp.abs(weight) < 0.5, start + weight * diff, end - diff * (1 - weight))


def nan_to_num(xp, x, nan, posinf, neginf):
    if x.dtype.kind != "f":
        return x.copy()
    return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def power(base, exponent):
    """base ** exponent. Integers to a negative integer power: refused for a number exponent, and
    elementwise for a tensor one as torch gives them (0, or +-1 for a base of +-1), where numpy
    refuses both."""
    try:
        return base**exponent
    except ValueError:
        if not hasattr(exponent, "dtype"):
            raise RuntimeError("Integers to negative integer powers are not allowed.") from None
        if exponent.dtype.kind not in "iu":
            raise
    negative = exponent < 0
    out = base ** (exponent * ~negative)  # x ** 0 == 1 where the exponent is negative
    odd = (exponent % 2) != 0
    ones = out * 0 + 1
    out = out * ~negative + ones * (negative & (base == 1)) + (ones - 2 * odd) * (negative & (base == -1))
    return out.astype(ones.dtype, copy=False)


def shift(xp, a, b, left: bool):
    """a << b or a >> b with torch's rule for shifts outside [0, bits): 0, or the sign for >>."""
    bits = 8 * a.dtype.itemsize
    outside = (b < 0) | (b >= bits)
    b = xp.where(outside, 0, b).astype(a.dtype)
    if left:
        return xp.where(outside, 0, xp.left_shift(a, b)).astype(a.dtype, copy=False)
    sign = xp.right_shift(a, bits - 1) if a.dtype.kind == "i" else 0  # what a signed shift shifts in
    return xp.where(outside, sign, xp.right_shift(a, b)).astype(a.dtype, copy=False)
