"""torch's calls from the user's code, shown to a cut `Recorder` through a TorchFunctionMode.

Imported only once the user's file imported torch. A mode sees the outermost torch calls
(inside its handler it is off), so a module's forward written in torch's files is seen call by
call; a cut by what it is (`.detach()`, `.item()`, `torch.tensor(t)`...) counts only where the
user's frame made the call. An op under no_grad counts while grad mode was turned off by the
user's code (the mode sees `_set_grad_enabled` too; a custom Function's forward runs with grad
mode off from C++, unseen, so its ops do not count), at the line running in that frame. A nudged cut
has its result replaced by a nudged copy (`.detach_()` is nudged in place).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from .cut_recording import Call, Recorder, TensorOps, nudged, tensors_in


def torch_ops() -> TensorOps:
    import torch  # the user's file imported it

    from ...libraries import TORCH

    def host(t: Any) -> Any:
        values = t.detach().cpu()
        return (values.float() if values.dtype == torch.bfloat16 else values).numpy().copy()

    return TensorOps(TORCH.name, TORCH.is_tensor, lambda t: torch.finfo(t.dtype).eps, host)


@contextmanager
def observing(recorder: Recorder) -> Iterator[None]:
    """For the block: the user's torch calls shown to `recorder` (and nudged as it says)."""
    import torch
    from torch.overrides import TorchFunctionMode

    from engine.autograd import anomaly

    tensor = torch.Tensor
    kinds = {
        tensor.detach: "detach",
        tensor.detach_: "detach_",
        tensor.data.__get__: "data",
        tensor.numpy: "numpy",
        tensor.item: "item",
        tensor.tolist: "tolist",
        tensor.__float__: "float",
        tensor.__array__: "array",
        tensor.new_tensor: "new_tensor",
        torch.tensor: "tensor",
        torch.as_tensor: "as_tensor",
    }
    set_grad_enabled = torch._C._set_grad_enabled
    torch_root = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
    plumbing = tuple(
        os.path.join(torch_root, *path)
        for path in (("overrides.py",), ("autograd", "grad_mode.py"), ("utils", "_contextlib.py"))
    )
    internal = anomaly.is_internal_file
    ops = recorder.ops

    def user_line(frame: FrameType | None, direct: bool) -> tuple[str, int] | None:
        """The user's frame behind the call; with `direct`, only one whose call reached torch at once
        (torch's dispatch plumbing aside)."""
        while frame is not None:
            filename = frame.f_code.co_filename
            if not internal(filename):
                return filename, frame.f_lineno
            if (
                direct
                and os.path.abspath(filename).startswith(torch_root)
                and not filename.startswith(plumbing)
            ):
                return None
            frame = frame.f_back
        return None

    def switched_by(frame: FrameType | None) -> FrameType | None:
        """The user's frame behind a grad-mode switch (torch's context managers passed), else None."""
        while frame is not None and frame.f_code.co_filename.startswith(plumbing):
            frame = frame.f_back
        return None if frame is None or internal(frame.f_code.co_filename) else frame

    def before(func: Any, args: tuple, kwargs: dict, caller: FrameType) -> Call | None:
        kind = kinds.get(func)
        grad_on = torch.is_grad_enabled()
        if kind is None:
            if (
                grad_on or getattr(func, "__name__", "") == "__get__"
            ):  # a getter (.grad, .shape) hands on no op
                return None
            where = recorder.no_grad_line(caller)
            sources = [t for value in (*args, *kwargs.values()) for t in tensors_in(value, ops)]
            kind = "no_grad"
        else:
            where = user_line(caller, direct=kind != "array")
            sources = _sources(kind, args, kwargs, ops)
        return None if where is None else recorder.begin(kind, sources, *where, grad_on=grad_on)

    def after(call: Call, out: Any) -> Any:
        if call.nudged:
            out = _nudged_result(out, call, ops)
        recorder.end(call, out)
        return out

    class CutRecording(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if recorder.broken:
                return func(*args, **kwargs)
            caller = sys._getframe(1)
            was_on = torch.is_grad_enabled()
            call = None
            try:
                if func is not set_grad_enabled:
                    call = before(func, args, kwargs, caller)
            except Exception:  # the recording's own failure: the user's forward goes on unrecorded
                recorder.broken = True
            out = func(*args, **kwargs)
            try:
                if func is set_grad_enabled and was_on != torch.is_grad_enabled():
                    recorder.grad_switched(not was_on, switched_by(caller))
                elif call is not None:
                    out = after(call, out)
            except Exception:
                recorder.broken = True
            return out

    with CutRecording():
        yield


def _sources(kind: str, args: tuple, kwargs: dict, ops: TensorOps) -> list[Any]:
    """The tensors whose values the call hands on: `self`, or the data copied."""
    if kind in ("tensor", "as_tensor"):
        return tensors_in(args[0] if args else kwargs.get("data"), ops)
    if kind == "new_tensor":
        return tensors_in(args[1] if len(args) > 1 else kwargs.get("data"), ops)
    return tensors_in(args[0] if args else None, ops)


def _nudged_result(out: Any, call: Call, ops: TensorOps) -> Any:
    """A cut's result nudged: tensors by their dtype's epsilon (or the source's, if larger), numbers
    and arrays by the source's."""
    import torch

    def moved(value: Any) -> Any:
        if ops.is_tensor(value):
            return nudged(value, max(call.eps, ops.eps(value))) if value.dtype.is_floating_point else value
        return nudged(value, call.eps)

    with torch.no_grad():
        if call.kind == "detach_":
            return out.copy_(moved(out))
        if isinstance(out, (tuple, list)) and any(ops.is_tensor(t) for t in out):
            return type(out)(moved(t) for t in out)
        return moved(out)
