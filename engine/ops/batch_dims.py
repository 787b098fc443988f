"""What every family's batching rules share: a batch in front of an array, and where its dims go.

A rule (ops/batching.py) gets arrays of which some carry a leading batch dimension; these helpers
line them up with the unbatched ones, move an unbatched op's dims and keys past the batch, and
reduce each example on its own.
"""

from __future__ import annotations

import numpy


class Unbatchable(Exception):
    """A row (or a use of it) has no batching rule: evaluate the perturbations one by one."""


def batch_size(datas, batched) -> int:
    return next(d.shape[0] for d, b in zip(datas, batched) if b)


def aligned(x, rank: int):
    """A batched array with singleton dims after the batch, so it broadcasts as its unbatched self would."""
    missing = rank - (x.ndim - 1)
    return x.reshape((x.shape[0],) + (1,) * missing + x.shape[1:]) if missing > 0 else x


def all_batched(datas, batched) -> list:
    """Every array given the batch: the shared ones broadcast (read-only views) to it."""
    size = batch_size(datas, batched)
    return [d if b else numpy.broadcast_to(d, (size, *d.shape)) for d, b in zip(datas, batched)]


def shifted(dims, rank: int) -> tuple:
    return tuple(d % rank + 1 for d in dims) if rank else ()


def shift_dim(dim, rank: int):
    """A dims attr of an unbatched op (an int, a tuple, None or () for all) as dims of the batched array."""
    if dim is None or dim == ():
        return tuple(range(1, rank + 1))
    if isinstance(dim, int):
        return dim % max(rank, 1) + 1
    return tuple(d % max(rank, 1) + 1 for d in dim)


def batched_key(key) -> tuple:
    """An indexing key of an unbatched array as the key of the batched one: the batch dim kept in front.

    Index arrays that are not side by side would put their dims before the batch (numpy moves them
    first), so such a key has no batched form here.
    """
    key = key if isinstance(key, tuple) else (key,)
    advanced = [
        k for k, part in enumerate(key) if not (part is None or part is Ellipsis or isinstance(part, slice))
    ]
    has_arrays = any(hasattr(part, "ndim") or isinstance(part, list) for part in key)
    if has_arrays and advanced[-1] - advanced[0] + 1 != len(advanced):
        raise Unbatchable("an index key whose arrays are apart")
    return (slice(None), *key)


def reduced(loss, reduction: str):
    """A loss of each example reduced on its own ("mean", "sum" or "none")."""
    if reduction == "none":
        return loss
    axes = tuple(range(1, loss.ndim))
    return loss.mean(axis=axes) if reduction == "mean" else loss.sum(axis=axes)


class BatchedAttr:
    """An attr array that carries the batch in front (a mask computed from batched values, inside vmap):
    only rules that say they take one (`takes_batched_attrs`) get it; the others are Unbatchable."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array


def takes_batched_attrs(rule):
    rule.takes_batched_attrs = True
    return rule
