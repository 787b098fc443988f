"""Running a script under anomaly mode with extra instrumentation, and collecting findings.

`run_script` executes the user's script as `__main__` (argv, device and seed set) with
engine's anomaly mode on and an `Instrument` installed as `engine.autograd.anomaly.observer`.
The engine tells the instrument about every recorded op, backward run, node backward,
freed graph, gradient accumulation and non-leaf `.grad` read; the instrument keeps what a
finding will need (raw frames, weak references, small counters) and turns it into plain
dataclasses only when something is found. The first error stops the script, as it would
under Python; warnings are collected until the end.

Errors: inplace-modified-saved, leaf-inplace, nan-in-backward, inf-in-backward,
nan-in-forward / inf-in-forward (with `check_forward`), backward-twice,
implicit-grad-nonscalar, backward-error (anything else raised inside a node's backward),
autograd-error (any other error raised by engine.autograd). Warnings: grad-accumulation,
nonleaf-grad-read, unused-parameter.
"""

from __future__ import annotations

import ast
import builtins
import linecache
import os
import re
import sys
import time
import types
import warnings
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from engine.autograd.anomaly import Observer

ERROR, WARNING = "error", "warning"

ERROR_KINDS = (
    "inplace-modified-saved",
    "leaf-inplace",
    "nan-in-backward",
    "inf-in-backward",
    "nan-in-forward",
    "inf-in-forward",
    "backward-twice",
    "implicit-grad-nonscalar",
    "backward-error",
    "autograd-error",
)
WARNING_KINDS = ("grad-accumulation", "nonleaf-grad-read", "unused-parameter")

#: Freed-node records kept (id(node) -> backward run); cleared past this, losing only line info.
MAX_FREED = 1 << 16

_NONFINITE_MESSAGE = re.compile(
    r"^Function '(?P<node>[^']+)' returned (?P<what>nan|inf) values in its (?P<index>\d+)th output\."
)
_IMPLICIT_PREFIX = "grad can be implicitly created only for"
#: engine.tensor methods whose errors are about autograd (requires_grad rules, hooks, .numpy()).
_AUTOGRAD_TENSOR_FUNCTIONS = frozenset(
    {
        "requires_grad",
        "requires_grad_",
        "retain_grad",
        "register_hook",
        "numpy",
        "backward",
        "detach_",
        "grad",
    }
)


# --------------------------------------------------------------------------- the records


@dataclass
class Location:
    """A line of the user's code; `role` says what it is for a related line."""

    file: str
    line: int
    function: str | None = None
    source: str | None = None
    role: str = ""

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class TensorStats:
    """How many NaN / Inf a tensor (a gradient, a saved value, an output) holds, and its range."""

    name: str
    shape: list[int]
    dtype: str
    numel: int
    nan: int
    posinf: int
    neginf: int
    min: float | None  # over the finite values; None when there are none
    max: float | None

    @property
    def nonfinite(self) -> int:
        return self.nan + self.posinf + self.neginf


@dataclass
class Finding:
    """One anomaly: its kind, what happened, the culprit line, and the lines related to it."""

    kind: str
    severity: str  # ERROR or WARNING
    message: str
    location: Location | None
    related: list[Location] = field(default_factory=list)
    hint: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    stats: list[TensorStats] = field(default_factory=list)
    count: int = 1  # how many times it happened (a warning in a loop)

    def __post_init__(self) -> None:
        self.related = _unique(self.related)


def _unique(locations: list[Location]) -> list[Location]:
    seen = set()
    out = []
    for location in locations:
        key = (location.file, location.line, location.role)
        if key not in seen:
            seen.add(key)
            out.append(location)
    return out


@dataclass
class ScriptFailure:
    """Why the script could not run, or the exception unrelated to autograd that ended it."""

    reason: (
        str  # "not-found", "not-a-file", "unreadable", "syntax-error", "exception", "exit-status", "device"
    )
    message: str
    location: Location | None = None
    traceback: list[Location] = field(default_factory=list)  # the user's frames, outermost first
    exception: str | None = None  # the exception's type name


@dataclass
class Report:
    """Everything `gradcli anomaly` found in one run of a script."""

    script: str
    argv: list[str]
    device: str
    seed: int | None  # engine.manual_seed before the script; None: not seeded
    check_forward: bool
    findings: list[Finding] = field(default_factory=list)
    failure: ScriptFailure | None = None
    completed: bool = False  # the script ran to its end (or exited with status 0)
    elapsed: float = 0.0

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == WARNING]

    def exit_code(self, strict: bool = False) -> int:
        """2: the script could not run or failed for another reason; 1: an anomaly; else 0."""
        if self.failure is not None:
            return 2
        if self.errors or (strict and self.warnings):
            return 1
        return 0


# ----------------------------------------------------------------------------- helpers


class _Sites:
    """Turns raw `(code, lineno)` pairs into Locations, with paths as the user gave them."""

    def __init__(self, script_abspath: str, script_path: str):
        self.script_abspath = script_abspath
        self.script_path = script_path
        self.cwd = os.getcwd()

    def path(self, filename: str) -> str:
        absolute = os.path.abspath(filename) if not filename.startswith("<") else filename
        if absolute == self.script_abspath:
            return self.script_path
        if filename.startswith("<"):
            return filename
        relative = os.path.relpath(absolute, self.cwd)
        return absolute if relative.startswith("..") else relative

    def location(self, site: tuple | None, role: str = "") -> Location | None:
        if site is None:
            return None
        code, lineno = site
        return self.at(code.co_filename, lineno, code.co_name, role)

    def at(self, filename: str, lineno: int, function: str | None, role: str = "") -> Location:
        source = linecache.getline(filename, lineno).strip() or None
        return Location(self.path(filename), lineno, function, source, role)


def _is_user_file(filename: str) -> bool:
    from engine.autograd import anomaly

    return not anomaly.is_internal_file(filename)


def _user_tb_frames(tb) -> list[tuple[types.FrameType, int]]:
    """The (frame, lineno) of each traceback entry in the user's files, outermost first."""
    out = []
    while tb is not None:
        if _is_user_file(tb.tb_frame.f_code.co_filename):
            out.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return out


def _innermost_tb(tb) -> tuple[str, str]:
    """(filename, function) of the frame that raised."""
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return code.co_filename, code.co_name


def _node_site(node) -> tuple | None:
    trace = getattr(node, "_trace", None)
    return trace[0] if trace else None


def _op_name(node_name: str) -> str:
    """`LogBackward0` -> `log`, for messages about the forward op."""
    base = re.sub(r"Backward\d*$", "", node_name.rsplit("::", 1)[-1])
    return base.lower() or node_name


def _shape(t) -> list[int]:
    return [int(n) for n in t.shape]


def _array_of(value):
    return getattr(value, "_data", value)


def _finite_fast(data) -> bool:
    """True when a float array is certainly all finite (one BLAS call); False means look closer."""
    flat = data.ravel()
    square = flat.dot(flat)
    return bool(square - square == 0)  # NaN or Inf (or overflow) makes it NaN


def _host(data):
    """A numpy view of an array (copied from the GPU when needed)."""
    import numpy

    from engine import backend

    return numpy.asarray(data if data.__class__ is numpy.ndarray else backend.to_numpy(data))


def tensor_stats(name: str, value) -> TensorStats | None:
    """Counts of NaN / +Inf / -Inf and the finite range of an array or Tensor (None if not float)."""
    import numpy

    from engine import backend

    data = _array_of(value)
    if not hasattr(data, "dtype") or data.dtype.kind != "f":
        return None
    host = _host(data)
    finite = host[numpy.isfinite(host)]
    return TensorStats(
        name=name,
        shape=list(host.shape),
        dtype=str(backend.dtype_of(data)),
        numel=int(host.size),
        nan=int(numpy.isnan(host).sum()),
        posinf=int(numpy.isposinf(host).sum()),
        neginf=int(numpy.isneginf(host).sum()),
        min=float(finite.min()) + 0.0 if finite.size else None,  # + 0.0: no "-0"
        max=float(finite.max()) + 0.0 if finite.size else None,
    )


def _is_float_array(data) -> bool:
    return hasattr(data, "dtype") and data.dtype.kind == "f" and data.size > 0


def _has(kind: str, data) -> bool:
    import numpy

    host = _host(data)
    return bool(numpy.isnan(host).any()) if kind == "nan" else bool(numpy.isinf(host).any())


def _all_finite(data) -> bool:
    import numpy

    return bool(numpy.isfinite(_host(data)).all())


class AnomalyFound(RuntimeError):
    """Raised by the instrument to stop the script at an anomaly PyTorch would not raise for."""

    def __init__(self, message: str, finding: Finding):
        super().__init__(message)
        self.finding = finding


# -------------------------------------------------------------------------- instrument


class _LeafUse:
    __slots__ = ("ref", "shape", "site", "received")

    def __init__(self, ref, shape, site):
        self.ref = ref
        self.shape = shape
        self.site = site
        self.received = False


class _GradState:
    """What the last backward left in a tensor's .grad, to tell accumulation from zeroing."""

    __slots__ = (
        "ref",
        "grad_ref",
        "version",
        "value",
        "run",
        "site",
        "streak",
        "longest",
        "looped",
        "resets",
        "used",
    )

    def __init__(self, ref):
        self.ref = ref
        self.grad_ref = None  # the .grad tensor the last backward left
        self.version = -1  # its version then (zero_() and other in-place changes bump it)
        self.value = None  # a fingerprint of the tensor's own value then (an update step changes it)
        self.run = None
        self.site = None
        self.streak = 0  # consecutive backward calls that added into the same, unzeroed .grad
        self.longest = 0
        self.looped = None  # the backward line whose repeated calls accumulated, when it happened
        self.resets = 0
        self.used = False  # an accumulated .grad was read, or the tensor was updated between calls


def _fingerprint(data) -> tuple[float, float]:
    """Cheap summary of a tensor's value, to notice an update step between two backward calls."""
    flat = data.ravel()
    return (float(flat.sum()), float(flat.dot(flat)))


class Instrument(Observer):
    """The observer gradcli installs in engine's anomaly mode (see engine.autograd.anomaly.Observer)."""

    def __init__(self, sites: _Sites, check_forward: bool = False):
        self.sites = sites
        self.check_forward = check_forward
        self.backward_calls = 0
        self._runs: list[int] = []  # stack of active backward runs (nested under create_graph)
        self._run_sites: dict[int, tuple | None] = {}
        self._pending: dict[int, list] = {}
        self.freed: dict[int, int] = {}  # id(node) -> the run that freed it
        self.leaves: dict[int, _LeafUse] = {}
        self.grads: dict[int, _GradState] = {}
        self.nonleaf_reads: dict[tuple, dict] = {}
        self.nonfinite: dict[int, dict] = {}  # id(node) -> what node_done saw, for the error's finding

    # -- forward ------------------------------------------------------------------------
    def forward(self, node, inputs, out, trace) -> None:
        from engine.tensor import Tensor

        site = trace[0] if trace else None
        for x in inputs:
            if isinstance(x, Tensor) and x._rg and x.grad_fn is None:
                use = self.leaves.get(id(x))
                if use is None or use.ref() is not x:
                    self.leaves[id(x)] = _LeafUse(weakref.ref(x), _shape(x), site)
        if self.check_forward:
            data = out._data
            if _is_float_array(data) and not _finite_fast(data) and not _all_finite(data):
                self._forward_nonfinite(node, inputs, out, site)

    def _forward_nonfinite(self, node, inputs, out, site) -> None:
        from engine.tensor import Tensor

        name = node.name()
        what = "nan" if _has("nan", out._data) else "inf"
        stats = [tensor_stats("output", out)]
        tainted = []
        for i, x in enumerate(inputs):
            if isinstance(x, Tensor):
                s = tensor_stats(f"input {i}", x)
                if s is not None:
                    stats.append(s)
                    if s.nonfinite:
                        tainted.append(i)
        op = _op_name(name)
        message = (
            f"{op} produced {what} values in forward ({stats[0].nan} nan, "
            f"{stats[0].posinf + stats[0].neginf} inf of {stats[0].numel})"
        )
        message += (
            f"; its input {', '.join(map(str, tainted))} already held non-finite values, made outside the graph"
            if tainted
            else " from finite inputs"
        )
        finding = Finding(
            kind=f"{what}-in-forward",
            severity=ERROR,
            message=message,
            location=self.sites.location(site),
            hint=_FORWARD_HINT.get(
                op, "guard the op's domain (clamp its input, add an epsilon) or mask the result"
            ),
            details={"node": name, "op": op, "output_shape": _shape(out)},
            stats=[s for s in stats if s is not None],
        )
        raise AnomalyFound(f"Function '{name}' produced {what} values in its forward output.", finding)

    # -- backward -----------------------------------------------------------------------
    def backward_begin(self, roots, retain_graph, inputs, capture) -> None:
        from engine.autograd import anomaly

        self.backward_calls += 1
        run = self.backward_calls
        self._runs.append(run)
        self._run_sites[run] = anomaly.user_site()
        self._pending[run] = []

    def run_site(self, run: int | None) -> tuple | None:
        return self._run_sites.get(run) if run is not None else None

    def released(self, node) -> None:
        if len(self.freed) >= MAX_FREED:
            self.freed.clear()
        self.freed[id(node)] = self._runs[-1] if self._runs else 0

    def node_done(self, node, grads, outputs) -> None:
        for i, g in enumerate(outputs):
            if g is None:
                continue
            data = _array_of(g)
            if not _is_float_array(data) or _finite_fast(data) or _all_finite(data):
                continue
            what = "nan" if any(o is not None and _has("nan", _array_of(o)) for o in outputs) else "inf"
            self.nonfinite[id(node)] = {"stats": self._backward_stats(node, grads, outputs), "what": what}
            if what == "inf":  # torch would carry on; stop here, as check_nan does for NaN
                err = RuntimeError(f"Function '{node.name()}' returned inf values in its {i}th output.")
                err.anomaly_node = node
                raise err
            return  # NaN: the engine's check_nan raises torch's error right after this

    def _backward_stats(self, node, grads, outputs) -> list[TensorStats]:
        stats = []
        for i, g in enumerate(grads):
            if g is not None:
                stats.append(tensor_stats(f"grad_output[{i}] (into {node.name()})", g))
        saved = getattr(node, "_saved", None)
        names = getattr(node, "saved_names", ())
        if saved:
            for name, value in zip(names, saved):
                stats.append(tensor_stats(f"saved {name}", value))
        for i, (g, (child, _)) in enumerate(zip(outputs, node.next_functions)):
            if g is not None:
                target = child.name().rsplit("::", 1)[-1] if child is not None else "-"
                stats.append(tensor_stats(f"grad_input[{i}] (to {target})", g))
        return [s for s in stats if s is not None]

    def accumulating(self, variable, g) -> None:
        run = self._runs[-1] if self._runs else None
        key = id(variable)
        state = self.grads.get(key)
        if state is None or state.ref() is not variable:
            state = self.grads[key] = _GradState(weakref.ref(variable))
        if state.run == run:
            return
        self._pending.setdefault(run, []).append(variable)
        use = self.leaves.get(key)
        if use is not None and use.ref() is variable:
            use.received = True
        old = variable._grad
        site = self.run_site(run)
        if state.run is None:
            state.streak = 1
            return
        if state.streak >= 1 and state.value is not None and _fingerprint(variable._data) != state.value:
            if state.streak >= 2:
                state.used = True  # an update step consumed an accumulated gradient
        previous = state.grad_ref() if state.grad_ref is not None else None
        zeroed = (
            old is None
            or old is not previous
            or old._vc[0] != state.version
            or not bool((_array_of(old) != 0).any())
        )
        if zeroed:
            state.resets += 1
            state.streak = 1
            return
        state.streak += 1
        state.longest = max(state.longest, state.streak)
        if site is not None and site == state.site and state.looped is None:
            state.looped = site

    def backward_end(self, inputs, captured) -> None:
        run = self._runs.pop() if self._runs else None
        for variable in self._pending.pop(run, []):
            state = self.grads.get(id(variable))
            grad = variable._grad
            if state is None or grad is None:
                continue
            state.grad_ref = weakref.ref(grad)
            state.version = grad._vc[0]
            state.value = _fingerprint(variable._data) if state.streak >= 2 else None
            state.run = run
            state.site = self.run_site(run)
        if captured is not None and inputs is not None:
            for t, g in zip(inputs, captured):
                use = self.leaves.get(id(t))
                if g is not None and use is not None and use.ref() is t:
                    use.received = True

    # -- reads --------------------------------------------------------------------------
    def grad_read(self, tensor) -> None:
        if tensor.grad_fn is None or tensor._retains_grad:
            state = self.grads.get(id(tensor))
            if state is not None and state.streak >= 2 and state.ref() is tensor:
                state.used = True  # the script read an accumulated gradient
            return
        from engine.autograd import anomaly

        site = anomaly.user_site()
        key = (site[0].co_filename, site[1]) if site else None
        record = self.nonleaf_reads.get(key)
        if record is None:
            self.nonleaf_reads[key] = {
                "site": site,
                "count": 1,
                "node": tensor.grad_fn.name(),
                "created": _node_site(tensor.grad_fn),
                "shape": _shape(tensor),
            }
        else:
            record["count"] += 1


_FORWARD_HINT = {
    "log": "log of 0 is -inf and of a negative number nan: clamp the input (x.clamp(min=eps)) or use log1p",
    "sqrt": "sqrt of a negative number is nan: clamp the input to >= 0",
    "div": "division by zero: add an epsilon to the denominator",
    "pow": "a negative base to a fractional power is nan: clamp the base",
    "exp": "exp overflows above ~88 in float32: subtract the maximum first (log-sum-exp) or clamp",
    "reciprocal": "1/0 is inf: add an epsilon",
}


# -------------------------------------------------------------------- running a script


@contextmanager
def _as_main(abspath: str, argv: list[str]) -> Iterator[types.ModuleType]:
    """A fresh `__main__` module, `sys.argv` and `sys.path[0]` as `python SCRIPT ARGS` sets them."""
    module = types.ModuleType("__main__")
    module.__file__ = abspath
    module.__builtins__ = builtins
    module.__cached__ = None
    saved_main = sys.modules.get("__main__")
    saved_argv = sys.argv
    folder = os.path.dirname(abspath)
    sys.modules["__main__"] = module
    sys.argv = list(argv)
    sys.path.insert(0, folder)
    try:
        yield module
    finally:
        sys.argv = saved_argv
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        try:
            sys.path.remove(folder)
        except ValueError:
            pass


@contextmanager
def instrumented(instrument: Instrument) -> Iterator[None]:
    """Anomaly mode on (NaN checks included) with `instrument` as the observer; restored after."""
    from engine.autograd import anomaly

    previous = anomaly.set_observer(instrument)
    mode = anomaly.set_detect_anomaly(True, check_nan=True)
    try:
        with warnings.catch_warnings():
            # What these warnings say becomes findings; the user's other warnings still show.
            warnings.filterwarnings("ignore", message=r"Error detected in ", category=UserWarning)
            warnings.filterwarnings("ignore", message=r"The \.grad attribute of a Tensor that is not a leaf")
            yield
    finally:
        mode.__exit__(None, None, None)
        anomaly.set_observer(previous)


def run_script(
    path: str,
    args: list[str] | None = None,
    *,
    device: str = "cpu",
    seed: int | None = 0,
    check_forward: bool = False,
) -> Report:
    """Run `path` as `__main__` under instrumented anomaly mode; never raises for the user's errors."""
    import engine
    from engine.backend import CudaUnavailable

    from .loading import using_device

    started = time.perf_counter()
    args = list(args or [])
    report = Report(path, [path, *args], device, seed, check_forward)
    abspath = os.path.abspath(path)
    sites = _Sites(abspath, path)
    code = _compile(path, abspath, report)
    if code is None:
        report.elapsed = time.perf_counter() - started
        return report
    instrument = Instrument(sites, check_forward)
    module = None
    try:
        with using_device(device), _as_main(abspath, report.argv) as module:
            if seed is not None:
                engine.manual_seed(seed)
            try:
                with instrumented(instrument):
                    exec(code, module.__dict__)
                report.completed = True
            except SystemExit as exc:
                status = exc.code
                if status in (None, 0):
                    report.completed = True
                else:
                    report.failure = ScriptFailure(
                        "exit-status",
                        f"the script exited with status {status}",
                        _raise_site(exc, sites),
                        _user_traceback(exc, sites),
                        "SystemExit",
                    )
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # the user's script may raise anything
                finding = classify(exc, instrument, sites, module)
                if finding is not None:
                    report.findings.append(finding)
                else:
                    report.failure = _failure(exc, sites)
    except CudaUnavailable as exc:
        report.failure = ScriptFailure("device", f"--device {device} is unavailable: {exc}")
    report.findings.extend(collect_warnings(instrument, sites, module, report.completed))
    report.elapsed = time.perf_counter() - started
    return report


def _compile(path: str, abspath: str, report: Report):
    if not os.path.exists(abspath):
        report.failure = ScriptFailure("not-found", f"{path}: file not found")
        return None
    if os.path.isdir(abspath):
        report.failure = ScriptFailure("not-a-file", f"{path}: is a directory, not a script")
        return None
    try:
        with open(abspath, "rb") as handle:
            source = handle.read()
        return compile(source, abspath, "exec", dont_inherit=True)
    except SyntaxError as exc:
        line = exc.lineno
        location = None
        if line is not None:
            text = (exc.text or linecache.getline(abspath, line)).strip() or None
            location = Location(path, line, None, text)
        report.failure = ScriptFailure(
            "syntax-error", f"syntax error: {exc.msg}", location, [], "SyntaxError"
        )
    except (OSError, ValueError) as exc:  # unreadable, or null bytes
        report.failure = ScriptFailure("unreadable", f"{path}: cannot read the script: {exc}")
    return None


def _user_traceback(exc: BaseException, sites: _Sites) -> list[Location]:
    return [
        sites.at(frame.f_code.co_filename, lineno, frame.f_code.co_name)
        for frame, lineno in _user_tb_frames(exc.__traceback__)
    ]


def _raise_site(exc: BaseException, sites: _Sites) -> Location | None:
    """The innermost line of the user's code in the exception's traceback."""
    frames = _user_tb_frames(exc.__traceback__)
    if not frames:
        return None
    frame, lineno = frames[-1]
    return sites.at(frame.f_code.co_filename, lineno, frame.f_code.co_name)


def _failure(exc: BaseException, sites: _Sites) -> ScriptFailure:
    text = str(exc)
    message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return ScriptFailure(
        "exception", message, _raise_site(exc, sites), _user_traceback(exc, sites), type(exc).__name__
    )


# ------------------------------------------------------------------- naming tensors


class _Names:
    """Finds a user-facing name for a tensor: a local or global variable, or model.<param>."""

    def __init__(self, module: types.ModuleType | None, frames: list[types.FrameType] = ()):
        self.module = module
        self.frames = list(frames)
        self._table: dict[int, str] | None = None

    def _build(self) -> dict[int, str]:
        from engine.tensor import Tensor

        table: dict[int, str] = {}
        scopes = [f.f_locals for f in reversed(self.frames)]
        if self.module is not None:
            scopes.append(self.module.__dict__)
        for scope in scopes:
            for name, value in list(scope.items()):
                if name.startswith("__"):
                    continue
                try:
                    self._add(table, name, value, Tensor)
                except Exception:  # a user object whose attributes raise: no name from it
                    continue
        return table

    @staticmethod
    def _add(table: dict[int, str], name: str, value: Any, Tensor: type) -> None:
        if isinstance(value, Tensor):
            table.setdefault(id(value), name)
        elif isinstance(value, (list, tuple)) and len(value) <= 64:
            for i, item in enumerate(value):
                if isinstance(item, Tensor):
                    table.setdefault(id(item), f"{name}[{i}]")
        elif not isinstance(value, type) and callable(getattr(value, "named_parameters", None)):
            for pname, p in value.named_parameters():  # an engine.nn.Module, or alike
                table.setdefault(id(p), f"{name}.{pname}")

    def of(self, tensor) -> str | None:
        if tensor is None:
            return None
        if self._table is None:
            self._table = self._build()
        return self._table.get(id(tensor))


def _definition(name: str | None, sites: _Sites) -> Location | None:
    """Where `name` (its root variable) is first assigned in the script, by reading its source."""
    if not name:
        return None
    root = re.split(r"[.\[]", name, maxsplit=1)[0]
    try:
        with open(sites.script_abspath, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    lines = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif isinstance(node, (ast.For, ast.With)):
            continue
        for target in targets:
            if any(isinstance(sub, ast.Name) and sub.id == root for sub in ast.walk(target)):
                lines.append(node.lineno)
    if not lines:
        return None
    return sites.at(sites.script_abspath, min(lines), None, f"{root} defined")


# -------------------------------------------------------------------- classifying errors


def classify(
    exc: BaseException, instrument: Instrument, sites: _Sites, module: types.ModuleType | None
) -> Finding | None:
    """The finding for an exception that ended the script, or None if it is not about autograd."""
    if isinstance(exc, AnomalyFound):
        finding = exc.finding
        backward = _raise_site(exc, sites)
        if backward is not None and finding.location is not None and backward.where != finding.location.where:
            backward.role = "raised here"
            finding.related.append(backward)
        return finding
    from engine.autograd.node import FREED_MESSAGE
    from engine.ops.inplace import LEAF_MESSAGE, VIEW_OF_LEAF_MESSAGE

    node = getattr(exc, "anomaly_node", None)
    message = str(exc)
    frames = [frame for frame, _ in _user_tb_frames(exc.__traceback__)]
    names = _Names(module, frames)
    here = _raise_site(exc, sites)
    if isinstance(exc, RuntimeError):
        if getattr(exc, "saved_tensor", None) is not None:
            return _modified_saved(exc, node, here, sites, names)
        if message.startswith(FREED_MESSAGE[:60]):
            return _backward_twice(exc, node, here, instrument, sites)
        if message in (LEAF_MESSAGE, VIEW_OF_LEAF_MESSAGE):
            return _leaf_inplace(exc, message, here, sites, names)
        match = _NONFINITE_MESSAGE.match(message)
        if match and node is not None:
            return _nonfinite_backward(match, node, here, instrument, sites)
        if message.startswith(_IMPLICIT_PREFIX):
            return _implicit_nonscalar(exc, message, here, sites, names)
    if node is not None:
        return _with_node(
            Finding(
                "backward-error",
                ERROR,
                f"the backward of {node.name()} raised {type(exc).__name__}: {_first_line(message)}",
                here,
                hint="the forward op that created this node is listed below; its inputs or the custom "
                "Function's backward are the place to look",
                details={"node": node.name(), "exception": type(exc).__name__, "error": message},
            ),
            node,
            sites,
        )
    if isinstance(exc, RuntimeError) and _raised_by_autograd(exc):
        return Finding(
            "autograd-error",
            ERROR,
            _first_line(message),
            here,
            details={"exception": type(exc).__name__, "error": message},
        )
    return None


def _first_line(message: str) -> str:
    return message.split("\n", 1)[0]


def _raised_by_autograd(exc: BaseException) -> bool:
    from engine.autograd import anomaly

    filename, function = _innermost_tb(exc.__traceback__)
    engine_dir = os.path.dirname(os.path.dirname(os.path.abspath(anomaly.__file__)))
    absolute = os.path.abspath(filename)
    if absolute.startswith(os.path.join(engine_dir, "autograd") + os.sep):
        return True
    return absolute == os.path.join(engine_dir, "tensor.py") and function in _AUTOGRAD_TENSOR_FUNCTIONS


def _with_node(finding: Finding, node, sites: _Sites, role: str | None = None) -> Finding:
    created = sites.location(_node_site(node), role or f"{node.name()} created (forward)")
    if created is not None and (finding.location is None or created.where != finding.location.where):
        finding.related = _unique([*finding.related, created])
    return finding


def _modified_saved(exc, node, here, sites: _Sites, names: _Names) -> Finding:
    from engine.ops.op import tensor_type_name

    tensor = exc.saved_tensor
    expected = exc.expected_version
    current = tensor._vc[0]
    records = {version: site for version, site in tensor._vc[1]} if len(tensor._vc) > 1 else {}
    modifications = []
    for version in range(expected + 1, current + 1):
        location = sites.location(
            records.get(version), f"modified in place (version {version - 1} -> {version})"
        )
        if location is not None:
            modifications.append(location)
    saver = node.name() if node is not None else None
    saved_at = sites.location(_node_site(node), f"saved by {saver} (version {expected})") if node else None
    name = names.of(tensor)
    label = name or "a tensor"
    shape = _shape(tensor)
    message = (
        f"{label} [{tensor_type_name(tensor)} {shape}] was saved for backward"
        + (f" by {saver}" if saver else "")
        + f" at version {expected}, then modified in place (now version {current}); "
        "backward needs the saved value"
    )
    related = ([saved_at] if saved_at else []) + modifications[1:]
    if here is not None:
        here.role = "backward"
        related.append(here)
    primary = modifications[0] if modifications else here
    return Finding(
        "inplace-modified-saved",
        ERROR,
        message,
        primary,
        related,
        hint="compute out of place (`b = b.clone(); b[0] = ...` or `y = y + 1` instead of `y += 1`), "
        "or make the in-place change before the op that saves the tensor",
        details={
            "tensor": name,
            "type": tensor_type_name(tensor),
            "shape": shape,
            "saved_by": saver,
            "saved_version": expected,
            "current_version": current,
            "modified_at": [m.where for m in modifications],
            "error": str(exc),
        },
    )


def _backward_twice(exc, node, here, instrument: Instrument, sites: _Sites) -> Finding:
    related = []
    first = None
    if node is not None:
        run = instrument.freed.get(id(node))
        first = sites.location(instrument.run_site(run), "first backward (freed the graph)")
    if first is not None:
        related.append(first)
    finding = Finding(
        "backward-twice",
        ERROR,
        "backward through a graph whose saved values were already freed by an earlier backward"
        + (f" (at {node.name()})" if node is not None else ""),
        here,
        related,
        hint=f"pass retain_graph=True to the first backward{f' (line {first.line})' if first else ''} if you "
        "need to backward through the graph again, or recompute the forward before each backward",
        details={
            "node": node.name() if node is not None else None,
            "first_backward": first.where if first else None,
        },
    )
    if node is not None:
        _with_node(finding, node, sites)
    return finding


def _leaf_inplace(exc, message, here, sites: _Sites, names: _Names) -> Finding:
    leaf = getattr(exc, "tensor", None)
    name = names.of(leaf)
    through_view = message.startswith("a view of")
    related = []
    defined = _definition(name, sites)
    if defined is not None and (here is None or defined.where != here.where):
        related.append(defined)
    label = name or "a leaf tensor"
    what = f"a view of {label}" if through_view else label
    return Finding(
        "leaf-inplace",
        ERROR,
        f"in-place op on {what}, a leaf that requires grad"
        + (f" [{', '.join(map(str, _shape(leaf)))}]" if leaf is not None else ""),
        here,
        related,
        hint=f"if this updates the parameter (an optimizer step), do it under `with engine.no_grad():`; "
        f"if the new value should be part of the graph, work on a copy: `{name or 'x'} = {name or 'x'}.clone()` first",
        details={
            "tensor": name,
            "shape": _shape(leaf) if leaf is not None else None,
            "through_view": through_view,
        },
    )


def _nonfinite_backward(match, node, here, instrument: Instrument, sites: _Sites) -> Finding:
    what = match.group("what")
    index = int(match.group("index"))
    seen = instrument.nonfinite.get(id(node), {})
    stats = seen.get("stats", [])
    created = sites.location(_node_site(node), f"forward op of {node.name()}")
    related = []
    if here is not None:
        here.role = "backward"
        related.append(here)
    op = _op_name(node.name())
    return Finding(
        f"{what}-in-backward",
        ERROR,
        f"{node.name()} returned {what} values in its {index}th output (the gradient for the "
        f"{_ordinal(index)} input of {op})",
        created,
        related,
        hint=_BACKWARD_HINT.get(op, "look at the op's inputs (below): the derivative is not finite there"),
        details={"node": node.name(), "output": index},
        stats=stats,
    )


_BACKWARD_HINT = {
    "sqrt": "d/dx sqrt(x) = 1/(2 sqrt(x)) is inf at 0: clamp the input (x.clamp(min=eps)) or add eps",
    "log": "d/dx log(x) = 1/x is inf at 0 (and 0 * inf = nan where a mask or where() zeroes the gradient): "
    "clamp the input (x.clamp(min=eps))",
    "div": "the denominator is 0 somewhere: add an epsilon",
    "pow": "x ** p with p < 1 has an infinite derivative at 0: clamp the base",
    "norm": "the norm's gradient is undefined at 0: add an epsilon",
    "where": "the branch that was not taken still gets a gradient (0 * inf = nan): make both branches "
    "finite, e.g. compute log(x.clamp(min=eps)) instead of masking log(x)",
}


def _ordinal(index: int) -> str:
    return {0: "first", 1: "second", 2: "third"}.get(index, f"{index + 1}th")


def _implicit_nonscalar(exc, message, here, sites: _Sites, names: _Names) -> Finding:
    tensor = getattr(exc, "tensor", None)
    name = names.of(tensor)
    shape = _shape(tensor) if tensor is not None else None
    finding = Finding(
        "implicit-grad-nonscalar",
        ERROR,
        f"backward() without a gradient on {name or 'a tensor'} of shape {shape}: "
        "the implicit gradient exists only for a single value",
        here,
        hint="reduce it first (`.sum()` or `.mean()`), or pass `gradient=` a tensor of the output's shape",
        details={"tensor": name, "shape": shape, "error": message},
    )
    if tensor is not None and tensor.grad_fn is not None:
        _with_node(finding, tensor.grad_fn, sites, f"{name or 'the tensor'} created")
    return finding


# ---------------------------------------------------------------------------- warnings


def collect_warnings(
    instrument: Instrument, sites: _Sites, module: types.ModuleType | None, completed: bool
) -> list[Finding]:
    """The warnings gathered while the script ran (unused parameters only if it completed)."""
    names = _Names(module)
    out = _accumulation_warnings(instrument, sites, names)
    out += _nonleaf_warnings(instrument, sites)
    if completed and instrument.backward_calls:
        out += _unused_warnings(instrument, sites, names)
    return out


def _accumulation_warnings(instrument: Instrument, sites: _Sites, names: _Names) -> list[Finding]:
    by_site: dict[tuple, list[_GradState]] = {}
    for state in instrument.grads.values():
        if state.looped is not None and state.resets == 0 and state.used:
            by_site.setdefault(state.looped, []).append(state)
    findings = []
    for site, states in by_site.items():
        labels = []
        related = []
        for state in states:
            tensor = state.ref()
            name = names.of(tensor)
            labels.append(name or f"a tensor of shape {_shape(tensor) if tensor is not None else '?'}")
            defined = _definition(name, sites)
            if defined is not None:
                related.append(defined)
        calls = max(s.longest for s in states)
        plural = "s" if len(labels) > 1 else ""
        findings.append(
            Finding(
                "grad-accumulation",
                WARNING,
                f"the .grad of {', '.join(labels)} accumulated over {calls} backward calls from this line with "
                f"no zeroing in between: backward adds into .grad, so each step used the sum of all gradients so far",
                sites.location(site),
                related,
                hint=f"zero the gradient{plural} once per iteration (`x.grad.zero_()`, `x.grad = None`, or "
                "`optimizer.zero_grad()`); if accumulating is intended, zero after each optimizer step",
                details={"tensors": labels, "backward_calls": calls},
                count=calls,
            )
        )
    return findings


def _nonleaf_warnings(instrument: Instrument, sites: _Sites) -> list[Finding]:
    findings = []
    for record in instrument.nonleaf_reads.values():
        created = sites.location(record["created"], "the non-leaf tensor created")
        findings.append(
            Finding(
                "nonleaf-grad-read",
                WARNING,
                f".grad of a non-leaf tensor (output of {record['node']}, shape {record['shape']}) was read: it is "
                "None, because backward fills .grad only for leaves",
                sites.location(record["site"]),
                [created] if created is not None else [],
                hint="call .retain_grad() on it before backward, or read the .grad of the leaf it was computed from",
                details={"node": record["node"], "shape": record["shape"]},
                count=record["count"],
            )
        )
    return findings


def _unused_warnings(instrument: Instrument, sites: _Sites, names: _Names) -> list[Finding]:
    groups: dict[tuple, list[_LeafUse]] = {}
    for use in instrument.leaves.values():
        if not use.received:
            groups.setdefault(use.site, []).append(use)
    findings = []
    for site, uses in groups.items():
        alive = [u.ref() for u in uses if u.ref() is not None]
        labels = sorted({names.of(t) for t in alive if names.of(t)})
        label = ", ".join(labels) if labels else f"a tensor of shape {uses[0].shape}"
        related = [d for d in (_definition(n, sites) for n in labels) if d is not None]
        findings.append(
            Finding(
                "unused-parameter",
                WARNING,
                f"{label} requires grad and was used in forward here, but no backward ever reached it "
                "(its result never fed a loss that was backwarded, or the graph was cut by .detach() / .data)",
                sites.location(site),
                related,
                hint="check that its output reaches the loss; if it is not meant to be trained, "
                "create it without requires_grad (or call .requires_grad_(False))",
                details={"tensors": labels, "shape": uses[0].shape},
                count=len(uses),
            )
        )
    return findings
