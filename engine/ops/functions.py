"""The functional API (`engine.exp`, `Tensor.sum`, ...): argument handling, then a table row.

Each function turns PyTorch-style arguments (dims, keepdim, scalars on either side)
into one `apply_op` call on a row of derivatives.py. Views also record how to
re-derive themselves from their base, for in-place ops through them (inplace.py).
"""

from __future__ import annotations

import builtins
import collections
import numbers
import warnings

import numpy

from .. import backend
from ..autograd import grad_mode
from ..tensor import Tensor, wrap
from . import arg_errors, creation, product_dtypes, promotion
from . import derivatives as D
from . import kernels as K
from .api import IN_PLACE, exported, public
from .dtype_views import view_dtype
from .indexing import index_tuple, split_basic
from .indexing import is_advanced as _is_advanced
from .op import apply_op, broadcast_error, check_same_device
from .promotion import result_type
from .views import note_view

ndarray = numpy.ndarray


# --------------------------------------------------------------------------- helpers


def as_operand(x):
    """Tensors pass; Python numbers stay scalars (like torch's wrapped numbers); arrays wrap."""
    if isinstance(x, (Tensor, numbers.Number)):
        return x
    if backend.is_array(x):
        return wrap(x)
    return creation.tensor(x)


def broadcast_check(a, b) -> None:
    """Raise PyTorch's errors for two tensors that can't meet in one elementwise op."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        check_same_device(a, b)
        error = broadcast_error((a, b))
        if error is not None:
            raise error


def norm_dim(dim: int, ndim: int) -> int:
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def norm_dims(dim, ndim: int) -> tuple:
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (list, tuple)):
        return tuple(sorted({norm_dim(d, ndim) for d in dim}))
    return (norm_dim(dim, ndim),)


def with_number(a, number, typed: bool = True):
    """A tensor and a Python number as torch computes them: the tensor in the result dtype (an integer
    tensor meeting a float, a bool one meeting an int; these never require grad, so no node), and with
    `typed` an integer number as a scalar of that dtype (-3 wraps for uint8, as in torch)."""
    if a._data.dtype.kind == "f":  # a float tensor keeps its dtype whatever the number
        return a, number
    dt = result_type((a, number))
    if dt != a._data.dtype:
        a = wrap(a._data.astype(dt))
    return a, K.typed_number(number, dt) if typed and dt.kind != "f" else number


def number_operands(a, b, typed: bool = True) -> tuple:
    """The two operands of a row taking a Python number on either side (`with_number`)."""
    if not isinstance(b, Tensor):
        return with_number(a, b, typed)
    if not isinstance(a, Tensor):
        b, a = with_number(b, a, typed)
    return a, b


def _binary(op, a, b, attrs=()):
    """A two-input op; shapes that don't broadcast are reported by `apply_op` when numpy refuses."""
    return apply_op(op, (a, b if b.__class__ is Tensor else as_operand(b)), attrs)


# -------------------------------------------------------------------------- arithmetic


@public
def add(input, other, *, alpha=1):
    if input.__class__ is Tensor:  # the common case, one call shorter (this is every `a + b`)
        return apply_op(D.ADD, (input, other if other.__class__ is Tensor else as_operand(other)), (alpha,))
    input = as_operand(input)
    if not isinstance(input, Tensor):
        return add(other, input) if alpha == 1 else add(as_operand(other) * alpha, input)
    return _binary(D.ADD, input, other, (alpha,))


@public
def sub(input, other, *, alpha=1):
    if input.__class__ is Tensor:  # the common case, one call shorter (this is every `a - b`)
        return apply_op(D.SUB, (input, other if other.__class__ is Tensor else as_operand(other)), (alpha,))
    input = as_operand(input)
    if not isinstance(input, Tensor):
        return rsub(other, input, alpha=alpha)
    return _binary(D.SUB, input, other, (alpha,))


@public(method=False)
def rsub(input, other, *, alpha=1):
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    return apply_op(D.RSUB, (input,), (other, alpha))


@public
def mul(input, other):
    if input.__class__ is Tensor:  # the common case, one call shorter (this is every `a * b`)
        return apply_op(D.MUL, (input, other if other.__class__ is Tensor else as_operand(other)))
    input = as_operand(input)
    if not isinstance(input, Tensor):
        return mul(other, input)
    return _binary(D.MUL, input, other)


class _NotGiven:
    """div's `rounding_mode` default: torch records DivBackward2 once a mode is passed, even None."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "None"


NOT_GIVEN = _NotGiven()


def check_rounding_mode(input, other, rounding_mode) -> None:
    if rounding_mode is not None and not isinstance(rounding_mode, str):
        given = (arg_errors.type_name(input), arg_errors.type_name(other))
        raise arg_errors.invalid_combination(
            "div",
            given + (f"rounding_mode={arg_errors.type_name(rounding_mode)}",),
            [
                (arg_errors.TENSOR_OTHER, None),
                ("(Tensor input, Tensor other, *, str rounding_mode, Tensor out = None)", None),
                ("(Tensor input, Number other, *, str rounding_mode)", None),
            ],
        )
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
        )


@public
def div(input, other, *, rounding_mode=NOT_GIVEN):
    """True division, or with `rounding_mode` "trunc" / "floor" (zero gradients, as torch's DivBackward2)."""
    if rounding_mode is NOT_GIVEN and input.__class__ is Tensor and input._data.dtype.kind == "f":
        return _binary(D.DIV, input, other)  # the common case, every float a / b
    a, other = as_operand(input), as_operand(other)
    if not isinstance(a, Tensor) and not isinstance(other, Tensor):
        a = creation.tensor(a)  # torch.div(7, 2): a 0-dim tensor
    if rounding_mode is not NOT_GIVEN:
        check_rounding_mode(input, other, rounding_mode)
        operands = number_operands(a, other, typed=rounding_mode is not None)
        return apply_op(D.DIV_MODE, operands, (rounding_mode,))
    out = apply_op(D.DIV, (a, other))
    if result_type((a, other)).kind != "f":
        out._data = out._data.astype(backend.get_default_dtype().np)  # int / int: true division, float32
    return out


true_divide = public(div, name="true_divide")
divide = public(div, name="divide")
multiply = public(mul, name="multiply")
subtract = public(sub, name="subtract")


@public
def neg(input):
    return apply_op(D.NEG, (input,))


negative = public(neg, name="negative")


@public
def reciprocal(input):
    input = as_operand(input)
    if input._data.dtype.kind != "f":  # an integer or bool tensor's reciprocal is in the default dtype
        input = wrap(input._data.astype(backend.get_default_dtype().np))
    return apply_op(D.RECIPROCAL, (input,))


POW_SIGNATURES = (
    "(Tensor input, Tensor exponent, *, Tensor out = None)",
    "(Number self, Tensor exponent, *, Tensor out = None)",
    "(Tensor input, Number exponent, *, Tensor out = None)",
)


@public
def pow(input, exponent):
    if not isinstance(input, Tensor):
        if not isinstance(exponent, Tensor):
            raise arg_errors.signature_error("pow", (input, exponent), POW_SIGNATURES)
        if isinstance(input, bool) and exponent._data.dtype.kind == "b":
            raise K.not_implemented("pow", exponent._data.dtype)
        exponent, input = with_number(exponent, input)
        return apply_op(D.RPOW, (exponent,), (input,))
    if isinstance(exponent, Tensor):
        broadcast_check(input, exponent)
        if input._data.dtype.kind == "b" and exponent._data.dtype.kind == "b":
            raise K.not_implemented("pow", input._data.dtype)
        return apply_op(D.POW_TENSOR, (input, exponent))
    kind = input._data.dtype.kind
    if kind != "f" and isinstance(exponent, int):
        if exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if kind == "b" and isinstance(exponent, bool):  # bool ** bool stays bool in torch
            return wrap(K.power(input._data, exponent).astype(input._data.dtype))
    return apply_op(D.POW_SCALAR, (with_number(input, exponent, typed=False)[0],), (exponent,))


@public
def matmul(input, other):
    if other.__class__ is not Tensor:
        other = as_operand(other)
    sa, sb = input._data.shape, other._data.shape
    na, nb = len(sa), len(sb)
    if na == 2 and nb == 2:  # the common case first
        if input._data.__class__ is not other._data.__class__:
            check_same_device(input, other)
        _check_mm(sa, sb)
        if input._data.dtype is not other._data.dtype and input.dtype is not other.dtype:
            raise product_dtypes.mm_error(input, other)
        return apply_op(D.MM, (input, other))
    check_same_device(input, other)
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D")
    if na == 1 and nb == 1:
        if product_dtypes.differ(input, other):
            raise product_dtypes.dot_error(input, other)
        if input.shape != other.shape:
            n, k = input.shape[0], other.shape[0]
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{n}] and src [{k}] to have the same "
                f"number of elements, but got {n} and {k} elements respectively"
            )
        return apply_op(D.DOT, (input, other))
    if na == 2 and nb == 1:
        n, k = input.shape
        _check_mm(
            input.shape,
            (other.shape[0], 1),
            f"size mismatch, got input ({n}), mat ({n}x{k}), vec ({other.shape[0]})",
        )
        if product_dtypes.differ(input, other):
            raise product_dtypes.mv_error(input, other)
        return apply_op(D.MV, (input, other))
    if na == 1 and nb == 2:
        return squeeze(mm(unsqueeze(input, 0), other), 0, _name="SqueezeBackward4")
    left = unsqueeze(input, 0) if na == 1 else input
    right = unsqueeze(other, -1) if nb == 1 else other
    if left.shape[-1] != right.shape[-2]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{right.shape[0]}, {left.shape[-1]}] but got: [{right.shape[0]}, {right.shape[-2]}]."
        )
    if product_dtypes.differ(input, other):
        raise product_dtypes.batched_matmul_error(input, other)
    out = apply_op(D.BMM, (left, right))
    if na == 1:
        out = squeeze(out, -2, _name="SqueezeBackward4")
    if nb == 1:
        out = squeeze(out, -1, _name="SqueezeBackward4")
    return _view(D.UNSAFE_VIEW, out, (out.shape, out.shape))


def _check_mm(sa, sb, message=None):
    if sa[1] != sb[0]:
        raise RuntimeError(
            message or f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})"
        )


@public
def mm(input, mat2):
    if input.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError("self must be a matrix" if input.dim() != 2 else "mat2 must be a matrix")
    return matmul(input, mat2)


@public
def dot(input, tensor):
    if input.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {tensor.dim()}D tensors")
    return matmul(input, tensor)


@public
def mv(input, vec):
    return matmul(input, vec)


# ---------------------------------------------------------------------------- pointwise


def _unary(op, name: str, in_place: bool = True, module: str = __name__):
    """`engine.<name>`, `Tensor.<name>` and, unless told not to, `Tensor.<name>_` for a unary row
    (exported by `module`'s `__all__`)."""

    def fn(input):
        if input.__class__ is not Tensor and not isinstance(input, Tensor):
            raise arg_errors.not_a_tensor(name, "input", 1, input)
        return apply_op(op, (input,))

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module
    if in_place:
        IN_PLACE[name + "_"] = op
    return public(fn)


exp = _unary(D.EXP, "exp")
log = _unary(D.LOG, "log")
log1p = _unary(D.LOG1P, "log1p")
sqrt = _unary(D.SQRT, "sqrt")
sin = _unary(D.SIN, "sin")
cos = _unary(D.COS, "cos")
tanh = _unary(D.TANH, "tanh")
sigmoid = _unary(D.SIGMOID, "sigmoid")
relu = _unary(D.RELU, "relu")
abs = _unary(D.ABS, "abs")
sign = _unary(D.SIGN, "sign")
erf = _unary(D.ERF, "erf")
clone = _unary(D.CLONE, "clone", in_place=False)


def clamp_bounds_are_tensors(name: str, lo, hi, method: bool) -> bool:
    """Tensor bounds (clamp.Tensor, ClampBackward0) or numbers (ClampBackward1); torch's errors for a mix."""
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if not (isinstance(lo, Tensor) or isinstance(hi, Tensor)):
        return False
    if (lo is None or isinstance(lo, Tensor)) and (hi is None or isinstance(hi, Tensor)):
        return True
    raise arg_errors.clamp_mixed_bounds(name, lo, hi, method)


def _clamp(name, a, lo, hi, method=False):
    if clamp_bounds_are_tensors(name, lo, hi, method):
        return apply_op(D.CLAMP_TENSOR, (a, lo, hi))
    return apply_op(D.CLAMP, (a,), (lo, hi))


@public(method=False)
def clamp(input, min=None, max=None):
    return _clamp("clamp", input, min, max)


@public(method=False)
def clip(input, min=None, max=None):
    return _clamp("clip", input, min, max)


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


return_types = {name: collections.namedtuple(name, ["values", "indices"]) for name in ("max", "min")}


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
    return (result_type or return_types[name])(values, indices)


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


# ------------------------------------------------------------------------------- views


def _view(op, a, attrs):
    """Apply a view op: the result shares storage, version counter and base with `a`."""
    out = apply_op(op, (a,), attrs)
    if a._rg and not out._rg:  # a view made under no_grad still requires grad, as in torch
        out._rg = True
    base = a._base if a._base is not None else a
    out._vc = a._vc
    out._base = base
    parent_fn = a._view_fn
    forward = op.forward

    def view_fn(xp, array):
        return forward(xp, parent_fn(xp, array) if parent_fn else array, *attrs)

    out._view_fn = view_fn
    note_view(out, a)  # so an in-place change elsewhere can regenerate it (views.py)
    return out


def _view_of(a, view_fn):
    """A view of `a` given by an arbitrary view function (used by CopySlices)."""
    return _view(D.AS_STRIDED, a, (a.shape, view_fn))


def _infer_shape(shape, numel) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(n) for n in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = 1
        for n in shape:
            if n != -1:
                known *= n
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
        shape = tuple(numel // known if n == -1 else n for n in shape)
    total = 1
    for n in shape:
        total *= n
    if total != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
    return shape


def _can_view(data, shape) -> bool:
    try:
        data.reshape(shape, copy=False)
    except (ValueError, TypeError, AttributeError):
        return data.flags.c_contiguous
    return True


@public(function=False)
def view(input, *shape, size=None, dtype=None):
    if size is not None:  # x.view(size=(2, 3))
        shape = (size,)
    if dtype is not None or len(shape) == 1 and isinstance(shape[0], backend.dtype):
        return view_dtype(input, dtype or shape[0])  # the same bytes as another dtype (dtype_views.py)
    new = _infer_shape(shape, input.numel())
    if not _can_view(input._data, new):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return _view(D.VIEW, input, (input.shape, new))


@public
def reshape(input, *shape_args, shape=None):
    new = _infer_shape(shape_args if shape is None else (shape,), input.numel())
    if _can_view(input._data, new):
        return _view(D.VIEW, input, (input.shape, new))
    copied = clone(input)
    return apply_op(D.UNSAFE_VIEW, (copied,), (input.shape, new))


@public(function=False)
def view_as(input, other):
    return view(input, other.shape)


@public(function=False)
def reshape_as(input, other):
    return reshape(input, other.shape)


@public
def flatten(input, start_dim=0, end_dim=-1):
    if input.dim() == 0:
        return reshape(input, 1)
    s, e = norm_dim(start_dim, input.dim()), norm_dim(end_dim, input.dim())
    if s == e:
        return input
    shape = input.shape
    n = 1
    for d in shape[s : e + 1]:
        n *= d
    return reshape(input, shape[:s] + (n,) + shape[e + 1 :])


@public
def t(input):
    check_t(input, "t")
    return _view(D.T, input, ())


def check_t(a, name: str) -> None:
    if a.dim() > 2:
        raise RuntimeError(f"{name}() expects a tensor with <= 2 dimensions, but self is {a.dim()}D")


@public
def transpose(input, dim0, dim1):
    n = input.dim()
    return _view(D.TRANSPOSE, input, (norm_dim(dim0, n), norm_dim(dim1, n)))


@public
def swapaxes(input, axis0, axis1):
    return transpose(input, axis0, axis1)


@public
def permute(input, *dims_args, dims=None):
    dims = dims_args if dims is None else (dims,)
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    n = input.dim()
    dims = tuple(norm_dim(d, n) for d in dims)
    if sorted(dims) != list(range(n)):
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not "
            "match the length of the desired ordering of dimensions i.e. input.dim() = "
            f"{n} is not equal to len(dims) = {len(dims)}"
        )
    inverse = tuple(sorted(range(n), key=dims.__getitem__))
    return _view(D.PERMUTE, input, (dims, inverse))


@public(function=False)
def expand(input, *sizes, size=None):
    if size is not None:  # x.expand(size=(2, 3))
        sizes = (size,)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    shape = input.shape
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(shape)}}}, size=[{', '.join(map(str, sizes))}]): the "
            "number of sizes provided must be greater or equal to the number of dimensions in the tensor"
        )
    new = []
    for i, n in enumerate(sizes):
        old = shape[i - lead] if i >= lead else 1
        if n == -1:
            n = old
        elif old != 1 and old != n:
            raise RuntimeError(
                f"The expanded size of the tensor ({n}) must match the existing size ({old}) at "
                f"non-singleton dimension {i}.  Target sizes: [{', '.join(map(str, sizes))}].  "
                f"Tensor sizes: [{', '.join(map(str, shape))}]"
            )
        new.append(int(n))
    return _view(D.EXPAND, input, (shape, tuple(new)))


@public(function=False)
def expand_as(input, other):
    return expand(input, other.shape)


@public
def squeeze(input, dim=None, _name=None):
    name = _name or squeeze_node_name(dim, ("SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2"))
    return _view(D.SQUEEZE[name], input, (input.shape, squeezed_shape(input.shape, dim)))


def squeeze_node_name(dim, names: tuple) -> str:
    """PyTorch's node for squeeze of all dims, one dim, or a tuple of dims (names in that order)."""
    if dim is None:
        return names[0]
    return names[2] if isinstance(dim, (tuple, list)) else names[1]


def squeezed_shape(shape, dim) -> tuple:
    if dim is None:
        return tuple(n for n in shape if n != 1)
    dims = norm_dims(dim, len(shape))
    return tuple(n for d, n in enumerate(shape) if not (d in dims and n == 1))


def unsqueezed_shape(shape, dim) -> tuple:
    d = norm_dim(dim, len(shape) + 1)
    return shape[:d] + (1,) + shape[d:]


@public
def unsqueeze(input, dim):
    return _view(D.SQUEEZE["UnsqueezeBackward0"], input, (input.shape, unsqueezed_shape(input.shape, dim)))


@public
def select(input, dim, index):
    if input.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = norm_dim(dim, input.dim())
    size = input.shape[d]
    index = int(index)
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}"
        )
    return _select(input, d, index)


def _select(input, d, index):
    index = index % input.shape[d]
    key = (slice(None),) * d + (index, Ellipsis)  # Ellipsis: numpy returns a view, not a scalar
    return _view(D.SELECT, input, (input.shape, d, index, key))


def _slice(a, d, start, end, step):
    key = (slice(None),) * d + (slice(start, end, step),)
    return _view(D.SLICE, a, (a.shape, d, start, end, step, key))


# ----------------------------------------------------------------------------- indexing


def _array_key(item, dev):
    """An index as an array on the indexed tensor's device (torch takes CPU indices for a GPU tensor)."""
    if isinstance(item, Tensor):
        item = item._data
    elif isinstance(item, list):
        item = numpy.asarray(item)  # host data from Python
    if backend.is_array(item) and item.ndim and backend.device_of(item) != dev:
        return backend.to_device(item, dev)
    return item


def getitem(a, key):
    key = index_tuple(key)
    if builtins.any(_is_advanced(k) for k in key):
        basic, key = split_basic(key, a.dim())  # ints, slices first, as views (indexing.py)
        if basic is not None:
            a = getitem(a, basic)
        dev = backend.CPU if a._data.__class__ is ndarray else a.device
        array_key = tuple(_array_key(k, dev) for k in key)
        if len(array_key) == 1:
            array_key = array_key[0]
        return apply_op(D.INDEX, (a,), (a.shape, array_key))
    out = a
    dim = 0
    specified = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    for k in key:
        if k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif k is Ellipsis:
            dim += a.dim() - specified
        elif isinstance(k, slice):
            size = out.shape[dim]
            start, stop, step = k.indices(size)
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            if (start, stop, step) != (0, size, 1):
                out = _slice(out, dim, start, builtins.max(stop, start), step)
            dim += 1
        else:
            index = int(k)
            if dim >= out.dim():
                raise IndexError(f"too many indices for tensor of dimension {a.dim()}")
            size = out.shape[dim]
            if not -size <= index < size:
                raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")
            out = _select(out, dim, index)
    if out is a:
        out = alias(a)
    return out


def alias(a):
    """A view of the whole tensor (AliasBackward0)."""
    return _view(D.ALIAS, a, ())


@public(function=False, name="_index_grad")
def index_grad(g, shape, key, basic):
    """Zeros of `shape` with g placed at `key`, as a differentiable op (double backward)."""
    return apply_op(D.INDEX_GRAD, (g,), (tuple(shape), key, basic))


@public(function=False, name="_threshold_backward")
def threshold_backward(g, x, threshold):
    """relu's backward as a differentiable op of (g, x) (ThresholdBackwardBackward0), as PyTorch records it."""
    return apply_op(D.THRESHOLD_BACKWARD, (g, x), (threshold,))


@public(function=False, name="_leaky_relu_backward")
def leaky_relu_backward(g, x, negative_slope):
    """leaky_relu's backward as a differentiable op of (g, x) (LeakyReluBackwardBackward0)."""
    return apply_op(D.LEAKY_RELU_BACKWARD, (g, x), (negative_slope,))


@public(function=False, name="_tied_to")
def tied_to(grad, x, op):
    """A gradient recorded as an op of (grad, x), as PyTorch records a pool's or a pad's backward."""
    return apply_op(op, (grad, x), (tuple(x.shape),))


@public(function=False, name="_im2col")
def im2col(x, kernel, stride, pads, dilation):
    """Sliding blocks as columns (Im2ColBackward0); F.unfold after its argument checks."""
    return apply_op(D.IM2COL, (x,), (tuple(x.shape), kernel, stride, pads, dilation))


@public(function=False, name="_col2im")
def col2im(cols, shape, kernel, stride, pads, dilation):
    """Columns added back into an image of `shape` (Col2ImBackward0), im2col's adjoint."""
    return apply_op(D.COL2IM, (cols,), (tuple(shape), kernel, stride, pads, dilation))


# ---------------------------------------------------------------------------- joining


@public(method=False)
def cat(tensors, dim=0):
    tensors = [as_operand(t) for t in tensors]
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    d = norm_dim(dim, tensors[0].dim())
    check_same_device(*tensors)
    sizes = tuple(t_.shape[d] for t_ in tensors)
    return apply_op(D.CAT, tuple(tensors), (d, sizes))


concat = public(cat, name="concat", method=False)
concatenate = public(cat, name="concatenate", method=False)


@public(method=False)
def stack(tensors, dim=0):
    tensors = [as_operand(t) for t in tensors]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0].shape
    for i, t_ in enumerate(tensors[1:], 1):
        if t_.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(t_.shape)} at entry {i}"
            )
    d = norm_dim(dim, len(shape) + 1)
    return apply_op(D.STACK, tuple(tensors), (d, len(tensors)))


# ------------------------------------------------------------------------- comparisons


def _compare(ufunc_name):
    def fn(input, other):
        if isinstance(other, Tensor):
            if other._data.__class__ is not input._data.__class__:
                check_same_device(input, other)
            other = other._data
        return wrap(getattr(backend.xp_of(input._data), ufunc_name)(input._data, other))

    fn.__name__ = ufunc_name
    return fn


eq = public(_compare("equal"), name="eq")
ne = public(_compare("not_equal"), name="ne")
lt = public(_compare("less"), name="lt")
le = public(_compare("less_equal"), name="le")
gt = public(_compare("greater"), name="gt")
ge = public(_compare("greater_equal"), name="ge")


@public
def equal(input, other) -> bool:
    check_same_device(input, other)
    return input.shape == other.shape and bool((input._data == other._data).all())


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


@public(method=False)
def promote_types(type1, type2):
    """The dtype an elementwise op of these two dtypes computes in, by torch's rules."""
    np_dtype = promotion.promote_types(type1.np, type2.np)
    return backend.dtype_of(numpy.empty(0, np_dtype))


@public(method=False)
def detach(input):
    return input.detach()


@public(method=False)
def numel(input) -> int:
    if not isinstance(input, Tensor):
        raise arg_errors.not_a_tensor("numel", "input", 1, input)
    return input.numel()


__all__ = exported(__name__)  # what `engine` exports from here (api.public)
