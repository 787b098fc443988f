"""Running prepared cases through `engine.autograd.check_gradients`, into plain dataclasses.

A torch case runs through the same checker with its library's `tensors=` (`Library.gradcheck_tensors`).

The results carry names (`x`, `model.fc1.weight`) instead of input positions, and for a
failure the source of the custom backward(s) in the case's graph and where a failing input's
value left the graph (failure_replay.py), so the renderer needs nothing else.
"""

from __future__ import annotations

import linecache
import re
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..program.exception_text import USER_ERRORS, exception_text
from ..program.shown_paths import display_path
from .case_calls import callable_and_inputs, interrupted_in, wants_grad
from .dtype_errors import DtypeWatch
from .dtype_plan import DtypePlan
from .loading import PreparedCase
from .results import FULL_MODE_BELOW, CaseResult, PairResult, Problem, Settings, entry_name
from .verdicts import FORWARD_CLASSES, case_class, pair_class

if TYPE_CHECKING:
    from engine.autograd.gradcheck.report import PairReport


def differentiable_elements(prepared: PreparedCase) -> int:
    """Total elements of the float inputs and parameters that require grad (what decides fast/full)."""
    tensors = list(prepared.inputs) + [p for _, p in prepared.params]
    return sum(x.numel() for x in tensors if wants_grad(x))


def run_case(
    prepared: PreparedCase,
    settings: Settings,
    show: int = 10,
    progress: Callable[[int, int], None] | None = None,
    keep_jacobians: bool = True,
    timeout: float | None = None,
) -> CaseResult:
    """Check one case; user-code errors become problems of a failed result, never exceptions.

    `show`: the failing entries each pair lists, largest error first (all are counted);
    `progress(done, total)`: called per input element perturbed (the progress bar);
    `keep_jacobians`: False keeps only the heatmap grid of a Jacobian larger than 20 x 40;
    `timeout`: seconds after which the case stops and fails (time_limit.py)."""
    from engine.autograd import check_gradients

    from .time_limit import TimedOut, time_limit

    case = prepared.case
    elements = differentiable_elements(prepared)
    func, inputs = callable_and_inputs(prepared)
    tensors = prepared.library.gradcheck_tensors()
    plan = DtypePlan(prepared, settings.with_options(case.options), tensors)
    chosen = plan.settings
    fast = chosen.fast if chosen.fast is not None else elements >= FULL_MODE_BELOW
    watch = DtypeWatch(plan.dtype if plan.native else "float64", plan.native, plan.reference64)
    func = watch.wrap(func)
    names = prepared.input_names + [name for name, _ in prepared.params]
    started = time.perf_counter()
    report, failure, timed_out, causes = None, None, None, []
    try:
        with plan.storage, time_limit(timeout), plan.quiet():
            inputs = plan.inputs(inputs)
            report = check_gradients(
                func,
                inputs,
                order=chosen.order,
                modes=chosen.modes,
                fast_mode=fast,
                eps=chosen.eps,
                atol=chosen.atol,
                rtol=chosen.rtol,
                nondet_tol=chosen.nondet_tol,
                max_mismatches=show,
                progress=progress,
                **plan.arguments(func, inputs),
                tensors=tensors,
            )
            if report.forward_drift is not None:  # traced once more, with the same upcasts
                causes = _drift_causes(report, prepared, func, inputs, names)
    except TimedOut as exc:
        timed_out = exc
    except KeyboardInterrupt as exc:
        raise interrupted_in(prepared, exc) from None
    except USER_ERRORS as exc:  # check_gradients should not raise: a failure
        failure = exc
    elapsed = time.perf_counter() - started

    result = CaseResult(
        file=prepared.file.path,
        name=case.name,
        line=case.line,
        passed=False,
        settings=chosen,
        mode="fast" if fast else "full",
        order=chosen.order,
        device=_device_name(inputs),
        dtype="",
        upcast=True,
        localized=False,
        elapsed=elapsed,
        differentiable_elements=elements,
    )
    if timed_out is not None:
        result.problems.append(_problem(str(timed_out)))
    elif failure is not None:
        result.problems.append(Problem(f"the check itself raised {exception_text(failure)}"))
        result.traceback = "".join(traceback.format_exception(type(failure), failure, failure.__traceback__))
    else:
        result.passed = bool(report.passed)
        result.mode = report.mode
        result.order = report.order
        result.device = str(report.device)
        result.dtype = str(report.dtype)
        result.upcast = bool(report.upcast) or plan.upcast
        result.reference = "float64" if plan.reference64 else result.dtype
        result.localized = bool(getattr(report, "localized", False))
        result.problems = causes + [
            watch.problem(_problem(str(p), kind)) for p, kind in zip(report.problems, report.problem_kinds)
        ]
        result.pairs = _pair_results(report.pairs, names, inputs)
        if not keep_jacobians:
            for pair in result.pairs:
                pair.trim_jacobians(rtol=chosen.rtol, atol=chosen.atol)
        # a kink or noise both modes met is said once
        result.warnings = list(dict.fromkeys(kink_warnings(result.pairs, chosen.eps)))
        notes = [_problem(note).message for note in report.notes] + noise_notes(result.pairs, chosen.eps)
        result.notes = _said_once(notes)
    result.verdict, result.reason = case_class(result)
    if not result.passed and result.verdict not in FORWARD_CLASSES:
        # the forward once more: its Functions and cuts (not after a timeout); not for a forward
        # that changes between calls, whose backward is not at fault
        from .replay.failure_replay import examine_failure

        examine_failure(prepared, result, timeout, forward_ran=timed_out is None)
        result.verdict, result.reason = case_class(result)  # a cut found there explains a BUG
    return result


def _drift_causes(
    report: Any, prepared: PreparedCase, func: Callable, inputs: tuple, names: list[str]
) -> list[Problem]:
    """A forward that changed between calls: its causes, each with the user's line, as problems
    of the drift's class (they come first: the first is the case's reason)."""
    from .forward_causes import forward_causes

    kind = next(k for k in report.problem_kinds if k in FORWARD_CLASSES)
    return [
        _located(cause.text, cause.file, cause.line, kind) if cause.file else Problem(cause.text, kind=kind)
        for cause in forward_causes(report.forward_drift, prepared, func, inputs, names)
    ]


def kink_warnings(pairs: list[PairResult], eps: float) -> list[str]:
    """One warning per pair with kinks: where, why the numerical derivative means nothing, the fix."""
    return _set_apart(
        pairs,
        lambda pair: pair.nondifferentiable,
        lambda pair, first: (
            f"not differentiable within eps={eps:g} of the input (one-sided differences disagree), so the "
            f"numerical derivative there means nothing (numerical {first.numerical:.4g}, analytical "
            f"{first.analytical:.4g} at {entry_name(pair.input, first.input_index)}); not counted as a failure. "
            "Move the input more than eps away from the kink, or draw others with --seed."
        ),
    )


def noise_notes(pairs: list[PairResult], eps: float) -> list[str]:
    """One note per pair with noise: which entries, and the estimate they agree with."""
    return _set_apart(
        pairs,
        lambda pair: pair.noise,
        lambda pair, first: (
            f"disagreed at eps={eps:g} but agree with {first.how} (numerical {first.numerical:.6g} at eps, "
            f"{first.estimate:.6g} with {first.how}, analytical {first.analytical:.6g} at "
            f"{entry_name(pair.input, first.input_index)}): the finite difference's rounding or truncation "
            "error, not the gradient's; not counted as a failure."
        ),
    )


def _set_apart(pairs: list[PairResult], entries_of: Callable, explain: Callable) -> list[str]:
    """A line per pair with entries set apart: the entries, the pair's output if it needs naming,
    then `explain(pair, first entry)`."""
    lines = []
    for pair in pairs:
        entries = entries_of(pair)
        if not entries:
            continue
        where = ", ".join(entry_name(pair.input, k.input_index) for k in entries)
        of = "" if pair.order == 1 and pair.output == "out" else f" (of {pair.output})"
        lines.append(f"{where}{of}: {explain(pair, entries[0])}")
    return lines


_AT_LINE = re.compile(r"\(at (?P<file>.+):(?P<line>\d+)\)")


def _said_once(notes: list[str]) -> list[str]:
    """Each note once; a second-order note that repeats a first-order one (the same Function has
    no jvp in both) is left out."""
    kept = list(dict.fromkeys(notes))
    return [n for n in kept if n.removeprefix(SECOND_ORDER) == n or n.removeprefix(SECOND_ORDER) not in kept]


#: How check_gradients marks a problem of the second-order check (CheckState.label).
SECOND_ORDER = "second order: "


def _problem(text: str, kind: str | None = None) -> Problem:
    """A report problem; check_gradients ends texts about user code with '(at file:line)'."""
    matches = list(_AT_LINE.finditer(text))
    if not matches:
        return Problem(text, kind=kind)
    found = matches[-1]
    path, line = found.group("file"), int(found.group("line"))
    text = text[: found.start()] + f"(at {display_path(path)}:{line})" + text[found.end() :]
    return _located(text, path, line, kind)


def _located(text: str, path: str, line: int, kind: str | None) -> Problem:
    """A problem at the user's path:line, shown as the reports show paths, with that line's source."""
    source = linecache.getline(path, line).strip() or None
    return Problem(text, display_path(path), line, source, kind)


def _pair_results(pairs: list[PairReport], names: list[str], inputs: tuple) -> list[PairResult]:
    """Name each pair's input and output (see PairResult)."""
    count = len(inputs)
    multiple_outputs = len({p.output_index for p in pairs if p.order == 1}) > 1
    extra = {p.input_index - count for p in pairs if p.input_index >= count}
    differentiable = [name for name, x in zip(names, inputs) if wants_grad(x)]
    results = []
    for pair in pairs:
        order, index, out = pair.order, pair.input_index, pair.output_index
        if index < len(names):
            name = names[index]
        elif index >= count and order == 2:
            name = "grad_out" if max(extra) == 0 else f"grad_out{index - count}"
        else:
            name = f"inputs[{index}]"
        if order == 2:
            output = f"grad({differentiable[out]})" if out < len(differentiable) else f"grad{out}"
        else:
            output = f"out{out}" if multiple_outputs else "out"
        result = PairResult.named(pair, name, output)
        result.verdict = pair_class(result)
        results.append(result)
    return results


def _device_name(inputs: tuple) -> str:
    for x in inputs:
        if wants_grad(x):
            return str(x.device)
    return "cpu"
