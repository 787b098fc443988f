"""The reductions rows' raw-array forwards (numpy or cupy, via `xp`): scans, variances, the
elements a reduction picks, softmax. Nothing here knows about Tensors or autograd.
"""

from __future__ import annotations

import math

import numpy


def softmax(xp, a, dim):
    if a.size == 0:  # numpy's max has no identity on an empty axis; torch's result is empty
        return a.copy()
    e = xp.exp(a - a.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def log_softmax(xp, a, dim):
    if a.size == 0:
        return a.copy()
    shifted = a - a.max(axis=dim, keepdims=True)
    shifted -= xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))  # in place: one array fewer
    return shifted


# ------------------------------------------------------------------ reductions and scans


def scan(xp, combine, x, dim):
    """The inclusive scan of `combine` (an associative xp ufunc) along `dim`, in log2(n) whole-array steps.

    Each step combines every element with the one 2^k before it (Hillis and Steele), so the
    same code runs on numpy and CuPy, neither of which scans with logaddexp or maximum.
    """
    out = x.copy()
    n = x.shape[dim] if x.ndim else 1
    lead = (slice(None),) * dim
    step = 1
    while step < n:
        later, earlier = lead + (slice(step, None),), lead + (slice(None, n - step),)
        out[later] = combine(out[later], out[earlier])
        step *= 2
    return out


def variance(xp, x, dims, correction, keepdim):
    """The variance over `dims` with `correction`: inf or nan, silently, without degrees of freedom.

    Exactly 0 over a constant slice, as torch's Welford pass gives: the mean (which rounding may
    move off the constant) is clipped into the slice's range, so the std's backward masks it."""
    n = math.prod(x.shape[d] for d in dims)
    if not x.size:  # numpy would warn "Mean of empty slice"; torch's result, silently
        shape = x.sum(axis=dims, keepdims=keepdim).shape
        return xp.full(shape, math.nan if n - correction <= 0 else 0.0, dtype=x.dtype)
    mean = x.mean(axis=dims, keepdims=True)
    mean = xp.clip(mean, x.min(axis=dims, keepdims=True), x.max(axis=dims, keepdims=True))
    centred = x - mean
    return (centred * centred).sum(axis=dims, keepdims=keepdim) / max(n - correction, 0)


def cast(x, dtype):
    """x in `dtype` (a numpy dtype; None: as it is)."""
    return x if dtype is None else x.astype(dtype, copy=False)


def cumulative(scan_fn, x, dim, dtype):
    """cumsum / cumprod (`scan_fn`) along `dim` in `dtype`; a 0-dim tensor is its own."""
    return scan_fn(x, axis=dim, dtype=dtype) if x.ndim else x.astype(dtype or x.dtype, copy=True)


def picked(x, dim, keepdim, key):
    """The elements an indexing `key` picks, one per slice along `dim` (kept as size 1 with keepdim)."""
    out = x[key]
    return out if keepdim or out.ndim == 0 else out.squeeze(dim)


def logcumsumexp(xp, x, dim):
    """log(cumsum(exp(x))) without overflow: a scan of logaddexp (which handles +-inf)."""
    return scan(xp, xp.logaddexp, x, dim) if x.ndim else x.copy()


def logsumexp(xp, x, dims, keepdim):
    """log(sum(exp(x))) shifted by the maximum of each slice (by 0 where that maximum is infinite)."""
    if x.size == 0:
        return xp.log(xp.exp(x).sum(axis=dims, keepdims=keepdim))
    top = x.max(axis=dims, keepdims=True)
    top = xp.where(xp.isinf(top), 0, top)
    out = xp.log(xp.exp(x - top).sum(axis=dims, keepdims=True)) + top
    return out if keepdim else out.reshape(tuple(n for d, n in enumerate(x.shape) if d not in dims))


def cumulative_extreme(xp, x, dim, maximum):
    """cummax / cummin: the running extreme and the index where it was (last) reached.

    As torch's, a NaN is the extreme from where it appears, and a tie moves the index on.
    """
    values = scan(xp, xp.maximum if maximum else xp.minimum, x, dim) if x.ndim else x.copy()
    if x.ndim == 0:
        return values, xp.zeros((), dtype=numpy.int64)
    shape = [1] * x.ndim
    shape[dim] = x.shape[dim]
    positions = xp.arange(x.shape[dim], dtype=numpy.int64).reshape(shape)
    reached = (x == values) | (x != x)  # a new (or equal) extreme, or a NaN
    indices = scan(xp, xp.maximum, xp.where(reached, positions, 0), dim)
    return values, indices


def median_indices(xp, x, dim, ignore_nan):
    """Per slice along `dim`, the index of the lower median (torch's median); keepdims.

    A stable sort gives torch's choice among equal values. A slice with a NaN has the NaN as
    median (the first one) unless `ignore_nan` (nanmedian), which takes the median of the rest.
    """
    order = xp.argsort(x, axis=dim, kind="stable")  # NaNs sort last
    nans = x != x
    count = x.shape[dim] - nans.sum(axis=dim, keepdims=True)  # non-NaN elements
    if ignore_nan:
        k = xp.maximum(count - 1, 0) // 2
    else:
        k = xp.where(count < x.shape[dim], count, (x.shape[dim] - 1) // 2)  # the first NaN sorts at `count`
    return xp.take_along_axis(order, k, axis=dim)


def median_all(xp, x, ignore_nan):
    """The lower median of every element (NaN for none, or, unless `ignore_nan`, for any NaN)."""
    flat = x.reshape(-1)
    if flat.size == 0:
        return xp.asarray(numpy.nan, dtype=x.dtype)
    return flat[median_indices(xp, flat, 0, ignore_nan)].reshape(())


def mode_indices(xp, x, dim):
    """Per slice along `dim`: the index of the most frequent value (the smallest of equally frequent
    ones), at its last occurrence, as torch's mode picks it; keepdims."""
    order = xp.argsort(x, axis=dim, kind="stable")
    ordered = xp.take_along_axis(x, order, axis=dim)
    n = x.shape[dim]
    lead = (slice(None),) * dim
    shape = [1] * x.ndim
    shape[dim] = n
    positions = xp.arange(n, dtype=numpy.int64).reshape(shape)
    starts = xp.ones(ordered.shape, dtype=bool)  # where a run of equal values begins
    starts[lead + (slice(1, None),)] = ordered[lead + (slice(1, None),)] != ordered[lead + (slice(None, -1),)]
    run_start = scan(xp, xp.maximum, xp.where(starts, positions, 0), dim)
    length = positions - run_start + 1  # the run's length so far, largest at its last element
    last = xp.argmax(length, axis=dim, keepdims=True)  # the first longest run: the smallest value
    return xp.take_along_axis(order, last, axis=dim)


def vector_norm(xp, x, ord, dims, keepdim):
    """linalg.vector_norm on arrays of the result's dtype."""
    a = xp.abs(x)
    if ord == 2:
        return xp.sqrt((a * a).sum(axis=dims, keepdims=keepdim))
    if ord == 1:
        return a.sum(axis=dims, keepdims=keepdim)
    if ord == math.inf:
        return a.max(axis=dims, keepdims=keepdim)
    if ord == -math.inf:
        return a.min(axis=dims, keepdims=keepdim)
    if ord == 0:
        return (a != 0).sum(axis=dims, keepdims=keepdim).astype(x.dtype)
    return (a**ord).sum(axis=dims, keepdims=keepdim) ** (1.0 / ord)
