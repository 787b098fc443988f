"""Running prepared cases through `engine.autograd.check_gradients`, into plain dataclasses.

A torch case runs through the same checker with `tensors=TorchTensors()` (checking_torch.py).

The results carry names (`x`, `model.fc1.weight`) instead of input positions, and for a
failure the source of the custom backward(s) in the case's graph and where a failing input's
value left the graph (failure_replay.py), so the renderer needs nothing else.
"""

from __future__ import annotations

import dataclasses
import linecache
import os
import re
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .check_dtype import DtypePlan
from .dtype_errors import DtypeWatch
from .exception_text import USER_ERRORS, exception_text
from .frameworks import is_engine_tensor, is_torch_tensor
from .graph_cuts import GraphCut
from .loading import PreparedCase
from .running import interrupted
from .verdicts import FORWARD_CLASSES, case_class, pair_class

if TYPE_CHECKING:
    from engine.autograd.gradcheck.report import PairReport

#: Below this many differentiable input elements a case is checked in full mode by default:
#: the full Jacobian is cheap there, and its report points at every wrong entry.
FULL_MODE_BELOW = 1000
#: Failing entries shown per input in a failure's side-by-side table (--show N); here, not in
#: render.check, so that the CLI's help reads it without importing rich.
MISMATCH_ROWS = 5


@dataclass
class Settings:
    """Tolerances and mode for a check; `fast=None` means automatic (see FULL_MODE_BELOW).

    `dtype`: "float64" (inputs and everything the case reaches checked as float64) or "native"
    (the case's own dtype; `reference`: its numerical side in "float64", the default, or
    "native" too). eps, atol, rtol None: not given, chosen from the dtype (`resolved`)."""

    order: int = 1
    fast: bool | None = None
    eps: float | None = None
    atol: float | None = None
    rtol: float | None = None
    nondet_tol: float = 0.0
    dtype: str = "float64"
    reference: str | None = None

    def with_options(self, options: dict[str, Any]) -> Settings:
        """These settings overridden by a case's own options."""
        return dataclasses.replace(self, **options)

    def resolved(self, dtype: str = "float64") -> Settings:
        """Every choice made, for a check whose least precise dtype is `dtype` (tolerances.py)."""
        from .tolerances import native_defaults

        native = self.dtype == "native"
        reference = (self.reference or "float64") if native else "float64"
        eps, atol, rtol = native_defaults(dtype if native else "float64", reference)
        return dataclasses.replace(
            self,
            eps=eps if self.eps is None else self.eps,
            atol=atol if self.atol is None else self.atol,
            rtol=rtol if self.rtol is None else self.rtol,
            reference=reference,
        )

    def for_run(self) -> Settings:
        """The run's settings as reported: float64's defaults filled in; with --dtype native the
        tolerances not given stay None, each case's coming from its own dtype."""
        if self.dtype == "native":
            return dataclasses.replace(self, reference=self.reference or "float64")
        return self.resolved()


@dataclass
class Mismatch:
    """One failing Jacobian entry: d output[output_index] / d input[input_index]."""

    output_index: tuple
    input_index: tuple
    numerical: float
    analytical: float


@dataclass
class NoisyEntry:
    """An entry that disagreed at eps but agrees with `estimate`, found `how` (noise.py)."""

    output_index: tuple
    input_index: tuple
    numerical: float
    analytical: float
    estimate: float
    how: str


@dataclass
class PairResult:
    """The engine's `PairReport` of one (output, input) Jacobian block, with names for people.

    `input` and `output` are names: the argument's (`x`, `model.fc1.weight`), `out` or
    `out<k>`; at order 2 the outputs are first-order gradients (`grad(x)`) and the extra
    inputs the random grad_outputs that gradgradcheck adds (`grad_out`). The other fields are
    the report's (see `named`), in the order of the JSON schema.
    """

    input: str
    output: str
    input_index: int
    output_index: int
    order: int
    passed: bool
    input_shape: tuple
    output_shape: tuple
    jacobian_shape: tuple
    max_abs_err: float
    max_rel_err: float
    worst_input_index: tuple | None
    worst_output_index: tuple | None
    numerical: float | None
    analytical: float | None
    mismatch_count: int = 0
    mismatch_count_exact: bool = True  # False: located by bisection, the count is a lower bound
    mismatches: list[Mismatch] = field(default_factory=list)
    nondifferentiable: list[Mismatch] = field(default_factory=list)  # kinks: not failures
    noise: list[NoisyEntry] = field(default_factory=list)  # agree at another step: not failures
    estimates_tried: list[str] = field(default_factory=list)  # what a BUG's entries also disagree with
    verdict: str = "PASS"  # the pair's class: PASS, NOISE, KINK or BUG (verdicts.py)
    # A failing pair's full Jacobians (--dump, --plot, heatmaps), or once trimmed (`keep_jacobians=False`)
    # only the heatmap's block grid; never in the JSON (CASE_JSON_LEAVES_OUT).
    numerical_jacobian: Any = field(default=None, repr=False, compare=False)
    analytical_jacobian: Any = field(default=None, repr=False, compare=False)
    blocks: Any = field(default=None, repr=False, compare=False)

    def heatmap_grid(self, *, rtol: float, atol: float):
        """The terminal heatmap's `BlockGrid`, or None for a pair that kept no Jacobians."""
        if self.blocks is not None:
            return self.blocks
        num, ana = self.numerical_jacobian, self.analytical_jacobian
        if num is None or ana is None or num.size == 0:
            return None
        from .jacobian_blocks import block_grid

        return block_grid(num, ana, rtol=rtol, atol=atol)

    def trim_jacobians(self, *, rtol: float, atol: float) -> None:
        """Keep only the heatmap's grid of a Jacobian too big to draw cell by cell, so a run's
        memory per failing pair is bounded by the grid, not by the Jacobian."""
        from .jacobian_blocks import fits

        if self.numerical_jacobian is None or fits(self.jacobian_shape):
            return
        self.blocks = self.heatmap_grid(rtol=rtol, atol=atol)
        self.numerical_jacobian = self.analytical_jacobian = None

    @classmethod
    def named(cls, report: PairReport, input: str, output: str) -> PairResult:
        """Every field of `report`, its mismatch tuples as `Mismatch` records, and the two names.

        Not a subclass of PairReport: that would import the engine (numpy) whenever the CLI
        starts, `--help` included. A field the engine adds fails here, loudly.
        """
        values = {f.name: getattr(report, f.name) for f in dataclasses.fields(report)}
        values["mismatches"] = [Mismatch(*entry) for entry in report.mismatches]
        values["nondifferentiable"] = [Mismatch(*entry) for entry in report.nondifferentiable]
        values["noise"] = [NoisyEntry(*entry) for entry in report.noise]
        pair = cls(input=input, output=output, **values)
        pair.verdict = pair_class(pair)
        return pair


@dataclass
class SourceLocation:
    """Where a custom Function's backward is written, with its source for display."""

    function: str
    file: str
    line: int
    source: list[str] = field(default_factory=list)


@dataclass
class Problem:
    """A failure other than a Jacobian mismatch; file/line when the text names the user's line.

    `kind` is the failure's verdict class when the problem decides it (render/verdicts: "DTYPE",
    "NONDETERMINISTIC BACKWARD", ...); None leaves the class to the case's other findings."""

    message: str
    file: str | None = None
    line: int | None = None
    source: str | None = None
    kind: str | None = None


@dataclass
class CaseResult:
    """Everything reported about one case (fields in the order of the JSON schema)."""

    file: str
    name: str
    line: int | None
    passed: bool
    order: int
    mode: str
    localized: bool
    device: str
    dtype: str
    upcast: bool
    elapsed: float
    differentiable_elements: int
    settings: Settings  # after the case's own options
    verdict: str = "ERROR"  # the case's class (verdicts.py): PASS, BUG, NOISE, KINK, RANDOM FORWARD, ...
    reason: str = ""  # why, in one sentence
    problems: list[Problem] = field(default_factory=list)
    backwards: list[SourceLocation] = field(default_factory=list)
    graph_cuts: list[GraphCut] = field(default_factory=list)  # where a failing input's value left the graph
    no_gradient: list[str] = field(default_factory=list)  # failing inputs that get no gradient at all
    pairs: list[PairResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # kinks: why the numerical side was set aside
    notes: list[str] = field(default_factory=list)  # noise: which other estimate agreed
    traceback: str | None = None
    #: the dtype of the numerical Jacobian: "float64", or the native dtype (--reference native)
    reference: str = "float64"


def differentiable_elements(prepared: PreparedCase) -> int:
    """Total elements of the float inputs and parameters that require grad (what decides fast/full)."""
    tensors = list(prepared.inputs) + [p for _, p in prepared.params]
    return sum(x.numel() for x in tensors if _wants_grad(x))


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
    func, inputs = _callable_and_inputs(prepared)
    plan = DtypePlan(
        prepared, settings.with_options(case.options), _library(prepared).get("tensors", _engine())
    )
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
                fast_mode=fast,
                eps=chosen.eps,
                atol=chosen.atol,
                rtol=chosen.rtol,
                nondet_tol=chosen.nondet_tol,
                max_mismatches=show,
                progress=progress,
                **plan.arguments(func, inputs),
                **_library(prepared),
            )
            if report.forward_drift is not None:  # traced once more, with the same upcasts
                causes = _drift_causes(report, prepared, func, inputs, names)
    except TimedOut as exc:
        timed_out = exc
    except KeyboardInterrupt as exc:
        raise _interrupted_in(prepared, exc) from None
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
        result.warnings = kink_warnings(result.pairs, chosen.eps)
        result.notes = noise_notes(result.pairs, chosen.eps)
    result.verdict, result.reason = case_class(result)
    if not result.passed and result.verdict not in FORWARD_CLASSES:
        # the forward once more: its Functions and cuts (not after a timeout); not for a forward
        # that changes between calls, whose backward is not at fault
        from .failure_replay import examine_failure

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
    problems = []
    for cause in forward_causes(report.forward_drift, prepared, func, inputs, names):
        shown = _display_path(cause.file) if cause.file else None
        source = linecache.getline(cause.file, cause.line).strip() or None if cause.file else None
        problems.append(Problem(cause.text, shown, cause.line, source, kind))
    return problems


def kink_warnings(pairs: list[PairResult], eps: float) -> list[str]:
    """One warning per pair with kinks: where, why the numerical derivative means nothing, the fix."""
    warnings = []
    for pair in pairs:
        if not pair.nondifferentiable:
            continue
        first = pair.nondifferentiable[0]
        entries = ", ".join(_entry(pair.input, k.input_index) for k in pair.nondifferentiable)
        of = "" if pair.order == 1 and pair.output == "out" else f" (of {pair.output})"
        warnings.append(
            f"{entries}{of}: not differentiable within eps={eps:g} of the input (one-sided differences "
            f"disagree), so the numerical derivative there means nothing (numerical {first.numerical:.4g}, "
            f"analytical {first.analytical:.4g} at {_entry(pair.input, first.input_index)}); not counted "
            f"as a failure. Move the input more than eps away from the kink, or draw others with --seed."
        )
    return warnings


def noise_notes(pairs: list[PairResult], eps: float) -> list[str]:
    """One note per pair with noise: which entries, and the estimate they agree with."""
    notes = []
    for pair in pairs:
        if not pair.noise:
            continue
        first = pair.noise[0]
        entries = ", ".join(_entry(pair.input, k.input_index) for k in pair.noise)
        of = "" if pair.order == 1 and pair.output == "out" else f" (of {pair.output})"
        notes.append(
            f"{entries}{of}: disagreed at eps={eps:g} but agree with {first.how} (numerical "
            f"{first.numerical:.6g} at eps, {first.estimate:.6g} with {first.how}, analytical "
            f"{first.analytical:.6g} at {_entry(pair.input, first.input_index)}): the finite difference's "
            "rounding or truncation error, not the gradient's; not counted as a failure."
        )
    return notes


def _entry(name: str, index: tuple) -> str:
    return f"{name}[{', '.join(str(i) for i in index)}]" if index else name


def _callable_and_inputs(prepared: PreparedCase) -> tuple[Callable, tuple]:
    """Checked parameters (model, modules=) become extra inputs of a wrapper that ignores them."""
    case = prepared.case
    if not prepared.params:
        return case.func, prepared.inputs
    func, count = case.func, len(prepared.inputs)
    params = tuple(p for _, p in prepared.params)
    return (lambda *xs: func(*xs[:count])), prepared.inputs + params


def _interrupted_in(prepared: PreparedCase, exc: KeyboardInterrupt) -> BaseException:
    return interrupted(f"while running {prepared.file.path}::{prepared.case.name}", exc)


def _engine() -> Any:
    from engine.autograd.gradcheck.tensors import ENGINE

    return ENGINE


def _library(prepared: PreparedCase) -> dict[str, Any]:
    """check_gradients' `tensors=` for a torch case (the engine's is its default)."""
    if prepared.framework != "torch":
        return {}
    from .checking_torch import TorchTensors

    return {"tensors": TorchTensors()}


_AT_LINE = re.compile(r"\(at (?P<file>.+):(?P<line>\d+)\)")


def _problem(text: str, kind: str | None = None) -> Problem:
    """A report problem; check_gradients ends texts about user code with '(at file:line)'."""
    matches = list(_AT_LINE.finditer(text))
    if not matches:
        return Problem(text, kind=kind)
    found = matches[-1]
    path, line = found.group("file"), int(found.group("line"))
    shown = _display_path(path)
    text = text[: found.start()] + f"(at {shown}:{line})" + text[found.end() :]
    source = linecache.getline(path, line).strip() or None
    return Problem(text, shown, line, source, kind)


def _pair_results(pairs: list[PairReport], names: list[str], inputs: tuple) -> list[PairResult]:
    """Name each pair's input and output (see PairResult)."""
    count = len(inputs)
    multiple_outputs = len({p.output_index for p in pairs if p.order == 1}) > 1
    extra = {p.input_index - count for p in pairs if p.input_index >= count}
    differentiable = [name for name, x in zip(names, inputs) if _wants_grad(x)]
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
        results.append(PairResult.named(pair, name, output))
    return results


def _grad_enabled(prepared: PreparedCase) -> Any:
    if prepared.framework == "torch":
        import torch  # the user's file imported it

        return torch.enable_grad()
    import engine

    return engine.enable_grad()


def _display_path(path: str) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def _device_name(inputs: tuple) -> str:
    for x in inputs:
        if _wants_grad(x):
            return str(x.device)
    return "cpu"


def _wants_grad(value: Any) -> bool:
    is_tensor = is_engine_tensor(value) or is_torch_tensor(value)
    return is_tensor and value.dtype.is_floating_point and value.requires_grad
