"""`autograd.grad(..., is_grads_batched=True)`: a backward per vector of the gradients' batch (torch's
vmap over autograd.grad), handed to the executor, which sits below engine.func, when this loads.

The batch runs as one backward under vmap. Under `create_graph=True` the results must stay
differentiable, which vmap's outputs are not (they carry no graph): the vectors then run one
backward each and their gradients are stacked, as the one batched backward would give them.
"""

from __future__ import annotations

from collections.abc import Callable

from ..autograd.backward import use_vmap
from ..ops.shaping.core import stack
from .vmap import legacy_vmap, running


def map_gradients(run: Callable, grads: list, retain_graph: bool, create_graph: bool) -> list:
    """`run(grads, retain_graph)`'s gradients for each vector along the grads' first dim, stacked."""
    positions = [k for k, g in enumerate(grads) if g is not None]
    unused: list[bool] = []

    def with_vectors(vectors) -> list:
        given = list(grads)
        for k, vector in zip(positions, vectors):
            given[k] = vector
        return given

    def vjp(*vectors):
        found = run(with_vectors(vectors), retain_graph)
        unused[:] = [g is None for g in found]
        return tuple(g for g in found if g is not None)

    if create_graph:
        return _one_by_one(run, with_vectors, [grads[k] for k in positions], retain_graph)
    found = iter(legacy_vmap(vjp)(*(grads[k] for k in positions)))
    return [None if missing else next(found) for missing in unused]


def _one_by_one(run: Callable, with_vectors: Callable, batched: list, retain_graph: bool) -> list:
    sizes = [g.shape[0] for g in batched]
    if any(size != sizes[0] for size in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    rows = [
        run(with_vectors([g[k] for g in batched]), retain_graph or k < sizes[0] - 1) for k in range(sizes[0])
    ]
    return [None if column[0] is None else stack(list(column)) for column in zip(*rows)]


use_vmap(map_gradients, running)
