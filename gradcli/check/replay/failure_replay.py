"""A failed case's forward run once more, recorded: the custom backwards in its graph, its cuts.

The outputs' graph is walked for the user's custom Functions (the backwards a failure names:
only those the case's graph holds; none when the forward cannot run again, never a guess from
what the file defines) and for the checked inputs it reaches (`no_gradient`). The same run
records where values left the graph (cut_recording.py); each cut of a failing input's value is
then replayed with that cut's values nudged, the random generators put back first
(`libraries.take_random_state`), and reported (graph_cuts.py) only if an output the failing pair involves
changed. At most MAX_NUDGED such replays; all of it within the case's time limit.
"""

from __future__ import annotations

import inspect
import linecache
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from ...libraries import take_random_state
from ...program.exception_text import USER_ERRORS
from ...program.probing import attribute
from ...program.shown_paths import display_path
from ..case_calls import callable_and_inputs, grad_enabled, interrupted_in, wants_grad
from ..loading import PreparedCase
from ..results import CaseResult, SourceLocation
from . import graph_cuts
from .cut_recording import Recorder, TensorOps

#: Replays that nudge a cut, per failed case: distinct cut lines beyond these are not tested.
MAX_NUDGED = 8


def examine_failure(
    prepared: PreparedCase, result: CaseResult, timeout: float | None, forward_ran: bool
) -> None:
    """Fill a failed result's `backwards`, `graph_cuts` and `no_gradient` (nothing after a timeout)."""
    from ..time_limit import TimedOut, time_limit

    if not forward_ran:
        return
    try:
        with time_limit(timeout):  # never longer than the case was allowed
            _examine(prepared, result)
    except TimedOut:  # what was found before the limit stays
        pass


def _examine(prepared: PreparedCase, result: CaseResult) -> None:
    func, inputs = callable_and_inputs(prepared)
    ops, observing = _library(prepared)
    names = prepared.input_names + [name for name, _ in prepared.params]
    before = take_random_state()
    recorder = Recorder(inputs, ops)
    try:
        outputs = _run(prepared, func, inputs, observing(recorder))
    except USER_ERRORS:  # the check has reported it
        return
    after = take_random_state()
    failed_modes = {pair.mode for pair in result.pairs if not pair.passed} or {"rev"}
    result.backwards = [
        loc
        for cls in functions_in_graph(outputs)
        for mode in sorted(failed_modes, reverse=True)  # "rev" first
        if (loc := _method_location(cls, mode)) is not None
    ]
    reached: set[int] = set()
    for output in outputs:
        if ops.is_tensor(output):
            reached |= recorder.inputs_behind(output)
    needs_grad = any(ops.is_tensor(o) and attribute(o, "requires_grad", False) for o in outputs)
    differentiable = [k for k, x in enumerate(inputs) if wants_grad(x)]
    wanted = graph_cuts.failing_inputs(result.pairs, differentiable, needs_grad)
    result.no_gradient = [names[k] for k in graph_cuts.no_gradient(result.pairs, wanted, reached)]
    baseline = _host(outputs, ops)
    try:
        for nudge, event in graph_cuts.candidates(recorder.events, wanted)[:MAX_NUDGED]:
            before()
            changed = _changed(prepared, func, inputs, Recorder(inputs, ops, nudge), observing, baseline)
            if graph_cuts.explains(changed, wanted[nudge.position]):
                result.graph_cuts.append(_graph_cut(names[nudge.position], event))
    finally:
        after()


def _run(prepared: PreparedCase, func: Callable, inputs: tuple, observed: AbstractContextManager) -> tuple:
    try:
        with grad_enabled(prepared), observed:
            outputs = func(*inputs)
    except KeyboardInterrupt as exc:
        raise interrupted_in(prepared, exc) from None
    return tuple(outputs) if isinstance(outputs, (tuple, list)) else (outputs,)


def _changed(
    prepared: PreparedCase,
    func: Callable,
    inputs: tuple,
    recorder: Recorder,
    observing: Callable[[Recorder], AbstractContextManager],
    baseline: list,
) -> set[int] | None:
    """The output positions a nudged replay changed; None when it raised (the value matters somehow)."""
    import numpy

    try:
        outputs = _run(prepared, func, inputs, observing(recorder))
    except USER_ERRORS:
        return None
    now = _host(outputs, recorder.ops)
    if len(now) != len(baseline):
        return None
    changed = set()
    for k, (old, new) in enumerate(zip(baseline, now)):
        if old is None or new is None:
            continue
        if old.shape != new.shape or not numpy.array_equal(old, new, equal_nan=True):
            changed.add(k)
    return changed


def _host(outputs: tuple, ops: TensorOps) -> list:
    """Each float output's values as a numpy array (None for anything else)."""
    return [
        ops.host(o) if ops.is_tensor(o) and (o.dtype.is_floating_point or o.dtype.is_complex) else None
        for o in outputs
    ]


def _graph_cut(name: str, event: Any) -> graph_cuts.GraphCut:
    source = linecache.getline(event.file, event.line).strip() or None
    return graph_cuts.GraphCut(name, event.how, display_path(event.file), event.line, source)


def _library(prepared: PreparedCase) -> tuple[TensorOps, Callable[[Recorder], AbstractContextManager]]:
    return prepared.library.pick(_CutRecorders())


class _CutRecorders:
    """Each library's way of recording where values leave the graph (its module imported when asked)."""

    def engine(self) -> tuple[TensorOps, Callable[[Recorder], AbstractContextManager]]:
        from . import cut_recording_engine as library

        return library.engine_ops(), library.observing

    def torch(self) -> tuple[TensorOps, Callable[[Recorder], AbstractContextManager]]:
        from . import cut_recording_torch as library

        return library.torch_ops(), library.observing


def functions_in_graph(outputs: tuple) -> list[type]:
    """The user's custom Function classes in the outputs' graph, the first applied first."""
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


def _method_location(cls: type, mode: str) -> SourceLocation | None:
    """Where a Function's derivative for `mode` is written: its backward (or vjp) for reverse
    mode, its jvp for forward mode."""
    names = ("backward", "vjp") if mode == "rev" else ("jvp",)
    method = next((cls.__dict__[n] for n in names if n in cls.__dict__), None)
    if method is None:
        return None
    method = getattr(method, "__func__", method)
    try:
        lines, start = inspect.getsourcelines(method)
        path = inspect.getsourcefile(method)
    except (OSError, TypeError):
        return None
    if path is None:
        return None
    return SourceLocation(
        function=f"{cls.__qualname__}.{names[0]}",
        file=display_path(path),
        line=start,
        source=[line.rstrip("\n") for line in lines],
    )
