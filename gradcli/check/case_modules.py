"""The tensors of nn.Modules, and float64 storage for the tensors a case reads while it is checked.

check_gradients upcasts a case's inputs to float64 by copying them, but a module reads its own
parameter and buffer objects, and a function its own globals: a float32 one then meets float64
inputs ("expected m1 and m2 to have the same dtype"), a false failure. So for the check, every
tensor the case reaches (reach.py: its modules' parameters and buffers, globals, closures,
defaults, attributes) gets float64 storage in place, as `Module.double()` would, and everything
is put back exactly afterwards, so the check leaves no trace (running statistics included).
"""

from __future__ import annotations

import sys
from typing import Any

from ..libraries import TORCH
from ..program.probing import instance_of


def is_module(value: Any) -> bool:
    """An engine.nn.Module or a torch.nn.Module (torch only when the user's code imported it)."""
    for library in ("engine.nn", "torch.nn"):
        nn = sys.modules.get(library)
        if nn is not None and instance_of(value, nn.Module):
            return True
    return False


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
    nor a forward's in-place updates (BatchNorm's running statistics) reach the user's objects;
    identity, version counter and autograd history are never touched. `upcast` says whether a
    lower-precision floating tensor was widened. With `widen=False` the private copies keep
    their dtypes (a check in the case's own dtype).

    torch forgets a leaf's place in graphs already built when `.data` changes its dtype (the
    grad accumulator is reset), so this is for before a graph is built, or for tensors no
    gradient is asked of.
    """

    def __init__(self, tensors: list[Any], *, widen: bool = True, on_cpu: bool = False):
        self.tensors = list({id(t): t for t in tensors}.values())
        self.widen = widen
        self.on_cpu = on_cpu  # the private copies on the CPU (gradcli diff --against cpu)
        self.saved: list[tuple[Any, Any, Any]] = []
        self.upcast = False

    def __enter__(self) -> float64_storage:
        for t in self.tensors:
            widened = self.widen and t.dtype.is_floating_point and t.dtype.itemsize < 8
            if TORCH.is_tensor(t):
                saved = (t, t.data, t.grad if t.is_leaf else None)
                try:
                    storage = _torch_storage(t, widened, self.on_cpu)
                    if t.is_leaf:
                        t.grad = None  # a float32 .grad would not fit the float64 data
                    t.data = storage
                except RuntimeError:  # a tensor torch will not let .data replace: left as it is
                    if t.is_leaf:
                        t.grad = saved[2]
                    continue
                self.saved.append(saved)
            else:
                self.saved.append((t, t._data, t._grad))
                t._grad = None
                t._data = _engine_storage(t._data, widened, self.on_cpu)
            self.upcast = self.upcast or widened
        return self

    def __exit__(self, *exc: object) -> None:
        for t, data, grad in reversed(self.saved):
            if TORCH.is_tensor(t):
                if t.is_leaf:
                    t.grad = None
                t.data = data
                if t.is_leaf:
                    t.grad = grad
            else:
                t._data = data
                t._grad = grad
        self.saved.clear()


def _torch_storage(t: Any, widened: bool, on_cpu: bool) -> Any:
    torch = sys.modules["torch"]
    device = "cpu" if on_cpu else t.device
    return t.data.to(device=device, dtype=torch.float64 if widened else t.dtype, copy=True)


def _engine_storage(array: Any, widened: bool, on_cpu: bool) -> Any:
    if on_cpu:
        from engine import backend

        array = backend.to_numpy(array)
    return array.astype("float64" if widened else array.dtype)  # always a copy (bfloat16's tag kept)
