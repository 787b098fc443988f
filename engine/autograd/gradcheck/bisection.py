"""Localising a fast-mode mismatch by bisection: O(k log n) forwards for k wrong entries.

Fast mode compares one number per (output, input) pair, v^T J u, computed numerically (two
forwards) and analytically (one backward, which gives the whole row a = v^T J_ana over the
input's n entries). When the two disagree, computing both Jacobians in full costs 2n forwards
and m backwards (m output entries): hours for n = 10^6. Instead, for a range S of input
entries let u_S be u restricted to S and scaled to unit norm, and compare

    num(S) = v^T J_num u_S      (a central difference along u_S: two forwards)
    ana(S) = a . u_S            (no backward: a is known)

by fast mode's rule, isclose(ana, num, rtol, atol * sum(u_S) * sum(v)). Before scaling, the
difference d . u_S, d = v^T (J_num - J_ana), is additive over the halves S1, S2 of S, and so
is the atol term, so a range that disagrees has a half that disagrees (unless the halves'
numerical values cancel in the rtol term: such a range leads to no entry). Halving from the
whole input and following the halves that disagree ends at single entries i, at 2 x 2
forwards per level: about 4 k log2(n) forwards for k wrong columns. Scaling changes no
verdict (isclose is homogeneous) but keeps the step eps * u_S where central differences are
accurate; at a single entry it is eps on that entry, full mode's own difference, which gives
the whole column J_num[:, i].

That column is bisected over the output entries the same way, with w_R = v restricted to a
range R of outputs and scaled: num(R) = w_R . J_num[:, i] (free), ana(R) = (w_R^T J_ana)_i
(one backward). A single output entry o gives J[o, i] both ways, judged by full mode's rule,
and (check_gradients) a mismatch there may still be a kink (kinks.py).

Search stops after `opts.max_mismatches` entries: each range known to disagree and not yet
halved holds at least one wrong entry, so the count reported is a lower bound ("at least N
entries differ"), and so is max_abs_err. gradcheck (strict) keeps torch's full recomputation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy

from .kinks import kink_at
from .noise import noise_at, tried
from .numerical import numerical_jvps
from .report import PairReport
from .state import CheckState
from .util import FAST_MODE_SEED, unit_vector, unravel

#: Localise by computing both Jacobians when that costs at most this many forwards and
#: backwards (2n + m); above it, by bisection.
FULL_LOCALIZATION_UP_TO = 2048


def worth_bisecting(n: int, m: int) -> bool:
    """Whether a pair with n input and m output entries is localised by bisection."""
    return 2 * n + m > FULL_LOCALIZATION_UP_TO


def bisect(n: int, differs: Callable[[int, int], bool], limit: int) -> tuple[list[int], int]:
    """The indices i < n whose range [i, i + 1) differs, found by halving [0, n) (known to differ).

    Depth first, lower half first, so they come in increasing order; stops after `limit`.
    Returns (found, pending): pending counts ranges known to differ that were not halved.
    """
    found: list[int] = []
    pending = [(0, n)]
    while pending and len(found) < limit:
        lo, hi = pending.pop()
        if hi - lo == 1:
            found.append(lo)
            continue
        mid = (lo + hi) // 2
        pending.extend(reversed([half for half in ((lo, mid), (mid, hi)) if differs(*half)]))
    return found, len(pending)


def _restricted(vector: numpy.ndarray, lo: int, hi: int) -> numpy.ndarray:
    """`vector` on [lo, hi), zero elsewhere, scaled to unit norm."""
    part = numpy.zeros_like(vector)
    part[lo:hi] = vector[lo:hi]
    norm = numpy.linalg.norm(part)
    return part / norm if norm > 0 else part


def locate(state: CheckState, out_rank: int, in_rank: int) -> tuple[list[tuple], list[tuple], int]:
    """The wrong entries of one pair, by bisection: (mismatches, kinks, noise, unsearched).

    Entries are (output flat index, input flat index, numerical, analytical); `unsearched`
    counts ranges known to hold a wrong entry that the limit left unsearched.
    Raises Abort where user code fails (recorded by the state).
    """
    (out_pos, output), (in_pos, tensor) = state.outputs[out_rank], state.diff_inputs[in_rank]
    lib, opts = state.tensors, state.opts
    n, m = lib.numel(tensor), lib.numel(output)
    rng = numpy.random.default_rng(FAST_MODE_SEED)
    u, v = unit_vector(rng, n), unit_vector(rng, m)
    row = _vjp(state, out_rank, in_rank, v)
    columns: dict[int, numpy.ndarray] = {}

    def column_differs(lo: int, hi: int) -> bool:
        u_s = _restricted(u, lo, hi)
        jvp = numerical_jvps(state, in_pos, tensor, u_s, [(out_pos, output)])[0]
        if hi - lo == 1:
            columns[lo] = jvp / float(u_s[lo])
        atol = opts.atol * float(u_s.sum()) * float(v.sum())
        return not numpy.isclose(float(row @ u_s), float(v @ jvp), rtol=opts.rtol, atol=atol)

    cols, unsearched = bisect(n, column_differs, opts.max_mismatches)
    mismatches: list[tuple] = []
    kinks: list[tuple] = []
    noise: list[tuple] = []
    for col in cols:
        if col not in columns:  # a one-entry input: the root was never halved
            column_differs(col, col + 1)
        column = columns[col]
        analytical: dict[int, float] = {}

        def entry_differs(lo: int, hi: int, col: int = col, column=column, analytical=analytical) -> bool:
            w = _restricted(v, lo, hi)
            ana = float(_vjp(state, out_rank, in_rank, w)[col])
            if hi - lo == 1:
                analytical[lo] = ana / float(w[lo])
            return not numpy.isclose(ana, float(w @ column), rtol=opts.rtol, atol=opts.atol * float(w.sum()))

        rows, left = bisect(m, entry_differs, opts.max_mismatches - len(mismatches))
        unsearched += left
        for r in rows:
            if r not in analytical:
                entry_differs(r, r + 1)
            entry = (r, col, float(column[r]), analytical[r])
            agreed = None if state.strict else noise_at(state, in_rank, out_rank, r, col, entry[3])
            if agreed is not None:
                noise.append((*entry, *agreed))
            elif not state.strict and kink_at(state, in_rank, out_rank, r, col, entry[3]):
                kinks.append(entry)
            else:
                mismatches.append(entry)
    return mismatches, kinks, noise, unsearched


def _vjp(state: CheckState, out_rank: int, in_rank: int, seed: numpy.ndarray) -> numpy.ndarray:
    """seed^T J_ana for one input, flat (zeros where the input is not reached)."""
    lib = state.tensors
    pos, output = state.outputs[out_rank]
    tensors = [t for _, t in state.diff_inputs]
    grads = state.user(f"backward of output {pos}", lib.grad, [output], tensors, [lib.tensor(seed, output)])
    grad = grads[in_rank]
    if grad is None:
        return numpy.zeros(lib.numel(tensors[in_rank]))
    return numpy.asarray(lib.values(grad), dtype=numpy.float64).reshape(-1)


def bisection_report(
    state: CheckState, out_rank: int, in_rank: int, found: tuple[list[tuple], list[tuple], list[tuple], int]
) -> PairReport:
    """A PairReport of the entries located: counts and errors are lower bounds."""
    mismatches, kinks, noise, unsearched = found
    (out_pos, output), (in_pos, tensor) = state.outputs[out_rank], state.diff_inputs[in_rank]
    out_shape, in_shape = tuple(state.tensors.shape(output)), tuple(state.tensors.shape(tensor))

    def named(entries: list[tuple]) -> list[tuple]:
        ranked = sorted(entries, key=lambda e: -_error(e))
        return [(unravel(r, out_shape), unravel(c, in_shape), *rest) for r, c, *rest in ranked]

    listed = named(mismatches)
    worst = listed[0] if listed else None
    with numpy.errstate(all="ignore"):
        rel = max((_error(e) / abs(e[2]) if e[2] else numpy.inf for e in mismatches), default=0.0)
    return PairReport(
        output_index=out_pos,
        input_index=in_pos,
        input_shape=in_shape,
        output_shape=out_shape,
        jacobian_shape=(state.tensors.numel(output), state.tensors.numel(tensor)),
        max_abs_err=max((_error(e) for e in mismatches), default=0.0),
        max_rel_err=float(rel),
        worst_input_index=worst[1] if worst else None,
        worst_output_index=worst[0] if worst else None,
        numerical=worst[2] if worst else None,
        analytical=worst[3] if worst else None,
        mismatches=listed,
        passed=not mismatches and not unsearched,
        order=state.order,
        mismatch_count=len(mismatches) + unsearched,
        mismatch_count_exact=False,
        nondifferentiable=named(kinks),
        noise=named(noise),
        estimates_tried=tried(state.opts.eps) if mismatches else [],
    )


def _error(entry: tuple) -> float:
    """|numerical - analytical|, NaN as infinite (ranked first, as pair_report ranks)."""
    err = abs(entry[2] - entry[3])
    return numpy.inf if numpy.isnan(err) else err
