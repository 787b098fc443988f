"""The engine's calls from the user's code, shown to a cut `Recorder` (cut_recording.py).

The engine has no TorchFunctionMode, so for the one forward a failure replays, `sys.setprofile`
sees every Python call; the calls that count are those a user's frame makes into the engine
(`engine.autograd.anomaly.is_internal_file`, the one rule for the user's frames), as a mode
sees torch's. A few are cuts by what they are (`Tensor.detach`, `.item`, `engine.tensor`...);
any other is one when grad mode is off as it starts and a tensor argument (or a module
argument's parameter) requires grad; its line is the one running in the user's frame that
turned grad mode off, while that frame is on the stack. A numpy function reading a tensor
(`__array__`) counts from numpy's frames too.

Nudging: a cut's source tensor gets a nudged copy of its array for the length of the call (so
`.item()` or `.detach()` hand out nudged values while the input itself keeps its own); an op
under no_grad has its result's array replaced as it returns.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import CodeType, FrameType
from typing import Any

from ..case_modules import is_module
from .cut_recording import Recorder, TensorOps, nudged, tensors_in


def engine_ops() -> TensorOps:
    import numpy

    import engine
    from engine import backend

    from ...libraries import ENGINE

    def host(t: Any) -> Any:
        return numpy.array(backend.to_numpy(t._data))

    return TensorOps(ENGINE.name, ENGINE.is_tensor, lambda t: engine.finfo(t.dtype).eps, host)


@contextmanager
def observing(recorder: Recorder) -> Iterator[None]:
    """For the block: the user's calls into the engine shown to `recorder` (and nudged as it says)."""
    import engine
    from engine.autograd import anomaly, grad_mode, thread_local

    kinds = _kinds(engine)
    getters = {p.fget.__code__ for p in vars(engine.Tensor).values() if isinstance(p, property) and p.fget}
    switches = {  # what turns grad mode on or off: no_grad / enable_grad / set_grad_enabled, as decorators too
        grad_mode._FixedModeContext.__enter__.__code__,
        grad_mode._FixedModeContext.__exit__.__code__,
        grad_mode.set_grad_enabled.__init__.__code__,
        grad_mode.set_grad_enabled.__enter__.__code__,
        grad_mode.set_grad_enabled.__exit__.__code__,
    }
    grad_mode_file = grad_mode.__file__
    engine_root = os.path.dirname(os.path.abspath(engine.__file__)) + os.sep
    in_engine: dict[str, bool] = {}
    internal = anomaly.is_internal_file
    this_thread = thread_local.this_thread  # grad mode is per thread
    ops = recorder.ops
    pending: dict[FrameType, tuple[Any, list[tuple[Any, Any]]]] = {}
    switching: dict[FrameType, bool] = {}  # a switch's frame -> grad mode before it

    def is_engine(filename: str) -> bool:
        known = in_engine.get(filename)
        if known is None:
            known = in_engine[filename] = os.path.abspath(filename).startswith(engine_root)
        return known

    def user_line(frame: FrameType | None) -> tuple[str, int] | None:
        """The user's frame that made the call, if no other engine frame stands between."""
        while frame is not None:
            filename = frame.f_code.co_filename
            if not internal(filename):
                return filename, frame.f_lineno
            if is_engine(filename):
                return None
            frame = frame.f_back
        return None

    def switched_by(frame: FrameType | None) -> FrameType | None:
        """The user's frame behind a grad-mode switch (a decorator's wrapper passed), else None."""
        while frame is not None and frame.f_code.co_filename == grad_mode_file:
            frame = frame.f_back
        return None if frame is None or internal(frame.f_code.co_filename) else frame

    def called(frame: FrameType) -> None:
        code = frame.f_code
        if not is_engine(code.co_filename):
            return
        if code in switches:
            switching[frame] = this_thread.grad_enabled
            return
        kind = kinds.get(code)
        if kind is None:
            if this_thread.grad_enabled or code in getters:
                return
            kind = "no_grad"
        caller = frame.f_back
        if caller is None or (kind != "array" and internal(caller.f_code.co_filename)):
            return
        where = recorder.no_grad_line(caller) if kind == "no_grad" else user_line(caller)
        if where is None:
            return
        sources = _sources(frame.f_locals, kind, code, ops)
        call = recorder.begin(kind, sources, *where, grad_on=this_thread.grad_enabled)
        if call is not None:
            swapped = _swap(sources, ops) if call.nudged and kind != "no_grad" else []
            pending[frame] = (call, swapped)

    def returned(frame: FrameType, result: Any) -> None:
        if frame in switching:
            if switching.pop(frame) != this_thread.grad_enabled:
                recorder.grad_switched(this_thread.grad_enabled, switched_by(frame.f_back))
            return
        entry = pending.pop(frame, None)
        if entry is None:
            return
        call, swapped = entry
        if call.kind != "detach_":
            for tensor, array in swapped:
                tensor._data = array
        if call.nudged and call.kind == "no_grad":
            for tensor in tensors_in(result, ops):
                if tensor.dtype.is_floating_point:
                    tensor._data = nudged(tensor._data, max(call.eps, ops.eps(tensor)))
        recorder.end(call, result)

    def profile(frame: FrameType, event: str, result: Any) -> None:
        if recorder.broken:
            return
        try:
            if event == "call":
                called(frame)
            elif event == "return" and (pending or switching):
                returned(frame, result)
        except Exception:  # the recording's own failure: the user's forward goes on unrecorded
            recorder.broken = True

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(previous)
        for _, swapped in pending.values():  # calls a timeout or Ctrl-C cut short keep no nudge
            for tensor, array in swapped:
                tensor._data = array


def _kinds(engine: Any) -> dict[CodeType, str]:
    """The engine functions that are cuts by what they are, by their code."""
    tensor = engine.Tensor
    functions = {
        "detach": tensor.detach,
        "detach_": tensor.detach_,
        "data": tensor.data.fget,
        "numpy": tensor.numpy,
        "item": tensor.item,
        "tolist": tensor.tolist,
        "float": tensor.__float__,
        "array": tensor.__array__,
        "new_tensor": tensor.new_tensor,
        "tensor": engine.tensor,
        "as_tensor": engine.as_tensor,
    }
    return {f.__code__: kind for kind, f in functions.items() if hasattr(f, "__code__")}


def _sources(arguments: dict[str, Any], kind: str, code: CodeType, ops: TensorOps) -> list[Any]:
    """The tensors whose values the call hands on: `self`, the data copied, or every tensor argument."""
    if kind in ("tensor", "as_tensor"):
        return tensors_in(arguments.get(code.co_varnames[0]), ops)
    if kind == "new_tensor":
        return tensors_in(arguments.get("data"), ops)
    if kind != "no_grad":
        return tensors_in(arguments.get("self"), ops)
    found = []
    for value in arguments.values():
        found += list(value.parameters()) if is_module(value) else tensors_in(value, ops)
    return found


def _swap(sources: list[Any], ops: TensorOps) -> list[tuple[Any, Any]]:
    """Give each source that requires grad a nudged copy of its array; (tensor, its own array) back."""
    swapped = []
    for tensor in sources:
        if tensor.requires_grad:
            swapped.append((tensor, tensor._data))
            tensor._data = nudged(tensor._data, ops.eps(tensor))
    return swapped
