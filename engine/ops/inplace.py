"""In-place ops: write into the tensor's storage, bump its version, rebase its history.

An in-place op runs the out-of-place row of the table on a snapshot of the tensor's old
value and graph position, writes the result into the storage, and makes the new node
the tensor's grad_fn. Through a view, the base's history is rebased too (CopySlices),
as PyTorch does, so gradients stay right whichever tensor the user differentiates.

The other views of the same storage are brought up to date at once (`refresh_views`):
PyTorch regenerates a view's grad_fn lazily, when it is next read after the version
changed, as an `AsStridedBackward0` on the base's grad_fn of the moment; here the base's
view table (engine/ops/views.py) is walked right after the change, which gives the same
graph without a check on the hot path. A view made in no_grad mode is refused instead,
with PyTorch's messages.
"""

from __future__ import annotations

import math
import warnings
import weakref

import numpy

from .. import backend
from ..autograd import anomaly, forward_grad, saved_hooks
from ..autograd.backward import edge_of
from ..autograd.node import Node, leaf_error, short_name
from ..autograd.thread_local import this_thread
from ..tensor import InvalidView, SavedOutput, Tensor, raw_grad_fn, wrap
from . import derivatives as D
from . import tangents
from .api import public
from .namespaces import overlaps
from .op import VMAP_STORAGE, apply_op, check_same_device, new_node, pack_saved, refuse_batched
from .operands import as_operand, norm_dim
from .shaping.core import (
    _array_key,
    check_t,
    getitem,
    squeeze_node_name,
    squeezed_shape,
    unsqueezed_shape,
    view_of,
)
from .shaping.indexing import index_tuple, is_advanced, split_basic
from .views import (
    DEFAULT,
    IN_CUSTOM_FUNCTION,
    MULTI_OUTPUT_NODE,
    NO_GRAD_MODE,
    creation_meta,
    live_views,
    set_creation_meta,
)

# What each kind of refused view adds to the error (torch's handle_view_on_rebase).
VIEW_INPLACE_TAILS = {
    NO_GRAD_MODE: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
        "moving both the view and the inplace either both inside the no_grad block (if you don't want the "
        "inplace to be tracked) or both outside (if you want the inplace to be tracked)."
    ),
    IN_CUSTOM_FUNCTION: (
        " This view was created inside a custom Function (or because an input was returned as-is) and the "
        "autograd logic to handle view+inplace would override the custom backward associated with the custom "
        "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
        "output of the custom Function."
    ),
    MULTI_OUTPUT_NODE: (
        " This view is the output of a function that returns multiple views. Such functions do not allow the "
        "output views to be modified inplace. You should replace the inplace operation by an out-of-place one."
    ),
}


INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory "
    "location. Please clone() the tensor before performing the operation."
)
PARTIAL_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
    "memory location. Please clone() the tensor before performing the operation."
)
INDEX_PUT_ON_EXPANDED = (
    "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before performing this "
    "operation. This also applies to advanced indexing e.g. tensor[indices] = tensor"
)


def check_overlap(t: Tensor, op, others: tuple, attrs: tuple) -> None:
    """ATen's memory checks before an op writes into `t`: not into an expanded tensor (fill_ and
    zero_ may: they read nothing), and no input sharing part of `t`'s memory."""
    if op is D.INDEX_PUT:
        _check_index_put_overlap(t, others, attrs[0])
        return
    data = t._data
    if 0 in data.strides and op not in _READ_NOTHING and overlaps(data):
        raise RuntimeError(INTERNAL_OVERLAP)
    for x in others:
        if not isinstance(x, Tensor) or x is t:
            continue
        other = x._data
        if not (backend.owns_memory(data) and backend.owns_memory(other)) and (
            backend.memory_overlap(data, other) == "partial"
        ):
            raise RuntimeError(PARTIAL_OVERLAP)  # (two arrays owning their memory cannot overlap)


_READ_NOTHING = (D.FILL, D.ZERO)  # in-place ops ATen lets write into an expanded tensor


def _check_index_put_overlap(t: Tensor, values: tuple, key) -> None:
    """index_put_ only warns about an expanded target, and refuses values or indices in its memory."""
    if overlaps(t._data):
        warnings.warn(INDEX_PUT_ON_EXPANDED, UserWarning, stacklevel=5)  # the user's `t[indices] = v`
    indices = key if isinstance(key, tuple) else (key,)
    arrays = [v._data for v in values if isinstance(v, Tensor)] + [k for k in indices if backend.is_array(k)]
    for array in arrays:
        if backend.memory_overlap(t._data, array) in ("partial", "full"):
            raise RuntimeError(PARTIAL_OVERLAP)


def check_inplace(t: Tensor, recording: bool = True) -> None:
    """PyTorch refuses in-place ops on leaves that require grad (outside no_grad), and
    recorded in-place ops on views made in no_grad mode, returned by a custom Function or
    by a node with several outputs (checked first, as torch does)."""
    if not this_thread.grad_enabled:
        return
    base = t._base
    if base is not None:
        meta = creation_meta(t) if recording else DEFAULT
        if meta != DEFAULT:
            err = view_inplace_error(t, meta, indirect=False)
            err.tensor = t  # for gradcli anomaly: which view
            raise anomaly.noted(err)
        if base._rg and base.grad_fn is None:
            raise anomaly.noted(leaf_error(base, through_view=True))
    if t._rg and t.grad_fn is None:
        raise anomaly.noted(leaf_error(t))


def view_inplace_error(view: Tensor, meta: str, indirect: bool) -> RuntimeError:
    """PyTorch's error for a view whose creation forbids an in-place change with grad mode on.

    Direct: the view itself is being changed. Indirect: its base or another view was, and
    the view's history is then needed.
    """
    fn = raw_grad_fn(view)
    if fn.__class__ is Invalid:
        fn = fn.view_grad_fn
    return _view_inplace_error(fn, view._output_nr, meta, indirect)


def _view_inplace_error(fn: Node | None, output_nr: int, meta: str, indirect: bool) -> RuntimeError:
    what = "its base or another view of its base has been" if indirect else "is being"
    if meta == NO_GRAD_MODE or fn is None:  # no grad_fn: the view was made in no_grad mode
        if fn is None:
            prefix = "A view was created in"
        else:
            prefix = f"Output {output_nr} of {short_name(fn)} is a view of a view which was created in"
        head = f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        head = f"Output {output_nr} of {short_name(fn)} is a view and {what} modified inplace."
    err = RuntimeError(head + VIEW_INPLACE_TAILS[meta])
    no_grad_view = meta == NO_GRAD_MODE or fn is None
    # for gradcli anomaly: what the error is, without its words
    err.autograd_kind = (
        ("no-grad-view-changed" if indirect else "no-grad-view-inplace") if no_grad_view else "view-inplace"
    )
    return err


def _write(t: Tensor, data) -> None:
    dst = t._data
    if data.shape != dst.shape:
        raise RuntimeError(
            f"output with shape {list(dst.shape)} doesn't match the broadcast shape {list(data.shape)}"
        )
    if data.dtype != dst.dtype and not numpy.can_cast(data.dtype, dst.dtype, "same_kind"):
        raise RuntimeError(
            f"result type {_torch_type(data.dtype)} can't be cast to the desired output type "
            f"{_torch_type(dst.dtype)}"
        )
    if overlaps(dst):  # expanded (fill_, index_put_): only what changed, so a shared element keeps it
        changed = data != dst
        dst[changed] = data[changed]
        return
    dst[...] = data


UNBATCHED_DRAWS_MESSAGE = (
    "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will appear like same "
    "randomness. If this is necessary for your usage, please file an issue with functorch."
)


def _write_result(t: Tensor, result: Tensor, op) -> None:
    batched = this_thread.batched_inplace
    if batched is None or not batched.write(t, result, op):
        _write(t, result._data)


def _torch_type(np_dtype) -> str:
    names = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool", "int32": "Int"}
    return names.get(str(np_dtype), str(np_dtype))


def _bump(t: Tensor) -> None:
    t._vc.version += 1
    if anomaly.state[0]:
        anomaly.record_bump(t)


def apply_inplace(t: Tensor, op, others: tuple = (), attrs: tuple = ()) -> Tensor:
    """`t.op_(*others)`: the out-of-place row of `op`, written back into `t`."""
    recording = this_thread.grad_enabled and (t._rg or any(isinstance(x, Tensor) and x._rg for x in others))
    check_inplace(t, recording)
    for x in others:
        if isinstance(x, Tensor) and x._data.__class__ is not t._data.__class__:
            check_same_device(t, x)
    check_overlap(t, op, others, attrs)
    if not recording:  # apply_op records nothing here; it still promotes and explains shapes
        result = apply_op(op, (t, *others), attrs)
        if forward_grad.state[0]:
            tangents.write_inplace(t, result)
        _write_result(t, result, op)
        return _stored(t)
    snapshot = _snapshot(t)
    packing = bool(this_thread.saved_hooks)
    if packing:  # packed below, once the saved result is `t` itself
        with saved_hooks.held_back():
            result = apply_op(op, (snapshot, *others), attrs)
    else:
        result = apply_op(op, (snapshot, *others), attrs)
    _write_result(t, result, op)
    if forward_grad.state[0]:  # forward AD: the result's tangent written into t's (ops/tangents.py)
        tangents.write_inplace(t, result)
    _bump(t)
    node = result.grad_fn
    if t._base is None:
        _rebase(t, node)
    else:
        _rebase_view(t, node)
    if node._saved:
        _save_as_result(node, t)
        if packing:
            pack_saved(node)
    if t._vc.views is not None:
        refresh_views(t._vc.views, t)
    return t


def _save_as_result(node: Node, t: Tensor) -> None:
    """A saved result is `t` itself at its new version, so a later change is caught; for a view,
    unpacked at the view's place in the graph after the change (`ViewPlace`), as in torch."""
    place = None if t._base is None else ViewPlace(t)
    outputs = [v.__class__ is SavedOutput for v in node._saved]
    writes = this_thread.batched_inplace
    batched = writes and writes.as_batched(t)
    if batched is not None:  # a batch under vmap is saved as the batched tensor itself
        node._saved = [batched if is_out else v for v, is_out in zip(node._saved, outputs)]
    else:
        node._saved = [_resaved(v, t, place) if is_out else v for v, is_out in zip(node._saved, outputs)]
    node._versions = [t._vc.version if is_out else ver for ver, is_out in zip(node._versions, outputs)]


def _resaved(saved: SavedOutput, t: Tensor, place) -> SavedOutput:
    """The result saved as `t`, keeping the result's forward-AD tangent (forward over reverse)."""
    resaved = SavedOutput(t, 0, place)
    kept = getattr(saved, "_tangent", None)
    if kept is not None:
        resaved._tangent = kept
    return resaved


def _store(t: Tensor, data) -> Tensor:
    """New values for `t` with its history unchanged: written, version bumped, views brought up to date."""
    _write(t, data)
    return _stored(t)


def _stored(t: Tensor) -> Tensor:
    """`t` once written: its version bumped, its views brought up to date."""
    _bump(t)
    if t._vc.views is not None:  # views of this storage were made (engine/ops/views.py)
        refresh_views(t._vc.views, None)
    return t


def write_untracked(t: Tensor, data) -> Tensor:
    """An in-place op PyTorch does not differentiate (bitwise, logical): the values and the version
    change, the history stays, as torch's `y.logical_and_(z)` keeps y's grad_fn."""
    check_inplace(t, recording=False)
    return _store(t, data)


def _snapshot(t: Tensor) -> Tensor:
    """The tensor's value and graph position before the in-place op."""
    writes = this_thread.batched_inplace
    batched = writes and writes.copy(t)
    old = batched if batched is not None else wrap(t._data.copy())
    old._node = t.grad_fn
    old._output_nr = t._output_nr
    old._rg = t._rg
    if forward_grad.state[0]:  # a copy: the op writes t's new tangent into t's (a view's, into its base's)
        tangent = tangents.tangent_of(t)
        forward_grad.set_tangent(old, None if tangent is None else tangent.clone())
    return old


def _rebase(t: Tensor, node: Node, output_nr: int = 0) -> None:
    retained = t._retains_grad
    t._node = node
    t._output_nr = output_nr
    t._rg = True
    if retained:
        node._retain(t)


class CopySlices(Node):
    """The base's node after an in-place op on one of its views, as PyTorch names it."""

    __slots__ = ("view_fn", "fn")

    def name(self) -> str:
        return "engine::autograd::CopySlices"

    def apply(self, grads, m, create_graph):
        g = grads[0]
        if g is None:
            return [None] * len(self.next_functions)
        if create_graph:
            result = g.clone()
            region = view_of(result, self.view_fn)
            inner = self.fn.apply([region.clone()], m, True)
            _check_region(region._data, inner[0])
            region.copy_(inner[0] if inner[0] is not None else region.new_zeros(region.shape))
        else:
            result = m.xp.array(g)  # a writable copy: a 0-d gradient may be a numpy scalar
            region = self.view_fn(m.xp, result)
            inner = self.fn.apply([region.copy()], m, False)
            _check_region(region, inner[0])
            region[...] = inner[0] if inner[0] is not None else 0
        return [result, *inner[1:]]

    def release(self) -> None:
        self.fn.release()


def _check_region(region, grad) -> None:
    """PyTorch copies the view's gradient into the base's: refused where the view is expanded."""
    if grad is not None and overlaps(region):
        raise RuntimeError(INTERNAL_OVERLAP)


class ViewPlace:
    """Where the view an in-place op changed sits in the graph (AsStridedBackward0 on the base's
    CopySlices), for the op's node to unpack its saved result at, held weakly: the node is inside
    that CopySlices, so a strong reference would close a cycle.

    While the view lives, its grad_fn (torch's SavedVariable keeps it weakly); after, an equal one
    made again on the CopySlices (torch falls back to the node itself there, whose saved values its
    CopySlices still needs: a double backward would free them twice); None once that is gone too.
    """

    __slots__ = ("view", "copy_slices", "attrs")

    def __init__(self, view: Tensor):
        fn = raw_grad_fn(view)
        self.view = weakref.ref(view)
        self.copy_slices = weakref.ref(fn.next_functions[0][0])
        self.attrs = fn._attrs

    def live(self) -> Node | None:
        """The view's grad_fn, while the view lives."""
        view = self.view()
        return None if view is None else raw_grad_fn(view)

    def __call__(self) -> Node | None:
        fn = self.live()
        if fn is not None:
            return fn
        copy_slices = self.copy_slices()
        return (
            None if copy_slices is None else new_node(D.AS_STRIDED.node, ((copy_slices, 0),), (), self.attrs)
        )


def _rebase_view(view: Tensor, node: Node) -> None:
    base = view._base
    copy_slices = CopySlices((edge_of(base), *node.next_functions[1:]))
    copy_slices.view_fn = view._view_fn
    copy_slices.fn = node
    _rebase(base, copy_slices)
    as_strided = new_node(D.AS_STRIDED.node, ((copy_slices, 0),), (), (base.shape, view._view_fn))
    _rebase(view, as_strided)


def refresh_views(views: dict, rebased: Tensor | None) -> None:
    """After an in-place change of a storage: each live view's grad_fn made current.

    What PyTorch works out when a view's grad_fn is next read after its version changed:
    when the view's base requires grad, a view made in grad mode gets an
    `AsStridedBackward0` on the base's current history (so a gradient through it goes
    through the change, even when the changed region overlaps it), and a view made in no_grad
    mode (or returned by a custom Function) can no longer be used in grad mode. `rebased` is the view the change went through,
    already given its node, or None when the change was not recorded (then it too is redone).
    """
    for view, meta in live_views(views):
        if view is rebased:
            continue
        base = view._base
        if not base._rg:
            continue
        if meta != DEFAULT:
            fn = raw_grad_fn(view)
            if fn.__class__ is not Invalid:
                invalid = Invalid(())
                invalid.view_grad_fn = fn
                invalid.view_output_nr = view._output_nr
                invalid.creation_meta = meta
                view._node = invalid
                if view.__class__ is Tensor:
                    view.__class__ = InvalidView
            continue
        _rebase(view, new_node(D.AS_STRIDED.node, (edge_of(base),), (), (base.shape, view._view_fn)))


class Invalid(Node):
    """The grad_fn of a refused view (made in no_grad mode, or returned by a custom Function or a
    node with several outputs) once its storage has changed in place.

    As in PyTorch, reading such a view's grad_fn or is_leaf, or using it in grad mode, raises (the
    view becomes a `tensor.InvalidView`; a subclass of Tensor keeps its class and raises when a
    backward reaches it); its repr shows `grad_fn=<Invalid>`. `view_grad_fn` is the view's grad_fn
    before, which names it.
    """

    __slots__ = ("view_grad_fn", "view_output_nr", "creation_meta")
    refuses_view = True

    def view_error(self) -> RuntimeError:
        return _view_inplace_error(self.view_grad_fn, self.view_output_nr, self.creation_meta, indirect=True)

    def apply(self, grads, m, create_graph):
        raise self.view_error()


# ------------------------------------------------------- a custom Function's outputs (autograd/function.py)


def rebase_history(t: Tensor, node: Node, output_nr: int) -> None:
    """A custom Function's dirty (mark_dirty) output rebased on the Function's node, as torch does.

    The same refusals as an in-place op first; through a view, the base gets CopySlices and the
    view AsStridedBackward0; then the storage's other views are brought up to date.
    """
    check_inplace(t)
    if t._base is None:
        _rebase(t, node, output_nr)
    else:
        _rebase_view(t, node)
    if t._vc.views is not None:
        refresh_views(t._vc.views, t)


def mark_returned_view(view: Tensor, several_outputs: bool) -> None:
    """A view a custom Function returned: an in-place change through it, or its base, is refused
    (torch's IN_CUSTOM_FUNCTION, or MULTI_OUTPUT_NODE among several differentiable outputs)."""
    set_creation_meta(view, MULTI_OUTPUT_NODE if several_outputs else IN_CUSTOM_FUNCTION)


# --------------------------------------------------------------------- the in-place API


@public(function=False)
def add_(t, other, *, alpha=1):
    return apply_inplace(t, D.ADD, (as_operand(other),), (alpha,))


@public(function=False)
def sub_(t, other, *, alpha=1):
    return apply_inplace(t, D.SUB, (as_operand(other),), (alpha,))


@public(function=False)
def mul_(t, other):
    return apply_inplace(t, D.MUL, (as_operand(other),))


@public(function=False)
def pow_(t, exponent):
    if isinstance(exponent, Tensor):
        return apply_inplace(t, D.POW_TENSOR, (exponent,))
    return apply_inplace(t, D.POW_SCALAR, (), (exponent,))


@public(function=False)
def neg_(t):
    return apply_inplace(t, D.NEG)


def clamp_(t, min=None, max=None):
    return apply_inplace(t, D.CLAMP, (), (min, max))


@public(function=False)
def zero_(t):
    return apply_inplace(t, D.ZERO)


@public(function=False)
def fill_(t, value):
    if isinstance(value, Tensor):
        return copy_(t, value)
    return apply_inplace(t, D.FILL, (), (value,))


@public(function=False)
def bernoulli_(t, p=0.5, *, generator=None):
    """Each element 1 with probability p (a number, or a tensor broadcast to t), else 0, drawn
    from the engine's generator, so manual_seed repeats it; the gradient through it is zero."""
    if isinstance(p, Tensor):
        probabilities = p.expand(t.shape)._data
        if not ((probabilities >= 0) & (probabilities <= 1)).all():
            raise RuntimeError(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
                "improved?  If so, please report an enhancement request to PyTorch.)"
            )
    elif not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    else:
        probabilities = p
    shape = backend.drawn_shape(t.shape)
    if shape != t.shape and this_thread.batched_inplace.as_batched(t) is None:
        raise RuntimeError(UNBATCHED_DRAWS_MESSAGE)
    with backend.device_scope(t.device):
        draws = backend.generator(t.device).random(shape) < probabilities
    if shape != t.shape:  # inside vmap's "different": each example's draws, reaching the row as a batch
        draws = backend.drawn(wrap(draws))._data
    if isinstance(p, Tensor):
        return apply_inplace(t, D.BERNOULLI_TENSOR, (p,), (draws,))
    return apply_inplace(t, D.BERNOULLI, (), (draws,))


@public(function=False)
def copy_(t, other, non_blocking=False):  # torch's keyword: x.copy_(other=...)
    other = as_operand(other)
    if isinstance(other, Tensor) and other._data.__class__ is not t._data.__class__:
        other = other.to(t.device)
    return apply_inplace(t, D.COPY, (other,))


def setitem(t, key, value) -> None:
    """`t[key] = value`: the basic part of the key makes a view, index_put_ writes the advanced part
    into it (shaping/indexing.py), as torch does."""
    key = index_tuple(key)
    if any(is_advanced(k) for k in key):
        basic, key = split_basic(key, t.dim())
        target = t if basic is None else getitem(t, basic)
        array_key = tuple(_array_key(k, t.device) for k in key)
        value = as_operand(value)
        if isinstance(value, Tensor):
            value = value.to(t.dtype) if value.dtype is not t.dtype else value
        try:
            apply_inplace(target, D.INDEX_PUT, (value,), (array_key if len(array_key) > 1 else array_key[0],))
        except (RuntimeError, ValueError):
            _check_put_shape(target, array_key, value)
            raise
        return
    copy_(getitem(t, key), value)


def _check_put_shape(target: Tensor, array_key: tuple, value) -> None:
    """torch's error for values that do not broadcast to what the advanced indices pick, worked out
    once numpy has refused them."""
    if not isinstance(value, Tensor):
        return
    host_key = tuple(backend.to_numpy(k) if backend.is_array(k) else k for k in array_key)
    picked = numpy.empty(target.shape, dtype=bool)[host_key if len(host_key) > 1 else host_key[0]].shape
    try:
        numpy.broadcast_shapes(tuple(value.shape), picked)
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to indexing "
            f"result of shape {list(picked)}"
        ) from None


# ------------------------------------------------------------------ in-place view ops


def apply_view_inplace(t: Tensor, op, attrs: tuple, inverse, view_fn=None) -> Tensor:
    """`t.t_()` and the other in-place view ops: `t` becomes `op`'s view of itself (the same
    storage and elements, a new shape), its version bumped, `op`'s node (TBackward1, ...)
    recorded on its history. A base is not rebased (no CopySlices), as in torch.

    `inverse(xp, array)` gives the old geometry back from the new one, for the views whose
    base `t` is (they re-derive themselves from it); None where there is none (as_strided_).
    `view_fn`: for a view, its new view function, where it is not the old one followed by `op`.
    """
    check_inplace(t, this_thread.grad_enabled and t._rg)
    if t._base is None and t._vc.views is not None:
        _follow_new_geometry(t, inverse)
    result = apply_op(op, (t,), attrs)
    if t._base is not None:
        t._view_fn = view_fn or _then(t._view_fn, op.forward, attrs)
    t._data = result._data
    _bump(t)
    if result.grad_fn is not None:
        _rebase(t, result.grad_fn)
    if t._vc.views is not None:
        refresh_views(t._vc.views, t if result.grad_fn is not None else None)
    return t


def _then(view_fn, forward, attrs: tuple):
    """A view function followed by one more view op."""

    def composed(xp, array):
        return forward(xp, view_fn(xp, array), *attrs)

    return composed


def _follow_new_geometry(base: Tensor, inverse) -> None:
    """The views of `base` re-derive themselves from its old geometry: put `inverse` first."""
    for view, _ in live_views(base._vc.views):
        if view._base is not base:
            continue
        if inverse is None:
            raise NotImplementedError(
                "as_strided_() of a tensor that has views is not supported by the engine: clone() it first"
            )
        view._view_fn = _after(inverse, view._view_fn)


def _after(inverse, view_fn):
    def composed(xp, array):
        return view_fn(xp, inverse(xp, array))

    return composed


def _reshaped_to(shape: tuple):
    return lambda xp, array: array.reshape(shape)


@public(function=False)
def t_(t):
    check_t(t, "t_")
    return apply_view_inplace(t, D.T_, (), lambda xp, array: array.T)


@public(function=False)
def transpose_(t, dim0, dim1):
    n = t.dim()
    d0, d1 = norm_dim(dim0, n), norm_dim(dim1, n)
    return apply_view_inplace(t, D.TRANSPOSE_, (d0, d1), lambda xp, array: xp.swapaxes(array, d0, d1))


swapdims_ = public(transpose_, name="swapdims_", function=False)


@public(function=False)
def swapaxes_(t, axis0, axis1):
    return transpose_(t, axis0, axis1)


@public(function=False)
def squeeze_(t, dim=None):
    name = squeeze_node_name(dim, ("SqueezeBackward3", "SqueezeBackward4", "SqueezeBackward5"))
    shape = t.shape
    return apply_view_inplace(t, D.SQUEEZE[name], (shape, squeezed_shape(shape, dim)), _reshaped_to(shape))


@public(function=False)
def unsqueeze_(t, dim):
    shape = t.shape
    new = unsqueezed_shape(shape, dim)
    return apply_view_inplace(t, D.SQUEEZE["UnsqueezeBackward1"], (shape, new), _reshaped_to(shape))


@public(function=False)
def as_strided_(t, size, stride, storage_offset=None):
    """`t` becomes the elements of its storage at `size`, `stride`, `storage_offset` (torch's)."""
    refuse_batched(t, VMAP_STORAGE.format("as_strided_"), storage=True)
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    offset = backend.storage_offset(t._data) if storage_offset is None else int(storage_offset)
    _check_strided(t._data, size, stride, offset)
    gather, scatter = _shared_elements(t._data, size, stride, offset)
    attrs = (t.shape, size, stride, offset, gather, scatter)
    view_fn = None if t._base is None else _strided_view_fn(t._base, size, stride, offset)
    return apply_view_inplace(t, D.AS_STRIDED_, attrs, None, view_fn)


def _strided_view_fn(base: Tensor, size: tuple, stride: tuple, offset: int):
    """How a view re-derives itself from (an array laid out like) its contiguous base, by geometry."""
    _check_addressable(base)
    relative = offset - backend.storage_offset(base._data)

    def view_fn(xp, array):
        return backend.restrided(array, size, stride, backend.storage_offset(array) + relative)

    return view_fn


def _check_addressable(base: Tensor) -> None:
    if not base._data.flags.c_contiguous:
        raise NotImplementedError(
            "as_strided_() of a view whose base is not contiguous is not supported by the engine: clone() it first"
        )


def _check_strided(array, size: tuple, stride: tuple, offset: int) -> None:
    """torch's checks of an as_strided geometry against the storage."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}"
        )
    itemsize = array.itemsize
    needed = 0 if 0 in size else (offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1) * itemsize
    available = backend.storage_bounds(array)[1]
    if needed > available:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and itemsize "
            f"{itemsize} requiring a storage size of {needed} are out of bounds for storage of size {available}"
        )


def _shared_elements(array, size: tuple, stride: tuple, offset: int):
    """(positions in the new view, flat index in `array`) of the elements they both see."""
    inside = backend.element_positions(array)
    outside = backend.element_positions(backend.restrided(array, size, stride, offset))
    order = numpy.argsort(inside, kind="stable")
    ranked = inside[order]
    at = numpy.clip(numpy.searchsorted(ranked, outside), 0, max(len(ranked) - 1, 0))
    found = ranked[at] == outside if len(ranked) else numpy.zeros(len(outside), dtype=bool)
    gather = numpy.nonzero(found)[0]
    scatter = order[at[found]]
    dev = backend.device_of(array)
    return backend.to_device(gather, dev), backend.to_device(scatter, dev)


# ----------------------------------------------------------------------------- resize_


@public(function=False)
def resize_(t, *size, memory_format=None):
    """torch's resize_: the first elements of the storage from where `t` starts, in a new shape
    (the storage grows, and its new elements are zeros, when it is too small)."""
    if t._rg:
        raise RuntimeError("cannot resize variables that require grad")
    shape = _resize_shape(size)
    if shape == t._data.shape:
        return t
    t._data = _resized(t._data, shape)
    if t._base is not None and not backend.same_storage(t._data, t._base._data):
        t._base = t._view_fn = None  # a new storage: no longer a view of the base's
        t._vc.views.pop(id(t), None)
    elif t._base is not None:
        t._view_fn = _strided_view_fn(
            t._base, shape, backend.contiguous_strides(shape), backend.storage_offset(t._data)
        )
    _bump(t)
    return t


@public(function=False)
def resize_as_(t, the_template, memory_format=None):
    return resize_(t, the_template.shape)


def _resize_shape(sizes) -> tuple:
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    for n in sizes:
        if isinstance(n, bool) or not isinstance(n, int) and not (isinstance(n, Tensor) and n.dim() == 0):
            raise TypeError(
                f"resize_(): argument 'size' (position 1) must be tuple of ints, not {type(n).__name__}"
            )
    shape = tuple(int(n) for n in sizes)
    if any(n < 0 for n in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    return shape


def _resized(array, shape: tuple):
    """`shape`, C-contiguous, from `array`'s first element in its storage; a larger storage with
    the old elements first when this one is too small."""
    start, available = backend.storage_bounds(array)
    needed = math.prod(shape)
    offset = start // array.itemsize
    if start + needed * array.itemsize <= available:
        return backend.restrided(array, shape, backend.contiguous_strides(shape), offset)
    kept = (available - start) // array.itemsize
    grown = backend.xp_of(array).zeros(needed, dtype=array.dtype)
    grown[:kept] = backend.restrided(array, (kept,), (1,), offset)
    return grown.reshape(shape)
