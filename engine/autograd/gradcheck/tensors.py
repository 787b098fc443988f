"""The tensor library a check runs on: the handful of operations the algorithm needs.

gradcheck's algorithm (numerical.py, analytical.py, compare.py, backward_checks.py) is
written once against `Tensors`. `EngineTensors` is the engine's; a caller can pass another
implementation of the same methods (gradcli passes one for torch tensors) to
`check_gradients(..., tensors=...)`. Attributes both libraries share (`requires_grad`,
`dtype.is_floating_point`, `dtype` and `device` equality, `shape`) are read directly.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy

from ... import backend
from ...tensor import Tensor, wrap
from .. import forward_ad, grad_mode
from ..backward import edge_of
from ..backward import grad as autograd_grad
from ..backward import run as run_graph
from .random_calls import RandomCall, global_random_state, random_call, set_global_random_state


class Tensors:
    """What a check needs of a tensor library. Every method is required."""

    #: the library's name, for messages ("engine", "torch")
    name = "?"

    def is_tensor(self, value: Any) -> bool:
        raise NotImplementedError

    def storage(self, t: Any) -> Any:
        """A writable numpy-like array over t's own memory: writes reach t, its views and the
        graph of a forward already run, and bump no version counter (for perturbing inputs)."""
        raise NotImplementedError

    def array_like(self, values: numpy.ndarray, storage: Any) -> Any:
        """`values` as an array of storage's kind (and device), to assign into it."""
        raise NotImplementedError

    def values(self, t: Any) -> numpy.ndarray:
        """t's values as a numpy array on the host (a view where possible: do not write)."""
        raise NotImplementedError

    def shape(self, t: Any) -> tuple:
        return tuple(t.shape)

    def numel(self, t: Any) -> int:
        raise NotImplementedError

    def dtype_name(self, t: Any) -> str:
        """'float32', 'float64', ... (without the library's prefix)."""
        raise NotImplementedError

    def tensor(self, values: numpy.ndarray, like: Any, *, requires_grad: bool = False) -> Any:
        """A new leaf holding `values` (reshaped to like's shape) in like's dtype, on its device."""
        raise NotImplementedError

    def float64_leaf(self, t: Any) -> Any:
        """A float64 copy of t as a fresh leaf with t's requires_grad."""
        raise NotImplementedError

    def grad(
        self, outputs: Sequence, inputs: Sequence, grad_outputs: Sequence, *, create_graph: bool = False
    ) -> tuple:
        """autograd.grad(..., retain_graph=True, allow_unused=True)."""
        raise NotImplementedError

    def grad_with_undefined(self, outputs: Sequence, grad_outputs: Sequence, inputs: Sequence) -> tuple:
        """The gradients of `inputs` from a backward where a None in `grad_outputs` is an
        undefined gradient (nodes get what the library's engine gives them for one)."""
        raise NotImplementedError

    def no_grad(self) -> AbstractContextManager:
        raise NotImplementedError

    def dual_level(self) -> AbstractContextManager:
        """The library's forward_ad.dual_level()."""
        raise NotImplementedError

    def make_dual(self, t: Any, tangent: Any) -> Any:
        """A dual tensor: t's values, detached, with `tangent` at the current level."""
        raise NotImplementedError

    def tangent(self, t: Any) -> Any:
        """t's tangent at the current level, or None (forward_ad.unpack_dual(t).tangent)."""
        raise NotImplementedError

    def enable_grad(self) -> AbstractContextManager:
        raise NotImplementedError

    def text(self, values: numpy.ndarray, like: Any) -> str:
        """repr of `values` as a tensor in like's dtype on like's device (torch's messages)."""
        raise NotImplementedError

    def size_text(self, shape: tuple) -> str:
        """A shape as the library prints it ('torch.Size([2, 3])')."""
        raise NotImplementedError

    def random_state(self) -> Any:
        """The library's random state with numpy's and Python's global ones (None where it cannot be
        saved), so a forward can be run again on the same draws (determinism.py)."""
        raise NotImplementedError

    def set_random_state(self, state: Any) -> None:
        raise NotImplementedError

    def watching_random(self) -> AbstractContextManager[list[RandomCall]]:
        """Within it, every random draw of the library is appended to the list it yields."""
        raise NotImplementedError


class EngineTensors(Tensors):
    """The engine's tensors: their arrays (numpy or cupy) are perturbed directly."""

    name = "engine"

    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, Tensor)

    def storage(self, t: Tensor) -> Any:
        return t._data

    def array_like(self, values: numpy.ndarray, storage: Any) -> Any:
        return backend.xp_of(storage).asarray(values)

    def values(self, t: Tensor) -> numpy.ndarray:
        array = t._data
        return array if array.__class__ is numpy.ndarray else backend.to_device(array, backend.CPU)

    def shape(self, t: Tensor) -> tuple:
        return t._data.shape

    def numel(self, t: Tensor) -> int:
        return t._data.size

    def dtype_name(self, t: Tensor) -> str:
        return t.dtype.name

    def tensor(self, values: numpy.ndarray, like: Tensor, *, requires_grad: bool = False) -> Tensor:
        array = numpy.asarray(values).reshape(like._data.shape).astype(like._data.dtype, copy=False)
        out = wrap(backend.xp_of(like._data).asarray(array))
        if requires_grad:
            out.requires_grad_(True)
        return out

    def float64_leaf(self, t: Tensor) -> Tensor:
        copy = wrap(backend.xp_of(t._data).array(t._data, dtype=numpy.float64, copy=True))
        copy.requires_grad_(t.requires_grad)
        return copy

    def grad(
        self, outputs: Sequence, inputs: Sequence, grad_outputs: Sequence, *, create_graph: bool = False
    ) -> tuple:
        return autograd_grad(
            outputs, inputs, grad_outputs, retain_graph=True, create_graph=create_graph, allow_unused=True
        )

    def grad_with_undefined(self, outputs: Sequence, grad_outputs: Sequence, inputs: Sequence) -> tuple:
        grads = [None if g is None else g._data for g in grad_outputs]
        return tuple(
            run_graph([edge_of(o) for o in outputs], grads, False, False, inputs=tuple(inputs), capture=True)
        )

    def no_grad(self) -> AbstractContextManager:
        return grad_mode.no_grad()

    def enable_grad(self) -> AbstractContextManager:
        return grad_mode.enable_grad()

    def dual_level(self) -> AbstractContextManager:
        return forward_ad.dual_level()

    def make_dual(self, t: Tensor, tangent: Tensor) -> Tensor:
        return forward_ad.make_dual(t.detach(), tangent)

    def tangent(self, t: Tensor) -> Tensor | None:
        return forward_ad.unpack_dual(t).tangent

    def text(self, values: numpy.ndarray, like: Tensor) -> str:
        host = numpy.ascontiguousarray(values).astype(like._data.dtype)
        return repr(wrap(backend.to_device(host, like.device)))

    def size_text(self, shape: tuple) -> str:
        return repr(wrap(numpy.empty(shape)).shape)

    def random_state(self) -> Any:
        try:
            engine_state = backend.rng_snapshot()
        except Exception:  # a generator that cannot be copied (a GPU one)
            return None
        return engine_state, global_random_state()

    def set_random_state(self, state: Any) -> None:
        engine_state, global_state = state
        backend.rng_restore(engine_state)
        set_global_random_state(global_state)

    @contextmanager
    def watching_random(self) -> Iterator[list[RandomCall]]:
        calls: list[RandomCall] = []

        def watch(dev: Any) -> None:
            calls.append(random_call(sys._getframe(2), None))

        watchers = backend.draws.watchers
        watchers.append(watch)
        try:
            yield calls
        finally:
            watchers.remove(watch)


ENGINE = EngineTensors()
