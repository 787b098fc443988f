"""One side of a diff run once, forward and backward, with its graph recorded: every node's name,
forward line, module, forward values and the gradients that came into it and went out of it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy

from ..graph.walker import walk
from ..libraries import Library, is_tensor
from ..program.modules import recording_modules
from ..program.sites import Location, Sites, node_site, recording
from .capture import Capturing


@dataclass
class NodeRecord:
    """A node of one side's graph, its values copied to numpy."""

    name: str
    site: Location | None
    module: str | None
    outputs: dict[int, numpy.ndarray]
    incoming: list[numpy.ndarray | None] = field(default_factory=list)  # gradients of its outputs
    outgoing: list[numpy.ndarray | None] = field(default_factory=list)  # gradients of its inputs

    def shapes(self) -> dict[int, tuple[int, ...]]:
        """Its outputs' shapes, by output_nr: from the values seen, else from the gradients they got."""
        known = {k: g.shape for k, g in enumerate(self.incoming) if g is not None}
        known.update((k, value.shape) for k, value in self.outputs.items())
        return known


@dataclass
class Recording:
    """A side's run: its nodes inputs first, its output, and the gradient of each named leaf."""

    nodes: list[NodeRecord]
    output: list[numpy.ndarray]
    grads: list[tuple[str, numpy.ndarray | None]]
    dtype: str


@dataclass
class Side:
    """What one side runs: `func(*inputs)`, the leaves named (inputs, then parameters)."""

    func: Callable[..., Any]
    inputs: tuple
    leaves: list[tuple[str, Any]]
    library: Library
    namespace: dict[str, Any] = field(default_factory=dict)  # the file's globals, for module paths
    #: what the side runs inside (storage of its own, widened for a float64 run), if anything
    setting: Callable[[], AbstractContextManager[Any]] | None = None
    #: whether its forward is watched op by op (values, lines, modules): not under torch.compile,
    #: which would trace the watching itself; its graph's nodes are still recorded
    watched: bool = True

    def dtype_label(self) -> str:
        """The dtype of its first floating leaf (float32 when it has none)."""
        floating = [x for _, x in self.leaves if x.dtype.is_floating_point]
        return str(floating[0].dtype).rsplit(".", 1)[-1] if floating else "float32"


def record(
    side: Side, cotangents: Callable[[list[tuple[int, ...]]], list[numpy.ndarray]], sites: Sites
) -> Recording:
    """Run `side` forward, then backward from its outputs with `cotangents(shapes)` (the same on both sides)."""
    with side.setting() if side.setting is not None else nullcontext():
        return _recorded(side, cotangents, sites)


def _recorded(side: Side, cotangents: Callable, sites: Sites) -> Recording:
    lib = importlib.import_module(side.library.module)
    for _, leaf in side.leaves:
        leaf.grad = None
    watched = side.watched
    with (
        side.library.pick(Capturing())(watched) as values,
        recording(watched),
        recording_modules() if watched else nullcontext() as modules,
    ):
        result = side.func(*side.inputs)
    outputs = [t for t in (result if isinstance(result, (tuple, list)) else (result,)) if is_tensor(t)]
    roots = [t.grad_fn for t in outputs if t.grad_fn is not None]
    order = _inputs_first([n for n in walk(roots) if not hasattr(n, "variable")], roots)
    paths = modules.node_paths(order, side.namespace) if modules is not None else {}
    host = values.host
    nodes = [
        NodeRecord(type(node).__name__, sites.location(node_site(node)), paths.get(i), values.of(node))
        for i, node in enumerate(order)
    ]
    handles = [node.register_hook(_gradients_into(record_)) for node, record_ in zip(order, nodes)]
    try:
        chosen = cotangents([tuple(t.shape) for t in outputs])
        wanted = [(t, c) for t, c in zip(outputs, chosen) if t.requires_grad]
        if wanted:
            grads = [lib.tensor(c, dtype=t.dtype, device=t.device) for t, c in wanted]
            lib.autograd.backward([t for t, _ in wanted], grads)
    finally:
        for handle in handles:
            handle.remove()
    leaf_grads = [(name, None if leaf.grad is None else host(leaf.grad)) for name, leaf in side.leaves]
    dtype = str(outputs[0].dtype).rsplit(".", 1)[-1] if outputs else "float64"
    return Recording(nodes, [host(t) for t in outputs], leaf_grads, dtype)


def _gradients_into(node: NodeRecord) -> Callable:
    def hook(grad_inputs: tuple, grad_outputs: tuple) -> None:
        node.outgoing = [_copied(g) for g in grad_inputs]
        node.incoming = [_copied(g) for g in grad_outputs]

    return hook


def _copied(grad: Any) -> numpy.ndarray | None:
    """A gradient a hook was given (a tensor, or the engine's raw array) as numpy values of its own."""
    if grad is None:
        return None
    if not hasattr(grad, "detach"):
        return numpy.array(grad.get() if hasattr(grad, "get") else grad)
    data = grad.detach().cpu()
    if str(data.dtype).endswith("bfloat16"):
        data = data.float()
    return numpy.array(data.numpy())


def _inputs_first(nodes: list[Any], roots: list[Any]) -> list[Any]:
    """The nodes in topological order, inputs first: each after every node it reads, ties by the
    order its consumers name them (the same graph gives the same order on both sides)."""
    keep = {id(n) for n in nodes}
    order: list[Any] = []
    done: set[int] = set()
    for root in roots:
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in done:
                continue
            if expanded:
                done.add(id(node))
                order.append(node)
                continue
            stack.append((node, True))
            for nxt, _ in reversed(node.next_functions):
                if nxt is not None and id(nxt) in keep and id(nxt) not in done:
                    stack.append((nxt, False))
    return order
