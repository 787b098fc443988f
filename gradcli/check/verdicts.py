"""Every result carries its class and its reason: what kind of finding it is, and why.

A case's class, first match wins:

    RANDOM FORWARD / NONDETERMINISTIC FORWARD   the forward changed between calls (no Jacobian computed)
    DTYPE                                       the forward mixed dtypes the check could not widen
    NONDETERMINISTIC BACKWARD                   two backwards of the same graph differ (beyond nondet_tol)
    BUG                                         analytical and numerical disagree beyond noise, at every step
                                                size tried; or the backward misbehaves (wrong size, ...)
    ERROR                                       user code raised, or the case could not be checked
    KINK / NOISE / PASS                         passed: with entries set apart as kinks, as noise, or none

A pair's class is BUG, KINK, NOISE or PASS by the same rules. The classes and their words are
the engine's (engine/autograd/gradcheck/report.py), so library users see the same.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from .results import entry_name

if TYPE_CHECKING:
    from .results import CaseResult, PairResult

PASS, BUG, NOISE, KINK, ERROR, DTYPE = "PASS", "BUG", "NOISE", "KINK", "ERROR", "DTYPE"
RANDOM_FORWARD = "RANDOM FORWARD"
NONDETERMINISTIC_FORWARD = "NONDETERMINISTIC FORWARD"
NONDETERMINISTIC_BACKWARD = "NONDETERMINISTIC BACKWARD"

#: Every class, in the order a case takes the first that applies.
CLASSES = (
    RANDOM_FORWARD,
    NONDETERMINISTIC_FORWARD,
    DTYPE,
    NONDETERMINISTIC_BACKWARD,
    BUG,
    ERROR,
    KINK,
    NOISE,
    PASS,
)
#: The classes of a passed case or pair.
PASSING = (PASS, NOISE, KINK)
#: The classes of a forward that changed between calls: its backward is not at fault.
FORWARD_CLASSES = (RANDOM_FORWARD, NONDETERMINISTIC_FORWARD)
#: Problem kinds that decide a failed case's class before its pairs do, in this order.
_DECIDING = (RANDOM_FORWARD, NONDETERMINISTIC_FORWARD, DTYPE, NONDETERMINISTIC_BACKWARD)

#: The table's word for each class (the file table must fit 80 columns).
SHORT = {
    RANDOM_FORWARD: "RANDOM",
    NONDETERMINISTIC_FORWARD: "NONDET FWD",
    NONDETERMINISTIC_BACKWARD: "NONDET BWD",
}


def pair_class(pair: PairResult) -> str:
    if not pair.passed:
        return BUG
    if pair.nondifferentiable:
        return KINK
    return NOISE if pair.noise else PASS


def case_class(result: CaseResult) -> tuple[str, str]:
    """(class, reason) of a checked case."""
    if result.passed:
        return _passed(result)
    kinds = [p.kind for p in result.problems]
    for kind in _DECIDING:
        if kind in kinds:
            deciding = next(p for p in result.problems if p.kind == kind)  # a cause comes first
            if kind == NONDETERMINISTIC_BACKWARD:
                return kind, _backward_reason(deciding.message, result.settings.nondet_tol)
            return kind, deciding.message.splitlines()[0]
    wrong = [p for p in result.pairs if not p.passed]
    if wrong:
        return BUG, _lost(result, wrong) or bug_reason(wrong, result.settings.eps)
    bugs = [p for p in result.problems if p.kind == BUG]
    if bugs:
        return BUG, bugs[0].message.splitlines()[0]
    if result.problems:
        return ERROR, result.problems[0].message.splitlines()[0]
    return ERROR, "the check failed without saying why"


def bug_reason(wrong: list[PairResult], eps: float) -> str:
    """The worst wrong entry and the estimates it was also compared with."""
    worst = max(wrong, key=lambda p: math.inf if math.isnan(p.max_abs_err) else p.max_abs_err)
    at = entry_name(worst.input, worst.worst_input_index)
    tried = worst.estimates_tried
    beyond = (
        f"; it also disagrees with {', '.join(tried[1:])} and {tried[0]}, so it is not the finite "
        "difference's noise"
        if tried
        else ""
    )
    what = (
        f"numerical {worst.numerical:.6g}, analytical {worst.analytical:.6g}"
        if worst.numerical is not None and worst.analytical is not None
        else f"max abs err {worst.max_abs_err:.3g}"
    )
    derivative = "gradient" if worst.mode == "rev" else "forward-mode derivative (JVP)"
    return f"the {derivative} of {worst.output} w.r.t. {worst.input} is wrong at {entry_name(worst.output, worst.worst_output_index)} w.r.t. {at} ({what}, at eps={eps:g}){beyond}"


_REENTRANCY = re.compile(r"\(output (\d+) with respect to input (\d+): two runs differ by up to ([^)]+)\)")


def _backward_reason(message: str, nondet_tol: float) -> str:
    """The reentrancy failure in plain words (the problem keeps torch's own)."""
    found = _REENTRANCY.search(message)
    where = f" (output {found[1]} w.r.t. input {found[2]}: by up to {found[3]})" if found else ""
    return (
        f"two backwards of the same graph with the same grad_output give different gradients{where}, "
        f"beyond nondet_tol={nondet_tol:g}; if the backward is nondeterministic by design (atomic adds "
        "on a GPU), allow it with --nondet-tol"
    )


def _lost(result: CaseResult, wrong: list[PairResult]) -> str | None:
    """A wrong gradient explained by where it was lost (failure_replay.py), if it was."""
    inputs = [p.input for p in wrong]
    for cut in result.graph_cuts:
        if cut.input in inputs:
            return f"{cut.describe()}, so the analytical gradient misses what flows through that value"
    for name in result.no_gradient:
        if name in inputs:
            return f"{name} gets no gradient at all, though the output depends on it"
    return None


def _passed(result: CaseResult) -> tuple[str, str]:
    kinks = sum(len(p.nondifferentiable) for p in result.pairs)
    noisy = [p for p in result.pairs if p.noise]
    if kinks:
        return KINK, (
            f"{kinks} {'entry is' if kinks == 1 else 'entries are'} not differentiable within eps "
            f"(one-sided differences disagree): set apart, not failures; the rest agree"
        )
    if noisy:
        first = noisy[0].noise[0]
        count = sum(len(p.noise) for p in noisy)
        return NOISE, (
            f"{count} {'entry' if count == 1 else 'entries'} disagreed at eps={result.settings.eps:g} "
            f"but agree with {first.how} (e.g. {entry_name(noisy[0].input, first.input_index)}: "
            f"{first.estimate:.6g} against analytical {first.analytical:.6g}): the finite difference's "
            "error, not the gradient's"
        )
    return PASS, (
        f"analytical and numerical gradients agree within atol={result.settings.atol:g}, "
        f"rtol={result.settings.rtol:g}"
    )
