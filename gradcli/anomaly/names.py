"""Names for messages: the user's name for a tensor, where that name is defined, a node's forward op."""

from __future__ import annotations

import ast
import re
import sys
import types
from typing import Any

from engine.tensor import Tensor

from ..source_tree import parsed
from .findings import Location
from .sites import Sites


class TensorNames:
    """Finds a user-facing name for a tensor (engine's or torch's): a local or global variable, or model.<param>."""

    def __init__(self, module: types.ModuleType | None, frames: list[types.FrameType] = ()):
        self.module = module
        self.frames = list(frames)
        self._table: dict[int, tuple[str, Any]] | None = None
        self._by_array: dict[Any, str] = {}

    def _build(self) -> dict[int, tuple[str, Any]]:
        table: dict[int, tuple[str, Any]] = {}
        torch = sys.modules.get("torch")  # never imported here: only when the script did
        kinds = (Tensor, torch.Tensor) if torch is not None else Tensor
        scopes = [f.f_locals for f in reversed(self.frames)]
        if self.module is not None:
            scopes.append(self.module.__dict__)
        for scope in scopes:
            for name, value in list(scope.items()):
                if name.startswith("__"):
                    continue
                try:
                    self._add(table, name, value, kinds)
                except Exception:  # a user object whose attributes raise: no name from it
                    continue
        return table

    @staticmethod
    def _add(
        table: dict[int, tuple[str, Any]], name: str, value: Any, Tensor: type | tuple[type, ...]
    ) -> None:
        if isinstance(value, Tensor):
            table.setdefault(id(value), (name, value))
        elif isinstance(value, (list, tuple)) and len(value) <= 64:
            for i, item in enumerate(value):
                if isinstance(item, Tensor):
                    table.setdefault(id(item), (f"{name}[{i}]", item))
        elif not isinstance(value, type) and callable(getattr(value, "named_parameters", None)):
            for pname, p in value.named_parameters():  # an engine.nn.Module, or alike
                table.setdefault(id(p), (f"{name}.{pname}", p))

    def of(self, tensor) -> str | None:
        """By identity; else by data (the engine hands a saved output back as a new Tensor; torch's
        saved tensors are detached aliases)."""
        if tensor is None:
            return None
        if self._table is None:
            self._table = self._build()
            for name, value in self._table.values():
                self._by_array.setdefault(_data_key(value), name)
        entry = self._table.get(id(tensor))
        return entry[0] if entry is not None else self._by_array.get(_data_key(tensor))


def _data_key(tensor) -> Any:
    """What identifies a tensor's data: engine's array, or torch's address, shape and dtype."""
    data = getattr(tensor, "_data", None)
    if data is not None:
        return id(data)
    try:
        return (tensor.data_ptr(), tuple(tensor.shape), tensor.dtype)
    except (AttributeError, RuntimeError):
        return None


def definition(name: str | None, sites: Sites) -> Location | None:
    """Where `name` (its root variable) is first assigned in the script, by reading its source."""
    if not name:
        return None
    root = re.split(r"[.\[]", name, maxsplit=1)[0]
    try:
        with open(sites.script_abspath, "rb") as handle:  # bytes: its coding, as Python reads it
            tree = parsed(handle.read())
    except OSError:
        return None
    if tree is None:
        return None
    lines = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif isinstance(node, (ast.For, ast.With)):
            continue
        for target in targets:
            if any(isinstance(sub, ast.Name) and sub.id == root for sub in ast.walk(target)):
                lines.append(node.lineno)
    if not lines:
        return None
    return sites.at(sites.script_abspath, min(lines), None, f"{root} defined")


def op_name(node_name: str) -> str:
    """`LogBackward0` -> `log`, for messages about the forward op."""
    base = re.sub(r"Backward\d*$", "", node_name.rsplit("::", 1)[-1])
    return base.lower() or node_name
