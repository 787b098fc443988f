"""eps, atol and rtol for a check in a case's own dtype (`--dtype native`), when not given.

A float64 check keeps torch's gradcheck defaults (eps 1e-6, atol 1e-5, rtol 1e-3). In a lower
precision with machine epsilon e (2^-23 float32, 2^-10 float16, 2^-7 bfloat16) and unit
roundoff u = e/2:

- eps, the central-difference step. Computed in float64 (a float64 reference) the differences
  are float64's, and eps is float64's 1e-6. Computed in the native dtype, each forward is
  rounded to about u |f|, so (f(x+h) - f(x-h)) / 2h is off by about u |f| / h from rounding
  and h^2 |f'''| / 6 from truncation; the sum is smallest near h = cbrt(3u) (for |x| ~ 1), and
  is then about u^(2/3). The step is cbrt(u) as a power of two, so that x +- h is exact for |x|
  near 1: 2^-8 for float32, 2^-4 for float16, 2^-3 for bfloat16.
- atol and rtol (equal: atol for derivatives near 0, sized for outputs of order 1). The
  analytical gradient computed in the dtype carries a few roundings of u per op, growing like
  sqrt(n) u over reductions of n terms: well under sqrt(e), the classic "half the digits"
  bound, while a wrong gradient is wrong by a relative O(1). Against a float64 reference the
  tolerance is sqrt(e) to one digit: 3e-4 (float32), 3e-2 (float16), 9e-2 (bfloat16). Against
  a native reference, whose own error (u^(2/3) |f| and truncation) comes on top, it is wider:
  1e-3, 5e-2, 1e-1. A float32 check then fails a gradient 1% off either way; a float16 one
  10% off against float64; bfloat16 sees little under 10%.
"""

from __future__ import annotations

#: dtype -> (eps with a native reference, tolerance with a float64 reference, with a native one)
NATIVE = {
    "float32": (2.0**-8, 3e-4, 1e-3),
    "float16": (2.0**-4, 3e-2, 5e-2),
    "bfloat16": (2.0**-3, 9e-2, 1e-1),
}
#: torch's gradcheck defaults (eps, atol, rtol): a check in float64.
FLOAT64 = (1e-6, 1e-5, 1e-3)
#: The dtypes in order of precision, most precise first: a case's defaults are its least precise one's.
PRECISION = ("float64", "float32", "float16", "bfloat16")


def least_precise(dtypes: list[str]) -> str:
    """The dtype among `dtypes` with the largest rounding error (float64 when none is known)."""
    known = [d for d in dtypes if d in PRECISION]
    return max(known, key=PRECISION.index, default="float64")


def native_defaults(dtype: str, reference: str) -> tuple[float, float, float]:
    """(eps, atol, rtol) for a check of `dtype` against a `reference` of "float64" or "native"."""
    if dtype not in NATIVE:
        return FLOAT64
    eps, against_float64, against_native = NATIVE[dtype]
    if reference == "float64":
        return FLOAT64[0], against_float64, against_float64
    return eps, against_native, against_native
