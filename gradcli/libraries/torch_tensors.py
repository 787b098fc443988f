"""gradcheck's `Tensors` for torch: the engine's one algorithm, run on a torch file's tensors.

Imported only for a case whose tensors are torch's, so only after the user's file imported
torch (gradcli never imports it on its own). Inputs are perturbed through a view of their
memory that torch's version counters do not see, as torch's own gradcheck does with
`x.data`: a numpy view on the CPU, a CuPy view on CUDA when CuPy is installed, else (and
for bfloat16, which numpy lacks) `x.data` itself behind a numpy-like surface (`TorchArray`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from engine.autograd.gradcheck.random_calls import RandomCall, random_call
from engine.autograd.gradcheck.tensors import Tensors

from .random_state import take_random_state


class TorchTensors(Tensors):
    """torch.Tensor for the checker (see engine/autograd/gradcheck/tensors.py)."""

    name = "torch"

    def __init__(self, *, storage: str = "auto"):
        #: how inputs are perturbed: "auto" (numpy on the CPU, CuPy or TorchArray on CUDA) or
        #: "torch" (TorchArray everywhere, which tests use to cover the path of a GPU without CuPy)
        self.storage_kind = storage

    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, torch.Tensor)

    def storage(self, t: torch.Tensor) -> Any:
        if self.storage_kind == "torch" or t.dtype == torch.bfloat16:  # numpy has no bfloat16
            return TorchArray(t.data)
        if t.device.type == "cpu":
            return t.detach().numpy()
        cupy = _cupy()
        return cupy.asarray(t.detach()) if cupy is not None else TorchArray(t.data)

    def array_like(self, values: numpy.ndarray, storage: Any) -> Any:
        if isinstance(storage, numpy.ndarray):
            return values
        if isinstance(storage, TorchArray):
            return TorchArray(torch.as_tensor(values, dtype=storage.data.dtype, device=storage.data.device))
        return _cupy().asarray(values)

    def values(self, t: torch.Tensor) -> numpy.ndarray:
        host = t.detach().cpu().resolve_conj().resolve_neg()
        if host.dtype == torch.bfloat16:  # numpy has no bfloat16
            host = host.double()
        return host.numpy()

    def numel(self, t: torch.Tensor) -> int:
        return t.numel()

    def dtype_name(self, t: torch.Tensor) -> str:
        return str(t.dtype).removeprefix("torch.")

    def tensor(
        self, values: numpy.ndarray, like: torch.Tensor, *, requires_grad: bool = False
    ) -> torch.Tensor:
        array = numpy.asarray(values).reshape(tuple(like.shape))
        out = torch.as_tensor(array, device=like.device).to(like.dtype)
        return out.requires_grad_(True) if requires_grad else out

    def float64_leaf(self, t: torch.Tensor) -> torch.Tensor:
        return t.detach().to(torch.float64, copy=True).requires_grad_(t.requires_grad)

    def grad(
        self, outputs: Sequence, inputs: Sequence, grad_outputs: Sequence, *, create_graph: bool = False
    ) -> tuple:
        return torch.autograd.grad(
            list(outputs),
            list(inputs),
            list(grad_outputs),
            retain_graph=True,
            create_graph=create_graph,
            allow_unused=True,
        )

    def grad_with_undefined(self, outputs: Sequence, grad_outputs: Sequence, inputs: Sequence) -> tuple:
        """As torch's gradcheck: an output whose gradient is undefined goes through
        `torch._C._functions.UndefinedGrad`, which hands its backward an undefined gradient."""
        undefined = torch._C._functions.UndefinedGrad()
        roots = [undefined(o) if g is None else o for o, g in zip(outputs, grad_outputs)]
        zeros = [torch.zeros_like(o) for o in roots]
        return torch.autograd.grad(roots, list(inputs), zeros, allow_unused=True)

    def no_grad(self) -> AbstractContextManager:
        return torch.no_grad()

    def dual_level(self) -> AbstractContextManager:
        return torch.autograd.forward_ad.dual_level()

    def make_dual(self, t: torch.Tensor, tangent: torch.Tensor) -> torch.Tensor:
        return torch.autograd.forward_ad.make_dual(t.detach(), tangent)

    def tangent(self, t: torch.Tensor) -> torch.Tensor | None:
        return torch.autograd.forward_ad.unpack_dual(t).tangent

    def enable_grad(self) -> AbstractContextManager:
        return torch.enable_grad()

    def text(self, values: numpy.ndarray, like: torch.Tensor) -> str:
        array = numpy.ascontiguousarray(values)
        return repr(torch.as_tensor(array, device=like.device).to(like.dtype))

    def size_text(self, shape: tuple) -> str:
        return repr(torch.Size(shape))

    def random_state(self) -> Any:
        return take_random_state()  # torch's, numpy's, Python's and the engine's generators

    def set_random_state(self, state: Any) -> None:
        state()

    @contextmanager
    def watching_random(self) -> Iterator[list[RandomCall]]:
        """Random draws seen below autograd, as aten ops tagged `nondeterministic_seeded`."""
        calls: list[RandomCall] = []
        with _RandomOps(calls):
            yield calls


class TorchArray:
    """`x.data` with the part of numpy's array surface the checker's perturbation uses.

    `x.data` shares x's memory but not its version counter, so writing through it leaves
    the graph of the reference forward valid (torch's gradcheck perturbs the same way)."""

    def __init__(self, data: torch.Tensor):
        self.data = data

    @property
    def size(self) -> int:
        return self.data.numel()

    @property
    def shape(self) -> tuple:
        return tuple(self.data.shape)

    @property
    def strides(self) -> tuple:
        return tuple(s * self.data.element_size() for s in self.data.stride())

    @property
    def flags(self) -> Any:
        return _Flags(self.data.is_contiguous())

    def copy(self) -> TorchArray:
        return TorchArray(self.data.clone())

    def reshape(self, *shape: Any) -> TorchArray:
        return TorchArray(self.data.reshape(*shape))

    def __getitem__(self, index: Any) -> torch.Tensor:
        return self.data[index]

    def __setitem__(self, index: Any, value: Any) -> None:
        self.data[index] = value.data if isinstance(value, TorchArray) else value

    def __sub__(self, other: TorchArray) -> TorchArray:
        return TorchArray(self.data - other.data)

    def __add__(self, other: TorchArray) -> TorchArray:
        return TorchArray(self.data + other.data)


class _Flags:
    def __init__(self, c_contiguous: bool):
        self.c_contiguous = c_contiguous


def _cupy() -> Any | None:
    try:
        import cupy
    except ImportError:
        return None
    return cupy


class _RandomOps(TorchDispatchMode):
    """Records each aten op that draws from a generator (dropout, rand*, bernoulli, normal_ ...)."""

    def __init__(self, calls: list[RandomCall]):
        super().__init__()
        self.calls = calls

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if torch.Tag.nondeterministic_seeded in func.tags:
            self.calls.append(random_call(sys._getframe(1), func.overloadpacket.__name__))
        return func(*args, **(kwargs or {}))
