"""Which `nn.Module`'s forward is running, for every command.

`current_module` (anomaly): read from the stack when the instrument sees an op, so a finding
inside `nn.Sequential` names `model.2 (ReLU(inplace=True))` and its forward line, not only the
user's `model(X)`: the innermost frame whose `self` is a Module is the module, the outermost is
the root, and the user's frame that called the root names it (a local or global bound to it).

`recording_modules` (`gradcli graph --group-modules`): which module's forward created each node.
Global forward hooks (engine's and torch's `register_module_forward_pre_hook` /
`register_module_forward_hook`) are installed only while the user's file runs under that option.
The pre-hook notes the grad_fns of the module's tensor arguments, where its forward starts; the
hook after the forward walks back from its outputs' grad_fns to them, and the nodes met on the
way that no module called inside it claimed are its own. Inner modules finish first, so the
innermost module wins. AccumulateGrad nodes are left out: parameters are grouped by their names
(`graph.modules`). A tensor with history that a forward reads from elsewhere than its arguments
(a global, an attribute) would have its nodes claimed too, unless a module made them.
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from ..libraries import after_torch_import


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


def is_module(value: object) -> bool:
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
        if is_module(owner):  # a forward, or Module.__call__ between the caller and a forward
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
        description=_description(module) if module is not root else type(module).__name__,
        class_name=type(module).__name__,
        inplace=getattr(module, "inplace", False) is True,
        forward_site=(forward.f_code, forward.f_lineno),
    )


def _description(module: object) -> str:
    """`ReLU(inplace=True)`: the module's repr where it is one line; its class name where the repr lists
    submodules over several lines."""
    text = repr(module)
    return text if "\n" not in text else type(module).__name__


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


class ModuleRecorder:
    """The module calls seen (each with its caller's call) and the call that made each node."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, int | None]] = []  # (module, the enclosing call)
        self.owner: dict[int, int] = {}  # id(node) -> the call that made it
        self._open: list[tuple[int, set[int]]] = []  # running calls: (call, ids of its inputs' grad_fns)
        self._nodes: list[Any] = []  # the claimed nodes, kept alive so that their ids stay theirs

    def entered(self, module: Any, args: tuple) -> None:
        parent = self._open[-1][0] if self._open else None
        self.calls.append((module, parent))
        self._open.append((len(self.calls) - 1, {id(fn) for fn in _grad_fns(args)}))

    def left(self, module: Any, args: tuple, output: Any) -> None:
        call, start = self._open.pop()
        stack, seen = _grad_fns(output), set(start)
        while stack:
            node = stack.pop()
            key = id(node)
            if key in seen:
                continue
            seen.add(key)
            owner = self.owner.get(key)
            if owner is None:
                if hasattr(node, "variable"):  # AccumulateGrad: grouped by the parameter's name
                    continue
                self.owner[key] = call
                self._nodes.append(node)
            elif owner < call:  # made before this forward began
                continue
            stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)

    def node_paths(self, order: list[Any], namespace: dict[str, Any]) -> dict[int, str]:
        """Position in `order` (the walk's nodes) -> the path of the module that made the node."""
        named = _top_level_modules(namespace)
        paths: dict[int, str] = {}
        for call, (module, parent) in enumerate(self.calls):
            if id(module) in named:
                paths[call] = named[id(module)]
            elif parent is not None:
                paths[call] = _child_path(paths[parent], self.calls[parent][0], module)
            else:
                paths[call] = type(module).__name__
        return {i: paths[self.owner[id(node)]] for i, node in enumerate(order) if id(node) in self.owner}


@contextmanager
def recording_modules() -> Iterator[ModuleRecorder]:
    """For the block: every engine (and, once imported, torch) module call recorded."""
    from engine.nn import module as engine_modules

    recorder = ModuleRecorder()
    with ExitStack() as stack:
        _install(engine_modules, recorder, stack)
        stack.enter_context(
            after_torch_import(lambda torch: _install(torch.nn.modules.module, recorder, stack))
        )
        yield recorder


def _install(library: Any, recorder: ModuleRecorder, stack: ExitStack) -> None:
    stack.callback(library.register_module_forward_pre_hook(recorder.entered).remove)
    # always_call: a forward that raises still leaves, so the running calls stay balanced
    stack.callback(library.register_module_forward_hook(recorder.left, always_call=True).remove)


def _grad_fns(value: Any) -> list[Any]:
    """The grad_fns of the tensors in `value` (a tensor, or tuples, lists and dicts of them)."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (tuple, list)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif hasattr(item, "grad_fn") and hasattr(item, "output_nr"):
            fn = item.grad_fn
            if fn is not None:
                found.append(fn)
    return found


def _top_level_modules(namespace: dict[str, Any]) -> dict[int, str]:
    """id(module) -> its path from a top-level name: `model.0` for the first of Sequential `model`."""
    named: dict[int, str] = {}
    for name, value in namespace.items():
        method = getattr(value, "named_modules", None)
        if name.startswith("_") or inspect.isclass(value) or not callable(method):
            continue
        try:
            for sub, module in method():
                named.setdefault(id(module), f"{name}.{sub}" if sub else name)
        except Exception:  # a user object's method: never let it break the drawing
            continue
    return named


def _child_path(parent_path: str, parent: Any, module: Any) -> str:
    for sub, candidate in parent.named_modules():
        if candidate is module and sub:
            return f"{parent_path}.{sub}"
    return f"{parent_path}.{type(module).__name__}"
