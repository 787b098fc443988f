"""The core reductions (`engine.sum`, `Tensor.max`, `engine.softmax`, ...): torch's argument
handling (dims, keepdim, dtypes, empty-dim errors), then a row; and the helpers the rest of the
family (functions.py) shares.
"""

from __future__ import annotations

import numbers
import warnings

from ... import backend, return_types
from ...autograd import grad_mode
from ...tensor import Tensor, wrap
from .. import arg_errors
from .. import derivatives as D
from ..api import exported, public
from ..op import apply_op
from ..operands import norm_dim

# --------------------------------------------------------------------------- reductions


def reduce_dims(dim, ndim: int, empty_means_all: bool = True) -> tuple:
    """The dims a reduction reduces, sorted, read as torch reads `dim`.

    None is every dim, and so is an empty list unless `empty_means_all` is False (all, any);
    a dim given twice is refused; a 0-dim tensor's dim 0 (or -1) reduces nothing.
    """
    if dim is None:
        return tuple(range(ndim))
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if not dims:
        return tuple(range(ndim)) if empty_means_all else ()
    dims = unique_dims(dims, ndim)  # checked even for a 0-dim tensor, which reduces nothing
    return tuple(sorted(dims)) if ndim else ()


def unique_dims(dims, ndim: int) -> list:
    """Dims normalized, in the order given, with torch's error for one that appears twice."""
    seen = []
    for d in dims:
        d = norm_dim(d, ndim)
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.append(d)
    return seen


def check_reduced_sizes(prefix: str, a, dims) -> None:
    """torch's IndexError for reducing an empty dim by an op without identity (max, amax, median)."""
    shape = a._data.shape
    for d in dims:
        if shape[d] == 0:
            raise IndexError(f"{prefix} Expected reduction dim {d} to have non-zero size.")


def check_dim_given(name: str, a) -> None:
    """torch's error for reducing every element of an empty tensor by an op without identity."""
    if a._data.size == 0:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )


def reduction_dtype(a, dtype):
    """The numpy dtype sum / prod / cumsum compute in, None for `a`'s own: `dtype`, else int64 for
    integers and bools. torch refuses a dtype autograd cannot follow when `a` requires grad."""
    if dtype is None:
        return None if a._data.dtype.kind == "f" else backend.int64.np
    if a._rg and grad_mode.is_grad_enabled() and not dtype.is_floating_point:
        raise RuntimeError(f"Autograd not support dtype: {dtype.scalar_type}")
    return None if dtype.np == a._data.dtype else dtype.np


def keep_grad_dtype(out, a):
    """`out` computed in another dtype than `a`: its gradient reaches `a` cast back to a's dtype,
    as torch's engine casts it (the node's input metadata, FormulaNode.apply)."""
    node = out.grad_fn
    if node is not None and out._data.dtype != a._data.dtype:
        node._meta = ((a._data.shape, a._data.dtype),)
    return out


@public
def sum(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    if axis is not None:
        dim = axis
    np_dtype = None if dtype is None and input._data.dtype.kind == "f" else reduction_dtype(input, dtype)
    shape = input._data.shape
    if dim is None and not keepdim:
        out = apply_op(D.SUM, (input,), (shape, np_dtype))
    else:
        out = apply_op(D.SUM_DIM, (input,), (shape, reduce_dims(dim, len(shape)), keepdim, np_dtype))
    return out if np_dtype is None else keep_grad_dtype(out, input)


@public
def mean(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    if axis is not None:
        dim = axis
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Optional dtype must be either a floating point "
            f"or complex dtype. Got: {dtype.scalar_type}"
        )
    if dtype is None and not input.dtype.is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {input.dtype.scalar_type}"
        )
    np_dtype = None if dtype is None or dtype.np == input._data.dtype else dtype.np
    shape = input._data.shape
    if dim is None and not keepdim:
        out = apply_op(D.MEAN, (input,), (shape, input._data.size, np_dtype))
    else:
        out = apply_op(D.MEAN_DIM, (input,), (shape, reduce_dims(dim, len(shape)), keepdim, np_dtype))
    return out if np_dtype is None else keep_grad_dtype(out, input)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def variance_args(name: str, a, dim, unbiased, correction, stacklevel: int = 3) -> tuple:
    """(dims, correction) of var / std / var_mean / std_mean; torch's dtype error and its warning
    when the correction leaves no degrees of freedom (the result is then inf or nan)."""
    if isinstance(dim, bool):  # the var(unbiased) positional form
        dim, unbiased = None, dim
    if not a.dtype.is_floating_point:
        raise RuntimeError(
            f"{name} only support floating point and complex dtypes"
            if name in ("var_mean", "std_mean")
            else "std and var only support floating point and complex dtypes"
        )
    dims = reduce_dims(dim, a.dim())
    c = _correction(unbiased, correction)
    kept = 1
    for d in dims:
        kept *= a._data.shape[d]
    if kept - c <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
            "factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=stacklevel,
        )
    return dims, c


@public
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    dims, c = variance_args("var", input, dim if axis is None else axis, unbiased, correction)
    return apply_op(D.VAR, (input,), (dims, c, keepdim))


@public
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    dims, c = variance_args("std", input, dim if axis is None else axis, unbiased, correction)
    return apply_op(D.STD, (input,), (dims, c, keepdim))


def max_min(name: str, a, dim=None, keepdim=False, other=None, method: bool = False):
    """max / min: of all elements, along `dim` (values, indices), or elementwise against a Tensor."""
    if not isinstance(a, Tensor):
        if dim is None and other is None:
            raise arg_errors.not_a_tensor(name, "input", 1, a)
        raise arg_errors.max_min_not_a_tensor(name, a, other if dim is None else dim)
    if other is not None:
        if dim is not None:
            raise TypeError(f"{name}() got an unexpected keyword argument 'other'")
        dim = other
    if dim is not None and (dim.__class__ is bool or not isinstance(dim, numbers.Integral)):
        if isinstance(dim, Tensor) and keepdim is False:
            return pairwise_extreme(name + "imum", a, dim, method)
        raise arg_errors.max_min_bad_dim(name, dim, keepdim, method)
    if dim is None:
        check_dim_given(name, a)
        return apply_op(D.MAX if name == "max" else D.MIN, (a,))
    if name == "max":
        return picked_along(name, D.MAX_DIM, a, dim, keepdim, lambda x, d: x.argmax(axis=d, keepdims=True))
    return picked_along(name, D.MIN_DIM, a, dim, keepdim, lambda x, d: x.argmin(axis=d, keepdims=True))


def picked_along(name: str, op, a, dim, keepdim, indices_of, result_type=None):
    """A reduction that picks one element per slice along `dim` (max, min, median, mode):
    `indices_of(array, dim)` finds them (keepdims) on the raw array; the row gathers the values."""
    d = norm_dim(dim, a.dim())
    data = a._data
    xp = backend.xp_of(data)
    if data.ndim:
        check_reduced_sizes(f"{name}():", a, (d,))
        idx = indices_of(data, d)
    else:
        idx = xp.zeros((), dtype=backend.int64.np)
    key = _grid_key(data.shape, d, idx, xp)
    values = apply_op(op, (a,), (a.shape, d, keepdim, key))
    indices = wrap(idx if keepdim or data.ndim == 0 else idx.squeeze(d))
    return (result_type or getattr(return_types, name))(values, indices)


def _grid_key(shape, dim, idx, xp):
    """An advanced-indexing key that picks idx[...] along `dim` (what gather would)."""
    key = []
    for d, n in enumerate(shape):
        if d == dim:
            key.append(idx)
        else:
            view = [1] * len(shape)
            view[d] = n
            key.append(xp.arange(n).reshape(view))
    return tuple(key)


@public(method=False)
def max(input, dim=None, keepdim=False, *, other=None, axis=None):
    return max_min("max", input, arg_errors.dim_or_axis("max", dim, axis), keepdim, other)


@public(method=False)
def min(input, dim=None, keepdim=False, *, other=None, axis=None):
    return max_min("min", input, arg_errors.dim_or_axis("min", dim, axis), keepdim, other)


def extreme_values(name: str, op, a, dim, keepdim):
    """amax / amin: the extreme of each slice over `dim` (every dim by default), several at once."""
    dims = reduce_dims(dim, a.dim())
    if a._data.size == 0 and (dim is None or isinstance(dim, (tuple, list)) and not dim):
        check_dim_given(name, a)
    check_reduced_sizes(f"{name}():", a, dims)
    return apply_op(op, (a,), (dims, keepdim))


@public
def amax(input, dim=(), keepdim=False, *, axis=None):
    return extreme_values("amax", D.AMAX, input, dim if axis is None else axis, keepdim)


def _flat_index(a, index):
    """A 0-d int64 index on `a`'s device (numpy gives a host scalar, CuPy a 0-d device array)."""
    return wrap(backend.xp_of(a._data).asarray(index, dtype=backend.int64.np))


def extreme_index(name: str, a, dim, keepdim):
    """argmax / argmin: the index of the first extreme (a NaN counting as one), flat without `dim`."""
    if a.dtype is backend.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is not None and (dim.__class__ is bool or not isinstance(dim, numbers.Integral)):
        raise TypeError(f"{name}(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
    data = a._data
    find = data.argmax if name == "argmax" else data.argmin
    if dim is None:
        if data.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        out = _flat_index(a, find())
        return wrap(out._data.reshape((1,) * data.ndim)) if keepdim else out
    d = norm_dim(dim, data.ndim)
    if data.ndim == 0:
        return _flat_index(a, 0)
    check_reduced_sizes(f"{name}():", a, (d,))
    return wrap(find(axis=d, keepdims=keepdim))


@public
def argmax(input, dim=None, keepdim=False, *, axis=None):
    return extreme_index("argmax", input, dim if axis is None else axis, keepdim)


@public
def argmin(input, dim=None, keepdim=False, *, axis=None):
    return extreme_index("argmin", input, dim if axis is None else axis, keepdim)


def vector_norm_of(a, ord, dim, keepdim, dtype):
    """linalg.vector_norm, with its checks; `Tensor.norm` with a numeric p comes here too."""
    if isinstance(ord, Tensor):
        ord = ord.item()
    if not a.dtype.is_floating_point:
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {a.dtype.scalar_type}"
        )
    np_dtype = None
    if dtype is not None:
        if not dtype.is_floating_point:
            raise RuntimeError(
                f"linalg.vector_norm: dtype should be floating point or complex, but got {dtype.scalar_type}"
            )
        if dtype.itemsize < a.dtype.itemsize:
            raise RuntimeError(
                f"linalg.vector_norm: the dtype of the input ({a.dtype.scalar_type}) should be convertible "
                f"without narrowing to the specified dtype ({dtype.scalar_type})"
            )
        np_dtype = None if dtype.np == a._data.dtype else dtype.np
    dims = reduce_dims(dim, a.dim())
    if a._data.size == 0 and (ord < 0 or ord == float("inf")):
        if dim is None or isinstance(dim, (tuple, list)) and not dim:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {ord:g} norm on an empty tensor because the "
                "operation does not have an identity"
            )
        for d in dims:
            if a._data.shape[d] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {ord:g} norm on the dimension {d}because this "
                    "dimension is empty and the operation does not have an identity"
                )
    out = apply_op(D.NORM, (a,), (ord, dims, keepdim, np_dtype))
    return out if np_dtype is None else keep_grad_dtype(out, a)


def matrix_norm_of(a, ord, dim, keepdim, dtype):
    """linalg.matrix_norm's argument checks; its 'fro' norm is the vector 2-norm over the two dims.

    The norms of the singular values ('nuc', 2, -2) and the row / column sums (1, -1, inf,
    -inf) are engine.linalg.matrix_norm's (the linear algebra ops), not computed here.
    """
    if isinstance(ord, str) and ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if not isinstance(ord, str) and ord not in (1, -1, 2, -2, float("inf"), float("-inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord:g} not supported.")
    if a.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
    if ord == "fro":
        return vector_norm_of(a, 2, dims, keepdim, dtype)
    raise NotImplementedError(f"matrix norm of order {ord}: use engine.linalg.matrix_norm")


@public
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm: a vector norm for a numeric p (and 'fro' over at most two dims), else a matrix norm."""
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, numbers.Integral) or len(dim) <= 2):
            return vector_norm_of(input, 2, dim, keepdim, dtype)
        return matrix_norm_of(input, p, tuple(range(input.dim())) if dim is None else dim, keepdim, dtype)
    return vector_norm_of(input, 2 if p is None else p, dim, keepdim, dtype)


@public
def softmax(input, dim, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return apply_op(D.SOFTMAX, (input,), (norm_dim(dim, input.dim()),))


@public
def log_softmax(input, dim, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return apply_op(D.LOG_SOFTMAX, (input,), (norm_dim(dim, input.dim()),))


def truth_reduction(name: str, a, dim, keepdim):
    """all / any over `dim` (an empty list reduces nothing): bool, or uint8 for a uint8 input."""
    data = a._data
    out = getattr(data, name)(axis=reduce_dims(dim, data.ndim, empty_means_all=False), keepdims=keepdim)
    return wrap(out.astype(data.dtype) if data.dtype == backend.uint8.np else out)


@public
def all(input, dim=None, keepdim=False, *, axis=None):
    return truth_reduction("all", input, dim if axis is None else axis, keepdim)


@public
def any(input, dim=None, keepdim=False, *, axis=None):
    return truth_reduction("any", input, dim if axis is None else axis, keepdim)


def pairwise_extreme(name: str, a, b, method: bool = False):
    """maximum / minimum of two tensors, elementwise (torch takes no Python number here)."""
    if not isinstance(a, Tensor):
        raise arg_errors.not_a_tensor(name, "input", 1, a)
    if not isinstance(b, Tensor):
        raise arg_errors.not_a_tensor(name, "other", 1 if method else 2, b)
    return apply_op(D.MAXIMUM if name == "maximum" else D.MINIMUM, (a, b))


@public(method=False)
def maximum(input, other):
    return pairwise_extreme("maximum", input, other)


@public(method=False)
def minimum(input, other):
    return pairwise_extreme("minimum", input, other)


__all__ = exported(__name__)  # what `engine` exports from here (api.public)
