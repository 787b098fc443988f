"""The forward value behind each node of a recorded graph, for both libraries.

A node does not keep its output, so the values are taken as the forward runs: each op's output
(the engine shows its rows to an anomaly `Observer`; torch's calls pass a `TorchFunctionMode`),
and each op's tensor arguments, which hold the outputs of the ops no hook saw (a custom
Function's, or the inner ops of a torch call). Values are copied to numpy as they are made, so an
in-place change later cannot alter them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy


class Values:
    """The forward values seen, by node and output_nr (the nodes kept alive, so ids stay theirs)."""

    def __init__(self, host: Callable[[Any], numpy.ndarray]) -> None:
        self.host = host
        self.by_node: dict[int, dict[int, numpy.ndarray]] = {}
        self.nodes: list[Any] = []

    def see(self, node: Any, output_nr: int, tensor: Any) -> None:
        outputs = self.by_node.get(id(node))
        if outputs is None:
            outputs = self.by_node[id(node)] = {}
            self.nodes.append(node)
        if output_nr not in outputs and tensor.dtype.is_floating_point:
            outputs[output_nr] = self.host(tensor)

    def of(self, node: Any) -> dict[int, numpy.ndarray]:
        return self.by_node.get(id(node), {})


class Capturing:
    """The capture of each library (`Library.pick`): a context manager yielding `Values`; with
    `watch=False` nothing is installed (code under torch.compile would trace the mode) and the
    `Values` stay empty, for their `host` alone."""

    def engine(self) -> Callable[[bool], AbstractContextManager[Values]]:
        return _engine_values

    def torch(self) -> Callable[[bool], AbstractContextManager[Values]]:
        return _torch_values


@contextmanager
def _engine_values(watch: bool = True) -> Iterator[Values]:
    from engine import Tensor, backend
    from engine.autograd import anomaly

    values = Values(lambda t: numpy.array(backend.to_numpy(t._data)))
    if not watch:
        yield values
        return
    made: dict[int, int] = {}  # id(node) -> outputs seen (a row of several outputs shows each)

    class Seeing(anomaly.Observer):
        def forward(self, node, inputs: tuple, out, trace: list) -> None:
            for tensor in inputs:
                if isinstance(tensor, Tensor) and tensor.grad_fn is not None:
                    values.see(tensor.grad_fn, tensor._output_nr, tensor)
            if isinstance(out, Tensor):
                index = made.get(id(node), 0)
                made[id(node)] = index + 1
                values.see(node, index, out)

    previous = anomaly.set_observer(Seeing())
    try:
        with anomaly.record_sites():
            yield values
    finally:
        anomaly.set_observer(previous)


@contextmanager
def _torch_values(watch: bool = True) -> Iterator[Values]:
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._pytree import tree_leaves

    def host(t: Any) -> numpy.ndarray:
        data = t.detach().cpu()
        return (data.float() if data.dtype == torch.bfloat16 else data).numpy().copy()

    values = Values(host)
    if not watch:
        yield values
        return
    tensor = torch.Tensor

    class Seeing(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            for t in tree_leaves((args, kwargs)):
                if isinstance(t, tensor) and t.grad_fn is not None:
                    values.see(t.grad_fn, t.output_nr, t)
            out = func(*args, **(kwargs or {}))
            for t in tree_leaves(out):
                if isinstance(t, tensor) and t.grad_fn is not None:
                    values.see(t.grad_fn, t.output_nr, t)
            return out

    with Seeing():
        yield values
