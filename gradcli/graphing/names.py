"""The user's names for tensors: top-level variables, `obj.param`, case arguments, `seq[i]`.

Engine and torch tensors alike (`torch.nn.Module` parameters are named `model.fc1.weight`).
"""

from __future__ import annotations

from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType
from typing import Any

from ..frameworks import is_engine_tensor, is_torch_tensor
from ..probing import attribute, instance_of


def is_any_tensor(value: Any) -> bool:
    """An engine.Tensor or (when the user's file imported torch) a torch.Tensor."""
    return is_engine_tensor(value) or is_torch_tensor(value)


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
            if is_any_tensor(value):
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
                    if is_any_tensor(item):
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
        return [(str(k), t) for k, t in method() if is_any_tensor(t)]
    except Exception:  # a user object's method: never let it break the drawing
        return []
