"""Views, indexing and joining (`Tensor.view`, `x[k]`, `engine.cat`, ...): torch's argument
handling, then a row.

Views share storage, version counter and base with their input and record how to re-derive
themselves from it (`_view`), so in-place ops through them work (ops/inplace.py, which builds on
this module; the rest of the family is in functions.py, above it).
"""

from __future__ import annotations

import builtins

import numpy

from ... import backend
from ...tensor import Tensor
from .. import arg_errors
from .. import derivatives as D
from ..api import exported, public
from ..op import apply_op, check_same_device, refuse_batched
from ..operands import as_operand, norm_dim, norm_dims
from ..views import note_view
from .dtype_views import view_dtype
from .indexing import index_tuple, is_advanced, split_basic

ndarray = numpy.ndarray


@public
def clone(input):
    if not isinstance(input, Tensor):
        raise arg_errors.not_a_tensor("clone", "input", 1, input)
    return apply_op(D.CLONE, (input,))


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


def view_of(a, view_fn):
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
    data = input._data
    if _can_view(data, new):
        return _view(D.VIEW if data.flags.c_contiguous else D.RESHAPE_ALIAS, input, (input.shape, new))
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


BOOL_MASK_UNDER_VMAP = (
    "vmap: We do not support batching operators that can support dynamic shape. Attempting to batch over "
    "indexing with a boolean mask."
)


def getitem(a, key):
    key = index_tuple(key)
    if builtins.any(is_advanced(k) for k in key):
        basic, key = split_basic(key, a.dim())  # ints, slices first, as views (indexing.py)
        if basic is not None:
            a = getitem(a, basic)
        for k in key:
            if isinstance(k, Tensor) and k.dtype.name == "bool":
                refuse_batched(k, BOOL_MASK_UNDER_VMAP)
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


def index_grad(g, shape, key, basic):
    """Zeros of `shape` with g placed at `key`, as a differentiable op (double backward)."""
    return apply_op(D.INDEX_GRAD, (g,), (tuple(shape), key, basic))


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


@public(method=False)
def detach(input):
    return input.detach()


@public(method=False)
def numel(input) -> int:
    if not isinstance(input, Tensor):
        raise arg_errors.not_a_tensor("numel", "input", 1, input)
    return input.numel()


__all__ = exported(__name__)  # what `engine` exports from here (api.public)
