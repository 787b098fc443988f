"""The functional API (`engine.exp`, `Tensor.sum`, ...): argument handling, then a table row.

Each function turns PyTorch-style arguments (dims, keepdim, scalars on either side)
into one `apply_op` call on a row of derivatives.py. Views also record how to
re-derive themselves from their base, for in-place ops through them (inplace.py).
"""

from __future__ import annotations

import builtins
import collections
import numbers

import numpy

from .. import backend
from ..tensor import Tensor, wrap
from . import arg_errors, creation
from . import derivatives as D
from .api import IN_PLACE, exported, public
from .op import apply_op, broadcast_error, check_same_device
from .views import note_view

ndarray = numpy.ndarray
return_types_max = collections.namedtuple("max", ["values", "indices"])
return_types_min = collections.namedtuple("min", ["values", "indices"])


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


def _binary(op, a, b, attrs=()):
    """A two-input op; shapes that don't broadcast are reported by `apply_op` when numpy refuses."""
    return apply_op(op, (a, b if b.__class__ is Tensor else as_operand(b)), attrs)


# -------------------------------------------------------------------------- arithmetic


@public
def add(a, b, *, alpha=1):
    if a.__class__ is Tensor:  # the common case, one call shorter (this is every `a + b`)
        return apply_op(D.ADD, (a, b if b.__class__ is Tensor else as_operand(b)), (alpha,))
    a = as_operand(a)
    if not isinstance(a, Tensor):
        return add(b, a) if alpha == 1 else add(as_operand(b) * alpha, a)
    return _binary(D.ADD, a, b, (alpha,))


@public
def sub(a, b, *, alpha=1):
    if a.__class__ is Tensor:  # the common case, one call shorter (this is every `a - b`)
        return apply_op(D.SUB, (a, b if b.__class__ is Tensor else as_operand(b)), (alpha,))
    a = as_operand(a)
    if not isinstance(a, Tensor):
        return rsub(b, a, alpha=alpha)
    return _binary(D.SUB, a, b, (alpha,))


@public(method=False)
def rsub(a, other, *, alpha=1):
    if isinstance(other, Tensor):
        return sub(other, a, alpha=alpha)
    return apply_op(D.RSUB, (a,), (other, alpha))


@public
def mul(a, b):
    if a.__class__ is Tensor:  # the common case, one call shorter (this is every `a * b`)
        return apply_op(D.MUL, (a, b if b.__class__ is Tensor else as_operand(b)))
    a = as_operand(a)
    if not isinstance(a, Tensor):
        return mul(b, a)
    return _binary(D.MUL, a, b)


multiply = public(mul, name="multiply")
subtract = public(sub, name="subtract")


@public
def neg(a):
    return apply_op(D.NEG, (a,))


negative = public(neg, name="negative")


@public
def reciprocal(a):
    a = as_operand(a)
    if a._data.dtype.kind != "f":  # an integer or bool tensor's reciprocal is in the default dtype
        a = wrap(a._data.astype(backend.get_default_dtype().np))
    return apply_op(D.RECIPROCAL, (a,))


@public
def matmul(a, b):
    if b.__class__ is not Tensor:
        b = as_operand(b)
    sa, sb = a._data.shape, b._data.shape
    na, nb = len(sa), len(sb)
    if na == 2 and nb == 2:  # the common case first
        if a._data.__class__ is not b._data.__class__:
            check_same_device(a, b)
        _check_mm(sa, sb)
        return apply_op(D.MM, (a, b))
    check_same_device(a, b)
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D")
    if na == 1 and nb == 1:
        if a.shape != b.shape:
            n, k = a.shape[0], b.shape[0]
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{n}] and src [{k}] to have the same "
                f"number of elements, but got {n} and {k} elements respectively"
            )
        return apply_op(D.DOT, (a, b))
    if na == 2 and nb == 1:
        n, k = a.shape
        _check_mm(
            a.shape, (b.shape[0], 1), f"size mismatch, got input ({n}), mat ({n}x{k}), vec ({b.shape[0]})"
        )
        return apply_op(D.MV, (a, b))
    if na == 1 and nb == 2:
        return squeeze(mm(unsqueeze(a, 0), b), 0, _name="SqueezeBackward4")
    left = unsqueeze(a, 0) if na == 1 else a
    right = unsqueeze(b, -1) if nb == 1 else b
    if left.shape[-1] != right.shape[-2]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{right.shape[0]}, {left.shape[-1]}] but got: [{right.shape[0]}, {right.shape[-2]}]."
        )
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
def mm(a, b):
    if a.dim() != 2 or b.dim() != 2:
        raise RuntimeError("self must be a matrix" if a.dim() != 2 else "mat2 must be a matrix")
    return matmul(a, b)


@public
def dot(a, b):
    if a.dim() != 1 or b.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.dim()}D and {b.dim()}D tensors")
    return matmul(a, b)


@public
def mv(a, v):
    return matmul(a, v)


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
def clamp(a, min=None, max=None):
    return _clamp("clamp", a, min, max)


@public(method=False)
def clip(a, min=None, max=None):
    return _clamp("clip", a, min, max)


@public(method=False)
def where(condition, a, b):
    cond = condition._data if isinstance(condition, Tensor) else condition
    a, b = as_operand(a), as_operand(b)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        return wrap(backend.xp_of(cond).where(cond, a, b))
    check_same_device(condition, a, b)
    return apply_op(D.WHERE, (a, b), (cond,))


# --------------------------------------------------------------------------- reductions


@public
def sum(a, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        a = a.to(dtype)
    shape = a._data.shape
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0 and not keepdim):
        return apply_op(D.SUM, (a,), (shape,))
    return apply_op(D.SUM_DIM, (a,), (shape, norm_dims(dim, len(shape)), keepdim))


@public
def mean(a, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        a = a.to(dtype)
    if not a.dtype.is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {a.dtype.name.capitalize()}"
        )
    shape = a._data.shape
    if dim is None:
        return apply_op(D.MEAN, (a,), (shape, a._data.size))
    return apply_op(D.MEAN_DIM, (a,), (shape, norm_dims(dim, len(shape)), keepdim))


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


@public
def var(a, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):  # var(unbiased) positional form
        dim, unbiased = None, dim
    dims = norm_dims(dim, a.dim())
    return apply_op(D.VAR, (a,), (dims, _correction(unbiased, correction), keepdim))


@public
def std(a, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    dims = norm_dims(dim, a.dim())
    return apply_op(D.STD, (a,), (dims, _correction(unbiased, correction), keepdim))


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
    if name == "max":
        return _extreme(a, dim, keepdim, D.MAX, D.MAX_DIM, lambda x, **k: x.argmax(**k), return_types_max)
    return _extreme(a, dim, keepdim, D.MIN, D.MIN_DIM, lambda x, **k: x.argmin(**k), return_types_min)


def _extreme(a, dim, keepdim, full_op, dim_op, argfn, result_type):
    if dim is None:
        if a.numel() == 0:
            raise RuntimeError(
                "max(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        return apply_op(full_op, (a,))
    d = norm_dim(dim, a.dim())
    data = a._data
    xp = backend.xp_of(data)
    idx = argfn(data, axis=d, keepdims=True) if data.ndim else xp.zeros((), dtype=backend.int64.np)
    key = _grid_key(data.shape, d, idx, xp)
    values = apply_op(dim_op, (a,), (a.shape, d, keepdim, key))
    indices = wrap(idx if keepdim or data.ndim == 0 else idx.squeeze(d))
    return result_type(values, indices)


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
def max(a, dim=None, keepdim=False, *, other=None):
    return max_min("max", a, dim, keepdim, other)


@public(method=False)
def min(a, dim=None, keepdim=False, *, other=None):
    return max_min("min", a, dim, keepdim, other)


@public
def amax(a, dim=None, keepdim=False):
    return max(a) if dim is None else max(a, dim, keepdim).values


def _flat_index(a, index):
    """A 0-d int64 index on `a`'s device (numpy gives a host scalar, CuPy a 0-d device array)."""
    return wrap(backend.xp_of(a._data).asarray(index, dtype=backend.int64.np))


@public
def argmax(a, dim=None, keepdim=False):
    if dim is None:
        return _flat_index(a, a._data.argmax())
    return wrap(a._data.argmax(axis=norm_dim(dim, a.dim()), keepdims=keepdim))


@public
def argmin(a, dim=None, keepdim=False):
    if dim is None:
        return _flat_index(a, a._data.argmin())
    return wrap(a._data.argmin(axis=norm_dim(dim, a.dim()), keepdims=keepdim))


@public
def norm(a, p="fro", dim=None, keepdim=False):
    if p == "fro" or p is None:
        p = 2
    if p in (float("inf"), float("-inf")) or p <= 0:
        raise ValueError(f"norm: only finite p > 0 is supported here, got p={p}")
    return apply_op(D.NORM, (a,), (p, norm_dims(dim, a.dim()), keepdim))


@public
def softmax(a, dim, dtype=None):
    if dtype is not None:
        a = a.to(dtype)
    return apply_op(D.SOFTMAX, (a,), (norm_dim(dim, a.dim()),))


@public
def log_softmax(a, dim, dtype=None):
    if dtype is not None:
        a = a.to(dtype)
    return apply_op(D.LOG_SOFTMAX, (a,), (norm_dim(dim, a.dim()),))


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
def view(a, *shape):
    if len(shape) == 1 and isinstance(shape[0], backend.dtype):
        raise NotImplementedError("view(dtype) is not supported")
    new = _infer_shape(shape, a.numel())
    if not _can_view(a._data, new):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return _view(D.VIEW, a, (a.shape, new))


@public
def reshape(a, *shape):
    new = _infer_shape(shape, a.numel())
    if _can_view(a._data, new):
        return _view(D.VIEW, a, (a.shape, new))
    copied = clone(a)
    return apply_op(D.UNSAFE_VIEW, (copied,), (a.shape, new))


@public(function=False)
def view_as(a, other):
    return view(a, other.shape)


@public(function=False)
def reshape_as(a, other):
    return reshape(a, other.shape)


@public
def flatten(a, start_dim=0, end_dim=-1):
    if a.dim() == 0:
        return reshape(a, 1)
    s, e = norm_dim(start_dim, a.dim()), norm_dim(end_dim, a.dim())
    if s == e:
        return a
    shape = a.shape
    n = 1
    for d in shape[s : e + 1]:
        n *= d
    return reshape(a, shape[:s] + (n,) + shape[e + 1 :])


@public
def t(a):
    if a.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.dim()}D")
    return _view(D.T, a, ())


@public
def transpose(a, dim0, dim1):
    n = a.dim()
    return _view(D.TRANSPOSE, a, (norm_dim(dim0, n), norm_dim(dim1, n)))


swapaxes = public(transpose, name="swapaxes")


@public
def permute(a, *dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    n = a.dim()
    dims = tuple(norm_dim(d, n) for d in dims)
    if sorted(dims) != list(range(n)):
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not "
            "match the length of the desired ordering of dimensions i.e. input.dim() = "
            f"{n} is not equal to len(dims) = {len(dims)}"
        )
    inverse = tuple(sorted(range(n), key=dims.__getitem__))
    return _view(D.PERMUTE, a, (dims, inverse))


@public(function=False)
def expand(a, *sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    shape = a.shape
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
    return _view(D.EXPAND, a, (shape, tuple(new)))


@public(function=False)
def expand_as(a, other):
    return expand(a, other.shape)


@public
def squeeze(a, dim=None, _name=None):
    shape = a.shape
    if dim is None:
        name = _name or "SqueezeBackward0"
        new = tuple(n for n in shape if n != 1)
    else:
        dims = norm_dims(dim, a.dim())
        name = _name or ("SqueezeBackward2" if isinstance(dim, (tuple, list)) else "SqueezeBackward1")
        new = tuple(n for d, n in enumerate(shape) if not (d in dims and n == 1))
    return _view(D.SQUEEZE[name], a, (shape, new))


@public
def unsqueeze(a, dim):
    shape = a.shape
    d = norm_dim(dim, a.dim() + 1)
    new = shape[:d] + (1,) + shape[d:]
    return _view(D.SQUEEZE["UnsqueezeBackward0"], a, (shape, new))


@public
def select(a, dim, index):
    d = norm_dim(dim, a.dim())
    size = a.shape[d]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {size}")
    index = index % size
    key = (slice(None),) * d + (index, Ellipsis)  # Ellipsis: numpy returns a view, not a scalar
    return _view(D.SELECT, a, (a.shape, d, index, key))


@public
def narrow(a, dim, start, length):
    d = norm_dim(dim, a.dim())
    return _slice(a, d, start, start + length, 1)


def _slice(a, d, start, end, step):
    key = (slice(None),) * d + (slice(start, end, step),)
    return _view(D.SLICE, a, (a.shape, d, start, end, step, key))


# ----------------------------------------------------------------------------- indexing


def _is_advanced(item) -> bool:
    if isinstance(item, Tensor):
        return item.dim() > 0 or item.dtype.name == "bool"
    return (
        isinstance(item, (list, ndarray))
        or backend.is_array(item)
        and item.ndim > 0
        or isinstance(item, bool)
    )


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
    if not isinstance(key, tuple):
        key = (key,)
    if builtins.any(_is_advanced(k) for k in key):
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
            out = select(out, dim, index)
    if out is a:
        out = _view(D.ALIAS, a, ())
    return out


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
    def fn(a, b):
        if isinstance(b, Tensor):
            if b._data.__class__ is not a._data.__class__:
                check_same_device(a, b)
            b = b._data
        return wrap(getattr(backend.xp_of(a._data), ufunc_name)(a._data, b))

    fn.__name__ = ufunc_name
    return fn


eq = public(_compare("equal"), name="eq")
ne = public(_compare("not_equal"), name="ne")
lt = public(_compare("less"), name="lt")
le = public(_compare("less_equal"), name="le")
gt = public(_compare("greater"), name="gt")
ge = public(_compare("greater_equal"), name="ge")


@public
def equal(a, b) -> bool:
    check_same_device(a, b)
    return a.shape == b.shape and bool((a._data == b._data).all())


@public
def all(a, dim=None):
    return wrap(a._data.all() if dim is None else a._data.all(axis=dim))


@public
def any(a, dim=None):
    return wrap(a._data.any() if dim is None else a._data.any(axis=dim))


@public(method=False)
def detach(a):
    return a.detach()


@public(method=False)
def numel(a) -> int:
    return a.numel()


__all__ = exported(__name__)  # what `engine` exports from here (api.public)
