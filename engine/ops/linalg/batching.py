"""Batching rules of the linalg rows (ops/batching.py gathers them): LAPACK's kernels take a stack of
matrices, so a batch of examples is one more leading dim."""

from __future__ import annotations

from collections.abc import Callable

import numpy

from ..batch_dims import aligned, all_batched


def _stacked(op, datas, batched, attrs, shape):
    """The row's own forward on every input given the batch (shared ones broadcast to it); an output
    left empty (svd's U without compute_uv) stays empty for each example."""
    size = next(d.shape[0] for d, b in zip(datas, batched) if b)
    out = op.forward(numpy, *all_batched(datas, batched), *attrs)
    if isinstance(out, tuple):
        return tuple(numpy.zeros((size, 0), o.dtype) if o.shape == (0,) else o for o in out)
    return out


def _solve(op, datas, batched, attrs, shape):
    """linalg.solve: A's and B's stacks of matrices broadcast as each example's do (B a stack of
    vectors when `vector`), with the batch in front of both."""
    a, b = datas
    rank_a = a.ndim - batched[0]
    rank_b = b.ndim - batched[1]
    stack = max(rank_a - 2, rank_b - (1 if attrs[1] else 2))
    a = aligned(a, stack + 2) if batched[0] else a
    b = aligned(b, stack + (1 if attrs[1] else 2)) if batched[1] else b
    return op.forward(numpy, a, b, *attrs)


_STACKED = (
    "LinalgDetBackward0 LinalgInvExBackward0 LinalgSlogdetBackward0 "
    "LinalgCholeskyExBackward0 CholeskyBackward0 LinalgQrBackward0 LinalgEighBackward0 LinalgSvdBackward0"
).split()

RULES: dict[str, Callable] = {**dict.fromkeys(_STACKED, _stacked), "LinalgSolveExBackward0": _solve}
