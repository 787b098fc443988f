"""engine.autograd.profiler: torch.autograd.profiler's `profile` and `record_function`.

While a profile runs, every row of the derivative table is timed: its forward (a row named as
ATen names the op, `aten::mm`) and its node's backward (`MmBackward0`), with the ranges users open
with `record_function`. Each call's total is measured with `perf_counter_ns`; its self time is
the total less the calls made inside it. The timers are put on the rows (`Op.forward`, the node
classes' `apply`) when the first profile starts and taken off when the last one ends, so the op
path costs nothing while no profile runs.
"""

from __future__ import annotations

import re
import threading
import warnings
from contextlib import ContextDecorator
from time import perf_counter_ns

from .. import cuda
from ..ops.op import ROWS
from .backward import AccumulateGrad
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "profile", "record_function"]


class _Timing(threading.local):
    """This thread's open calls: per call, the time spent in the calls made inside it."""

    def __init__(self) -> None:
        self.open: list = []


_timing = _Timing()
_running: list = []  # the profiles recording now; each call is recorded into every one
_installed: list = []  # (object, attribute, what it held before): the timers to take off


def aten_name(node_name: str) -> str:
    """The ATen op a row's node stands for: `MulBackward0` -> `aten::mul`, `NativeBatchNormBackward0`
    -> `aten::native_batch_norm`."""
    stem = re.sub(r"Backward\d*$", "", node_name)
    return "aten::" + re.sub(r"(?<=[a-z0-9])(?=[A-Z][a-z])|(?<=[a-z])(?=[A-Z])", "_", stem).lower()


def _shapes(values) -> list:
    return [list(v.shape) if hasattr(v, "shape") else [] for v in values]


ACCUMULATE_GRAD = "engine::autograd::AccumulateGrad"


def _begin() -> tuple:
    frame = [0]  # the time spent in calls made inside this one
    _timing.open.append(frame)
    return frame, perf_counter_ns()


def _end(name: str, frame: list, start: int, inputs) -> None:
    end = perf_counter_ns()
    total = end - start
    opened = _timing.open
    opened.pop()
    if opened:
        opened[-1][0] += total
    for prof in _running:
        shapes = _shapes(inputs) if prof.record_shapes else []
        prof._events.append(FunctionEvent(name, start / 1e3, total / 1e3, (total - frame[0]) / 1e3, shapes))


def _timed(name: str, fn, inputs_at: int):
    """`fn` timed as `name`; the shapes recorded are those of its arguments from `inputs_at` on
    (a forward's inputs and attrs), or with `inputs_at=-1` of the list it gets first (a backward's
    gradients)."""

    def timed(*args):
        frame, start = _begin()
        try:
            return fn(*args)
        finally:
            _end(name, frame, start, args[1] if inputs_at < 0 else args[inputs_at:])

    return timed


def _install() -> None:
    nodes = {AccumulateGrad: None}
    for op in ROWS:
        _replace(op, "forward", _timed(aten_name(op.node.__name__), op.forward, 1))
        nodes[op.node] = None
    for node_class in nodes:
        name = node_class.__name__ if node_class is not AccumulateGrad else ACCUMULATE_GRAD
        _replace(node_class, "apply", _timed(name, node_class.apply, -1))


def _replace(owner, attribute: str, value) -> None:
    _installed.append(
        (
            owner,
            attribute,
            owner.__dict__.get(attribute) if isinstance(owner, type) else getattr(owner, attribute),
        )
    )
    setattr(owner, attribute, value)


def _uninstall() -> None:
    while _installed:
        owner, attribute, before = _installed.pop()
        if before is None:
            delattr(owner, attribute)  # a class that inherited it
        else:
            setattr(owner, attribute, before)


class record_function(ContextDecorator):  # noqa: N801 -- torch's name
    """A named range: a row of its own in the profile, its time including the ops run inside."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._open: list = []

    def __enter__(self):
        if _running:
            self._open.append(_begin())
        return self

    def __exit__(self, *exc) -> bool:
        if self._open:
            frame, start = self._open.pop()
            _end(self.name, frame, start, ())
        return False


class profile:  # noqa: N801 -- torch's name
    """Times every op and backward node run inside (see the module); `key_averages()`, `table()`.

    Only CPU time is measured: `use_cuda=True` / `use_device="cuda"` are accepted as torch accepts
    them (with its warnings), and the GPU's own time is not recorded.
    """

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device: str | None = None,
        record_shapes: bool = False,
    ) -> None:
        self.enabled = enabled
        if not enabled:
            return
        self.use_cuda = use_cuda
        if use_cuda:
            warnings.warn(
                "The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` instead.",
                FutureWarning,
                stacklevel=2,
            )
            use_device = "cuda"
        if use_device not in (None, "cuda"):
            warnings.warn(f"The {use_device} is not a valid device option.", stacklevel=2)
            use_device = None
        if use_device == "cuda" and not cuda.is_available():
            warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
            self.use_cuda = False
            use_device = None
        self.use_device = use_device
        self.record_shapes = record_shapes
        self.entered = False
        self._events: list = []
        self._function_events: EventList | None = None

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        if not _running:
            _install()
        _running.append(self)
        return self

    def __exit__(self, *exc) -> bool:
        if not self.enabled:
            return False
        _running.remove(self)
        if not _running:
            _uninstall()
        self._function_events = EventList(sorted(self._events, key=lambda e: e.time_range_start))
        return False

    @property
    def function_events(self) -> EventList | None:
        return self._function_events

    def _results(self) -> EventList:
        if self._function_events is None:
            raise AssertionError("Expected profiling results")
        return self._function_events

    def table(self, *args, **kwargs) -> str:
        """The table of every call (`EventList.table`'s arguments); `key_averages().table()` sums them by name."""
        return self._results().table(*args, **kwargs)

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        return self._results().key_averages(group_by_input_shape)

    def total_average(self) -> FunctionEventAvg:
        return self._results().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._results().self_cpu_time_total

    def __str__(self) -> str:
        return self.table()
