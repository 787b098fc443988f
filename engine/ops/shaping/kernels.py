"""The shaping rows' raw-array forwards (numpy or cupy, via `xp`): strided views, index keys,
scatter with its reductions, splitting and joining. Nothing here knows about Tensors or autograd.
"""

from __future__ import annotations

import numpy

from ... import backend

# ------------------------------------------------------------------ forwards of the rows


def expand(xp, a, size):
    """A broadcast view that can be written, as torch's expand (numpy's broadcast_to is read-only):
    a write through it reaches the one element each broadcast row shares."""
    out = xp.broadcast_to(a, size)
    if xp is not numpy or not a.flags.writeable:  # CuPy's views are all writable
        return out
    return numpy.lib.stride_tricks.as_strided(a, out.shape, out.strides)


def as_strided(a, size, stride, storage_offset):
    return backend.restrided(a, tuple(size), tuple(stride), storage_offset)


def concatenate(xp, arrays, dim):
    return backend.bfloat16_like(xp.concatenate(arrays, axis=dim), arrays)


def stack(xp, arrays, dim):
    return backend.bfloat16_like(xp.stack(arrays, axis=dim), arrays)


def to_copy(a, dtype, device):
    moved = backend.to_device(a, device)
    return backend.cast(moved, dtype, copy=moved is a)  # always a new array: `to(copy=True)` may ask for one


def copied_into(xp, target, src):
    """copy_'s values: `src` (an array or a Python number) in `target`'s shape and dtype. A number becomes
    an array first: CuPy's broadcast_to takes arrays only."""
    return xp.broadcast_to(xp.asarray(src), target.shape).astype(target.dtype, copy=True)


def index_put(a, values, key):
    out = a.copy()
    out[key] = values
    return out


# ------------------------------------------------------------------------- shape and indexing


def strided(xp, a, shape, strides):
    """A view of `a`'s memory from its first element, `strides` in elements (writable where `a` is)."""
    item = a.itemsize
    return xp.lib.stride_tricks.as_strided(a, tuple(shape), tuple(s * item for s in strides))


def element_strides(a) -> list:
    return [s // a.itemsize for s in a.strides]


def diagonal(xp, a, offset, dim1, dim2):
    """torch.diagonal: a view, the diagonal as the last dimension (numpy's is read-only)."""
    shape, strides = a.shape, element_strides(a)
    start1, start2 = max(-offset, 0), max(offset, 0)
    length = max(min(shape[dim1] - start1, shape[dim2] - start2), 0)
    if length:
        key = [slice(None)] * a.ndim
        key[dim1], key[dim2] = slice(start1, None), slice(start2, None)
        a = a[tuple(key)]
    rest = [d for d in range(len(shape)) if d not in (dim1, dim2)]
    return strided(
        xp,
        a,
        [shape[d] for d in rest] + [length],
        [strides[d] for d in rest] + [strides[dim1] + strides[dim2]],
    )


def diag_embed(xp, a, offset, dim1, dim2):
    """Zeros with `a`'s last dimension written on the diagonal (offset) of the dims dim1, dim2."""
    n = a.shape[-1] + abs(offset) if a.ndim else abs(offset) + 1
    shape = list(a.shape[:-1])
    for d in sorted((dim1, dim2)):
        shape.insert(d, n)
    out = xp.zeros(shape, dtype=a.dtype)
    diagonal(xp, out, offset, dim1, dim2)[...] = a
    return out


def unfold(xp, a, dim, size, step):
    """Tensor.unfold: windows of `size` every `step` along `dim`, as a view (the window last)."""
    if a.ndim == 0:
        return a.reshape((1,))[:size]
    shape, strides = list(a.shape), element_strides(a)
    shape.append(size)
    strides.append(strides[dim])
    shape[dim] = (shape[dim] - size) // step + 1
    strides[dim] *= step
    return strided(xp, a, shape, strides)


def strided_view(xp, a, size, stride, storage_offset):
    """torch.as_strided: `size` and `stride` over the memory `a` lives in, from `storage_offset`."""
    root = backend.storage_and_offset(a)[0]
    memory = strided(xp, root, (root.size,), (1,))
    return strided(xp, memory[storage_offset:], size, stride)


def grid_key(xp, dim, index) -> tuple:
    """The advanced-indexing key that reads, at each position of `index`, entry index[...] along `dim`."""
    key = []
    for d, n in enumerate(index.shape):
        if d == dim:
            key.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = n
            key.append(xp.arange(n).reshape(shape))
    return tuple(key)


def scatter(xp, self, key, values, reduce, include_self=True):
    """A copy of `self` with `values` scattered at `key` (torch's scatter, scatter_add, scatter_reduce).

    `reduce`: None (assign), "sum"/"add", "prod"/"multiply", "mean", "amax" or "amin"; without
    `include_self` the positions written start from the reduction's identity instead of `self`.
    A 0-dim `self` is addressed by `key` as one element.
    """
    if self.ndim == 0:
        return scatter(xp, self.reshape((1,)), key, values, reduce, include_self).reshape(())
    out = self.copy()
    if reduce is None:
        out[key] = values
        return out
    if not include_self:
        out[key] = _identity(xp, reduce, out.dtype)
    if reduce in ("sum", "add"):
        backend.scatter_add(out, key, values)
        return out
    # the others: flat positions (a grid key: arrays only), repeated ones combined in turn
    arrays = xp.broadcast_arrays(*key)
    pos = xp.ravel_multi_index(tuple(arrays), out.shape).reshape(-1)
    values = xp.broadcast_to(xp.asarray(values, dtype=out.dtype), arrays[0].shape).reshape(-1)
    flat = out.reshape(-1)
    if reduce == "mean":
        backend.scatter_add(flat, pos, values)
        count = xp.full(flat.shape, 1 if include_self else 0, dtype=flat.dtype)
        backend.scatter_add(count, pos, xp.ones(pos.shape, dtype=flat.dtype))
        count = xp.maximum(count, 1)
        flat[...] = flat // count if flat.dtype.kind in "iu" else flat / count
        return out
    combine = {"prod": xp.multiply, "multiply": xp.multiply, "amax": xp.maximum, "amin": xp.minimum}[reduce]
    _reduce_at(xp, flat, pos, values, combine)
    return out


def _identity(xp, reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    info = xp.finfo(dtype) if dtype.kind == "f" else xp.iinfo(dtype)
    lowest = -xp.inf if dtype.kind == "f" else info.min
    highest = xp.inf if dtype.kind == "f" else info.max
    return lowest if reduce == "amax" else highest


def _reduce_at(xp, flat, pos, values, combine) -> None:
    """flat[pos] = combine(flat[pos], values) with repeated positions combined in turn, in rounds of
    distinct positions (ufunc.at without it: multiply and max/min have no atomic form on every device)."""
    if pos.size == 0:
        return
    order = xp.argsort(pos, kind="stable")
    pos, values = pos[order], values[order]
    rank = xp.arange(pos.size) - xp.searchsorted(pos, pos, side="left")
    for r in range(int(rank.max()) + 1):
        chosen = rank == r
        at = pos[chosen]
        flat[at] = combine(flat[at], values[chosen])


def split(a, dim, sizes) -> tuple:
    """Views of consecutive pieces of `sizes` along `dim`."""
    out, start = [], 0
    for n in sizes:
        out.append(a[(slice(None),) * dim + (slice(start, start + n),)])
        start += n
    return tuple(out)


def unbind(a, dim) -> tuple:
    """Views of each index along `dim` (Ellipsis: a 0-dim piece stays a view, not a scalar)."""
    return tuple(a[(slice(None),) * dim + (i, Ellipsis)] for i in range(a.shape[dim]))


def take_at(a, key):
    """a[key], a 0-dim array read as one element (the shaping rows' keys address it so)."""
    return (a.reshape((1,)) if a.ndim == 0 else a)[key]


def masked_fill(xp, a, mask, value):
    return backend.bfloat16_like(xp.where(mask, value, a).astype(a.dtype, copy=False), [a])


def masked_scatter(xp, a, source, shape, key):
    """`a` broadcast to `shape`, with source's first elements written where the mask (`key`) is set."""
    out = xp.broadcast_to(a, shape).copy()
    take = key[0].size
    (out.reshape((1,)) if out.ndim == 0 else out)[key] = source.reshape(-1)[:take]
    return out


def triangle_mask(xp, shape, diagonal, lower):
    """Where the last two dims of `shape` keep their values in tril (lower) / triu."""
    rows = xp.arange(shape[-2]).reshape((-1, 1))
    cols = xp.arange(shape[-1]).reshape((1, -1))
    return cols - rows <= diagonal if lower else cols - rows >= diagonal


def triangle(xp, a, diagonal, lower):
    return xp.where(triangle_mask(xp, a.shape, diagonal, lower), a, xp.zeros((), dtype=a.dtype))
