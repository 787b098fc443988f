"""Anomaly mode: remember where each node was created, and check backward for NaN.

Off by default; when off, every hook point pays one list lookup (`state[0]`) and nothing
else. When on, as in PyTorch, each node records the stack of the forward call that made it
(a failing backward warns with it) and a backward that returns NaN raises. Beyond PyTorch,
every version bump records its line, so the modified-saved-tensor error says which line
saved the tensor and which line modified it.

Traces are stored raw, as `(code, lineno)` pairs of the user's frames, innermost first, and
formatted only when an error needs them: building a `StackSummary` per node cost more than
the op itself.

`observer` is an optional second listener (gradcli anomaly's instrumentation): the engine's
hook points call it only while anomaly mode is on. See `Observer` for the protocol.

`record_sites` is anomaly mode reduced to one frame per node, for tools that show where each
node was made (gradcli graph): the innermost user frame only, no NaN check, no warning and no
message changed, and `is_anomaly_enabled()` stays False.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
import traceback
import warnings
from math import isnan
from typing import Any

from .. import backend
from .thread_local import this_thread

# What the hook points read: state[0]: anomaly mode on; state[1]: check for NaN in backward
# outputs; state[2]: only recording sites (`record_sites`): traces are one frame, behaviour unchanged.
state = [False, True, False]
# What the user's code last asked for (is_anomaly_enabled reads it); `state` is the same unless a
# tool holds the mode on (`held`), so a script that turns anomaly mode off cannot blind gradcli,
# or records sites (`record_sites`).
asked = [False, True]
_holds = [0]
_recording_sites = [0]

#: An `Observer` (or None): extra instrumentation called at the hook points in anomaly mode.
observer: Observer | None = None

_ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Bump records kept per version counter (the most recent ones).
MAX_BUMPS = 32


def is_anomaly_enabled() -> bool:
    return asked[0]


def is_anomaly_check_nan_enabled() -> bool:
    return asked[1]


def _settle() -> None:
    """`state` from what was asked: all on while a tool holds the mode; sites only while a tool
    records them and anomaly mode is otherwise off."""
    full = asked[0] or _holds[0] > 0
    sites_only = not full and _recording_sites[0] > 0
    state[0] = full or sites_only
    state[1] = (asked[1] or _holds[0] > 0) and not sites_only
    state[2] = sites_only


def _ask(mode: bool, check_nan: bool) -> None:
    asked[0], asked[1] = bool(mode), bool(check_nan)
    _settle()


class held:
    """Anomaly mode and its NaN checks on while the block runs, whatever the code inside asks for
    (`set_detect_anomaly(False)` changes only what `is_anomaly_enabled` reports)."""

    def __enter__(self) -> None:
        _holds[0] += 1
        _settle()

    def __exit__(self, *exc: Any) -> bool:
        _holds[0] -= 1
        _settle()
        return False


# --------------------------------------------------------------------- the user's frames

# filename -> True when the frame is not the user's (the engine, registered tools, the stdlib, site-packages).
_internal_files: dict[str, bool] = {}
_internal_roots: list[str] = []


def _roots() -> list[str]:
    """Folders whose frames are never the user's: the engine, the Python installation, and what
    `register_internal_root` added."""
    if not _internal_roots:
        roots = {_ENGINE_DIR}
        paths = sysconfig.get_paths()
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            if paths.get(key):
                roots.add(paths[key])
        try:
            roots.update(site.getsitepackages())
            roots.add(site.getusersitepackages())
        except AttributeError:  # some embedded interpreters lack these
            pass
        _internal_roots.extend(os.path.realpath(r) + os.sep for r in roots if r)
        _internal_roots.extend(os.path.abspath(r) + os.sep for r in roots if r)
    return _internal_roots


def register_internal_root(folder: str) -> None:
    """Count frames of files under `folder` as internal, never the user's: a tool built on the
    engine (gradcli) registers its own package, so its frames drop out of traces and tracebacks."""
    roots = _roots()
    for root in dict.fromkeys((os.path.realpath(folder), os.path.abspath(folder))):
        if root + os.sep not in roots:
            roots.append(root + os.sep)
            _internal_files.clear()  # decided without this folder


def is_internal_file(filename: str) -> bool:
    """Whether frames of `filename` belong to the engine or a library rather than the user."""
    internal = _internal_files.get(filename)
    if internal is None:
        if filename.startswith("<"):
            internal = filename.startswith("<frozen")  # <stdin>, <string>, notebooks are the user's
        else:
            internal = os.path.abspath(filename).startswith(tuple(_roots()))
        _internal_files[filename] = internal
    return internal


# The frame a tool runs the user's code from (`traces_stop_at`), or None: no user frame lies beneath it.
_floor: list = [None]


class traces_stop_at:
    """Creation traces end at `frame` while the block runs: a tool's own frame that runs the user's
    code (no user frame lies beneath it), so each node's trace does not walk the tool's stack."""

    def __init__(self, frame) -> None:
        self.frame = frame

    def __enter__(self) -> None:
        self.previous = _floor[0]
        _floor[0] = self.frame

    def __exit__(self, *exc: Any) -> bool:
        _floor[0] = self.previous
        return False


class InducedTrace(list):
    """The creation trace of a node made while another node's backward ran (create_graph):
    `parent` is that node, whose own trace a failing backward shows next, as torch does."""

    __slots__ = ("parent",)


def creation_trace() -> list:
    """The user's frames of the current stack as raw `(code, lineno)` pairs, innermost first.

    Called per node in anomaly mode, so it only walks the stack and defers all formatting.
    Under `record_sites`, only the innermost user frame: a walk of a few frames, not the stack.
    Inside a backward, an `InducedTrace` naming the node that ran.
    """
    if state[2]:
        site = user_site()
        return [site] if site is not None else []
    known = _internal_files.get
    frames = []
    frame = sys._getframe(1)
    floor = _floor[0]
    while frame is not None and frame is not floor:
        code = frame.f_code
        internal = known(code.co_filename)
        if internal is None:
            internal = is_internal_file(code.co_filename)
        if not internal:
            frames.append((code, frame.f_lineno))
        frame = frame.f_back
    running = this_thread.running  # the nodes whose backward runs on this thread
    if running:
        frames = InducedTrace(frames)
        frames.parent = running[-1]
    return frames


def user_site() -> tuple | None:
    """The innermost user frame of the current stack as `(code, lineno)`, or None."""
    kinds = _internal_files
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        internal = kinds.get(code.co_filename)
        if internal is None:
            internal = is_internal_file(code.co_filename)
        if not internal:
            return (code, frame.f_lineno)
        frame = frame.f_back
    return None


def frame_summary(site: tuple | None) -> traceback.FrameSummary | None:
    """A raw `(code, lineno)` pair as a FrameSummary (its source line is read lazily)."""
    if site is None:
        return None
    code, lineno = site
    return traceback.FrameSummary(code.co_filename, lineno, code.co_name)


def summarize(trace) -> traceback.StackSummary:
    """A raw trace (innermost first) as a StackSummary, outermost first as tracebacks read."""
    return traceback.StackSummary.from_list([frame_summary(site) for site in reversed(trace)])


def trace_of(node) -> traceback.StackSummary | None:
    """Where `node` was created (the user's frames), or None if anomaly mode was off then."""
    trace = getattr(node, "_trace", None)
    return None if trace is None else summarize(trace)


def unrecorded(name: str, inputs: tuple, out) -> None:
    """An op ran without recording a node (nothing needed grad, or grad mode was off): shown to the
    observer, with the name of the node it would have made."""
    if observer is not None:
        observer.computed(name, inputs, out)


def forward_trace(node, inputs: tuple, out) -> list:
    """`creation_trace()` for an op's node, also shown to the observer with the op's output."""
    trace = creation_trace()
    if observer is not None:
        observer.forward(node, inputs, out, trace)
    return trace


# ------------------------------------------------------------------------- version bumps


def record_bump(tensor) -> None:
    """Remember where a tensor's version changed, so a stale saved tensor can name the line.

    The records live in the version counter itself (`bumps`), so views share them and they
    go away with the tensor.
    """
    vc = tensor._vc
    records = vc.bumps
    if records is None:
        records = vc.bumps = []
    records.append((vc.version, user_site()))
    if len(records) > MAX_BUMPS:
        del records[: len(records) - MAX_BUMPS]
    if observer is not None:
        observer.bumped(tensor)


def bumps_of(tensor) -> list[tuple[int, traceback.FrameSummary | None]]:
    """`(new version, the user's frame)` for each recorded bump of the tensor's version counter."""
    return [(version, frame_summary(site)) for version, site in tensor._vc.bumps or ()]


# ------------------------------------------------------------------------------ backward


def warn_with_trace(node) -> None:
    """Warn with the forward trace of the node whose backward failed, then with the trace of each
    node whose backward made it (create_graph), as torch does."""
    heading = f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
    while node is not None:
        trace = getattr(node, "_trace", None)
        if trace is None:
            _warn_beside_error(f"Error detected in {node.name()}. {NO_FORWARD_INFORMATION}")
            return
        _warn_beside_error(heading + "".join(traceback.format_list(summarize(trace))))
        node = trace.parent if trace.__class__ is InducedTrace else None
        if node is not None:
            heading = (
                f"\n\nPrevious calculation was induced by {node.name()}. Traceback of forward call that induced "
                "the previous calculation:\n"
            )


NO_FORWARD_INFORMATION = (
    "No forward pass information available. Enable detect anomaly during forward pass for more information."
)


def _warn_beside_error(message: str) -> None:
    """A warning given while an error propagates: where the warnings filter makes it an error, it is
    printed to stderr instead, as torch prints it, and the original error goes on."""
    try:
        warnings.warn(message, UserWarning, stacklevel=_user_stacklevel())
    except Warning as raised:
        sys.stderr.write(f"{type(raised).__name__}: {raised}\n")


def _user_stacklevel() -> int:
    """The `stacklevel` that makes a warning point at the user's line (the backward call)."""
    level = 1
    frame = sys._getframe(2)  # the caller of the function that calls warnings.warn
    while frame is not None and is_internal_file(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level + 1 if frame is not None else 2


def _where(site: tuple | None) -> str:
    if site is None:
        return "  (not recorded: anomaly mode was off, or the version was changed outside the engine's in-place ops)\n"
    return "".join(traceback.format_list([frame_summary(site)]))


def explain_modified(node, tensor, expected: int) -> str:
    """Beyond torch: the line that saved the tensor and the line(s) that modified it."""
    sizes = "[" + ", ".join(str(n) for n in tensor.shape) + "]"
    trace = getattr(node, "_trace", None)
    saved_at = _where(trace[0] if trace else None)
    lines = [
        f"\nThe tensor [{backend.tensor_type_name(tensor._data)} {sizes}] was saved at version {expected} by "
        f"{node.name()}, created at\n{saved_at}"
    ]
    vc = tensor._vc
    records = dict(vc.bumps or ())
    for version in range(expected + 1, vc.version + 1):
        verb = "and modified in place" if version == expected + 1 else "then"
        lines.append(f"{verb} (version {version - 1} -> {version}) at\n{_where(records.get(version))}")
    return "".join(lines).rstrip("\n")


def backward_failed(node, exc: BaseException) -> None:
    """A node's backward raised: warn with its forward trace (as torch) and annotate the error.

    The error gets `anomaly_node` (the failing node); a modified-saved-tensor error also gets
    the lines that saved and modified the tensor appended to its message.
    """
    if getattr(exc, "anomaly_node", None) is not None or state[2]:
        return  # an inner backward (create_graph) already explained it; or only recording sites
    warn_with_trace(node)
    try:
        exc.anomaly_node = node
        saved = getattr(exc, "saved_tensor", None)
        if saved is not None and isinstance(exc.args, tuple) and exc.args:
            exc.args = (str(exc.args[0]) + explain_modified(node, saved, exc.expected_version),)
    except (AttributeError, TypeError):  # an exception type that takes no attributes
        pass
    if observer is not None:
        observer.node_failed(node, exc)


def backward_done(node, grads, outputs) -> None:
    """After a node's backward: the observer's look, then torch's NaN check (unless the observer
    found every output finite)."""
    if observer is not None and observer.node_done(node, grads, outputs):
        return
    if state[1]:
        check_nan(node, outputs)


def has_nan(data) -> bool:
    """Whether a float array holds a NaN, in one BLAS call: x.x is NaN only if some x is NaN.
    Flattened in memory order, so a transposed array is not copied."""
    flat = data if data.ndim == 1 else data.ravel("K")
    if not isnan(flat.dot(flat)):  # squares are >= 0, so Inf never cancels into NaN
        return False
    return bool((data != data).any())


def check_nan(node, outputs) -> None:
    """torch's anomaly-mode check: a backward that returns NaN fails at that node."""
    for i, g in enumerate(outputs):
        if g is None:
            continue
        data = getattr(g, "_data", g)
        if has_nan(data):
            warn_with_trace(node)
            raise nonfinite_error(node, "nan", i)


def nonfinite_error(node, what: str, index: int) -> RuntimeError:
    """torch's error for a backward that returned nan (or inf, for gradcli's check) values.

    Carries `anomaly_node`, `autograd_kind` (`nan-in-backward` / `inf-in-backward`) and
    `output_index`, so gradcli classifies it without reading its words.
    """
    err = RuntimeError(f"Function '{node.name()}' returned {what} values in its {index}th output.")
    err.anomaly_node = node
    err.autograd_kind = f"{what}-in-backward"
    err.output_index = index
    return err


# ------------------------------------------------------------------------- the observer


class Observer:
    """Extra instrumentation called at the engine's hook points, only while anomaly mode is on.

    Install one as `anomaly.observer`; every method is a no-op here. `gradcli anomaly` uses it
    to find what PyTorch's anomaly mode does not (Inf, NaN in forward, leaked gradients, ...).
    """

    def forward(self, node, inputs: tuple, out, trace: list) -> None:
        """An op recorded `node` (not yet linked to `out`) from `inputs`; `trace` is its creation."""

    def computed(self, name: str, inputs: tuple, out) -> None:
        """An op computed `out` from `inputs` without recording a node (`name`: the node it would make)."""

    def bumped(self, tensor) -> None:
        """An in-place change just bumped `tensor`'s version (recorded in `tensor._vc.bumps`)."""

    def backward_begin(self, roots: list, retain_graph: bool, inputs, capture: bool) -> None:
        """A backward / autograd.grad run starts."""

    def node_done(self, node, grads: list, outputs: list) -> bool | None:
        """`node`'s backward turned `grads` (one per output) into `outputs` (one per edge). True: the
        observer checked every output finite, so the engine's NaN check is skipped."""

    def node_failed(self, node, exc: BaseException) -> None:
        """`node`'s backward raised `exc`."""

    def released(self, node) -> None:
        """`node` freed its saved values (backward without retain_graph)."""

    def accumulating(self, variable, g) -> None:
        """Gradient `g` is about to be added into `variable.grad` (a leaf or retained tensor)."""

    def backward_end(self, inputs, captured) -> None:
        """The run ended (also on error); `captured` holds autograd.grad's results, else None."""

    def grad_read(self, tensor) -> None:
        """`tensor.grad` is being read (a non-leaf that does not retain grad: it is None)."""

    def raised(self, exc: BaseException) -> None:
        """The engine raises `exc` (a backward run or an autograd rule failed); the script may catch it."""


def noted(exc: BaseException) -> BaseException:
    """`exc`, an autograd error the engine is about to raise, first shown to the observer (in
    anomaly mode): a script that catches it does not hide it from a tool."""
    if state[0] and observer is not None:
        observer.raised(exc)
    return exc


def set_observer(new: Observer | None) -> Observer | None:
    """Install `new` as the observer; returns the previous one (to restore it)."""
    global observer
    previous = observer
    observer = new
    return previous


# ------------------------------------------------------------------------ mode switches


class record_sites:
    """Record where each node is made (`node._trace == [innermost user frame]`), and nothing else.

    A context manager for tools: anomaly mode's recording without its checks, warnings or
    longer messages. A `set_detect_anomaly` / `detect_anomaly` inside it is full anomaly mode.
    """

    def __enter__(self) -> None:
        _recording_sites[0] += 1
        _settle()
        return None

    def __exit__(self, *exc: Any) -> bool:
        _recording_sites[0] -= 1
        _settle()
        return False


class set_detect_anomaly:
    """Turn anomaly mode on or off (a function call or a context manager)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = (asked[0], asked[1])
        _ask(mode, check_nan)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        _ask(*self._prev)
        return False


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly mode on, as torch's."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        self._prev = None
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime "
            "and should only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self._prev = (asked[0], asked[1])
        _ask(True, self.check_nan)
        return None

    def __exit__(self, *exc: Any) -> bool:
        _ask(*self._prev)
        return False

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper
