"""The shaping rows' backward formulas longer than a line (PyTorch's FunctionsManual).

Written against the math namespace `m`, so each runs on raw arrays or, recorded, on Tensors.
"""

from __future__ import annotations

import math

from ... import backend
from ..namespaces import raw, view_positions
from . import kernels as K


def as_strided_backward(m, g, self_sym_sizes, size, stride, storage_offset, gather, scatter):
    """as_strided_'s gradient: the view's elements added back at the input elements they share
    (`gather`: the view's flat positions inside the input; `scatter`: the input's flat index of each).
    Elements of the storage outside the input get nothing, as in torch."""
    picked = g.reshape(-1)[gather]
    return m.index_grad(picked, (math.prod(self_sym_sizes),), (scatter,), False).reshape(self_sym_sizes)


def split_backward(g, dim, sizes):
    out, start = [], 0
    for n in sizes:
        out.append(g[(slice(None),) * dim + (slice(start, start + n),)])
        start += n
    return out


# -- shape and indexing ---------------------------------------------------------------------------
# The keys are those of the rows (functions.py builds them): a 0-dim tensor is read and
# written as one element, so a key addresses its (1,)-shaped form.


def one_d(shape) -> tuple:
    return tuple(shape) or (1,)


def picked(g, key):
    """g[key], a 0-dim g read as one element."""
    return (g.reshape((1,)) if g.ndim == 0 else g)[key]


def placed(m, g, shape, key, accumulate=True):
    """Zeros of `shape` with g added at `key` (repeated positions add up) or, not accumulating, written."""
    return m.index_grad(g, one_d(shape), key, not accumulate).reshape(tuple(shape))


def zeroed_at(m, g, key):
    """g with the positions `key` writes set to zero (what the overwritten values get)."""
    shape = tuple(g.shape)
    return m.zero_at(g.reshape(one_d(shape)), key).reshape(shape)


def to_source(m, g, key, src_sym_sizes, src_key):
    """The gradient of a scattered `src`: g read at `key`, in src's shape (zero beyond the index)."""
    got = picked(g, key)
    if tuple(got.shape) == tuple(src_sym_sizes):
        return got
    return placed(m, got, src_sym_sizes, src_key, False)


def sum_all(m, x):
    return m.sum(x, tuple(range(x.ndim)), False)


def not_implemented(message: str, error=RuntimeError):
    """The backward of an op whose derivative PyTorch does not implement: its error."""
    raise error(message)


def split_grads(m, grads, shape, dim, sizes):
    """split's backward: the pieces' gradients side by side (zeros for a piece none reached)."""
    like = next(g for g in grads if g is not None)
    pieces = []
    for g, n in zip(grads, sizes):
        if g is None:
            piece = list(shape)
            piece[dim] = n
            g = m.zeros(tuple(piece), like)
        pieces.append(g)
    return m.cat(pieces, dim)


def unbind_grads(m, grads, shape, dim):
    like = next(g for g in grads if g is not None)
    rest = tuple(n for d, n in enumerate(shape) if d != dim)
    return m.stack([m.zeros(rest, like) if g is None else g for g in grads], dim)


def diagonal_backward(m, g, self_sym_sizes, offset, dim1, dim2):
    """Zeros with g on the diagonal `offset` of dims dim1, dim2 (the diagonal view's backward)."""
    return m.embed(g, tuple(self_sym_sizes), lambda xp, a: K.diagonal(xp, a, offset, dim1, dim2))


def unfold_backward(m, g, self_sym_sizes, dimension, size, step):
    """Each window element's gradient added to the element it views (windows overlap when step < size)."""
    shape = tuple(self_sym_sizes)
    if not shape:  # a 0-dim tensor's one window: the element itself, or nothing
        return g.reshape(()) if size else m.zeros((), g)
    key = view_positions(backend.xp_of(raw(g)), shape, lambda xp, a: K.unfold(xp, a, dimension, size, step))
    return m.index_grad(g, shape, key, False)


def as_strided_view_backward(m, g, self_sym_sizes, positions):
    """Each output element's gradient added to the input element at the same place in memory
    (`positions`: its flat index in the input, -1 where the view reads outside the input)."""
    flat = g.reshape((-1,))
    xp = backend.xp_of(positions)
    inside = positions >= 0
    if not bool(inside.all()):
        (keep,) = xp.nonzero(inside)
        flat, positions = flat[(keep,)], positions[inside]
    numel = math.prod(self_sym_sizes)
    return m.index_grad(flat, (numel,), (positions,), False).reshape(tuple(self_sym_sizes))


def masked_scatter_source_backward(m, g, source_sym_sizes, key):
    """The source's first elements went where the mask is set: their gradients, zeros for the rest."""
    got = picked(g, key)
    numel = math.prod(source_sym_sizes)
    if got.shape[0] < numel:
        got = m.index_grad(got, (numel,), (slice(0, got.shape[0]),), True)
    return got.reshape(tuple(source_sym_sizes))


def repeat_backward(m, g, self_sym_sizes, repeats):
    """The sum of the gradient's copies: each dim split into (repeat, size), the repeats summed."""
    shape = (1,) * (len(repeats) - len(self_sym_sizes)) + tuple(self_sym_sizes)
    split = []
    for r, n in zip(repeats, shape):
        split += [r, n]
    return m.sum(g.reshape(tuple(split)), tuple(range(0, len(split), 2)), False).reshape(
        tuple(self_sym_sizes)
    )


def triangle(m, g, diagonal, lower):
    return m.where(K.triangle_mask(backend.xp_of(raw(g)), g.shape, diagonal, lower), g, 0.0)


def scatter_reduce_backward(
    m, g, self, src, result, dim, index, reduce, include_self, src_sym_sizes, key, src_key
):
    """scatter_reduce's gradients, as PyTorch defines them (FunctionsManual's scatter_reduce_backward):
    sum and mean spread g back; amax/amin share it among the elements equal to the result; prod
    divides the result by each factor, with zeros handled by recomputing the product without them."""
    xp = backend.xp_of(raw(g))
    shape = tuple(self.shape)
    written = K.scatter(xp, xp.zeros(one_d(shape), dtype=bool), key, True, None).reshape(shape)
    src_in = src[src_key]
    if reduce == "sum":
        grad_self, grad_src = g, picked(g, key)
    elif reduce == "mean":
        counts = K.scatter(xp, xp.full(shape, 1 if include_self else 0, dtype=raw(g).dtype), key, 1, "sum")
        counts = xp.maximum(counts, 1)
        grad_self, grad_src = g / counts, picked(g, key) / picked(counts, key)
    elif reduce in ("amax", "amin"):
        value = picked(raw(result), key)
        self_is = (raw(self) == raw(result)) & (include_self | ~written)
        src_is = raw(src_in) == value
        counts = K.scatter(xp, self_is.astype(raw(g).dtype), key, src_is.astype(raw(g).dtype), "sum")
        share = g / counts
        grad_self = m.where(self_is, share, 0.0)
        grad_src = m.where(src_is, picked(share, key), 0.0)
    else:  # prod
        zero_self = raw(self) == 0
        masked_self = m.where(zero_self, 1.0, self)
        grad_self = (
            g
            * m.scatter_reduce(masked_self, dim, index, src, "prod", include_self, key, src_key)
            / masked_self
        )
        src_zero = raw(src_in) == 0
        zeros_at = picked(K.scatter(xp, xp.zeros(shape, dtype=raw(g).dtype), key, src_zero, "sum"), key)
        single_zero = src_zero & (zeros_at == 1)
        masked_src = m.where(
            K.scatter(xp, xp.zeros(tuple(src_sym_sizes), dtype=bool), src_key, single_zero, None), 1.0, src
        )
        without_zero = m.scatter_reduce(self, dim, index, masked_src, "prod", include_self, key, src_key)
        grad_src = m.where(
            single_zero,
            picked(g * without_zero, key),
            picked(g * result, key) / m.where(src_zero, 1.0, src_in),
        )
    if not include_self:
        grad_self = m.where(written, 0.0, grad_self)
    if tuple(grad_src.shape) != tuple(src_sym_sizes):
        grad_src = placed(m, grad_src, src_sym_sizes, src_key, False)
    return grad_self, grad_src
