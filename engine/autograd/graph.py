"""engine.autograd.graph: the Node type under PyTorch's module path, and hooks over several tensors."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Literal

from .backward import current_graph_task_id, edge_of, will_engine_execute_node
from .hooks import RemovableHandle
from .node import Node


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


__all__ = ["Node", "register_multi_grad_hook"]
