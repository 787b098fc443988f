"""Which results a file differentiated: its backward() and autograd.grad() calls, engine or torch,
and the user's functions running at the time, whose variables name tensors (`--target FUNC.NAME`).

`watching()` records them for the block: engine calls through
`engine.autograd.backward.call_watchers`, torch calls through a `TorchFunctionMode` installed
once the file imports torch (it sees `Tensor.backward`, `torch.autograd.backward` and
`torch.autograd.grad`; no torch function is patched). The last call is kept with the user's
frames on the stack then; a frame kept after its function returned still holds that function's
variables as they were when it returned, so `main`'s `loss` is the last loss it computed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any

from engine.autograd import anomaly

from ..libraries import after_torch_import, is_tensor


@dataclass
class BackwardCall:
    """One backward() / autograd.grad() call: the tensors it differentiated and where it was made."""

    tensors: list[Any]
    frames: list[FrameType]  # the user's frames then, innermost first
    line: int  # the line of the innermost one

    def names(self) -> dict[str, Any]:
        """The variables of the user's code on the stack then, its globals too (the innermost wins)."""
        scope: dict[str, Any] = {}
        for frame in reversed(self.frames):
            scope.update(frame.f_locals)
        return scope


class BackwardCalls:
    """The last backward call, and the last frame of each user function met on the way.

    Frames are the user's from the file's own top level (`file`, its path) inwards: the frames
    that ran the file (gradcli's, a test's) are never the user's variables.
    """

    def __init__(self, file: str = "") -> None:
        self.file = file
        self.last: BackwardCall | None = None
        #: function (its qualified name) -> its latest frame seen at a backward call or in the
        #: traceback of the error that ended the file, least recently seen first
        self.functions: dict[str, FrameType] = {}

    def saw(self, tensors: tuple) -> None:
        """A backward call on `tensors`, made from the user's code on this thread's stack."""
        frames = self._user_frames(sys._getframe(1))
        if not frames:
            return
        self.last = BackwardCall([t for t in tensors if is_tensor(t)], frames, frames[0].f_lineno)
        self._met(reversed(frames))

    def raised(self, exc: BaseException) -> BackwardCall | None:
        """The backward call `exc` escaped from, if it did; the traceback's functions are met too."""
        entries = list(_entries(exc.__traceback__))
        self._met(frame for frame, _ in entries if not anomaly.is_internal_file(frame.f_code.co_filename))
        call = self.last
        if call is None:
            return None
        innermost = call.frames[0]
        return call if any(f is innermost and line == call.line for f, line in entries) else None

    def scopes(self, function: str | None = None) -> list[tuple[str, dict[str, Any]]]:
        """(function, its variables) of the functions met, most recently met first; only those
        whose qualified name is or ends with `.function` when it is given."""
        found = []
        for name, frame in reversed(self.functions.items()):
            if function is None or name == function or name.endswith("." + function):
                found.append((name, frame.f_locals))
        return found

    def _user_frames(self, frame: FrameType | None) -> list[FrameType]:
        """The frames of the user's code from `frame` out to the file's top level."""
        frames = []
        while frame is not None:
            code = frame.f_code
            if not anomaly.is_internal_file(code.co_filename):
                frames.append(frame)
                if code.co_filename == self.file and _is_module(frame):
                    break
            frame = frame.f_back
        return frames

    def _met(self, frames: Any) -> None:
        for frame in frames:
            if not _is_module(frame):
                name = frame.f_code.co_qualname
                self.functions.pop(name, None)
                self.functions[name] = frame


@contextmanager
def watching(file: str) -> Iterator[BackwardCalls]:
    """For the block: every backward call of the engine's, and of torch's once imported, made
    while the file at path `file` runs."""
    from engine.autograd.backward import call_watchers

    calls = BackwardCalls(os.path.abspath(file))
    call_watchers.append(calls.saw)
    try:
        with ExitStack() as stack:
            stack.enter_context(
                after_torch_import(lambda torch: stack.enter_context(_torch_calls(torch, calls)))
            )
            yield calls
    finally:
        call_watchers.remove(calls.saw)


@contextmanager
def _torch_calls(torch: Any, calls: BackwardCalls) -> Iterator[None]:
    from torch.overrides import TorchFunctionMode

    method, function, grad = torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad

    class BackwardWatching(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is method or func is function or func is grad:
                first = args[0] if args else kwargs.get("outputs" if func is grad else "tensors")
                calls.saw(tuple(first) if type(first) in (tuple, list) else (first,))
            return func(*args, **kwargs)

    with BackwardWatching():
        yield


def _entries(tb: TracebackType | None) -> Iterator[tuple[FrameType, int]]:
    while tb is not None:
        yield tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next


def _is_module(frame: FrameType) -> bool:
    return frame.f_code.co_name == "<module>"
