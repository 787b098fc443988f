"""Where a forward draws random numbers: the user's line, the function called, the module it ran in.

A tensor library's adapter (tensors.py) calls `random_call` from inside each random draw; the
record is plain data (no frames, no module objects kept), so a report stays cheap to copy.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import Any

import numpy

from .. import anomaly

_CHECKER = os.path.dirname(os.path.abspath(__file__)) + os.sep
#: Characters of a module's repr kept in a record.
REPR_LIMIT = 80


@dataclass
class RandomCall:
    """One random draw: `function` is the draw (`randn`, `bernoulli_`, ...), `called` the library
    function the user's line called (`randn`, `dropout`, `_wrapped_call_impl` for a module);
    `file`/`line` that user's frame; `module_*` the innermost nn.Module whose forward was running
    (`module_id` is its `id()`, to name it by path later)."""

    function: str
    file: str | None
    line: int | None
    called: str | None = None
    module_id: int | None = None
    module_type: str | None = None
    module_repr: str | None = None
    module_training: bool | None = None


def random_call(frame: Any, function: str | None) -> RandomCall:
    """The record of a draw made below `frame`: `function` names it, else the library function
    the user's frame called (the outermost library frame inside the user's)."""
    called, user, module = None, None, None
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith(_CHECKER):  # the check called the forward: no user line inside it
            break
        if anomaly.is_internal_file(code.co_filename):
            called = code.co_name
            if module is None:
                module = _module_of(frame)
        else:
            user = frame
            break
        frame = frame.f_back
    if module is None and user is not None:
        module = _module_of(user)
    record = RandomCall(
        function=function or called or "?",
        file=user.f_code.co_filename if user is not None else None,
        line=user.f_lineno if user is not None else None,
        called=called,
    )
    if module is not None:
        record.module_id = id(module)
        record.module_type = type(module).__name__
        record.module_repr = _short_repr(module)
        record.module_training = bool(getattr(module, "training", False))
    return record


def global_random_state() -> tuple:
    """numpy's and Python's global random states (a forward may draw from either)."""
    return numpy.random.get_state(), random.getstate()


def set_global_random_state(state: tuple) -> None:
    numpy_state, python_state = state
    numpy.random.set_state(numpy_state)
    random.setstate(python_state)


def _module_of(frame: Any) -> Any:
    """The frame's `self` when it is module-like (torch's or the engine's nn.Module), else None."""
    owner = frame.f_locals.get("self")
    if owner is None:
        return None
    kind = type(owner)
    return owner if hasattr(kind, "named_modules") and hasattr(kind, "forward") else None


def _short_repr(module: Any) -> str:
    """A leaf module's one-line repr (`Dropout(p=0.1, inplace=False)`); a container's type name."""
    try:
        text = repr(module)
    except Exception:
        return type(module).__name__
    if "\n" in text:
        return type(module).__name__
    return text if len(text) <= REPR_LIMIT else text[: REPR_LIMIT - 3] + "..."
