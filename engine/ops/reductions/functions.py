"""Reductions and scans (`engine.prod`, `Tensor.cumsum`, `engine.median`, ...): torch's arguments, then a row.

The core reductions (sum, mean, var, std, max, min, amax, argmax, argmin, all, any, norm)
live in core.py, with the helpers these share (dims, dtypes, empty-dim errors). Elements that a reduction picks (cummax, median, mode) are found
on the raw arrays here and handed to the row as an indexing key, as `max(dim)` does.

`vector_norm` and `linalg_norm` are not `engine.<name>`: they are `engine.linalg`'s
`vector_norm` and `norm`, re-exported by that namespace.
"""

from __future__ import annotations

import numbers

import numpy

from ... import backend, return_types
from ...tensor import Tensor, wrap
from .. import arg_errors
from .. import derivatives as D
from ..api import exported, public
from ..op import apply_multi, apply_op
from ..operands import broadcast_check, norm_dim
from ..pointwise.core import div
from ..promotion import result_type
from . import kernels as K
from .core import (
    _grid_key,
    check_reduced_sizes,
    extreme_values,
    keep_grad_dtype,
    matrix_norm_of,
    picked_along,
    reduce_dims,
    reduction_dtype,
    variance_args,
    vector_norm_of,
)


def _not_implemented_for(kernel: str, a) -> NotImplementedError:
    return NotImplementedError(f"\"{kernel}\" not implemented for '{a.dtype.scalar_type}'")


# ------------------------------------------------------------------------------- products


@public
def prod(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    if axis is not None:
        dim = axis
    np_dtype = reduction_dtype(input, dtype)
    if dim is None:
        out = apply_op(D.PROD, (input,), (np_dtype,))
    else:
        if isinstance(dim, (tuple, list)):
            raise TypeError(f"prod(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
        out = apply_op(D.PROD_DIM, (input,), (norm_dim(dim, input.dim()), keepdim, np_dtype))
    return out if np_dtype is None else keep_grad_dtype(out, input)


# ---------------------------------------------------------------------------------- scans


def _cumulative(op, input, dim, dtype):
    np_dtype = reduction_dtype(input, dtype)
    out = apply_op(op, (input,), (norm_dim(dim, input.dim()), np_dtype))
    return out if np_dtype is None else keep_grad_dtype(out, input)


@public
def cumsum(input, dim, *, dtype=None):
    return _cumulative(D.CUMSUM, input, dim, dtype)


@public
def cumprod(input, dim, *, dtype=None):
    return _cumulative(D.CUMPROD, input, dim, dtype)


def _cumulative_extreme(name: str, op, input, dim):
    d = norm_dim(dim, input.dim())
    data = input._data
    xp = backend.xp_of(data)
    values, indices = K.cumulative_extreme(xp, data, d, name == "cummax")
    if data.ndim == 0:
        out = apply_op(op, (input,), (d, ()))
    else:
        out = apply_op(op, (input,), (d, _grid_key(data.shape, d, indices, xp)))
    return getattr(return_types, name)(out, wrap(indices))


@public
def cummax(input, dim):
    return _cumulative_extreme("cummax", D.CUMMAX, input, dim)


@public
def cummin(input, dim):
    return _cumulative_extreme("cummin", D.CUMMIN, input, dim)


@public
def logcumsumexp(input, dim):
    if not input.dtype.is_floating_point:
        raise _not_implemented_for("logcumsumexp_out_cpu", input)
    return apply_op(D.LOGCUMSUMEXP, (input,), (norm_dim(dim, input.dim()),))


# ----------------------------------------------------------------------------- reductions


@public
def logsumexp(input, dim=None, keepdim=False, *, axis=None):
    if axis is not None:
        dim = axis
    elif dim is None:
        raise TypeError('logsumexp() missing 1 required positional arguments: "dim"')
    if isinstance(dim, (tuple, list)) and not dim and input.dim():  # as torch 2.13 has it
        raise RuntimeError(
            f"output with shape [] doesn't match the broadcast shape [{', '.join(['1'] * input.dim())}]"
        )
    if not input.dtype.is_floating_point:  # integers and bools: in the default dtype
        input = wrap(input._data.astype(backend.get_default_dtype().np))
    return apply_op(D.LOGSUMEXP, (input,), (reduce_dims(dim, input.dim()), keepdim))


@public
def amin(input, dim=(), keepdim=False, *, axis=None):
    return extreme_values("amin", D.AMIN, input, dim if axis is None else axis, keepdim)


@public
def aminmax(input, *, dim=None, keepdim=False):
    if dim is not None and (dim.__class__ is bool or not isinstance(dim, numbers.Integral)):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    if dim is None:
        if input._data.size == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
            )
        dims = reduce_dims(None, input.dim())
    else:
        dims = reduce_dims(dim, input.dim())
        check_reduced_sizes("aminmax:", input, dims)
    return return_types.aminmax(*apply_multi(D.AMINMAX, (input,), (dims, keepdim)))


def _with_mean(name: str, op, input, dim, unbiased, keepdim, correction):
    dims, c = variance_args(name, input, dim, unbiased, correction, stacklevel=4)
    return tuple(apply_multi(op, (input,), (dims, c, keepdim)))


@public(method=False)
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    return _with_mean(
        "var_mean", D.VAR_MEAN, input, dim if axis is None else axis, unbiased, keepdim, correction
    )


@public(method=False)
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    return _with_mean(
        "std_mean", D.STD_MEAN, input, dim if axis is None else axis, unbiased, keepdim, correction
    )


def _median(name: str, input, dim, keepdim, ignore_nan: bool):
    """median / nanmedian: the lower median (of every element, or per slice with its index)."""
    if input.dtype is backend.bool_:
        raise _not_implemented_for(f"{name}_cpu" if dim is None else f"{name}_out", input)
    if dim is None:
        return apply_op(D.NANMEDIAN if ignore_nan else D.MEDIAN, (input,))
    op = D.NANMEDIAN_DIM if ignore_nan else D.MEDIAN_DIM
    return picked_along(
        name,
        op,
        input,
        dim,
        keepdim,
        lambda x, d: K.median_indices(backend.xp_of(x), x, d, ignore_nan),
        getattr(return_types, name),
    )


@public
def median(input, dim=None, keepdim=False, *, axis=None):
    return _median("median", input, dim if axis is None else axis, keepdim, False)


@public
def nanmedian(input, dim=None, keepdim=False, *, axis=None):
    return _median("nanmedian", input, dim if axis is None else axis, keepdim, True)


@public
def mode(input, dim=-1, keepdim=False, *, axis=None):
    return picked_along(
        "mode",
        D.MODE,
        input,
        dim if axis is None else axis,
        keepdim,
        lambda x, d: K.mode_indices(backend.xp_of(x), x, d),
        return_types.mode,
    )


@public
def nansum(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    np_dtype = reduction_dtype(input, dtype)
    dims = reduce_dims(dim if axis is None else axis, input.dim())
    out = apply_op(D.NANSUM, (input,), (dims, keepdim, np_dtype))
    return out if np_dtype is None else keep_grad_dtype(out, input)


@public
def nanmean(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """nansum / the count of non-NaN elements, recorded as torch records it (DivBackward0)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{input.dtype.scalar_type}"
        )
    if axis is not None:
        dim = axis
    data = input._data
    dims = reduce_dims(dim, data.ndim)
    present = wrap((data == data).sum(axis=dims, keepdims=keepdim))
    return div(nansum(input, dims, keepdim, dtype=dtype), present)


@public
def count_nonzero(input, dim=None, *, axis=None):
    data = input._data
    dims = reduce_dims(dim if axis is None else axis, data.ndim)
    return wrap((data != 0).sum(axis=dims).astype(backend.int64.np))


# ----------------------------------------------------------------------------------- norms


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """engine.linalg.vector_norm."""
    return vector_norm_of(x, ord, dim, keepdim, dtype)


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """engine.linalg.norm: a vector norm, or over two dims a matrix norm (engine.linalg.matrix_norm's)."""
    dims = None if dim is None else (tuple(dim) if isinstance(dim, (tuple, list)) else (dim,))
    if isinstance(ord, str):
        return matrix_norm_of(A, ord, (-2, -1) if dims is None else dims, keepdim, dtype)
    if dims is None:
        if ord is None:
            return vector_norm_of(A, 2, None, keepdim, dtype)
        if A.dim() not in (1, 2):
            raise RuntimeError(
                f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D."
            )
        dims = tuple(range(A.dim()))
    if len(dims) not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got [{', '.join(map(str, dims))}]"
        )
    if ord is None or len(dims) == 1:  # over two dims, ord None is the Frobenius norm: the vector 2-norm
        return vector_norm_of(A, 2 if ord is None else ord, dims, keepdim, dtype)
    return matrix_norm_of(A, ord, dims, keepdim, dtype)


def _dist(input, other, p, method: bool):
    """The p-norm of input - other (broadcast), one row (DistBackward0) as in torch."""
    first = 0 if method else 1  # torch counts a method's arguments after self
    if not method and not isinstance(input, Tensor):
        raise arg_errors.not_a_tensor("dist", "input", 1, input)
    if not isinstance(other, Tensor):
        raise arg_errors.not_a_tensor("dist", "other", first + 1, other)
    if isinstance(p, Tensor):
        p = p.item()
    if isinstance(p, str) or not isinstance(p, numbers.Real):
        raise TypeError(f"dist(): argument 'p' (position {first + 2}) must be Number, not {type(p).__name__}")
    broadcast_check(input, other)
    promoted = result_type((input, other))
    if promoted.kind != "f":
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. "
            f"Got {backend.dtype_of(numpy.empty(0, promoted)).scalar_type} instead."
        )
    return apply_op(D.DIST, (input, other), (p,))


@public(method=False)
def dist(input, other, p=2):
    return _dist(input, other, p, False)


@public(function=False, name="dist")
def dist_method(self, other, p=2):
    return _dist(self, other, p, True)


__all__ = exported(__name__)  # what `engine` exports from here (api.public)
