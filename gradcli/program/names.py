"""The user's names for tensors, for every command.

`NameIndex` (graph): every name a tensor has in a namespace, most telling first: top-level
variables, `obj.param` (`torch.nn.Module` parameters are named `model.fc1.weight`), case
arguments, `seq[i]`. `TensorNames` (anomaly): one name for a tensor met in a traceback, from the
frames' locals and the script's globals, found by identity or by its data (a saved tensor comes
back as another object). `definition`: where a name is first assigned; `op_name`: a node's
forward op, for messages;
`code_path`: a parameter's name as Python code.
"""

from __future__ import annotations

import ast
import re
import types
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType
from typing import Any

from ..libraries import is_tensor
from .probing import attribute, instance_of
from .sites import Location, Sites
from .source_tree import parsed


class NameIndex:
    """The user's names for tensors: top-level variables, `obj.param`, case arguments, `seq[i]`.

    A tensor may have several names; they are listed most telling first (the rank given to
    `add`: 0 a top-level variable, 1 a parameter, 2 a case's argument, 3 a sequence item).
    """

    VARIABLE, PARAMETER, ARGUMENT, ITEM = 0, 1, 2, 3

    def __init__(self) -> None:
        self.tensors: list[tuple[str, Any]] = []
        self.top_level: list[tuple[str, Any]] = []  # plain top-level variables only
        self._by_id: dict[int, list[tuple[int, str]]] = {}
        self._by_output: dict[tuple[int, int], list[Any]] | None = None

    def add(self, name: str, tensor: Any, rank: int = 0) -> None:
        entries = self._by_id.setdefault(id(tensor), [])
        if any(n == name for _, n in entries):
            return
        self.tensors.append((name, tensor))
        entries.append((rank, name))
        entries.sort(key=lambda e: e[0])  # stable: equal ranks keep definition order
        self._by_output = None

    def of(self, tensor: Any) -> list[str]:
        return [name for _, name in self._by_id.get(id(tensor), ())]

    def of_output(self, node: Any, output_nr: int) -> list[str]:
        """Names of the tensors `node` produced as output `output_nr` (their grad_fn is it)."""
        return [name for t in self.outputs_of(node, output_nr) for name in self.of(t)]

    def outputs_of(self, node: Any, output_nr: int) -> list[Any]:
        """The named tensors `node` produced as output `output_nr`, each once."""
        if self._by_output is None:
            self._by_output = {}
            done: set[int] = set()
            for _, t in self.tensors:
                fn = t.grad_fn
                if fn is not None and id(t) not in done:
                    done.add(id(t))
                    self._by_output.setdefault((id(fn), t.output_nr), []).append(t)
        return self._by_output.get((id(node), output_nr), [])

    @classmethod
    def from_namespace(cls, namespace: dict[str, Any]) -> NameIndex:
        """Top-level tensors first (in definition order), then parameters, then sequence items."""
        index = cls()
        later: list[tuple[str, Any]] = []
        for name, value in namespace.items():
            if name.startswith("__"):
                continue
            if is_tensor(value):
                index.add(name, value)
                index.top_level.append((name, value))
            else:
                later.append((name, value))
        for name, value in later:
            for attr, tensor in _named_parameters(value):
                index.add(f"{name}.{attr}", tensor, cls.PARAMETER)
        for name, value in later:
            if instance_of(value, (list, tuple)) and len(value) <= 10_000:
                for i, item in enumerate(value):
                    if is_tensor(item):
                        index.add(f"{name}[{i}]", item, cls.ITEM)
        return index


def _named_parameters(value: Any) -> list[tuple[str, Any]]:
    """`value.named_parameters()` for an object (not a class or module) that has it; else []."""
    if instance_of(value, (type, ModuleType, FunctionType, MethodType, BuiltinFunctionType)):
        return []
    method = attribute(value, "named_parameters")
    if not callable(method):
        return []
    try:
        return [(str(k), t) for k, t in method() if is_tensor(t)]
    except Exception:  # a user object's method: never let it break the drawing
        return []


class TensorNames:
    """Finds a user-facing name for a tensor (engine's or torch's): a local or global variable, or model.<param>."""

    def __init__(self, module: types.ModuleType | None, frames: list[types.FrameType] = ()):
        self.module = module
        self.frames = list(frames)
        self._table: dict[int, tuple[str, Any]] | None = None
        self._by_array: dict[Any, str] = {}

    def scopes(self) -> list[dict[str, Any]]:
        """The namespaces names come from: the frames' locals, innermost first, then the script's globals."""
        scopes = [f.f_locals for f in reversed(self.frames)]
        if self.module is not None:
            scopes.append(self.module.__dict__)
        return scopes

    def _build(self) -> dict[int, tuple[str, Any]]:
        table: dict[int, tuple[str, Any]] = {}
        for scope in self.scopes():
            for name, value in list(scope.items()):
                if name.startswith("__"):
                    continue
                try:
                    self._add(table, name, value)
                except Exception:  # a user object whose attributes raise: no name from it
                    continue
        return table

    @staticmethod
    def _add(table: dict[int, tuple[str, Any]], name: str, value: Any) -> None:
        if is_tensor(value):
            table.setdefault(id(value), (name, value))
        elif isinstance(value, (list, tuple)) and len(value) <= 64:
            for i, item in enumerate(value):
                if is_tensor(item):
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


def code_path(name: str) -> str:
    """`model.0.weight` (a parameter's name, as `named_parameters` gives it) -> `model[0].weight`, the
    expression that reaches it: a Sequential's or ModuleList's children are items, not attributes."""
    root, *parts = name.split(".")
    return root + "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in parts)


def op_name(node_name: str) -> str:
    """`LogBackward0` -> `log`, for messages about the forward op."""
    base = re.sub(r"Backward\d*$", "", node_name.rsplit("::", 1)[-1])
    return base.lower() or node_name
