"""Batched tensors: what a function sees inside `vmap`, and how rows run on them.

A `BatchedTensor` holds its batch dims physically (`_phys`, one leading dim per vmap level in
`_levels`, outermost first) and shows the function one example: its `_data` is a view of the
first example, so shapes, dtypes and argument checks read as torch's logical tensor does. Every
op reaches `apply_op`, which, while a vmap runs, hands the row here: the row runs once on the
first example (recording its node, with the batched inputs saved, so a backward inside vmap
runs its formulas as recorded ops that come back here), then on the whole batch through the
row's batching rule (ops/batching.py, the rules gradcheck's batched Jacobian shares).
"""

from __future__ import annotations

import math
import sys

import numpy

from ..autograd import forward_grad
from ..ops import op as op_module
from ..ops.batching import Unbatchable, run_batched
from ..tensor import SavedOutput, Tensor, wrap

ITEM_MESSAGE = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
    ".item() on a Tensor, please try to rewrite what you're doing with other operations. If error "
    "is occurring somewhere inside PyTorch internals, please file a bug report."
)
CONTROL_FLOW_MESSAGE = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
    "We don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues ."
)
STORAGE_MESSAGE = "Cannot access data pointer of Tensor that doesn't have storage"


VALUES_MESSAGE = (
    "vmap: an operation read the values of a batched tensor outside the derivative table's rows, so it "
    "has no batching rule (it would see one example, not the batch); rewrite it with other operations"
)


class Example(numpy.ndarray):
    """A batched tensor's `_data`: its first example, for shapes and dtypes only.

    Code that computes on a tensor's array directly rather than through a row (comparisons
    without a graph, in-place writes, values read into attrs) would see one example and be
    silently wrong for the batch: any numpy computation on this array raises instead.
    """

    def __array_ufunc__(self, *args, **kwargs):
        raise RuntimeError(VALUES_MESSAGE)

    def __array_function__(self, *args, **kwargs):
        raise RuntimeError(VALUES_MESSAGE)

    def _refuse(self, *args, **kwargs):
        raise RuntimeError(VALUES_MESSAGE)

    item = tolist = nonzero = __bool__ = __int__ = __float__ = __index__ = __iter__ = _refuse
    __setitem__ = fill = astype = copy = __copy__ = __deepcopy__ = _refuse


class BatchedTensor(Tensor):
    """One example of a batch, as the function under vmap sees it; the batch kept in `_phys`."""

    __slots__ = ("_phys", "_levels")

    def item(self):
        raise RuntimeError(ITEM_MESSAGE)

    def __bool__(self) -> bool:
        raise RuntimeError(CONTROL_FLOW_MESSAGE)

    def tolist(self):
        raise RuntimeError(STORAGE_MESSAGE)

    def numpy(self, *, force: bool = False):
        raise RuntimeError(STORAGE_MESSAGE)

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(STORAGE_MESSAGE)

    def detach(self) -> BatchedTensor:
        out = batched(self._phys, self._levels)
        out._vc = self._vc
        return out

    def __repr__(self) -> str:
        return f"BatchedTensor(lvl={self._levels[-1]}, bdim=0, value=\n{wrap(self._phys)!r})"


def batched(phys, levels: tuple, like: Tensor | None = None) -> BatchedTensor:
    """A BatchedTensor over `phys`, whose first len(levels) dims are the levels' batches.

    `like`: a tensor whose autograd state (node, version counter) the result takes over.
    """
    out = BatchedTensor.__new__(BatchedTensor)
    if like is None:
        like = wrap(phys[(0,) * len(levels)])
    out._rg, out._grad, out._node, out._output_nr, out._vc = (
        like._rg,
        like._grad,
        like._node,
        like._output_nr,
        like._vc,
    )
    out._base, out._view_fn, out._retains_grad = like._base, like._view_fn, like._retains_grad
    out._hooks, out._post_acc_hooks, out._acc = like._hooks, like._post_acc_hooks, like._acc
    out._data = phys[(0,) * len(levels)].view(Example)
    out._phys = phys
    out._levels = levels
    return out


def levels_of(values) -> dict:
    """{level: batch size} over the batched tensors among `values`."""
    sizes = {}
    for x in values:
        if x.__class__ is BatchedTensor:
            for k, level in enumerate(x._levels):
                sizes[level] = x._phys.shape[k]
    return sizes


def aligned(x: BatchedTensor, sizes: dict):
    """x's physical array with a dim per level of `sizes` (in level order), broadcast where x has none."""
    phys = x._phys
    own = x._levels
    if len(own) == len(sizes):  # every level already there, in order
        return phys
    logical = phys.shape[len(own) :]
    shape = []
    k = 0
    for level in sorted(sizes):
        if k < len(own) and own[k] == level:
            k += 1
        else:
            phys = numpy.expand_dims(phys, len(shape))
        shape.append(sizes[level])
    return numpy.broadcast_to(phys, (*shape, *logical))


def no_rule_error(op, frames: int = 3) -> RuntimeError:
    """torch's complaint about an op vmap cannot batch, naming the caller's function and the row."""
    caller = sys._getframe(frames).f_code.co_name
    return RuntimeError(f"vmap: no batching rule for engine.{caller} ({op.node.__name__})")


def apply_batched(op, inputs, attrs, plain):
    """`plain(op, inputs, attrs)` (apply_op or apply_multi) with batched inputs run through a rule."""
    sizes = levels_of(inputs)
    hook = op_module.BATCHED_APPLY[0]
    if sizes and plain is not op_module.apply_op:
        raise no_rule_error(op)
    examples = [x for x in inputs if x.__class__ is BatchedTensor]
    for x in examples:  # the row itself may read the first example's values
        x._data = x._data.view(numpy.ndarray)
    op_module.BATCHED_APPLY[0] = None
    try:
        with forward_grad.suspended():  # tangents may be batched: they propagate below, through the rules
            out = plain(op, inputs, attrs)  # the first example: its node, shape and dtype
    finally:
        op_module.BATCHED_APPLY[0] = hook
        for x in examples:
            x._data = x._data.view(Example)
    if not sizes:
        return _with_tangents(op, inputs, attrs, out)
    levels = tuple(sorted(sizes))
    size = math.prod(sizes.values())
    datas, flags = [], []
    for x in inputs:
        if x.__class__ is BatchedTensor:
            phys = aligned(x, sizes)
            datas.append(phys.reshape(size, *phys.shape[len(levels) :]))
            flags.append(True)
        else:
            datas.append(x._data if isinstance(x, Tensor) else x)
            flags.append(False)
    shape, dtype = out._data.shape, out._data.dtype
    try:
        phys = run_batched(op, datas, flags, attrs, shape, dtype if not op.promotes else None)
    except Unbatchable:
        raise no_rule_error(op) from None
    if phys.dtype != dtype:
        phys = phys.astype(dtype)
    result = batched(phys.reshape(*(sizes[level] for level in levels), *shape), levels, out)
    node = out._node
    if node is not None and node._saved:  # the saved output: the batch, not its first example
        saved = node._saved
        for k, value in enumerate(saved):
            if value.__class__ is SavedOutput and value._vc is out._vc:
                saved[k] = result
    return _with_tangents(op, inputs, attrs, result)


def _with_tangents(op, inputs, attrs, out):
    """`out` given its forward-AD tangent, computed by the row's tangent rule on (possibly batched) Tensors."""
    if forward_grad.state[0]:
        forward_grad.rule[0](op, inputs, attrs, out if isinstance(out, tuple) else (out,))
    return out


def elementwise_batched(fn, operands):
    """`fn` (a numpy ufunc) on operands of which some are batched; None when none is."""
    sizes = levels_of(operands)
    if not sizes:
        return None
    levels = tuple(sorted(sizes))
    rank = max(x.dim() for x in operands if isinstance(x, Tensor))
    arrays = []
    for x in operands:
        if x.__class__ is BatchedTensor:
            phys = aligned(x, sizes)
            logical = phys.shape[len(levels) :]
            arrays.append(phys.reshape(*phys.shape[: len(levels)], *(1,) * (rank - len(logical)), *logical))
        else:
            arrays.append(x._data if isinstance(x, Tensor) else x)
    return batched(numpy.asarray(fn(*arrays)), levels)
