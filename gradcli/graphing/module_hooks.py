"""Which `nn.Module`'s forward created each node, for `gradcli graph --group-modules`.

Global forward hooks (engine's and torch's `register_module_forward_pre_hook` /
`register_module_forward_hook`) are installed only while the user's file runs under that option.
The pre-hook notes the grad_fns of the module's tensor arguments, where its forward starts; the
hook after the forward walks back from its outputs' grad_fns to them, and the nodes met on the
way that no module called inside it claimed are its own. Inner modules finish first, so the
innermost module wins. AccumulateGrad nodes are left out: parameters are grouped by their names
(`graphing.modules`). A tensor with history that a forward reads from elsewhere than its
arguments (a global, an attribute) would have its nodes claimed too, unless a module made them.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from ..frameworks import after_torch_import


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
