"""Kinks: mismatching Jacobian entries where the function is not differentiable (check_gradients only).

A central difference (f(x + eps) - f(x - eps)) / (2 eps) approximates f'(x) only if f is
differentiable on [x - eps, x + eps]. When a point where f is not (0 for abs, relu, clamp's
bounds, a tie in sort or max) lies inside that interval, the difference mixes the two slopes:
f(x) = |x| + relu(x) at x = 1e-7, eps = 1e-6 gives (2.2e-6 - 0.9e-6) / 2e-6 = 0.65, while the
analytical derivative there is 2. The numerical side is meaningless, not the analytical one.

Detection follows Chainer's `numerical_grad(detect_nondifferentiable=True)`: evaluate f at
the five points x + k eps, k = -2 .. 2, take the four one-sided differences

    d_k = (f(x + (k + 1) eps) - f(x + k eps)) / eps,    k = -2, -1, 0, 1,

which estimate f' at the midpoints m_k = (k + 1/2) eps. Where f is twice differentiable,
d_k = f'(x) + f''(x) m_k + O(eps^2): the four lie on a straight line in m_k, so the left
(d_-2, d_-1) and right (d_0, d_1) differences agree, and so do the central differences of
step eps and 2 eps. f is taken as not differentiable at the entry when the least-squares
line through (m_k, d_k) misses some d_k by more than the check's own tolerance,
atol + rtol max |d_k|.

Such an entry is a kink only if the analytical derivative is one a correct backward may
give there: within the range of the one-sided differences (a one-sided derivative or a
value between them, as abs' = 0 at 0 is), widened by atol + rtol |analytical|. Outside it,
the gradient is wrong whatever the kink, and the entry stays a failure.

Cost is bounded: only mismatching entries are examined, at most MAX_PROBES input elements
per input (4 forwards each); mismatches beyond them stay failures. gradcheck and
gradgradcheck (strict, torch's behaviour) never come here.
"""

from __future__ import annotations

import numpy

from .numerical import centre_values, values_along
from .report import MAX_MISMATCHES
from .state import CheckState
from .util import unravel

#: Input elements probed per (check, input): 4 extra forwards each.
MAX_PROBES = 64
STEPS = (-2.0, -1.0, 1.0, 2.0)  # with the reference forward at 0, five points
MIDPOINTS = numpy.array([-1.5, -0.5, 0.5, 1.5])


def find_kinks(
    state: CheckState,
    out_rank: int,
    in_rank: int,
    num: numpy.ndarray,
    ana: numpy.ndarray,
    settled: numpy.ndarray | None = None,
) -> numpy.ndarray | None:
    """The failing entries of one Jacobian pair that are kinks, as a mask; None when there are none.
    Entries in `settled` (found to be noise) are not examined."""
    close = numpy.isclose(ana, num, rtol=state.opts.rtol, atol=state.opts.atol)
    if settled is not None:
        close |= settled
    rows, cols = numpy.nonzero(~close)
    if rows.size == 0:
        return None
    probed = list(dict.fromkeys(int(c) for c in cols))[:MAX_PROBES]
    kinks = numpy.zeros(num.shape, dtype=bool)
    for col in probed:
        diffs = one_sided_differences(state, in_rank, col, out_rank)
        if diffs is None:
            continue
        for row in rows[cols == col]:
            kinks[row, col] = _is_kink(diffs[:, row], float(ana[row, col]), state.opts.atol, state.opts.rtol)
    return kinks if kinks.any() else None


def kink_entries(
    kinks: numpy.ndarray, num: numpy.ndarray, ana: numpy.ndarray, output_shape: tuple, input_shape: tuple
) -> list[tuple]:
    """(output index, input index, numerical, analytical) of the kinks, largest |num - ana| first."""
    rows, cols = numpy.nonzero(kinks)
    order = numpy.argsort(-numpy.abs(num[rows, cols] - ana[rows, cols]), kind="stable")[:MAX_MISMATCHES]
    return [
        (unravel(int(r), output_shape), unravel(int(c), input_shape), float(num[r, c]), float(ana[r, c]))
        for r, c in zip(rows[order], cols[order])
    ]


def kink_at(state: CheckState, in_rank: int, out_rank: int, row: int, col: int, analytical: float) -> bool:
    """Whether the mismatch at Jacobian entry (row, col) is a kink (for entries found one by one)."""
    diffs = one_sided_differences(state, in_rank, col, out_rank)
    return diffs is not None and _is_kink(diffs[:, row], analytical, state.opts.atol, state.opts.rtol)


def one_sided_differences(
    state: CheckState, in_rank: int, element: int, out_rank: int
) -> numpy.ndarray | None:
    """The four one-sided differences d_k (rows) for every element of one output (columns).

    Cached per (input, element) for all outputs, since one forward gives them all;
    None where the probe forwards fail (the entry then stays a mismatch).
    """
    cache = state.kink_cache
    key = (in_rank, element)
    if key not in cache:
        _, tensor = state.diff_inputs[in_rank]
        try:
            moved = values_along(state, tensor, element, STEPS, state.outputs)
            centre = centre_values(state)
        except Exception:
            cache[key] = None
        else:
            cache[key] = [
                numpy.diff(numpy.concatenate([m[:2], c, m[2:]]), axis=0) / state.opts.eps
                for m, c in zip(moved, centre)
            ]
    found = cache[key]
    return None if found is None else found[out_rank]


def _is_kink(diffs: numpy.ndarray, analytical: float, atol: float, rtol: float) -> bool:
    """Whether the differences are off a straight line and `analytical` lies within their range."""
    if not numpy.all(numpy.isfinite(diffs)) or not numpy.isfinite(analytical):
        return False
    slope = float(MIDPOINTS @ diffs) / float(MIDPOINTS @ MIDPOINTS)
    residual = diffs - (diffs.mean() + slope * MIDPOINTS)
    if numpy.abs(residual).max() <= atol + rtol * numpy.abs(diffs).max():
        return False  # differentiable here: the mismatch is the gradient's
    margin = atol + rtol * abs(analytical)
    return diffs.min() - margin <= analytical <= diffs.max() + margin
