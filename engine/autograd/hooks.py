"""Hook tables and the handles that remove hooks from them (tensors, nodes and modules alike)."""

from __future__ import annotations

from itertools import count


class RemovableHandle:
    """Returned by every register_*hook; `remove()` unregisters the hook."""

    _ids = count()
    __slots__ = ("_hooks", "id")

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks: dict, fn) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle
