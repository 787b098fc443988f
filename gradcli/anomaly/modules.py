"""Which nn.Module's forward is running: so a finding inside `nn.Sequential` names `model.2
(ReLU(inplace=True))` and its forward line, not only the user's `model(X)`.

Read from the stack when the instrument sees an op: the innermost frame whose `self` is a
Module is the module, the outermost is the root, and the user's frame that called the root
names it (a local or global bound to it).
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass


@dataclass
class ModuleCall:
    """A module whose forward ran an op: its path from the user's name, its repr, its forward line."""

    path: str  # "model.2"
    description: str  # "ReLU(inplace=True)"
    class_name: str  # "ReLU"
    inplace: bool  # constructed with inplace=True
    forward_site: tuple | None  # (code, lineno) of the line in its forward

    @property
    def label(self) -> str:
        return f"{self.path} ({self.description})"


def _is_module(value: object) -> bool:
    """An engine or torch nn.Module, told apart without importing torch."""
    for cls in type(value).__mro__:
        if cls.__name__ == "Module" and cls.__module__ in ("engine.nn.module", "torch.nn.modules.module"):
            return True
    return False


def current_module(frame: types.FrameType | None = None) -> ModuleCall | None:
    """The module whose forward is on the stack (innermost), or None outside any module."""
    frame = frame if frame is not None else sys._getframe(1)
    calls: list[tuple[object, types.FrameType]] = []  # innermost first
    caller = None
    while frame is not None:
        owner = frame.f_locals.get("self")
        if _is_module(owner):  # a forward, or Module.__call__ between the caller and a forward
            if frame.f_code.co_name == "forward":
                calls.append((owner, frame))
        elif calls:
            caller = frame
            break
        frame = frame.f_back
    if not calls:
        return None
    module, forward = calls[0]
    root = calls[-1][0]
    return ModuleCall(
        path=_path(root, module, _user_name(root, caller)),
        description=repr(module).splitlines()[0] if module is not root else type(module).__name__,
        class_name=type(module).__name__,
        inplace=getattr(module, "inplace", False) is True,
        forward_site=(forward.f_code, forward.f_lineno),
    )


def _user_name(root: object, caller: types.FrameType | None) -> str:
    if caller is not None:
        for scope in (caller.f_locals, caller.f_globals):
            for name, value in scope.items():
                if value is root and not name.startswith("_"):
                    return name
    return type(root).__name__


def _path(root: object, module: object, root_name: str) -> str:
    for name, candidate in root.named_modules():  # type: ignore[attr-defined]
        if candidate is module:
            return f"{root_name}.{name}" if name else root_name
    return root_name
