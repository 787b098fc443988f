"""Noise: mismatches that are the finite difference's error, not the gradient's (check_gradients only).

The central difference D(h) = (f(x + h) - f(x - h)) / (2 h) has two errors (Chainer's
`check_backward` and Numerical Recipes 5.7 give the same analysis):

* truncation, from the Taylor series: D(h) = f'(x) + f'''(x) h^2 / 6 + O(h^4). Large where f
  curves fast at the scale of h (exp(50 x), sin(1e4 x)). Richardson extrapolation cancels the
  h^2 term: R = (4 D(h) - D(2 h)) / 3 = f'(x) + O(h^4).
* rounding: f(x +- h) carry an absolute error of about u |f(x)| (u = 2.2e-16 in float64),
  which the division by 2 h magnifies to u |f| / h. Large where |f| is large and f' is not
  (1e8 + x at h = 1e-6: an error near 1e-2). Larger steps shrink it: D(10 h), D(100 h), D(1000 h).

An entry that failed at eps is NOISE when the analytical derivative agrees with one of these
other estimates within the check's own tolerance, |ana - est| <= atol + rtol |est|: the
disagreement was the estimate's. A wrong gradient agrees with none of them, since they all
estimate the same f'(x) (BUG: "disagrees at several step sizes"). Kinks are not noise: across a
kink, D(h) at every larger step averages the two slopes and R extrapolates nothing (kinks.py
classifies what noise leaves). Cost: 6 forwards per probed input element (R reuses the kink
probe's 4), for at most kinks.MAX_PROBES elements per input.
"""

from __future__ import annotations

import numpy

from .kinks import MAX_PROBES, one_sided_differences
from .numerical import values_along
from .report import MAX_MISMATCHES
from .state import CheckState
from .util import unravel

#: The larger steps tried, as multiples of eps.
SWEEP = (10.0, 100.0, 1000.0)
SWEEP_STEPS = tuple(s for k in SWEEP for s in (-k, k))


def tried(eps: float) -> list[str]:
    """The estimates each noise test compares with, in order (for a BUG's reason)."""
    return ["Richardson extrapolation"] + [f"eps={k * eps:g}" for k in SWEEP]


def find_noise(
    state: CheckState, out_rank: int, in_rank: int, num: numpy.ndarray, ana: numpy.ndarray
) -> tuple[numpy.ndarray, dict] | None:
    """Which failing entries of one Jacobian pair are noise: (mask, {(row, col): (estimate, how)}),
    None when there are none."""
    close = numpy.isclose(ana, num, rtol=state.opts.rtol, atol=state.opts.atol)
    rows, cols = numpy.nonzero(~close)
    if rows.size == 0:
        return None
    mask = numpy.zeros(num.shape, dtype=bool)
    found: dict = {}
    for col in list(dict.fromkeys(int(c) for c in cols))[:MAX_PROBES]:
        for row in rows[cols == col]:
            agreed = noise_at(state, in_rank, out_rank, int(row), col, float(ana[row, col]))
            if agreed is not None:
                mask[row, col] = True
                found[(int(row), col)] = agreed
    return (mask, found) if found else None


def noise_entries(
    agreed: dict, num: numpy.ndarray, ana: numpy.ndarray, output_shape: tuple, input_shape: tuple
) -> list[tuple]:
    """(output index, input index, numerical, analytical, estimate, how) of the noise, largest
    |num - ana| first."""
    ranked = sorted(agreed.items(), key=lambda item: -abs(num[item[0]] - ana[item[0]]))[:MAX_MISMATCHES]
    return [
        (unravel(r, output_shape), unravel(c, input_shape), float(num[r, c]), float(ana[r, c]), est, how)
        for (r, c), (est, how) in ranked
    ]


def noise_at(
    state: CheckState, in_rank: int, out_rank: int, row: int, col: int, analytical: float
) -> tuple[float, str] | None:
    """The first other estimate of entry (row, col) that `analytical` agrees with, and its name."""
    if not numpy.isfinite(analytical):
        return None
    for estimate, how in _estimates(state, in_rank, out_rank, row, col):
        if numpy.isfinite(estimate) and abs(analytical - estimate) <= state.opts.atol + state.opts.rtol * abs(
            estimate
        ):
            return float(estimate), how
    return None


def _estimates(state: CheckState, in_rank: int, out_rank: int, row: int, col: int) -> list[tuple[float, str]]:
    eps = state.opts.eps
    found = []
    diffs = one_sided_differences(state, in_rank, col, out_rank)
    if diffs is not None:
        d = diffs[:, row]  # (f(x + (k + 1) eps) - f(x + k eps)) / eps for k = -2 .. 1
        central = (d[1] + d[2]) / 2
        wide = d.sum() / 4
        found.append(((4 * central - wide) / 3, "Richardson extrapolation"))
    sweep = _sweep(state, in_rank, col)
    if sweep is not None:
        values = sweep[out_rank]
        for i, k in enumerate(SWEEP):
            minus, plus = values[2 * i, row], values[2 * i + 1, row]
            found.append(((plus - minus) / (2 * k * eps), f"eps={k * eps:g}"))
    return found


def _sweep(state: CheckState, in_rank: int, element: int) -> list[numpy.ndarray] | None:
    """Every output at x -+ k eps for k in SWEEP, cached per (input, element); None if a forward fails."""
    cache = state.noise_cache
    key = (in_rank, element)
    if key not in cache:
        _, tensor = state.diff_inputs[in_rank]
        try:
            cache[key] = values_along(state, tensor, element, SWEEP_STEPS, state.outputs)
        except Exception:
            cache[key] = None
    return cache[key]
