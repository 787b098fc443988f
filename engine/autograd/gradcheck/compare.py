"""Numerical against analytical, per (output, input) pair: the PairReport and its verdict.

Full mode compares Jacobians entry by entry; fast mode compares the projections v^T J u,
and a pair that disagrees there is localised by computing its full Jacobians, or, in
check_gradients when that costs too many forwards, by bisection (bisection.py). In
check_gradients (not strict), failing entries where the function has a kink are set apart
(kinks.py) and a pair whose only mismatches are kinks passes.
"""

from __future__ import annotations

import math

import numpy

from .analytical import full_analytical
from .bisection import bisection_report, locate, worth_bisecting
from .forward import forward_jacobians
from .kinks import find_kinks, kink_entries
from .messages import (
    FAST_FAIL_SLOW_OK_MSG,
    bisection_mismatch,
    fast_mode_mismatch,
    jacobian_mismatch,
    mismatch_listing,
)
from .noise import find_noise, noise_entries, tried
from .numerical import numerical_jacobians
from .report import PairReport
from .state import Abort, CheckState, Options
from .util import unravel


def compare_full(
    state: CheckState, out_rank: int, in_rank: int, num: numpy.ndarray, ana: numpy.ndarray, mode: str = "rev"
) -> PairReport:
    """One pair's Jacobians entry by entry; `mode` is the analytical side's ("rev" or "fwd")."""
    pair = _checked_pair(state, out_rank, in_rank, num, ana, mode)
    state.report.pairs.append(pair)
    if not pair.passed:
        output, input = state.outputs[out_rank][1], state.diff_inputs[in_rank][1]
        forward = mode == "fwd"
        state.fail(jacobian_mismatch(state.tensors, out_rank, in_rank, num, ana, output, input, forward))
    return pair


def compare_fast(
    state: CheckState, out_rank: int, in_rank: int, num: float, ana: float, atol: float, mode: str = "rev"
) -> None:
    """torch's fast-mode comparison; on a mismatch the pair's full Jacobians replace it."""
    if numpy.isclose(ana, num, rtol=state.opts.rtol, atol=atol):
        state.report.pairs.append(_fast_pair(state, out_rank, in_rank, num, ana, mode))
        return
    _localize(state, out_rank, in_rank, num, ana, mode)


def pair_report(
    num: numpy.ndarray,
    ana: numpy.ndarray,
    output_index: int,
    input_index: int,
    output_shape: tuple,
    input_shape: tuple,
    opts: Options,
    order: int,
    kinks: numpy.ndarray | None = None,
    mode: str = "rev",
) -> PairReport:
    """Compare two Jacobians entry by entry, vectorised, as torch.allclose(ana, num) does.

    Whether an entry passes is torch's rule, |ana - num| <= atol + rtol |num|; what is
    reported is ranked by absolute error |num - ana| (NaN counts as infinite): the worst
    entry is the largest error, and the first `opts.max_mismatches` failing entries are
    listed largest first (the count says how many failed). Ranking by the distance outside
    the tolerance instead would name a small error at a small derivative before a large one.
    The relative error |num - ana| / |num| is inf where num is 0 and ana is not: undefined there.
    Entries in the `kinks` mask (kinks.py, noise.py) count as agreeing: the headline, the count and the
    list describe the real mismatches only.
    """
    m, n = num.shape
    where = dict(
        output_index=output_index,
        input_index=input_index,
        input_shape=input_shape,
        output_shape=output_shape,
        jacobian_shape=(m, n),
        order=order,
        mode=mode,
    )
    if num.size == 0:
        return PairReport(
            **where,
            max_abs_err=0.0,
            max_rel_err=0.0,
            worst_input_index=None,
            worst_output_index=None,
            numerical=None,
            analytical=None,
            mismatches=[],
            passed=True,
        )
    close = numpy.isclose(ana, num, rtol=opts.rtol, atol=opts.atol)
    with numpy.errstate(all="ignore"):
        diff = numpy.where(num == ana, 0.0, numpy.abs(num - ana))
        rel = numpy.where(diff == 0, 0.0, diff / numpy.abs(num))
    if kinks is not None:
        close, diff, rel = close | kinks, numpy.where(kinks, 0.0, diff), numpy.where(kinks, 0.0, rel)
    score = numpy.where(numpy.isnan(diff), numpy.inf, diff).reshape(-1)
    worst = int(numpy.argmax(score))
    bad = numpy.flatnonzero(~close.reshape(-1))
    count = int(bad.size)
    bad = bad[numpy.argsort(-score[bad], kind="stable")][: opts.max_mismatches]
    flat_num, flat_ana = num.reshape(-1), ana.reshape(-1)

    def entry(k: int) -> tuple[tuple, tuple]:
        """(output multi-index, input multi-index) of flat Jacobian entry k."""
        r, c = divmod(k, n)
        return unravel(r, output_shape), unravel(c, input_shape)

    worst_out, worst_in = entry(worst)
    return PairReport(
        **where,
        max_abs_err=float(diff.max()),
        max_rel_err=float(rel.max()),
        worst_input_index=worst_in,
        worst_output_index=worst_out,
        numerical=float(flat_num[worst]),
        analytical=float(flat_ana[worst]),
        mismatches=[(*entry(int(k)), float(flat_num[k]), float(flat_ana[k])) for k in bad],
        passed=count == 0,
        mismatch_count=count,
        numerical_jacobian=num if count else None,
        analytical_jacobian=ana if count else None,
    )


def _localize(
    state: CheckState, out_rank: int, in_rank: int, fast_num: float, fast_ana: float, mode: str
) -> None:
    """Full mode for one pair that failed in fast mode: the entries that disagree. Bisection
    (reverse mode's, by VJPs) localises a large pair; forward mode recomputes its columns."""
    numel = state.tensors.numel
    if (
        mode == "rev"
        and not state.strict
        and worth_bisecting(numel(state.diff_inputs[in_rank][1]), numel(state.outputs[out_rank][1]))
    ):
        _bisect(state, out_rank, in_rank, fast_num, fast_ana)
        return
    try:
        num = numerical_jacobians(state, in_rank)[out_rank]
        if mode == "fwd":
            ana = forward_jacobians(state, in_rank)[out_rank]
        else:
            ana = full_analytical(state, out_rank)[in_rank]
    except Abort:
        return
    if ana is None:  # a gradient of the wrong size: already reported
        return
    state.report.localized = True
    pair = _checked_pair(state, out_rank, in_rank, num, ana, mode)
    if pair.passed and (pair.nondifferentiable or pair.noise):  # every mismatch a kink or noise
        state.report.pairs.append(pair)
        return
    state.report.pairs.append(pair)
    output, input = state.outputs[out_rank][1], state.diff_inputs[in_rank][1]
    message = fast_mode_mismatch(
        state.tensors, out_rank, in_rank, fast_num, fast_ana, num, ana, output, input, mode == "fwd"
    )
    if pair.passed:
        message += FAST_FAIL_SLOW_OK_MSG
        problem = (
            f"fast mode: v^T J u mismatch for output {pair.output_index} with respect to input "
            f"{pair.input_index} (numerical {fast_num:.6g}, analytical {fast_ana:.6g}), but every "
            "Jacobian entry is within tolerance: full mode would pass"
        )
    else:
        message += mismatch_listing(pair)
        problem = None
    state.fail(message, problem)


def _bisect(state: CheckState, out_rank: int, in_rank: int, fast_num: float, fast_ana: float) -> None:
    """A large pair that failed in fast mode: its wrong entries located by bisection."""
    try:
        pair = bisection_report(state, out_rank, in_rank, locate(state, out_rank, in_rank))
    except Abort:
        return
    state.report.localized = True
    state.report.pairs.append(pair)
    if pair.passed and (pair.nondifferentiable or pair.noise):  # every entry located a kink or noise
        return
    problem = None
    if pair.passed:
        problem = (
            f"fast mode: v^T J u mismatch for output {pair.output_index} with respect to input "
            f"{pair.input_index} (numerical {fast_num:.6g}, analytical {fast_ana:.6g}), but bisection "
            "located no entry outside the tolerance: many small differences add up"
        )
    state.fail(bisection_mismatch(out_rank, in_rank, fast_num, fast_ana, pair), problem)


def _checked_pair(
    state: CheckState, out_rank: int, in_rank: int, num: numpy.ndarray, ana: numpy.ndarray, mode: str
) -> PairReport:
    """The pair's report; in check_gradients, with noise (noise.py) and then kinks (kinks.py) set
    apart from its mismatches; what is left is a BUG, tried at the other estimates too."""
    pair = _pair(state, out_rank, in_rank, num, ana, mode)
    if pair.passed or state.strict:
        return pair
    found = find_noise(state, out_rank, in_rank, num, ana)
    noise, agreed = found if found is not None else (None, {})
    kinks = find_kinks(state, out_rank, in_rank, num, ana, noise)
    if noise is None and kinks is None:
        pair.estimates_tried = tried(state.opts.eps)
        return pair
    settled = noise if kinks is None else kinks if noise is None else noise | kinks
    pair = _pair(state, out_rank, in_rank, num, ana, mode, settled)
    if kinks is not None:
        pair.nondifferentiable = kink_entries(kinks, num, ana, pair.output_shape, pair.input_shape)
    if noise is not None:
        pair.noise = noise_entries(agreed, num, ana, pair.output_shape, pair.input_shape)
    if not pair.passed:
        pair.estimates_tried = tried(state.opts.eps)
    return pair


def _pair(
    state: CheckState,
    out_rank: int,
    in_rank: int,
    num: numpy.ndarray,
    ana: numpy.ndarray,
    mode: str,
    kinks: numpy.ndarray | None = None,
) -> PairReport:
    (out_pos, out), (in_pos, inp) = state.outputs[out_rank], state.diff_inputs[in_rank]
    shape = state.tensors.shape
    return pair_report(
        num, ana, out_pos, in_pos, tuple(shape(out)), tuple(shape(inp)), state.opts, state.order, kinks, mode
    )


def _fast_pair(
    state: CheckState, out_rank: int, in_rank: int, num: float, ana: float, mode: str
) -> PairReport:
    """A pair known only through v^T J u: no entries, the projections as its values."""
    (out_pos, out), (in_pos, inp) = state.outputs[out_rank], state.diff_inputs[in_rank]
    err = abs(num - ana)
    shape, numel = state.tensors.shape, state.tensors.numel
    return PairReport(
        output_index=out_pos,
        input_index=in_pos,
        input_shape=tuple(shape(inp)),
        output_shape=tuple(shape(out)),
        jacobian_shape=(numel(out), numel(inp)),
        max_abs_err=err,
        max_rel_err=0.0 if err == 0 else (err / abs(num) if num != 0 else math.inf),
        worst_input_index=None,
        worst_output_index=None,
        numerical=num,
        analytical=ana,
        mismatches=[],
        passed=True,
        order=state.order,
        mode=mode,
    )
