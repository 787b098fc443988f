"""Shape and indexing ops (`engine.split`, `Tensor.gather`, `engine.sort`, ...): torch's argument
handling, then a row (rows.py).

Views (narrow, diagonal, unfold, movedim, unflatten, as_strided, the pieces of split / chunk /
unbind, ...) share storage and version counter with their base and record how to re-derive
themselves from it, as core.py's views do, so in-place ops through them work. The pieces of
split, chunk and unbind are the outputs of one node with several outputs: as in PyTorch, they
may not be changed in place while their history is recorded.

An index argument is checked here with torch's messages, then turned into the advanced-indexing
`key` that the row reads or writes at (on the tensor's device); a 0-dim tensor is addressed as
one element. Sorting finds its indices first; the rows then pick the values at them.
"""

from __future__ import annotations

import builtins
import functools
import math
import numbers
import warnings

from ... import backend, return_types
from ...autograd import forward_grad
from ...autograd.backward import edge_of
from ...autograd.thread_local import this_thread
from ...tensor import Tensor, wrap
from .. import derivatives as D
from ..api import exported, public
from ..inplace import apply_inplace
from ..op import (
    VMAP_DYNAMIC_SHAPE,
    VMAP_STORAGE,
    apply_op,
    broadcast_error,
    check_same_device,
    new_node,
    refuse_batched,
)
from ..operands import as_operand, norm_dim
from ..promotion import result_type
from ..reductions.core import unique_dims
from ..tangents import tangent_of
from ..views import MULTI_OUTPUT_NODE, note_view, set_creation_meta
from . import kernels as K
from .core import _slice, _view, clone, expand, flatten, permute, reshape, transpose, unsqueeze, view

_INDEX_TYPES = ("int32", "int64")


# --------------------------------------------------------------------------- helpers


def dim_or_axis(fn):
    """torch's `axis=` for `dim=`: its argument parser takes either for a native op's `dim`."""

    def call(*args, **kwargs):
        if "axis" in kwargs:
            kwargs["dim"] = kwargs.pop("axis")
        return fn(*args, **kwargs)

    return functools.update_wrapper(call, fn)


def _sizes(args) -> tuple:
    """Sizes given as varargs or as one sequence (`x.repeat(2, 1)`, `x.repeat((2, 1))`)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return tuple(int(n) for n in args)


def _ints(value) -> tuple:
    return (int(value),) if isinstance(value, numbers.Integral) else tuple(int(v) for v in value)


def _xp(a):
    return backend.xp_of(a._data)


def _dtype_name(t) -> str:
    return t.dtype.scalar_type


def _index_array(a, index):
    """An index tensor's values as an int64 array on `a`'s device."""
    data = index._data
    if backend.device_of(data) != a.device:
        data = backend.to_device(data, a.device)
    return data.astype(backend.int64.np, copy=False)


def _check_bounds(values, size: int, message) -> None:
    """Raise `message(bad value)` when an index is outside [-size, size)."""
    if values.size and (bool((values >= size).any()) or bool((values < -size).any())):
        flat = values.reshape(-1)
        bad = flat[(flat >= size) | (flat < -size)][0]
        raise message(int(bad))


def _grid_key(a, dim, index):
    """The key that reads a[..., index[...], ...] along `dim` at each position of `index`."""
    if index.ndim == 0:
        return (index,)
    return K.grid_key(_xp(a), dim, index)


def _dim_key(a, dim, index):
    """The key of the slices `index` picks along `dim` (index_select, index_add, ...)."""
    if a.dim() == 0:
        return (index.reshape(-1),)
    return (slice(None),) * dim + (index.reshape(-1),)


# ------------------------------------------------------------------------- split, chunk, unbind


def _pieces(op, a, attrs, keys):
    """The outputs of a multi-output view node: views of `a` (one per key), sharing its storage.

    Recorded (grad mode, `a` requiring grad): one node with an output per piece; the pieces may
    then not be changed in place (PyTorch's MULTI_OUTPUT_NODE views). Inside engine.func.vmap, a
    batched `a` is cut by indexing, whose rows have batching rules, so every piece keeps the batch.
    """
    if this_thread.batched_apply is not None and getattr(a, "_levels", None):
        return tuple(a[key] for key in keys)
    data = a._data
    recording = a._rg and this_thread.grad_enabled
    node = None
    if recording:
        node = new_node(op.node, (edge_of(a),), (), attrs)
        node.num_outputs = len(keys)
    base = a._base if a._base is not None else a
    parent = a._view_fn
    outs = []
    for nr, key in enumerate(keys):
        out = wrap(data[key])
        out._vc = a._vc
        out._base = base
        out._view_fn = _piece_fn(parent, key)
        if node is not None:
            out._node = node
            out._output_nr = nr
        out._rg = a._rg
        note_view(out, a)
        if this_thread.grad_enabled:
            set_creation_meta(out, MULTI_OUTPUT_NODE)
        outs.append(out)
    tangent = tangent_of(a) if forward_grad.state[0] else None
    if tangent is not None:  # forward AD: each piece's tangent is that piece of a's tangent
        with forward_grad.suspended():
            for out, piece in zip(outs, _pieces(op, tangent, attrs, keys)):
                forward_grad.set_tangent(out, piece)
    return tuple(outs)


def _piece_fn(parent, key):
    if parent is None:
        return lambda xp, array: array[key]
    return lambda xp, array: parent(xp, array)[key]


def _split_keys(dim, sizes) -> list:
    keys, start = [], 0
    for n in sizes:
        keys.append((slice(None),) * dim + (slice(start, start + n),))
        start += n
    return keys


def _check_split_input(a, name: str) -> None:
    if a.dim() == 0:
        raise RuntimeError(f"{name} expects at least a 1-dimensional tensor")


@public
@dim_or_axis
def split_with_sizes(input, split_sizes, dim=0):
    _check_split_input(input, "split_with_sizes")
    d = norm_dim(dim, input.dim())
    sizes = tuple(int(n) for n in split_sizes)
    size = input.shape[d]
    if builtins.any(n < 0 for n in sizes):
        raise RuntimeError(
            f"split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes={list(sizes)}"
        )
    if builtins.sum(sizes) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at dimension "
            f"{d}), but got split_sizes={list(sizes)}"
        )
    return _pieces(D.SPLIT_WITH_SIZES, input, (input.shape, sizes, d), _split_keys(d, sizes))


@public
def split(tensor, split_size_or_sections=None, dim=0, *, split_size=None):
    if split_size_or_sections is None:  # Tensor.split names it split_size
        split_size_or_sections = split_size
    if isinstance(split_size_or_sections, (tuple, list)):
        return split_with_sizes(tensor, split_size_or_sections, dim)
    _check_split_input(tensor, "split")
    d = norm_dim(dim, tensor.dim())
    size, step = tensor.shape[d], int(split_size_or_sections)
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
    if step == 0 and size != 0:
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
        )
    count = builtins.max((size + step - 1) // step, 1) if step else 1
    sizes = tuple(builtins.min(step, size - i * step) for i in range(count))
    return _pieces(D.SPLIT, tensor, (tensor.shape, step, d, sizes), _split_keys(d, sizes))


@public
@dim_or_axis
def chunk(input, chunks, dim=0):
    _check_split_input(input, "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = norm_dim(dim, input.dim())
    size = input.shape[d]
    step = (size + chunks - 1) // chunks
    if step == 0 and size == 0:  # torch: `chunks` empty pieces
        return split_with_sizes(input, [0] * chunks, d)
    return split(input, step, d)


@public
@dim_or_axis
def unbind(input, dim=0):
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = norm_dim(dim, input.dim())
    keys = [(slice(None),) * d + (i, Ellipsis) for i in range(input.shape[d])]
    return _pieces(D.UNBIND, input, (input.shape, d), keys)


@public
@dim_or_axis
def tensor_split(
    input, indices_or_sections=None, dim=0, *, sections=None, indices=None, tensor_indices_or_sections=None
):
    spec = next(
        s for s in (indices_or_sections, sections, indices, tensor_indices_or_sections) if s is not None
    )
    if input.dim() == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    if isinstance(spec, Tensor):
        if spec.dim() > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional "
                f"tensor, but got a tensor with {spec.dim()} dims"
            )
        if spec.dtype.name != "int64":
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                f"{_dtype_name(spec)}"
            )
        spec = spec.item() if spec.dim() == 0 else spec.tolist()
    d = norm_dim(dim, input.dim())
    size = input.shape[d]
    if isinstance(spec, numbers.Integral):
        if spec <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
        small, extra = divmod(size, spec)
        bounds, start = [], 0
        for i in range(spec):
            start += small + (1 if i < extra else 0)
            bounds.append(start)
        bounds = bounds[:-1]
    else:
        bounds = [int(i) for i in spec]
    out, start = [], 0
    for end in bounds + [size]:
        lo = builtins.min(builtins.max(start if start >= 0 else start + size, 0), size)
        hi = builtins.min(builtins.max(end if end >= 0 else end + size, lo), size)
        out.append(_slice(input, d, lo, hi, 1))
        start = end
    return tuple(out)


# ------------------------------------------------------------------------------ views


@public
@dim_or_axis
def narrow(input, dim, start, length):
    if input.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if isinstance(start, Tensor):
        if start.dim() != 0 or start.dtype.is_floating_point or start.dtype.name == "bool":
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = start.item()
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = norm_dim(dim, input.dim())
    size = input.shape[d]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _slice(input, d, start, start + length, 1)


@public
def diagonal(input, offset=0, dim1=0, dim2=1):
    d1, d2 = norm_dim(dim1, input.dim()), norm_dim(dim2, input.dim())
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _view(D.DIAGONAL, input, (input.shape, int(offset), d1, d2))


@public(function=False)
def unfold(a, dimension, size, step):
    d = norm_dim(dimension, a.dim())
    extent = a.shape[d] if a.dim() else 1
    if size > extent:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {extent} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _view(D.UNFOLD, a, (a.shape, d, int(size), int(step)))


@public
def as_strided(input, size, stride, storage_offset=None):
    refuse_batched(input, VMAP_STORAGE.format("as_strided"), storage=True)
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if builtins.any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}"
        )
    data = input._data
    root, own_offset = backend.storage_and_offset(data)
    offset = own_offset if storage_offset is None else int(storage_offset)
    item = data.itemsize
    needed = 0 if 0 in size else offset + builtins.sum((n - 1) * s for n, s in zip(size, stride)) + 1
    if needed * item > root.nbytes:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and itemsize {item} "
            f"requiring a storage size of {needed * item} are out of bounds for storage of size {root.nbytes}"
        )
    positions = _positions_in(data, root, own_offset, size, stride, offset)
    return _view(D.AS_STRIDED_VIEW, input, (input.shape, size, stride, offset, positions))


def _memory_positions(xp, shape, strides, offset):
    """The memory position (in elements) of each element of a strided layout, flat in C order."""
    pos = xp.full(tuple(shape), offset, dtype=backend.int64.np)
    for d, (n, s) in enumerate(zip(shape, strides)):
        axis = [1] * len(shape)
        axis[d] = n
        pos = pos + xp.arange(n, dtype=backend.int64.np).reshape(axis) * s
    return pos.reshape(-1)


def _positions_in(data, root, own_offset, size, stride, offset):
    """For each element of the as_strided view: the flat index of the input element at the same
    memory position, or -1 where the input has none (the backward adds gradients there)."""
    xp = backend.xp_of(data)
    mine = _memory_positions(xp, data.shape, [s // data.itemsize for s in data.strides], own_offset)
    wanted = _memory_positions(xp, size, stride, offset)
    order = xp.argsort(mine, kind="stable")
    ordered = mine[order]
    at = xp.minimum(xp.searchsorted(ordered, wanted), builtins.max(ordered.size - 1, 0))
    if ordered.size == 0:
        return xp.full(wanted.shape, -1, dtype=backend.int64.np)
    return xp.where(ordered[at] == wanted, order[at], -1)


@public
def movedim(input, source, destination):
    n = input.dim()
    src, dst = _ints(source), _ints(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain the same "
            f"number of dims as destination ({list(dst)} dims)"
        )
    src_n, dst_n = [norm_dim(s, n) for s in src], [norm_dim(d, n) for d in dst]
    for name, dims, given in (("source", src_n, src), ("destination", dst_n, dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    if n == 0:
        return _view(D.ALIAS, input, ())
    order = [-1] * n
    for s, d in zip(src_n, dst_n):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src_n)
    order = [o if o >= 0 else next(rest) for o in order]
    return permute(input, order)


moveaxis = public(movedim, name="moveaxis")


@public
def swapdims(input, dim0, dim1):
    return transpose(input, dim0, dim1)


@public
@dim_or_axis
def unflatten(input, dim, sizes):
    sizes = tuple(int(n) for n in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    d = norm_dim(dim, input.dim())
    size = input.shape[d]
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(n for n in sizes if n != -1)
    if -1 in sizes:
        sizes = tuple(size // known if known and n == -1 else n for n in sizes)
    if math.prod(sizes) != size:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} ({size}) in the "
            "input tensor"
        )
    return view(input, input.shape[:d] + sizes + input.shape[d + 1 :])


@public
def broadcast_to(input, size):
    return expand(input, tuple(size))


@public(method=False)
def broadcast_shapes(*shapes):
    return tuple(_broadcast_shape([tuple([s] if isinstance(s, int) else s) for s in shapes]))


def _broadcast_shape(shapes) -> list:
    out: list = []
    for shape in shapes:
        n = builtins.max(len(out), len(shape))
        a, b = [1] * (n - len(out)) + out, [1] * (n - len(shape)) + list(shape)
        for d in range(n):
            if a[d] != b[d] and a[d] != 1 and b[d] != 1:
                raise RuntimeError(
                    f"The size of tensor a ({a[d]}) must match the size of tensor b ({b[d]}) at non-singleton "
                    f"dimension {d}"
                )
        out = [y if x == 1 else x for x, y in zip(a, b)]
    return out


@public(method=False)
def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    check_same_device(*tensors)
    error = broadcast_error(tensors)
    if error is not None:
        raise error
    shape = tuple(_broadcast_shape([t.shape for t in tensors]))
    return tuple(t if t.shape == shape else expand(t, shape) for t in tensors)


@public(method=False)
def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(
            "engine.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    if indexing not in ("xy", "ij"):
        raise RuntimeError(f'engine.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"engine.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    if builtins.any(t.dtype is not tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if builtins.any(t.device != tensors[0].device for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same device")
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(tensors)
    if swap:
        order[0], order[1] = order[1], order[0]
    shape = tuple(t.numel() for t in order)
    grids = []
    for i, t in enumerate(order):
        axis = [1] * len(order)
        axis[i] = -1
        grids.append(expand(view(t, axis), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# ------------------------------------------------------------------------- gathering


def _check_index_dtype(index, message, allowed=_INDEX_TYPES, exception=RuntimeError) -> None:
    if not isinstance(index, Tensor) or index.dtype.name not in allowed:
        raise exception(message(index))


@public
@dim_or_axis
def index_select(input, dim, index):
    _check_index_dtype(index, lambda i: "index_select(): Expected dtype int32 or int64 for index")
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = norm_dim(dim, input.dim())
    idx = _index_array(input, index)
    size = input.shape[d] if input.dim() else 1

    def out_of_range(_):
        return IndexError("index out of range in self")

    _check_bounds(idx, size, out_of_range)
    if idx.size and bool((idx < 0).any()):  # index_select takes no negative index
        raise IndexError("index out of range in self")
    if input.dim() == 0:
        if idx.size != 1:
            raise RuntimeError(
                f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)"
            )
        key = (idx.reshape(()),)
    else:
        key = _dim_key(input, d, idx)
    return apply_op(D.INDEX_SELECT, (input,), (input.shape, d, idx, key))


def _check_gather_shapes(a, d, index, name, src=None) -> None:
    """torch's checks that `index` fits `a` (and `src`) apart from `dim`."""
    if builtins.max(index.dim(), 1) != builtins.max(a.dim(), 1):
        what = "input" if name == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} tensor")
    if src is not None and builtins.max(index.dim(), 1) != builtins.max(src.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    ishape, ashape = tuple(index.shape), tuple(a.shape)
    if index.dim() != a.dim():
        return
    too_big = builtins.any(ishape[k] > ashape[k] for k in range(len(ishape)) if k != d)
    if name == "gather":
        if too_big:
            raise RuntimeError(
                f"Size does not match at dimension {next(k for k in range(len(ishape)) if k != d and ishape[k] > ashape[k])} "
                f"expected index {list(ishape)} to be no larger than self {list(ashape)} apart from dimension {d}"
            )
        return
    src_small = (
        src is not None
        and src.dim() == index.dim()
        and builtins.any(ishape[k] > src.shape[k] for k in range(len(ishape)))
    )
    if too_big or src_small:
        tail = f" and to be no larger size than src {list(src.shape)}" if src is not None else ""
        raise RuntimeError(
            f"Expected index {list(ishape)} to be no larger than self {list(ashape)} apart from dimension {d}{tail}"
        )


def _index_out_of_bounds(d, size):
    return lambda bad: RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")


def _gather_key(a, d, index):
    idx = _index_array(a, index)
    size = a.shape[d] if a.dim() else 1
    _check_bounds(idx, size, _index_out_of_bounds(d, size))
    if idx.size and builtins.bool((idx < 0).any()):
        raise _index_out_of_bounds(d, size)(int(idx[idx < 0].reshape(-1)[0]))
    return idx, _grid_key(a, d, idx)


@public
@dim_or_axis
def gather(input, dim, index, *, sparse_grad=False):
    _check_index_dtype(index, lambda i: "gather(): Expected dtype int32/int64 for index")
    d = norm_dim(dim, input.dim())
    _check_gather_shapes(input, d, index, "gather")
    idx, key = _gather_key(input, d, index)
    return apply_op(D.GATHER, (input,), (input.shape, d, idx, sparse_grad, key))


@public
def take(input, index):
    _check_index_dtype(
        index, lambda i: f"take(): Expected a long tensor for index, but got {_dtype_name(i)}", ("int64",)
    )
    idx = _index_array(input, index)
    n = input.numel()

    def out_of_range(bad):
        return IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")

    _check_bounds(idx, n, out_of_range)
    return apply_op(D.TAKE, (input,), (input.shape, idx))


@public
@dim_or_axis
def take_along_dim(input, indices, dim=None):
    if dim is None:
        return gather(reshape(input, -1), 0, reshape(indices, -1))
    if not isinstance(indices, Tensor) or indices.dtype.name != "int64":
        raise RuntimeError(
            f"engine.take_along_dim(): dtype of indices should be Long but got {_dtype_name(indices)}"
        )
    if input.dim() != indices.dim():
        raise RuntimeError(
            "engine.take_along_dim(): input and indices should have the same number of dimensions, but got "
            f"{input.dim()} dimensions for input, and {indices.dim()} dimensions for indices"
        )
    d = norm_dim(dim, input.dim())
    self_sizes = list(input.shape)
    self_sizes[d] = indices.shape[d]
    shape = _broadcast_shape([self_sizes, list(indices.shape)])
    index_shape = list(shape)
    shape[d] = input.shape[d]
    return gather(expand(input, shape), d, expand(indices, index_shape))


@public
def nonzero(input, *, as_tuple=False):
    refuse_batched(
        input,
        "Batching rule not implemented for aten::nonzero_numpy. We could not generate a fallback."
        if as_tuple
        else VMAP_DYNAMIC_SHAPE.format("nonzero"),
    )
    data = input._data
    xp = backend.xp_of(data)
    if as_tuple:
        found = xp.nonzero(data.reshape(-1) if data.ndim == 0 else data)
        return tuple(wrap(i.astype(backend.int64.np, copy=False)) for i in found)
    if data.ndim == 0:
        return wrap(xp.zeros((1 if bool(data) else 0, 0), dtype=backend.int64.np))
    return wrap(xp.stack(xp.nonzero(data), axis=1).astype(backend.int64.np, copy=False))


@public
def argwhere(input):
    return nonzero(input)


@public(method=False)
def where(condition, input=None, other=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if isinstance(condition, Tensor):
        if condition.dtype.name == "uint8":
            warnings.warn(
                "where received a uint8 condition tensor. This behavior is deprecated and will be removed in a "
                "future version of PyTorch. Use a boolean condition instead.",
                UserWarning,
                stacklevel=2,
            )
            condition = wrap(condition._data != 0)
        if condition.dtype.name != "bool":
            raise RuntimeError(
                f"where expected condition to be a boolean tensor, but got a tensor with dtype {_dtype_name(condition)}"
            )
        cond = condition._data
    else:
        cond = condition  # a raw mask (TensorMath.where)
    a, b = as_operand(input), as_operand(other)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        dt = result_type((a, b))
        return wrap(backend.xp_of(cond).where(cond, a, b).astype(dt, copy=False))
    check_same_device(condition, a, b)
    return apply_op(D.WHERE, (a, b), (cond,))


@public(function=False, name="where")
def where_method(a, condition, other):
    return where(condition, a, other)


# --------------------------------------------------------------------------- scattering


def _same_dtype(a, src, message) -> None:
    if isinstance(src, Tensor) and src.dtype is not a.dtype:
        raise RuntimeError(message)


def _scatter_args(name, a, dim, index, src):
    """(dim, index array, key, src_key) for scatter / scatter_add / scatter_reduce, checked as torch does."""
    _check_index_dtype(index, lambda i: f"{name}(): Expected dtype int32/int64 for index")
    d = norm_dim(dim, a.dim())
    if isinstance(src, Tensor):
        _same_dtype(a, src, f"{name}(): Expected self.dtype to be equal to src.dtype")
        norm_dim(dim, src.dim())
    _check_gather_shapes(a, d, index, name, src if isinstance(src, Tensor) else None)
    idx, key = _gather_key(a, d, index)
    src_key = tuple(slice(0, n) for n in index.shape) if isinstance(src, Tensor) and src.dim() else ()
    return d, idx, key, src_key


def _scatter_call(a, dim, index, src, value, reduce):
    """The row and its inputs and attrs for torch.scatter's overloads."""
    if src is None:
        src = value
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if isinstance(src, Tensor):
            warnings.warn(
                "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a future "
                "PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                UserWarning,
                stacklevel=4,
            )
    d, idx, key, src_key = _scatter_args("scatter", a, dim, index, src)
    if reduce is not None:
        return D.SCATTER_NOT_DIFFERENTIABLE, (src,), (key, src_key, reduce)
    if isinstance(src, Tensor):
        return D.SCATTER, (src,), (d, idx, src.shape, key, src_key)
    return D.SCATTER_VALUE, (), (d, idx, src, key)


def _scatter(a, dim, index, src, value, reduce, in_place):
    op, others, attrs = _scatter_call(a, dim, index, src, value, reduce)
    if in_place:
        return apply_inplace(a, op, others, attrs)
    return apply_op(op, (a, *others), attrs)


@public
@dim_or_axis
def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    return _scatter(input, dim, index, src, value, reduce, False)


@public
@dim_or_axis
def scatter_add(input, dim, index, src):
    d, idx, key, src_key = _scatter_args("scatter", input, dim, index, src)
    return apply_op(D.SCATTER_ADD, (input, src), (d, idx, src.shape, key, src_key))


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_attrs(a, dim, index, src, reduce, include_self):
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d, idx, key, src_key = _scatter_args("scatter_reduce", a, dim, index, src)
    return (d, idx, reduce, bool(include_self), src.shape, key, src_key)


@public
@dim_or_axis
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    attrs = _scatter_reduce_attrs(input, dim, index, src, reduce, include_self)
    return apply_op(D.SCATTER_REDUCE, (input, src), attrs)


def _index_vector(a, dim, index):
    """(dim, index array, size along dim) for index_add / index_copy / index_fill."""
    d = norm_dim(dim, a.dim())
    idx = _index_array(a, index)
    size = a.shape[d] if a.dim() else 1
    return d, idx, size


def _check_source(name, a, d, idx, source) -> None:
    n = idx.size
    if name == "index_add_":
        if source.dim() == 0 and a.dim() <= 1:
            got = 1
        else:
            got = source.shape[d] if source.dim() > d else 1
        if got != n:
            raise RuntimeError(
                f"index_add_(): Number of indices ({n}) should be equal to source.size(dim): ({got}), for dim: {d}"
            )
        expected = list(a.shape)
        if a.dim():
            expected[d] = n
        if source.dim() and list(source.shape) != expected:
            raise RuntimeError(
                "source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                f"self.shape = {list(a.shape)} source.shape = {list(source.shape)}"
            )
        return
    got = source.shape[d] if source.dim() > d else 1
    if got != n:
        raise IndexError(
            f"index_copy_(): Number of indices ({n}) should be equal to source.size(dim) ({got})"
        )
    for k in range(a.dim()):
        if k != d and source.dim() == a.dim() and source.shape[k] != a.shape[k]:
            at = k if k < d else k - 1  # a dimension of the slices, which lack `dim`
            raise RuntimeError(
                "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: "
                f"{a.shape[k]} at dimension {at} and source slice shape: {source.shape[k]} at dimension {at}."
            )


def _index_add_attrs(a, dim, index, source, alpha):
    _check_index_dtype(
        index, lambda i: f"index_add_(): Expected dtype int32/int64 for index but got: {_dtype_name(i)}"
    )
    if index.dim() > 1:
        raise IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
            f"{_dtype_name(index)} and size: {list(index.shape)}"
        )
    if source.dtype is not a.dtype:
        raise RuntimeError(
            f"index_add_(): self ({_dtype_name(a)}) and source ({_dtype_name(source)}) must have the same scalar type"
        )
    d, idx, size = _index_vector(a, dim, index)
    _check_source("index_add_", a, d, idx, source)
    _check_bounds(idx, size, _index_out_of_bounds(d, size))
    if not a.dtype.is_floating_point:
        alpha = int(alpha)
    return (d, idx, alpha, source.shape, _dim_key(a, d, idx))


@public
@dim_or_axis
def index_add(input, dim, index, source, *, alpha=1):
    return apply_op(D.INDEX_ADD, (input, source), _index_add_attrs(input, dim, index, source, alpha))


def _index_copy_attrs(a, dim, index, source):
    _check_index_dtype(
        index,
        lambda i: f"index_copy_(): Expected a long tensor for index, but got {_dtype_name(i)}",
        ("int64",),
    )
    if source.dtype is not a.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{_dtype_name(a)} and (source) {_dtype_name(source)}"
        )
    d, idx, size = _index_vector(a, dim, index)
    _check_source("index_copy_", a, d, idx, source)

    def out_of_range(bad):
        return IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with size {size}")

    _check_bounds(idx, size, out_of_range)
    return (d, idx, source.shape, _dim_key(a, d, idx))


@public
@dim_or_axis
def index_copy(input, dim, index, source):
    return apply_op(D.INDEX_COPY, (input, source), _index_copy_attrs(input, dim, index, source))


def _index_fill_call(a, dim, index, value):
    if isinstance(index, Tensor) and index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    _check_index_dtype(
        index, lambda i: "index_fill_(): Expected dtype int64 for index.", ("int64",), IndexError
    )
    d, idx, size = _index_vector(a, dim, index)

    def out_of_range(bad):
        return IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")

    _check_bounds(idx, size, out_of_range)
    key = _dim_key(a, d, idx)
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.dim()} dimension(s)."
            )
        return D.INDEX_FILL_TENSOR, (value,), (d, idx, key)
    return D.INDEX_FILL, (), (d, idx, value, key)


@public
@dim_or_axis
def index_fill(input, dim, index, value):
    op, others, attrs = _index_fill_call(input, dim, index, value)
    return apply_op(op, (input, *others), attrs)


def _mask_of(name, a, mask):
    if not isinstance(mask, Tensor) or mask.dtype.name != "bool":
        raise RuntimeError(
            f"{name} only supports boolean masks, but got mask with dtype {_mask_dtype(name, mask)}"
        )
    check_same_device(a, mask)
    error = broadcast_error((mask, a))
    if error is not None:
        raise error
    return mask._data


def _mask_dtype(name, mask) -> str:
    """How torch names a mask's dtype in the message (masked_fill_ by its C++ type, `float`)."""
    return mask.dtype.cpp_name if name == "masked_fill_" else _dtype_name(mask)


def _masked_fill_call(a, mask, value):
    mask_data = _mask_of("masked_fill_", a, mask)
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.dim()} dimension(s)."
            )
        return D.MASKED_FILL_TENSOR, (value,), (mask_data,)
    return D.MASKED_FILL, (), (mask_data, value)


@public
def masked_fill(input, mask, value):
    op, others, attrs = _masked_fill_call(input, mask, value)
    return apply_op(op, (input, *others), attrs)


def _mask_key(xp, mask_data, shape):
    full = xp.broadcast_to(mask_data, shape)
    return xp.nonzero(full.reshape(-1) if full.ndim == 0 else full)


@public
def masked_select(input, mask):
    if not isinstance(mask, Tensor) or mask.dtype.name != "bool":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    check_same_device(input, mask)
    error = broadcast_error((mask, input))
    if error is not None:
        raise error
    refuse_batched(
        mask,
        "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support this because "
        "for each batch this would return a differently shaped Tensor. Please file an issue at "
        "https://github.com/pytorch/pytorch/issues if you need this feature.",
    )
    shape = tuple(_broadcast_shape([mask.shape, input.shape]))
    return apply_op(
        D.MASKED_SELECT, (input,), (input.shape, mask._data, shape, _mask_key(_xp(input), mask._data, shape))
    )


def _masked_scatter_attrs(a, mask, source):
    mask_data = _mask_of("masked_scatter_", a, mask)
    if source.dtype is not a.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{_dtype_name(a)} and {_dtype_name(source)}"
        )
    shape = tuple(_broadcast_shape([mask.shape, a.shape]))
    key = _mask_key(_xp(a), mask_data, shape)
    if key[0].size > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return (mask_data, source.shape, shape, key)


@public
def masked_scatter(input, mask, source):
    return apply_op(D.MASKED_SCATTER, (input, source), _masked_scatter_attrs(input, mask, source))


# --------------------------------------------------------------------------- reordering


@public(method=False)
def flip(input, dims):
    dims = tuple(unique_dims(_ints(dims), input.dim()))
    return apply_op(D.FLIP, (input,), (dims if input.dim() else (),))


@public(function=False, name="flip")
def flip_method(a, *dims):
    return flip(a, _sizes(dims))


@public
def fliplr(input):
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@public
def flipud(input):
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@public
def roll(input, shifts, dims=None):
    shifts = _ints(shifts)
    dims = () if dims is None else _ints(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if len(shifts) != len(dims) and not (not dims and len(shifts) == 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    dims = tuple(norm_dim(d, input.dim()) for d in dims) if input.dim() or not dims else _zero_dim(dims)
    return apply_op(D.ROLL, (input,), (shifts, dims))


def _zero_dim(dims):
    raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")


@public
def rot90(input, k=1, dims=(0, 1)):
    dims = _ints(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = norm_dim(dims[0], input.dim()), norm_dim(dims[1], input.dim())
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    return apply_op(D.ROT90, (input,), (int(k) % 4, (d0, d1)))


@public(function=False)
def repeat(input, *repeats):
    repeats = _sizes(repeats)
    if len(repeats) < input.dim():
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    padded = (1,) * (len(repeats) - input.dim()) + tuple(input.shape)
    target = [r * n for r, n in zip(repeats, padded)]
    if builtins.any(n < 0 for n in target):
        bad = next(n for n in target if n < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {target}")
    return apply_op(D.REPEAT, (input,), (input.shape, repeats))


@public
def tile(input, dims):
    dims = _ints(dims)
    return repeat(input, (1,) * (input.dim() - len(dims)) + dims)


@public
@dim_or_axis
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # torch.repeat_interleave(repeats): each index repeated repeats[i] times
        counts = input
        return wrap(_repeated_indices(counts))
    flat = flatten(input) if dim is None else input
    d = 0 if dim is None else norm_dim(dim, input.dim())
    if isinstance(repeats, Tensor):
        if repeats.dim() > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        size = flat.shape[d] if flat.dim() else 1
        if repeats.numel() == 1:
            repeats = expand(reshape(repeats, 1), (size,))
        if repeats.shape[0] != size:
            raise RuntimeError(
                "repeats must have the same size as input along dim, but got repeats.size(0) = "
                f"{repeats.shape[0]} and input.size({d}) = {size}"
            )
        index = _repeated_indices(repeats)
        _check_output_size(output_size, index.shape[0])
        return index_select(flat, d, wrap(index))
    repeats = int(repeats)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if flat.dim() == 0:
        flat = reshape(flat, 1)
    shape = list(flat.shape)
    _check_output_size(output_size, shape[d] * repeats)
    spread = unsqueeze(flat, d + 1)
    wide = list(spread.shape)
    wide[d + 1] = repeats
    shape[d] *= repeats
    return reshape(clone(expand(spread, wide)), shape)


def _check_output_size(output_size, actual) -> None:
    if output_size is not None and output_size != actual:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {actual} but got {output_size}")


def _repeated_indices(counts):
    data = counts._data
    if counts.dtype.is_floating_point or counts.dtype.name == "bool":
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{_dtype_name(counts)}'")
    if data.size and bool((data < 0).any()):
        raise RuntimeError("repeats can not be negative")
    xp = backend.xp_of(data)
    flat = data.reshape(-1).astype(backend.int64.np)
    return xp.repeat(xp.arange(flat.size, dtype=backend.int64.np), flat)


# --------------------------------------------------------------------- triangles, diagonals


def _triangle_check(name, a) -> None:
    if a.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


@public
def tril(input, diagonal=0):
    _triangle_check("tril", input)
    return apply_op(D.TRIL, (input,), (int(diagonal),))


@public
def triu(input, diagonal=0):
    _triangle_check("triu", input)
    return apply_op(D.TRIU, (input,), (int(diagonal),))


@public
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    n = input.dim() + 1
    d1, d2 = norm_dim(dim1, n), norm_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply_op(D.DIAG_EMBED, (input,), (int(offset), d1, d2))


@public
def diag(input, diagonal=0):
    if input.dim() == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.dim() != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")
    return apply_op(D.DIAGONAL_COPY, (input,), (input.shape, int(diagonal), 0, 1))


@public
def trace(input):
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    if input.dtype.name == "bool":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return apply_op(D.TRACE, (input,), (input.shape,))


# ------------------------------------------------------------------------------ sorting


def _order(data, dim, descending):
    """Indices that sort `data` along `dim`, stable (equal values keep their order), NaN as largest."""
    xp = backend.xp_of(data)
    if not descending:
        return xp.argsort(data, axis=dim, kind="stable")
    n = data.shape[dim]
    reverse = xp.argsort(xp.flip(data, dim), axis=dim, kind="stable")
    return (n - 1) - xp.flip(reverse, dim)


def _picked(op, a, d, indices, extra=()):
    """The values of `a` at `indices` along `d` (a row of the sort family), and the indices."""
    idx = indices.astype(backend.int64.np, copy=False)
    if a.dim() == 0:
        key = (idx.reshape(()),)
    else:
        key = K.grid_key(_xp(a), d, idx)
    values = apply_op(op, (a,), (a.shape, d, *extra, idx, key))
    return values, wrap(idx)


@public
@dim_or_axis
def sort(input, dim=-1, descending=False, *, stable=None):
    d = norm_dim(dim, input.dim())
    data = input._data
    order = _order(data, d, descending) if data.ndim else backend.xp_of(data).zeros((), backend.int64.np)
    op = D.SORT["SortBackward0" if stable is None else "SortBackward1"]
    return return_types.sort(*_picked(op, input, d, order))


@public
@dim_or_axis
def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending, stable=stable).indices


@public
def msort(input):
    return sort(input, 0).values


@public
@dim_or_axis
def topk(input, k, dim=-1, largest=True, sorted=True):
    d = norm_dim(dim, input.dim())
    size = input.shape[d] if input.dim() else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    data = input._data
    xp = backend.xp_of(data)
    if data.ndim == 0:
        order = xp.zeros((), backend.int64.np)
    else:
        order = _order(data, d, largest)[(slice(None),) * d + (slice(0, k),)]
    return return_types.topk(*_picked(D.TOPK, input, d, order))


@public
@dim_or_axis
def kthvalue(input, k, dim=-1, keepdim=False):
    if not isinstance(k, numbers.Integral) or isinstance(k, bool):
        raise TypeError(f"kthvalue(): argument 'k' (position 1) must be int, not {type(k).__name__}")
    d = norm_dim(dim, input.dim())
    size = input.shape[d] if input.dim() else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    data = input._data
    xp = backend.xp_of(data)
    if data.ndim == 0:
        order = xp.zeros((), backend.int64.np)
    else:
        order = _order(data, d, False)[(slice(None),) * d + (slice(k - 1, k),)]
        if not keepdim:
            order = order.squeeze(d)
    if data.ndim and not keepdim:
        key = K.grid_key(xp, d, xp.expand_dims(order, d))
        key = tuple(k_.squeeze(d) if k_.ndim else k_ for k_ in key)
        values = apply_op(D.KTHVALUE, (input,), (input.shape, d, keepdim, order, key))
        return return_types.kthvalue(values, wrap(order))
    return return_types.kthvalue(*_picked(D.KTHVALUE, input, d, order, (keepdim,)))


@public
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    refuse_batched(input, VMAP_DYNAMIC_SHAPE.format("_unique2" if dim is None else "unique_dim"))
    data = input._data
    xp = backend.xp_of(data)
    if dim is None:
        flat = data.reshape(-1)
        values, inverse, counts = xp.unique(flat, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(data.shape)
        op = D.UNIQUE["Unique2Backward0"]
    else:
        d = norm_dim(dim, input.dim())
        moved = xp.moveaxis(data, d, 0)
        rows = moved.reshape((moved.shape[0], -1))
        values, inverse, counts = xp.unique(rows, axis=0, return_inverse=True, return_counts=True)
        values = xp.moveaxis(values.reshape((-1,) + moved.shape[1:]), 0, d)
        inverse = inverse.reshape(-1)
        op = D.UNIQUE["UniqueDimBackward0"]
    out = apply_op(op, (input,), (xp.ascontiguousarray(values),))
    extra = []
    if return_inverse:
        extra.append(wrap(inverse.astype(backend.int64.np, copy=False)))
    if return_counts:
        extra.append(wrap(counts.astype(backend.int64.np, copy=False)))
    return (out, *extra) if extra else out


# ------------------------------------------------------------------------------ in place


@public(function=False)
def scatter_(a, dim, index, src=None, value=None, *, reduce=None):
    return _scatter(a, dim, index, src, value, reduce, True)


@public(function=False)
def scatter_add_(a, dim, index, src):
    d, idx, key, src_key = _scatter_args("scatter", a, dim, index, src)
    return apply_inplace(a, D.SCATTER_ADD, (src,), (d, idx, src.shape, key, src_key))


@public(function=False)
def scatter_reduce_(a, dim, index, src, reduce, *, include_self=True):
    return apply_inplace(
        a, D.SCATTER_REDUCE, (src,), _scatter_reduce_attrs(a, dim, index, src, reduce, include_self)
    )


@public(function=False)
def index_add_(a, dim, index, source, *, alpha=1):
    return apply_inplace(a, D.INDEX_ADD, (source,), _index_add_attrs(a, dim, index, source, alpha))


@public(function=False)
def index_copy_(a, dim, index, source):
    return apply_inplace(a, D.INDEX_COPY, (source,), _index_copy_attrs(a, dim, index, source))


@public(function=False)
def index_fill_(a, dim, index, value):
    op, others, attrs = _index_fill_call(a, dim, index, value)
    return apply_inplace(a, op, others, attrs)


@public(function=False)
def masked_fill_(a, mask, value):
    op, others, attrs = _masked_fill_call(a, mask, value)
    return apply_inplace(a, op, others, attrs)


@public(function=False)
def masked_scatter_(a, mask, source):
    return apply_inplace(a, D.MASKED_SCATTER, (source,), _masked_scatter_attrs(a, mask, source))


@public(function=False)
def tril_(a, diagonal=0):
    _triangle_check("tril", a)
    return apply_inplace(a, D.TRIL, (), (int(diagonal),))


@public(function=False)
def triu_(a, diagonal=0):
    _triangle_check("triu", a)
    return apply_inplace(a, D.TRIU, (), (int(diagonal),))


__all__ = exported(__name__)  # what `engine` exports from here (api.public)
