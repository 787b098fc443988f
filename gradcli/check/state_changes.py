"""What a forward changes as it runs, and on which of the user's lines: globals, attributes, closed-over
variables, and the inputs it was given.

Used only after a check found that a forward gives other outputs on the same inputs and random
state (engine/autograd/gradcheck/determinism.py): the forward runs once more under `sys.settrace`,
which calls back before each line of the user's code. Each user frame watches what its code can
reach (the module globals its code names, the attributes of its `self`, its closure cells); after
each line, whatever changed is put down to the line the frame just ran.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.autograd import anomaly

from ..libraries import is_tensor
from ..program.exception_text import USER_ERRORS

#: Changes reported per run (the first ones: later lines usually repeat them).
MAX_CHANGES = 5
_UNWATCHED = object()


@dataclass
class Change:
    """`what` (e.g. "global `calls`", "attribute `self.count`", "input `x`") changed at file:line."""

    what: str
    file: str
    line: int


def changes_during(call: Callable[[], Any], inputs: list[tuple[str, Any]]) -> list[Change]:
    """Run `call()` traced: what it changed (in `inputs` by name, or reachable state) and where."""
    watch = _Watch()
    for name, tensor in inputs:
        watch.add(("input", name), f"input `{name}`", lambda t=tensor: t)
    previous = sys.gettrace()

    def on_call(frame: Any, event: str, arg: Any) -> Any:
        if event != "call" or anomaly.is_internal_file(frame.f_code.co_filename):
            return None
        return on_line

    def on_line(frame: Any, event: str, arg: Any) -> Any:
        # a frame's locals are read from its first line on, never at its "call" event: CPython 3.11
        # has not made its cells yet there, and reading f_locals then corrupts the frame
        if id(frame) not in watch.lines:
            watch.enter(frame)
        elif event in ("line", "return"):
            watch.check(frame)
        return on_line

    sys.settrace(on_call)
    try:
        call()
    except USER_ERRORS:  # the check reported what the forward raised; what changed before still counts
        pass
    finally:
        sys.settrace(previous)
    return watch.changes


class _Watch:
    """Fingerprints of what the traced frames can reach, and the changes seen."""

    def __init__(self) -> None:
        self.getters: dict[tuple, tuple[str, Callable[[], Any]]] = {}
        self.prints: dict[tuple, Any] = {}
        self.lines: dict[int, int] = {}  # frame id -> the line it last started
        self.changes: list[Change] = []

    def add(self, key: tuple, what: str, getter: Callable[[], Any]) -> None:
        if key in self.getters:
            return
        value = fingerprint(_get(getter))
        if value is not _UNWATCHED:
            self.getters[key] = (what, getter)
            self.prints[key] = value

    def enter(self, frame: Any) -> None:
        code, names = frame.f_code, frame.f_globals
        for name in code.co_names:
            if name in names:
                self.add(("global", id(names), name), f"global `{name}`", lambda n=name: names[n])
        owner = frame.f_locals.get("self")
        if owner is not None:
            attributes = getattr(owner, "__dict__", None)
            if isinstance(attributes, dict):
                for attr in list(attributes):
                    self.add(
                        ("attr", id(owner), attr), f"attribute `self.{attr}`", lambda a=attr: attributes[a]
                    )
        for name in code.co_freevars:
            if name in frame.f_locals:
                self.add(
                    ("cell", id(code), name), f"closed-over `{name}`", lambda n=name, f=frame: f.f_locals[n]
                )
        self.lines[id(frame)] = frame.f_lineno

    def check(self, frame: Any) -> None:
        ran = self.lines.get(id(frame), frame.f_lineno)
        for key, (what, getter) in self.getters.items():
            now = fingerprint(_get(getter))
            if now != self.prints[key]:
                self.prints[key] = now
                if len(self.changes) < MAX_CHANGES and not any(c.what == what for c in self.changes):
                    self.changes.append(Change(what, frame.f_code.co_filename, ran))
        self.lines[id(frame)] = frame.f_lineno


#: Items of a list, tuple or dict looked into (a counter kept as `calls[0]`, a cache dict).
CONTAINER_ITEMS = 64


def fingerprint(value: Any, depth: int = 0) -> Any:
    """A comparable digest of a value a forward may change: numbers and strings as they are, arrays
    and tensors by their bytes, small lists, tuples and dicts by their items (the first
    CONTAINER_ITEMS, two levels deep), sets by size; anything else is not watched."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return repr(value) if isinstance(value, float) else value
    if isinstance(value, (list, tuple, dict)) and depth < 2:
        items = list(value.items() if isinstance(value, dict) else value)[:CONTAINER_ITEMS]
        inner = [fingerprint(item, depth + 1) for item in items]
        return (type(value).__name__, len(value), tuple(map(_comparable, inner)))
    if isinstance(value, (list, dict, set, tuple, frozenset)):
        return (type(value).__name__, len(value))
    array = _host_array(value)
    if array is None:
        return _UNWATCHED
    return array.shape, str(array.dtype), hashlib.blake2b(array.tobytes(), digest_size=16).digest()


def _comparable(digest: Any) -> Any:
    """An item that is not watched still counts as present (its position keeps the others')."""
    return "<unwatched>" if digest is _UNWATCHED else digest


def _host_array(value: Any) -> Any:
    """A numpy array of a numpy array or a tensor's values (engine's or torch's), else None."""
    kind = type(value)
    if kind.__module__ == "numpy" and kind.__name__ == "ndarray":
        return value
    if not (is_tensor(value)):
        return None
    try:
        tensor = value.detach().cpu()
        try:
            return tensor.numpy()
        except TypeError:  # bfloat16 has no numpy dtype in torch
            return tensor.float().numpy()
    except Exception:
        return None


def _get(getter: Callable[[], Any]) -> Any:
    try:
        return getter()
    except Exception:
        return _UNWATCHED
