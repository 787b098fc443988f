"""Batching rules of the shaping rows (ops/batching.py gathers them): indexing by a shared key,
scatters into a batch, and views whose dims move past the batch."""

from __future__ import annotations

from collections.abc import Callable

import numpy

from ..batch_dims import Unbatchable, aligned, batch_size, batched_key
from . import kernels as K


def _key_attr(op, attrs, name: str):
    return attrs[op.node.attr_names.index(name)]


def _picked_at(name: str) -> Callable:
    """A row that reads `self[key]` (the key an attr, from an index every example shares)."""

    def rule(op, datas, batched, attrs, shape):
        x = datas[0]
        if op.node.__name__ == "MaskedSelectBackward0":  # self[mask] of self broadcast with the mask
            broadcast = _key_attr(op, attrs, "shape")
            x = numpy.broadcast_to(aligned(x, len(broadcast)), (x.shape[0], *broadcast))
        elif x.ndim == 1:  # a 0-dim example is addressed as one element
            x = x.reshape(-1, 1)
        try:
            key = batched_key(_key_attr(op, attrs, name))
        except Unbatchable:
            return _example_by_example(op, datas, attrs)
        return x[key]

    return rule


def _example_by_example(op, datas, attrs):
    """The row on each example of its one input, stacked: for a key whose index arrays are apart,
    which numpy would put before a batch dim in front."""
    return numpy.stack([op.forward(numpy, example, *attrs) for example in datas[0]])


def _take(op, datas, batched, attrs, shape):
    x = datas[0]
    return x.reshape(x.shape[0], -1)[:, attrs[1]]


def _scattered(values: Callable, reduce: str | None) -> Callable:
    """A row that writes `values(op, datas, batched, attrs)` at its key into a copy of self."""

    def rule(op, datas, batched, attrs, shape):
        if not shape:  # a 0-dim self is addressed as one element
            raise Unbatchable(op.node.__name__)
        size = batch_size(datas, batched)
        x = datas[0] if batched[0] else numpy.broadcast_to(datas[0], (size, *datas[0].shape))
        key = batched_key(_key_attr(op, attrs, "key"))
        written = values(op, datas, batched, attrs)
        if hasattr(written, "ndim") and written.ndim and any(batched[1:]):
            written = aligned(written, x[key].ndim - 1)
        return K.scatter(numpy, numpy.ascontiguousarray(x), key, written, reduce)

    return rule


def _source(op, datas, batched, attrs):
    """src[src_key] (scatter, scatter_add), the batch kept in front."""
    src, src_key = datas[1], _key_attr(op, attrs, "src_key")
    return src[batched_key(src_key)] if batched[1] else src[src_key]


def _index_source(op, datas, batched, attrs):
    alpha = _key_attr(op, attrs, "alpha") if "alpha" in op.node.attr_names else 1
    return datas[1] if alpha == 1 else datas[1] * alpha


def _value_attr(op, datas, batched, attrs):
    return _key_attr(op, attrs, "value")


def _value_tensor(op, datas, batched, attrs):
    return datas[1]


def _placed(op, datas, batched, attrs, shape):
    """The backward of an index, slice or select: each example's gradient placed into zeros at the key."""
    g = datas[0]
    shape, key, basic = attrs
    out = numpy.zeros((g.shape[0], *shape), dtype=g.dtype)
    try:
        key = batched_key(key)
    except Unbatchable:
        return _example_by_example(op, datas, attrs)
    if basic:
        out[key] = g
    else:
        numpy.add.at(out, key, g)
    return out


def _copied(op, datas, batched, attrs, shape):
    """copy_'s values: src in each example's shape and in self's dtype (a batch even where self has none:
    the in-place write refuses that as torch does)."""
    target, src = datas
    size = batch_size(datas, batched)
    src = aligned(src, len(shape)) if batched[1] else numpy.asarray(src)
    return numpy.broadcast_to(src, (size, *shape)).astype(target.dtype, copy=True)


def _put(op, datas, batched, attrs, shape):
    """index_put: values written at a key every example shares."""
    x, values = datas
    x = x.copy() if batched[0] else numpy.broadcast_to(x, (batch_size(datas, batched), *x.shape)).copy()
    key = batched_key(attrs[0])
    if batched[1]:
        values = aligned(values, x[key].ndim - 1)
    x[key] = values
    return x


def _t_all(op, datas, batched, attrs, shape):
    x = datas[0]
    return x.transpose(0, *range(x.ndim - 1, 0, -1))


def _repeat(op, datas, batched, attrs, shape):
    x, repeats = datas[0], tuple(attrs[1])
    x = aligned(x, len(repeats))
    return numpy.tile(x, (1, *repeats))


def _unfold(op, datas, batched, attrs, shape):
    x = datas[0]
    _, dimension, size, step = attrs
    if x.ndim == 1:
        raise Unbatchable(op.node.__name__)
    return K.unfold(numpy, x, dimension % (x.ndim - 1) + 1, size, step)


def _diagonal(op, datas, batched, attrs, shape):
    x = datas[0]
    _, offset, dim1, dim2 = attrs
    rank = x.ndim - 1
    return K.diagonal(numpy, x, offset, dim1 % rank + 1, dim2 % rank + 1)


def _diag_embed(op, datas, batched, attrs, shape):
    x = datas[0]
    offset, dim1, dim2 = attrs
    if x.ndim == 1:
        raise Unbatchable(op.node.__name__)
    return K.diag_embed(numpy, x, offset, dim1 % len(shape) + 1, dim2 % len(shape) + 1)


def _trace(op, datas, batched, attrs, shape):
    return numpy.trace(datas[0], axis1=1, axis2=2)


RULES: dict[str, Callable] = {
    "CopyBackwards": _copied,
    "IndexPutBackward0": _put,
    "TBackward1": _t_all,
    "RepeatBackward0": _repeat,
    "UnfoldBackward0": _unfold,
    "DiagonalBackward0": _diagonal,
    "DiagonalBackward0_copy": lambda *args: _diagonal(*args).copy(),
    "DiagEmbedBackward0": _diag_embed,
    "TraceBackward0": _trace,
    "TakeBackward0": _take,
    "IndexBackward0": _picked_at("indices"),
    "IndexBackwardBackward0": _placed,
    "SliceBackwardBackward0": _placed,
    "SelectBackwardBackward0": _placed,
    "IndexSelectBackward0": _picked_at("key"),
    "GatherBackward0": _picked_at("key"),
    "MaskedSelectBackward0": _picked_at("key"),
    "ScatterBackward0": _scattered(_source, None),
    "ScatterAddBackward0": _scattered(_source, "sum"),
    "ScatterBackward1": _scattered(_value_attr, None),
    "IndexAddBackward0": _scattered(_index_source, "sum"),
    "IndexCopyBackward0": _scattered(_index_source, None),
    "IndexFillBackward0": _scattered(_value_attr, None),
    "IndexFillBackward1": _scattered(_value_tensor, None),
}
