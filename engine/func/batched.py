"""Batched tensors: what a function sees inside `vmap`, and how rows run on them.

A `BatchedTensor` holds its batch dims physically (`_phys`, one leading dim per vmap level in
`_levels`, outermost first) and shows the function one example: its `_data` is a view of the
first example, so shapes, dtypes and argument checks read as torch's logical tensor does. Every
op reaches `apply_op`, which, while a vmap runs, hands the row here: the row runs once on the
first example (recording its node, with the batched inputs saved, so a backward inside vmap
runs its formulas as recorded ops that come back here), then on the whole batch through the
row's batching rule (ops/batching.py, the rules gradcheck's batched Jacobian shares). Under
forward AD the tangents propagate after that, from the batched inputs to the batched output, so
a batch of tangents (vmap over jvp) runs through the rules too.
"""

from __future__ import annotations

import math
import sys

import numpy

from ..autograd import forward_grad
from ..autograd.thread_local import this_thread
from ..ops import op as op_module
from ..ops.batching import BatchedAttr, Unbatchable, run_batched, run_batched_outputs
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


_LAYOUT_ONLY = (numpy.shares_memory, numpy.may_share_memory)


class NotBatchable(RuntimeError):
    """The batch cannot run op by op here (a row without a rule that fits, values read outside a row):
    vmap runs the function once per example instead, as torch's vmap falls back to a loop."""


class Example(numpy.ndarray):
    """A batched tensor's `_data`: its first example, for shapes and dtypes only.

    Code that computes on a tensor's array directly rather than through a row (comparisons
    without a graph, in-place writes, values read into attrs) would see one example and be
    silently wrong for the batch: any numpy computation on this array raises instead.
    """

    def __array_ufunc__(self, *args, **kwargs):
        raise NotBatchable(VALUES_MESSAGE)

    def __array_function__(self, func, types, args, kwargs):
        if func in _LAYOUT_ONLY:  # where the memory is, not what it holds
            return func(*(a.view(numpy.ndarray) if isinstance(a, Example) else a for a in args), **kwargs)
        raise NotBatchable(VALUES_MESSAGE)

    def _refuse(self, *args, **kwargs):
        raise NotBatchable(VALUES_MESSAGE)

    item = tolist = nonzero = __bool__ = __int__ = __float__ = __index__ = __iter__ = _refuse
    __setitem__ = fill = astype = copy = __copy__ = __deepcopy__ = tobytes = _refuse
    # the methods that compute on values without passing through numpy's ufunc or function protocols
    all = any = argmax = argmin = argpartition = argsort = choose = clip = compress = _refuse
    cumprod = cumsum = dot = max = min = mean = partition = prod = ptp = put = repeat = _refuse
    round = searchsorted = sort = std = sum = take = trace = var = _refuse


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
    out._data = phys[(0,) * len(levels) + (Ellipsis,)].view(Example)
    out._data._batch = (phys, levels)  # where an attr made of this array finds its batch
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
    if len(x._levels) == len(sizes):  # every level already there, in order
        return x._phys
    return aligned_phys(x._phys, x._levels, sizes)


def aligned_phys(phys, own: tuple, sizes: dict):
    """A physical array of the levels `own` with a dim per level of `sizes`, broadcast where it has none."""
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


def no_rule_error(op, frames: int = 3) -> NotBatchable:
    """What vmap says of an op it cannot batch, naming the caller's function and the row."""
    caller = sys._getframe(frames).f_code.co_name
    return NotBatchable(f"vmap: no batching rule for engine.{caller} ({op.node.__name__})")


def _batched_attrs(attrs) -> list:
    """The attrs that are a batched tensor's array (a mask from batched values): (index, its batch)."""
    return [(k, a._batch) for k, a in enumerate(attrs) if a.__class__ is Example and hasattr(a, "_batch")]


def apply_batched(op, inputs, attrs, plain):
    """`plain(op, inputs, attrs)` (apply_op or apply_multi) with batched inputs run through a rule.

    An attr that is a batched tensor's array (where's condition) reaches the rule batched too, and
    the node keeps it as it came, so a formula recorded under vmap reads the batch.
    """
    sizes = levels_of(inputs)
    in_attrs = ()
    for a in attrs:
        if a.__class__ is Example:  # an attr that may be a batched tensor's array
            in_attrs = _batched_attrs(attrs)
            break
    first_attrs = attrs
    if in_attrs:
        first_attrs = list(attrs)
        for k, (phys, levels) in in_attrs:
            sizes.update(zip(levels, phys.shape))
            first_attrs[k] = attrs[k].view(numpy.ndarray)
        first_attrs = tuple(first_attrs)
    thread = this_thread
    hook = thread.batched_apply
    examples = [(x, x._data) for x in inputs if x.__class__ is BatchedTensor]
    for x, data in examples:  # the row itself may read the first example's values
        x._data = data.view(numpy.ndarray)
    dual = forward_grad.state[0]  # some tensor has a tangent: propagated below, on the batch
    thread.batched_apply = forward_grad.state[0] = None
    try:
        out = plain(op, inputs, first_attrs)  # the first example: its node, shapes and dtypes
    finally:
        thread.batched_apply = hook
        forward_grad.state[0] = dual
        for x, data in examples:
            x._data = data
    if not sizes:
        if dual:
            forward_grad.rule[0](op, inputs, attrs, out if isinstance(out, list) else (out,))
        return out
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
    if not examples:  # only an attr is batched: the first tensor input given the batch
        k = next(i for i, x in enumerate(inputs) if isinstance(x, Tensor))
        datas[k] = numpy.broadcast_to(datas[k], (size, *datas[k].shape))
        flags[k] = True
    given_attrs = attrs
    if in_attrs:
        attrs = list(attrs)
        for k, (phys, own) in in_attrs:
            full = aligned_phys(phys, own, sizes)
            attrs[k] = BatchedAttr(full.reshape(size, *full.shape[len(levels) :]))
        attrs = tuple(attrs)
    single = plain is op_module.apply_op
    outs = [out] if single else out
    shapes = [o._data.shape for o in outs]
    dtypes = [o._data.dtype for o in outs]
    try:
        if single:
            physes = [run_batched(op, datas, flags, attrs, shapes[0], None if op.promotes else dtypes[0])]
        else:
            physes = run_batched_outputs(op, datas, flags, attrs, shapes, dtypes)
    except Unbatchable:
        raise no_rule_error(op) from None
    batch = tuple(sizes[level] for level in levels)
    results = []
    for phys, shape, dtype, o in zip(physes, shapes, dtypes, outs):
        if phys.dtype != dtype:
            phys = phys.astype(dtype)
        results.append(batched(phys.reshape(*batch, *shape), levels, o))
    node = outs[0]._node
    if node is not None and in_attrs:  # a formula recorded under vmap reads the batched attr
        node._attrs = given_attrs
    if node is not None and node._saved:  # saved outputs: the batch, not its first example
        saved = node._saved
        for k, value in enumerate(saved):
            if value.__class__ is SavedOutput:
                for o, result in zip(outs, results):
                    if value._vc is o._vc:
                        saved[k] = result
    if dual:
        forward_grad.rule[0](op, inputs, given_attrs, results)
    return results[0] if single else results


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


INPLACE_MESSAGE = (
    "vmap: {name}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args "
    "that has more elements than `self`. This happened due to `other` being vmapped over but `self` not "
    "being vmapped over {where}. Please try to use out-of-place operators instead of {name}. "
    "If said operator is being called inside the PyTorch framework, please file a bug report instead."
)
#: the name torch's message gives an in-place op, by row, where it is not `aten::<op>_`
_INPLACE_NAMES = {
    **dict.fromkeys(
        "SubBackward0 MulBackward0 DivBackward0 DivBackward2 CopyBackwards IndexPutBackward0".split(),
        "inplace arithmetic",
    ),
    "FillBackward0": "fill_",
    "IndexAddBackward0": "index_add_",
}
#: rows whose in-place form torch runs on the physical tensors: its shape error, not the vmap message
_PHYSICAL_INPLACE = {"AddBackward0", "Atan2Backward0", "CopysignBackward0"}


def _aten_name(op) -> str:
    """aten::<op>_ for the in-place form of a row (ClampBackward1: aten::clamp_)."""
    name = op.node.__name__
    stem = name[: name.index("Backward")]
    return "aten::" + "".join("_" + c.lower() if c.isupper() else c for c in stem).lstrip("_") + "_"


class BatchedWrites:
    """How an in-place op meets batched tensors (this thread's `batched_inplace` while vmap runs)."""

    @staticmethod
    def write(t: Tensor, result: Tensor, op) -> bool:
        """result written into t's batch; False where neither is batched. t without a batch the result
        has is refused as torch refuses it."""
        t_batched = t.__class__ is BatchedTensor
        if result.__class__ is not BatchedTensor and not t_batched:
            return False
        own = levels_of([t])
        missing = levels_of([result]).keys() - own.keys()
        if missing:
            if op.node.__name__ in _PHYSICAL_INPLACE:
                target = list(t._phys.shape if t_batched else t.shape)
                raise RuntimeError(
                    f"output with shape {target} doesn't match the broadcast shape {list(result._phys.shape)}"
                )
            name = _INPLACE_NAMES.get(op.node.__name__)
            where = (
                "in a vmap" if name else f"at level {min(missing)}"
            )  # torch's batch rules, or its fallback
            raise RuntimeError(INPLACE_MESSAGE.format(name=name or _aten_name(op), where=where))
        if result._data.shape != t._data.shape:
            raise RuntimeError(
                f"output with shape {list(t._data.shape)} doesn't match the broadcast shape "
                f"{list(result._data.shape)}"
            )
        source = aligned(result, own) if result.__class__ is BatchedTensor else result._data
        numpy.copyto(t._phys, source, casting="same_kind")
        return True

    @staticmethod
    def copy(t: Tensor) -> BatchedTensor | None:
        return batched(t._phys.copy(), t._levels) if t.__class__ is BatchedTensor else None

    @staticmethod
    def as_batched(t: Tensor) -> BatchedTensor | None:
        return t if t.__class__ is BatchedTensor else None


BATCHED_WRITES = BatchedWrites()
