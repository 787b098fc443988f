"""Running prepared cases through `engine.autograd.check_gradients`, into plain dataclasses.

A torch case runs through the same checker with `tensors=TorchTensors()` (checking_torch.py).

The results carry names (`x`, `model.fc1.weight`) instead of input positions, and for a
failure the source of the custom backward(s) involved, so the renderer needs nothing else.
"""

from __future__ import annotations

import dataclasses
import inspect
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
from .loading import PreparedCase
from .probing import attribute
from .running import interrupted

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

    @property
    def verdict(self) -> str:
        """PASS, FAIL, or NONDIFF: passed, with entries set apart as kinks."""
        if not self.passed:
            return "FAIL"
        return "NONDIFF" if self.nondifferentiable else "PASS"

    @classmethod
    def named(cls, report: PairReport, input: str, output: str) -> PairResult:
        """Every field of `report`, its mismatch tuples as `Mismatch` records, and the two names.

        Not a subclass of PairReport: that would import the engine (numpy) whenever the CLI
        starts, `--help` included. A field the engine adds fails here, loudly.
        """
        values = {f.name: getattr(report, f.name) for f in dataclasses.fields(report)}
        values["mismatches"] = [Mismatch(*entry) for entry in report.mismatches]
        values["nondifferentiable"] = [Mismatch(*entry) for entry in report.nondifferentiable]
        return cls(input=input, output=output, **values)


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
    problems: list[Problem] = field(default_factory=list)
    backwards: list[SourceLocation] = field(default_factory=list)
    pairs: list[PairResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # kinks: why the numerical side was set aside
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
    report, failure, timed_out = None, None, None
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
        result.problems = [watch.problem(_problem(str(p))) for p in report.problems]
        result.pairs = _pair_results(report.pairs, names, inputs)
        if not keep_jacobians:
            for pair in result.pairs:
                pair.trim_jacobians(rtol=chosen.rtol, atol=chosen.atol)
        result.warnings = kink_warnings(result.pairs, chosen.eps)
    if not result.passed:
        # the forward runs once more to find the graph's Functions: not after a timeout, and never
        # for longer than the case was allowed
        try:
            with time_limit(timeout):
                result.backwards = backward_sources(prepared, run_forward=timed_out is None)
        except TimedOut:
            result.backwards = backward_sources(prepared, run_forward=False)
    return result


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


def _problem(text: str) -> Problem:
    """A report problem; check_gradients ends texts about user code with '(at file:line)'."""
    matches = list(_AT_LINE.finditer(text))
    if not matches:
        return Problem(text)
    found = matches[-1]
    path, line = found.group("file"), int(found.group("line"))
    shown = _display_path(path)
    text = text[: found.start()] + f"(at {shown}:{line})" + text[found.end() :]
    source = linecache.getline(path, line).strip() or None
    return Problem(text, shown, line, source)


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


def backward_sources(prepared: PreparedCase, run_forward: bool = True) -> list[SourceLocation]:
    """The custom Functions behind a case: those in its graph, else those defined in its file.

    Found by running the forward once more and walking `grad_fn.next_functions`; the
    Functions defined in the user's module are the fallback when the walk finds none (or
    when `run_forward` is False).
    """
    found = _functions_in_graph(prepared) if run_forward else []
    if not found:
        found = _functions_defined_in(prepared.file.module.__name__, prepared.framework)
    locations = []
    for cls in found:
        location = _backward_location(cls)
        if location is not None:
            locations.append(location)
    return locations


def _functions_in_graph(prepared: PreparedCase) -> list[type]:
    func, inputs = _callable_and_inputs(prepared)
    try:
        with _grad_enabled(prepared):
            outputs = func(*inputs)
    except KeyboardInterrupt as exc:
        raise _interrupted_in(prepared, exc) from None
    except USER_ERRORS:  # the check has reported it
        return []
    if not isinstance(outputs, (tuple, list)):
        outputs = (outputs,)
    stack = [attribute(o, "grad_fn") for o in outputs]  # a user's grad_fn property may raise
    seen: set[int] = set()
    classes: list[type] = []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        cls = getattr(type(node), "_forward_cls", None)
        if cls is not None and _defined_by_user(cls) and cls not in classes:
            classes.append(cls)
        for edge in attribute(node, "next_functions", ()) or ():
            stack.append(edge[0] if isinstance(edge, tuple) else edge)
    classes.reverse()  # the walk meets the last-applied Function first
    return classes


def _defined_by_user(cls: type) -> bool:
    """Whether a Function class is the user's, by the engine's rule for the user's files."""
    from engine.autograd import anomaly

    try:
        return not anomaly.is_internal_file(inspect.getfile(cls))
    except TypeError:  # no file records where it was defined (exec'd text): the user's
        return True


def _grad_enabled(prepared: PreparedCase) -> Any:
    if prepared.framework == "torch":
        import torch  # the user's file imported it

        return torch.enable_grad()
    import engine

    return engine.enable_grad()


def _function_base(framework: str) -> type:
    """The custom Function base class of the case's library."""
    if framework == "torch":
        import torch  # the user's file imported it

        return torch.autograd.Function
    from engine.autograd import Function

    return Function


def _functions_defined_in(module_name: str, framework: str) -> list[type]:
    found: list[type] = []
    pending = list(_function_base(framework).__subclasses__())
    while pending:
        cls = pending.pop(0)
        if cls.__module__ == module_name and cls not in found:
            found.append(cls)
        pending.extend(cls.__subclasses__())
    return found


def _backward_location(cls: type) -> SourceLocation | None:
    backward = cls.__dict__.get("backward") or cls.__dict__.get("vjp")
    if backward is None:
        return None
    backward = getattr(backward, "__func__", backward)
    try:
        lines, start = inspect.getsourcelines(backward)
        path = inspect.getsourcefile(backward)
    except (OSError, TypeError):
        return None
    if path is None:
        return None
    return SourceLocation(
        function=f"{cls.__qualname__}.backward",
        file=_display_path(path),
        line=start,
        source=[line.rstrip("\n") for line in lines],
    )


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
