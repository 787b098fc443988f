"""The nn.Modules a case uses, and float64 storage for their tensors while the case is checked.

check_gradients upcasts a case's inputs to float64 by copying them, but a module reads its own
parameter and buffer objects: a float32 module then meets float64 inputs ("expected m1 and m2
to have the same dtype"), a false failure. So for the check, every tensor of the modules a
case uses (given in `modules=`, the `model`, or named by the case function or the functions
it calls) gets float64 storage in place, as `Module.double()` would, and everything is put
back exactly afterwards, so the check leaves no trace (running statistics included).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from types import CodeType, FunctionType
from typing import Any

from .frameworks import is_torch_tensor
from .probing import attribute, instance_of


def is_module(value: Any) -> bool:
    """An engine.nn.Module or a torch.nn.Module (torch only when the user's code imported it)."""
    for library in ("engine.nn", "torch.nn"):
        nn = sys.modules.get(library)
        if nn is not None and instance_of(value, nn.Module):
            return True
    return False


def modules_used_by(func: Callable) -> list[Any]:
    """The modules `func` reads from its globals or closure, and from the functions it calls.

    Found by name: the global names its code (nested lambdas and comprehensions included)
    loads, and its closure cells; functions of the same file are followed the same way.
    """
    found: dict[int, Any] = {}
    pending, seen = [func], set()
    while pending:
        current = pending.pop()
        current = attribute(current, "__func__", current)  # a bound method: its function
        code = attribute(current, "__code__")
        if code is None or code in seen:
            continue
        seen.add(code)
        scope = getattr(current, "__globals__", {})
        values = [scope[name] for name in _global_names(code) if name in scope]
        values += _closure_values(current)
        for value in values:
            if is_module(value):
                found.setdefault(id(value), value)
            elif instance_of(value, FunctionType) and value.__globals__ is scope:
                pending.append(value)
    return list(found.values())


def _global_names(code: CodeType) -> Iterator[str]:
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _global_names(const)


def _closure_values(func: Callable) -> list[Any]:
    values = []
    for cell in getattr(func, "__closure__", None) or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # a cell not yet assigned
            pass
    return values


def module_tensors(modules: list[Any]) -> list[Any]:
    """Every parameter and buffer of `modules` (submodules included), each once."""
    tensors: dict[int, Any] = {}
    for module in modules:
        for tensor in (*module.parameters(), *module.buffers()):
            tensors.setdefault(id(tensor), tensor)
    return list(tensors.values())


class float64_storage:
    """For the block, `tensors` get private storage, float64 where they are floating point.

    engine: the array in `_data` is swapped; torch: `.data`, as `Module.double()` does. Each
    tensor's own storage and `.grad` are put back on exit, so neither the check's perturbations
    nor a forward's in-place updates (BatchNorm's running statistics) reach the user's objects.
    `upcast` says whether a lower-precision floating tensor was widened.
    """

    def __init__(self, tensors: list[Any]):
        self.tensors = list({id(t): t for t in tensors}.values())
        self.saved: list[tuple[Any, Any, Any]] = []
        self.upcast = False

    def __enter__(self) -> float64_storage:
        for t in self.tensors:
            floating = t.dtype.is_floating_point
            self.upcast = self.upcast or (floating and t.dtype.itemsize < 8)
            if is_torch_tensor(t):
                torch = sys.modules["torch"]
                self.saved.append((t, t.data, t.grad))
                t.grad = None  # a float32 .grad would not fit the float64 data
                t.data = t.data.to(dtype=torch.float64 if floating else t.dtype, copy=True)
            else:
                self.saved.append((t, t._data, t._grad))
                t._data = t._data.astype("float64" if floating else t._data.dtype)  # always a copy
        return self

    def __exit__(self, *exc: object) -> None:
        for t, data, grad in self.saved:
            if is_torch_tensor(t):
                t.grad = None
                t.data = data
                t.grad = grad
            else:
                t._data = data
                t._grad = grad
        self.saved.clear()
