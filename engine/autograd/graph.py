"""engine.autograd.graph: the Node type under PyTorch's module path, saved-tensor hooks, and hooks
over several tensors."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from ..ops.creation import empty
from ..tensor import Tensor
from . import saved_hooks
from .backward import current_graph_task_id, edge_of, will_engine_execute_node
from .hooks import RemovableHandle
from .node import Node
from .thread_local import this_thread


class saved_tensors_hooks:  # noqa: N801 -- torch's name
    """Inside, every tensor a node saves goes through `pack_hook` when saved and `unpack_hook` when
    read back (backward, `_saved_*`, `saved_tensors`); the innermost registration applies."""

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        saved_hooks.push(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        this_thread.saved_hooks.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 -- torch's name
    """Saved tensors kept on the CPU and moved back to their device when read: on the CPU, the
    tensor itself (no copy; `pin_memory=True` copies, as torch's does, pinning nothing here)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple:
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            return (tensor.device, empty(tensor.shape, dtype=tensor.dtype).copy_(tensor))

        def unpack_from_cpu(packed: tuple) -> Tensor:
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Registering saved-tensor hooks inside raises `error_message`; entering it with hooks
    registered does too, as torch's."""
    previous = this_thread.hooks_disabled
    try:
        saved_hooks.disable(error_message)
        yield
    finally:
        this_thread.hooks_disabled = previous


class _MultiHandle(RemovableHandle):
    """One handle for a hook registered on several tensors: `remove()` removes it from each."""

    __slots__ = ("handles",)

    def __init__(self, handles: tuple):
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def _task_id() -> int:
    task = current_graph_task_id()
    if task == -1:
        raise AssertionError("expected this hook to be called inside a backward call")
    return task


def register_multi_grad_hook(
    tensors: Sequence, fn: Callable, *, mode: Literal["all", "any"] = "all"
) -> RemovableHandle:
    """Call `fn` once per backward run over `tensors`, as torch's: "all", once every tensor the run
    reaches has its gradient (a list in order, None for those without); "any", on the first."""
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    lock = threading.Lock()
    if mode == "any":
        ran: set = set()

        def first_only(grad) -> None:
            task = _task_id()
            with lock:
                if task in ran:
                    return
                ran.add(task)
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(first_only) for t in tensors if t.requires_grad))

    grad_fns = [edge_of(t)[0] for t in tensors]
    seen: dict = {}  # task id -> how many of the tensors' hooks ran
    buffers: dict = {}  # task id -> the gradients so far
    expected: dict = {}  # task id -> how many of the tensors the run reaches

    def collector(index: int) -> Callable:
        def collect(grad) -> None:
            task = _task_id()
            with lock:
                count = seen.get(task, 0)
                seen[task] = count + 1
                if count == 0:
                    expected[task] = sum(
                        fn_ is not None and will_engine_execute_node(fn_) for fn_ in grad_fns
                    )
                    buffers[task] = [None] * len(grad_fns)
            buffers[task][index] = grad
            if count == expected[task] - 1:
                grads = buffers.pop(task)
                del seen[task], expected[task]
                fn(grads)

        return collect

    return _MultiHandle(tuple(t.register_hook(collector(i)) for i, t in enumerate(tensors)))


__all__ = [
    "Node",
    "disable_saved_tensors_hooks",
    "register_multi_grad_hook",
    "save_on_cpu",
    "saved_tensors_hooks",
]
