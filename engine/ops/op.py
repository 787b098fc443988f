"""How one row of the derivative table becomes a forward call and a graph node.

`Op` pairs a forward on raw arrays with a node class whose `apply` runs the row's
backward formulas; `apply_op` is the hot path every differentiable op goes through.
"""

from __future__ import annotations

import dis
import inspect
import types

import numpy

from .. import backend
from ..autograd import anomaly, forward_grad, saved_hooks
from ..autograd.backward import edge_of
from ..autograd.node import Node, freed_error, version_error
from ..autograd.saved_hooks import PackedSaved
from ..autograd.thread_local import this_thread  # grad mode, saved-tensor hooks: read once per op
from ..tensor import DETACHED_SAVED_MESSAGE, SavedOutput, Tensor, VersionCounter, detached_since_saved, wrap
from .creation import tensor as make_tensor
from .promotion import promoted

ndarray = numpy.ndarray
_anomaly_on = anomaly.state  # [on, check_nan, sites only]
_tangents = forward_grad.state  # [a non-empty table] once some tensor carries a forward-AD tangent
_jvp = forward_grad.rule  # [propagate(op, inputs, attrs, outputs)]: ops/forward_mode.py


def _producer_of(tensor):
    """The node that now produces `tensor` (PyTorch names the current one), or None for a leaf."""
    fn = tensor.grad_fn
    return None if fn is None else (fn, tensor._output_nr)


class FormulaNode(Node):
    """A node whose backward is a row of the derivative table."""

    __slots__ = ("_saved", "_versions", "_attrs", "_meta")
    formulas: tuple = ()  # one formula per input, or None (non-differentiable)
    joint = None  # or: one formula returning every input's gradient
    saved_names: tuple = ()
    saved_sources: tuple = ()  # input index of each saved tensor; -1 for the result
    attr_names: tuple = ()
    kept_names: tuple = ()  # trailing attrs only the raw formulas read (not PyTorch's saved values)
    input_names: tuple = ()  # the row's declared inputs (self, other, ...); a variadic row (cat) names one

    def unpack(self, as_tensors: bool, in_backward: bool = True) -> list:
        """The saved values, checked; `in_backward=False` for `_saved_*` reads, which PyTorch
        lets see a saved input detached in place."""
        saved = self._saved
        if saved is None:
            raise freed_error()
        out = []
        for value, version in zip(saved, self._versions):
            if version is None:
                out.append(value)
                continue
            if value.__class__ is PackedSaved:  # through its unpack_hook, unchecked, as torch's
                value = value.unpack(self)
                out.append(value if as_tensors else value._data)
                continue
            if value.__class__ is SavedOutput:
                if value._vc.version != version:
                    raise version_error(value.tensor(self), version, value.producer(self))
                if as_tensors:
                    value = value.tensor(self)
            elif in_backward and detached_since_saved(value, version):
                raise RuntimeError(DETACHED_SAVED_MESSAGE)
            if value._vc.version != version:  # named after its current producer, as PyTorch does
                raise version_error(value, version, _producer_of(value))
            out.append(value if as_tensors else value._data)
        return out

    def saved_pairs(self) -> list | None:
        """(value, version) per saved entry as users see it (outputs as Tensors); None once freed."""
        if self._saved is None:
            return None
        return [
            (saved_hooks.as_user_sees(self, value), version)
            for value, version in zip(self._saved, self._versions)
        ]

    def apply(self, grads, m, create_graph):
        g = grads[0]
        versions = self._versions
        if not versions:
            args = self._attrs
        elif create_graph or self._saved is None:
            args = (*self.unpack(create_graph), *self._attrs)
        else:  # unpack inlined for the common case: raw arrays, versions checked
            args = []
            k = 0
            for value in self._saved:
                version = versions[k]
                k += 1
                if version is None:
                    args.append(value)
                elif value._vc.version == version:
                    args.append(value._data)
                else:  # changed in place, or detached: unpack raises PyTorch's error (or finds it fine)
                    args = self.unpack(False)
                    break
            if self._attrs:
                args.extend(self._attrs)
        formulas = self.formulas
        if self.joint is not None:
            out = list(self.joint(m, g, *args))
        elif len(formulas) == 1:  # a unary op: its one input is the reason the node exists
            out = [formulas[0](m, g, *args)]
        else:
            out = []
            k = 0
            edges = self.next_functions
            args = (m, g, *args)  # built once for every formula
            for formula in formulas:
                out.append(None if edges[k][0] is None else formula(*args))
                k += 1
        meta = self._meta
        if meta is not None:  # undo broadcasting and type promotion, in one place
            for i, gi in enumerate(out):
                if gi is None:
                    continue
                shape, dt = meta[i]
                if gi.shape != shape:
                    gi = m.sum_to(gi, shape)
                if (gi._data.dtype if create_graph else gi.dtype) is not dt:  # `!=` misses bfloat16's tag
                    gi = m.cast(gi, dt)
                out[i] = gi
        return out

    def apply_outputs(self, grads, m, create_graph):
        """A row of several outputs (svd's U, S, Vh): its formulas get every output's gradient as `g`,
        a tuple with None where no gradient reached that output."""
        return FormulaNode.apply(self, (tuple(grads),), m, create_graph)

    def release(self) -> None:
        if self._versions:
            self._saved = None

    def release_kept(self) -> None:
        """Free the saved values and the forward's kept intermediates (`keeps=`), which can be large."""
        if self._versions:
            self._saved = None
        kept = len(self.kept_names)
        self._attrs = (*self._attrs[:-kept], *(None,) * kept)

    def release_with_attrs(self) -> None:
        """Free a row whose `frees` attrs PyTorch saves as tensors (IndexBackward0's indices).

        Non-empty versions send `apply` down the unpack path, which raises the freed error,
        so the fast path of `apply` gains no check.
        """
        self._saved = None
        self._versions = FREED_VERSIONS

    def _saved_value(self, name):
        i = self.saved_names.index(name)
        value = self.unpack(True, in_backward=False)[i]
        return value if value is None or isinstance(value, Tensor) else make_tensor(value)


FREED_VERSIONS = (None,)


def pack_saved(node) -> None:
    """Replace each tensor `node` saved by what the registered pack_hook makes of it."""
    saved = list(node._saved)
    for k, version in enumerate(node._versions):
        value = saved[k]
        if version is None:
            continue
        if value.__class__ is SavedOutput:
            saved[k] = saved_hooks.pack(value.tensor(node), value._output_nr)
        else:
            saved[k] = saved_hooks.pack(value)
    node._saved = saved


def _saved_property(name, index, is_attr, freed=False):
    if freed:
        return property(lambda self: _freed_attr(self, index))
    if is_attr:
        return property(lambda self: self._attrs[index])
    return property(lambda self: self._saved_value(name))


def _freed_attr(node, index):
    """An attr PyTorch saves as a tensor: readable until the node is freed, as torch's is."""
    if node._saved is None:
        raise freed_error()
    return node._attrs[index]


class RowError(TypeError):
    """A malformed row of the derivative table, raised when the table is imported."""


def parameters(fn) -> tuple:
    """A function's positional parameter names; a row's functions may not take *args or **kwargs."""
    code = getattr(fn, "__code__", None)
    if (
        code is None
        or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
        or code.co_kwonlyargcount
    ):
        raise RowError(f"{fn!r} must be a plain function of named positional parameters, without *args")
    return code.co_varnames[: code.co_argcount]


def _check_signature(node_name: str, role: str, fn, expected: tuple) -> None:
    try:
        got = parameters(fn)
    except RowError as exc:
        raise RowError(f"derivative table, {node_name}: the {role}: {exc}") from None
    if got != expected:
        raise RowError(
            f"derivative table, {node_name}: the {role} takes ({', '.join(got)}), "
            f"but the row declares ({', '.join(expected)})"
        )


def _check_row(
    name, inputs, saves, attrs, formulas, joint, forward, frees=(), outputs=("result",), keeps=()
) -> None:
    """Every name of a row agrees: forward `(xp, *inputs, *attrs)`, formulas `(m, g, *saves, *attrs)`."""
    unknown = [k for k in formulas if k not in inputs]
    if unknown:
        raise RowError(f"derivative table, {name}: formulas for {unknown}, which are not inputs {inputs}")
    bad_saves = [s for s in saves if s not in inputs and s not in outputs]
    if bad_saves:
        what = repr(outputs[0]) if len(outputs) == 1 else f"outputs {outputs}"
        raise RowError(f"derivative table, {name}: saves {bad_saves}, which are neither inputs nor {what}")
    bad_frees = [a for a in frees if a not in attrs]
    if bad_frees:
        raise RowError(f"derivative table, {name}: frees {bad_frees}, which are not attrs {attrs}")
    if keeps and (tuple(attrs[-len(keeps) :]) != tuple(keeps) or set(keeps) & set(frees)):
        raise RowError(f"derivative table, {name}: keeps {keeps} must be the last attrs, and not freed")
    if (joint is None) == (not formulas):
        raise RowError(f"derivative table, {name}: give either one formula per input or joint=, not both")
    _check_signature(name, "forward", forward, ("xp", *inputs, *attrs))
    expected = ("m", "g", *saves, *attrs)
    if joint is not None:
        _check_signature(name, "joint formula", joint, expected)
    for input_name, formula in formulas.items():
        _check_signature(name, f"formula for {input_name}", formula, expected)


def node_class(
    name,
    inputs,
    saves,
    attrs,
    formulas,
    joint,
    forward,
    variadic=False,
    frees=(),
    outputs=("result",),
    keeps=(),
):
    """Make the node class for one checked row: named as PyTorch names it, with `_saved_*` properties.

    A saved output k has source -1 - k (the only output, `result`, is -1). Kept attrs (`keeps`) get
    no `_saved_*` property and are not in `attr_names`: PyTorch's node has no such saved value.
    """
    _check_row(name, inputs, saves, attrs, formulas, joint, forward, frees, outputs, keeps)
    sources = tuple(-1 - outputs.index(s) if s in outputs else inputs.index(s) for s in saves)
    ns = {
        "__slots__": (),
        "num_outputs": len(outputs),
        "formulas": () if variadic else tuple(formulas.get(i) for i in inputs),
        "joint": staticmethod(joint) if joint else None,
        "saved_names": tuple(saves),
        "saved_sources": sources,
        "attr_names": tuple(a for a in attrs if a not in keeps),
        "kept_names": tuple(keeps),
        "input_names": tuple(inputs),
    }
    for i, s in enumerate(saves):
        ns["_saved_" + s] = _saved_property(s, i, False)
        ns["_raw_saved_" + s] = property(lambda self, i=i: saved_hooks.SavedTensor(self, i))
    for i, a in enumerate(ns["attr_names"]):
        ns["_saved_" + a] = _saved_property(a, i, True, a in frees)
    ns["apply"] = own_copy(FormulaNode.apply if len(outputs) == 1 else FormulaNode.apply_outputs)
    release = (
        FormulaNode.release_with_attrs
        if frees
        else FormulaNode.release_kept
        if keeps
        else FormulaNode.release
    )
    ns["release"] = own_copy(release)
    return type(name, (FormulaNode,), ns)


def own_copy(function):
    """The same function on its own copy of the code, for one node class.

    CPython 3.11 specializes attribute access per instruction for a single class; code
    shared by every node class would see them all and fall back to the slow lookups.
    """
    code = function.__code__.replace()
    return types.FunctionType(
        code, function.__globals__, function.__name__, function.__defaults__, function.__closure__
    )


_LOADS = ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_DEREF", "LOAD_CLOSURE")


def names_read(formula) -> set:
    """The parameter names a formula's code reads (so a saved value nobody reads is not saved)."""
    read = set()
    for instruction in dis.get_instructions(formula):
        if instruction.opname.startswith(_LOADS):
            value = instruction.argval
            read.update(value if isinstance(value, tuple) else (value,))  # 3.13 loads pairs
    return read


def _variadic(forward, attr_count: int):
    """A variadic row's forward called as the others are, `(xp, *tensors, *attrs)`."""
    if attr_count == 0:
        return lambda xp, *tensors: forward(xp, tensors)
    return lambda xp, *args: forward(xp, args[:-attr_count], *args[-attr_count:])


ROWS: list = []  # every Op made, for tools that time them (autograd.profiler)


class Op:
    """One row of the table: the forward on arrays, the node class, and what to save.

    As in PyTorch, an input is saved only when the formula of some input that requires
    grad reads it: `x * 2` saves `other` but not `self`. `save_plan` has, per saved value,
    the input it is (-1: the output) and the inputs whose formulas read it (None: always
    saved); `conditional` says whether any value depends on which inputs require grad.
    """

    __slots__ = ("forward", "node", "save_plan", "conditional", "broadcasts", "promotes", "casts", "jvp")

    def __init__(
        self, forward, node, broadcasts=False, promotes=False, variadic=False, casts=False, jvp=None
    ):
        ROWS.append(self)
        attr_count = len(node.attr_names) + len(node.kept_names)
        self.forward = _variadic(forward, attr_count) if variadic else forward
        self.node = node
        self.broadcasts = broadcasts  # input gradients summed and cast back to each input (FormulaNode.apply)
        self.promotes = promotes  # operands' dtypes promoted as torch does (promotion.py)
        self.casts = casts  # the result has the dtype asked for, not its input's (no bfloat16 tag restored)
        self.jvp = jvp  # forward AD's rule: LINEAR, BILINEAR, a function, or None (ops/forward_mode.py)
        # save_plan and conditional are worked out on first use (__getattr__): reading every
        # formula's bytecode for ~280 rows was a third of `import engine`.

    def __getattr__(self, name: str):
        """`save_plan` / `conditional`, planned when an op first runs; then plain slots, free to read."""
        if name not in ("save_plan", "conditional"):
            raise AttributeError(f"'Op' object has no attribute {name!r}")
        self._plan()
        return getattr(self, name)

    def _plan(self) -> None:
        node = self.node
        formulas, saves = node.formulas, node.saved_names
        self.conditional = not (node.joint is not None or len(formulas) < 2 or None in formulas)
        if self.conditional:
            read = [names_read(f) for f in formulas]
            readers = [
                None if i < 0 else tuple(j for j, names in enumerate(read) if s in names)
                for s, i in zip(saves, node.saved_sources)
            ]
        else:
            readers = [None] * len(saves)
        self.save_plan = tuple(zip(node.saved_sources, readers))


def check_same_device(*values) -> None:
    """PyTorch's error when the Tensors among `values` are not all on one device: the one rule."""
    tensors = [x for x in values if isinstance(x, Tensor)]
    if all(t._data.__class__ is ndarray for t in tensors):
        return  # host arrays are never on two devices
    first = tensors[0].device
    for t in tensors[1:]:
        if t.device != first:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{first} and {t.device}!"
            )


def broadcast_error(inputs) -> RuntimeError | None:
    """PyTorch's error when the tensor inputs' shapes don't broadcast; None when they do.

    As torch does, shapes are folded in turn, each compared from the trailing dimension.
    """
    shape = None
    for x in inputs:
        if not isinstance(x, Tensor):
            continue
        other = x._data.shape
        if shape is None:
            shape = other
            continue
        n = max(len(shape), len(other))
        a, b = (1,) * (n - len(shape)) + tuple(shape), (1,) * (n - len(other)) + tuple(other)
        for d in reversed(range(n)):
            if a[d] != b[d] and a[d] != 1 and b[d] != 1:
                return RuntimeError(
                    f"The size of tensor a ({a[d]}) must match the size of tensor b ({b[d]}) "
                    f"at non-singleton dimension {d}"
                )
        shape = tuple(y if x == 1 else x for x, y in zip(a, b))
    return None


def _xp_of_inputs(datas):
    for d in datas:
        if d.__class__ is ndarray:
            return numpy
        if backend.is_array(d):
            return backend.xp_of(d)
    return numpy


def _wrapped_numbers(datas) -> list:
    """Python ints as the first array's integer dtype, wrapped around as C casts do (int8 + 1000): numpy
    scalars, which numpy's and CuPy's arrays both take as operands (CuPy refuses numpy arrays)."""
    dtype = next(d.dtype for d in datas if hasattr(d, "dtype"))
    return [numpy.array(d).astype(dtype)[()] if d.__class__ is int else d for d in datas]


def new_node(cls, next_functions, saved=(), attrs=(), meta=None):
    """A FormulaNode with its saved values stamped with their current versions."""
    node = cls.__new__(cls)
    node._hooks = None
    node._trace = anomaly.creation_trace() if anomaly.state[0] else None
    node.next_functions = next_functions
    node._saved = saved
    node._versions = [v._vc.version if isinstance(v, Tensor) else None for v in saved] if saved else ()
    node._attrs = attrs
    node._meta = meta
    return node


def _broadcast_meta(inputs, out):
    """Input (shape, dtype) pairs, when some gradient must be summed or cast back; else None."""
    shape, dt = out._data.shape, out._data.dtype
    for x in inputs:
        if isinstance(x, Tensor) and (x._data.shape != shape or x._data.dtype != dt):
            return tuple(
                (x._data.shape, x._data.dtype) if isinstance(x, Tensor) else ((), dt) for x in inputs
            )
    return None


def kept_box(*tensors) -> list | None:
    """The box a row's `keeps=` intermediate goes in: `[None]`, for the forward to fill, when a
    backward will be recorded (grad mode on, one of `tensors` requires grad); else None, and
    nothing is kept."""
    if this_thread.grad_enabled and any(t is not None and t.requires_grad for t in tensors):
        return [None]
    return None


VMAP_DYNAMIC_SHAPE = (
    "vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap over "
    "aten::{}. Please file an issue at https://github.com/pytorch/pytorch/issues if you need this feature."
)

#: An op that reads its input's storage (offsets and strides into it): each example of a batch sits
#: elsewhere in the batch's storage than the tensor the function sees.
VMAP_STORAGE = "vmap: no batching rule for engine.{} (it reads the storage, which a batch shares)"


def refuse_batched(tensor, message: str, storage: bool = False) -> None:
    """Refuse an op vmap cannot batch where `tensor` carries a vmap batch (engine.func's BatchedTensor,
    seen from below engine.func): one whose result's shape depends on each example's values (torch's
    messages), or, `storage`, one that reads the storage, refused in a per-example run too."""
    thread = this_thread
    if (thread.batched_apply is not None and getattr(tensor, "_levels", None)) or (
        storage and thread.transforms.per_example
    ):
        raise RuntimeError(message)


def apply_op(op: Op, inputs: tuple, attrs: tuple = ()):
    """Run `op` forward; record a node when grad mode is on and an input requires grad.

    This is the hot path of every op, hence the inlined Tensor construction and edges,
    and plain loops instead of helpers and comprehensions (each a Python call in 3.11).
    """
    # This thread's state, read through its dict: a threading.local's cheapest read (ops/op.py
    # reads nothing else per op from it); a thread's first read also quiets its numpy.
    thread = this_thread.__dict__
    batched = thread["batched_apply"]
    if batched is not None:  # inside engine.func.vmap: the row's batching rule
        return batched(op, inputs, attrs, apply_op)
    grad_enabled = thread["grad_enabled"]
    n = len(inputs)
    if n == 1:  # unary ops: the input is always a Tensor
        a = inputs[0]
        d0 = a._data
        datas = (d0,)
        requires_grad = a._rg
    else:
        datas = []
        requires_grad = False
        array_class = None
        dtype = None
        dtypes_differ = float_number = False  # where numpy's promotion may not be torch's
        for x in inputs:
            if x.__class__ is Tensor or isinstance(x, Tensor):
                data = x._data
                if array_class is None:
                    array_class = data.__class__
                    dtype = data.dtype
                else:
                    if data.__class__ is not array_class:  # numpy and cupy arrays: name the devices
                        check_same_device(*inputs)
                    if data.dtype is not dtype:
                        dtypes_differ = True
                datas.append(data)
                if x._rg:
                    requires_grad = True
            else:
                if x.__class__ is float:
                    float_number = True
                datas.append(x)
        if op.promotes and (dtypes_differ or (float_number and dtype is not None and dtype.kind != "f")):
            datas = promoted(inputs, datas)
        d0 = datas[0]
    xp = numpy if d0.__class__ is ndarray else _xp_of_inputs(datas)
    try:
        if n == 1 and not attrs:  # the most common call, without building an argument tuple
            array = op.forward(xp, d0)
        else:
            array = op.forward(xp, *datas, *attrs)
    except ValueError:  # numpy refused the shapes: say it in PyTorch's words
        error = broadcast_error(inputs)
        if error is None:
            raise
        raise error from None
    except OverflowError:  # a Python int beyond a narrow int dtype: torch wraps it around
        array = op.forward(xp, *_wrapped_numbers(datas), *attrs)
    if array.__class__ is not ndarray:  # a scalar, or a device array: bfloat16 kept where it was lost
        array = backend.as_result_array(array, d0, not op.casts)
    out = Tensor.__new__(Tensor)  # wrap(array), inlined
    out._data = array
    out._grad = out._base = out._view_fn = out._hooks = out._post_acc_hooks = out._acc = None
    out._output_nr = 0
    out._retains_grad = False
    out._vc = VersionCounter()
    if not (requires_grad and grad_enabled):
        out._rg = False
        out._node = None
        if _tangents[0]:  # forward AD: the output's tangent (ops/forward_mode.py)
            _jvp[0](op, inputs, attrs, (out,))
        if _anomaly_on[0]:
            anomaly.unrecorded(op.node.__name__, inputs, out)
        return out

    # The edges: where each input's gradient goes (a non-leaf's grad_fn inline, the rest in edge_of).
    if n == 1:
        fn = a.grad_fn
        edges = ((fn, a._output_nr) if fn is not None else edge_of(a),)
    elif n == 2:
        a, b = inputs
        fn = a._node if a.__class__ is Tensor else None
        fb = b._node if b.__class__ is Tensor else None
        edges = (
            (fn, a._output_nr) if fn is not None else edge_of(a),
            (fb, b._output_nr) if fb is not None else edge_of(b),
        )
    else:
        edges = tuple(map(edge_of, inputs))
    cls = op.node
    node = cls.__new__(cls)
    node._hooks = None
    node._trace = anomaly.forward_trace(node, inputs, out) if _anomaly_on[0] else None
    node.next_functions = edges
    node._attrs = attrs

    # The saved values, stamped with their versions. When an input needs no gradient, only
    # what the formulas of the inputs that do will read (torch's conditional saving).
    if op.save_plan:
        pruned = op.conditional and (edges[0][0] is None or (n > 1 and edges[1][0] is None) or n > 2)
        saved = []
        versions = []
        for i, readers in op.save_plan:
            if pruned and readers is not None and not _any_edge(edges, readers):
                saved.append(None)
                versions.append(None)
            elif i < 0:  # the output: its data and version counter, not the Tensor (no cycle)
                value = SavedOutput.__new__(SavedOutput)  # SavedOutput(out), inlined
                value._data = array
                value._vc = out._vc
                value._output_nr = 0
                value._place = None
                saved.append(value)
                versions.append(0)
            else:
                value = inputs[i]
                saved.append(value)
                versions.append(
                    value._vc.version if value.__class__ is Tensor or isinstance(value, Tensor) else None
                )
        node._saved = saved
        node._versions = versions
        if thread["saved_hooks"]:
            pack_saved(node)
    else:
        node._saved = node._versions = ()

    if op.broadcasts and (
        n != 2
        or a.__class__ is not Tensor
        or b.__class__ is not Tensor
        or a._data.shape != array.shape
        or b._data.shape != array.shape
        or a._data.dtype != array.dtype
        or b._data.dtype != array.dtype
    ):  # some input's gradient may need summing or casting back
        node._meta = _broadcast_meta(inputs, out)
    else:
        node._meta = None
    out._node = node
    out._rg = True
    if _tangents[0]:
        _jvp[0](op, inputs, attrs, (out,))
    return out


def _any_edge(edges, positions) -> bool:
    for j in positions:
        if edges[j][0] is not None:
            return True
    return False


def apply_multi(op: Op, inputs: tuple, attrs: tuple = ()) -> list:
    """Run a row of several outputs (svd's U, S, Vh): one node, output k its output_nr k.

    Not the hot path: these rows factor matrices. Saved outputs keep their version, as a
    single output's do in `apply_op`, so an in-place change of U before backward is caught.
    """
    thread = this_thread  # a thread's first read also quiets its numpy
    if thread.batched_apply is not None:
        return thread.batched_apply(op, inputs, attrs, apply_multi)
    grad_enabled = thread.grad_enabled
    check_same_device(*inputs)
    datas = [x._data if isinstance(x, Tensor) else x for x in inputs]
    outs = [wrap(array) for array in op.forward(_xp_of_inputs(datas), *datas, *attrs)]
    if not (grad_enabled and any(isinstance(x, Tensor) and x._rg for x in inputs)):
        if _tangents[0]:
            _jvp[0](op, inputs, attrs, outs)
        if _anomaly_on[0]:
            for out in outs:
                anomaly.unrecorded(op.node.__name__, inputs, out)
        return outs
    saved, versions = [], []
    for i, _ in op.save_plan:
        if i < 0:
            out = outs[-1 - i]
            saved.append(SavedOutput(out, -1 - i))
            versions.append(0)
        else:
            saved.append(inputs[i])
            versions.append(inputs[i]._vc.version if isinstance(inputs[i], Tensor) else None)
    node = new_node(op.node, tuple(edge_of(x) for x in inputs), (), attrs)
    node._saved, node._versions = saved, versions
    if this_thread.saved_hooks:
        pack_saved(node)
    if _anomaly_on[0]:
        node._trace = [anomaly.forward_trace(node, inputs, out) for out in outs][0]
    for k, out in enumerate(outs):
        out._node = node
        out._output_nr = k
        out._rg = True
    if _tangents[0]:
        _jvp[0](op, inputs, attrs, outs)
    return outs


def row(
    node_name,
    forward,
    inputs=("self",),
    saves=(),
    attrs=(),
    *,
    broadcasts=False,
    promotes=False,
    variadic=False,
    casts=False,
    joint=None,
    frees=(),
    outputs=("result",),
    keeps=(),
    jvp=None,
    **formulas,
) -> Op:
    """One op of the table; checks every name (see the module docstring)."""
    node = node_class(
        node_name, inputs, saves, attrs, formulas, joint, forward, variadic, frees, outputs, keeps
    )
    if callable(jvp):
        _check_signature(node_name, "jvp", jvp, ("m", "tangents", "inputs", "attrs", "result"))
    return Op(
        forward, node, broadcasts=broadcasts, promotes=promotes, variadic=variadic, casts=casts, jvp=jvp
    )


ELEMENTWISE = {"broadcasts": True, "promotes": True}
LINEAR = "linear"  # jvp= of a row linear in its tensor inputs: its own forward, applied to the tangents
BILINEAR = "bilinear"  # jvp= of a product f(a, b) linear in each: f(ta, b) + f(a, tb)
ADD_PRODUCT = "add_product"  # jvp= of beta * self + alpha * (a @ b) (addmm, addmv, baddbmm, ...)
BIASED_PRODUCT = "biased_product"  # jvp= of a product of two inputs plus a bias, the third (convolution)
SYMMETRIC = (
    "symmetric"  # jvp= of a row whose Jacobian is symmetric (unary elementwise math, softmax): J v = Jᵀv
)


def no_forward_ad(aten_name: str):
    """jvp= of a row torch has no forward AD for: torch's error, word for word."""

    def refuse(m, tangents, inputs, attrs, result):
        raise NotImplementedError(
            f"Trying to use forward AD with {aten_name} that does not support it because it has not been "
            "implemented yet.\nPlease file an issue to PyTorch at "
            "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
            "prioritize its implementation or submit a PR adding the implementation to derivatives.yaml"
        )

    return refuse


def with_jvp(rule, *ops) -> None:
    """Give rows their forward-AD rule (`LINEAR`, `BILINEAR`, `SYMMETRIC`, ...), as a `jvp=` entry would."""
    for op in ops:
        op.jvp = rule


def tied_to_self(forward_node_name: str) -> Op:
    """The node PyTorch records for the backward of a row linear in its input (a pool, a pad, a loss).

    Its backward is an op of (grad, self), so under create_graph the gradient depends on self, with
    derivative zero, and requires grad whenever self does. Here the row's formula result (its graph
    on the incoming gradient) is tied to self by this node: identity for it, zeros for self.
    """
    return row(
        forward_node_name.replace("Backward0", "BackwardBackward0"),
        lambda xp, grad_input, self, self_sym_sizes: grad_input.copy(),
        inputs=("grad_input", "self"),
        attrs=("self_sym_sizes",),
        grad_input=lambda m, g, self_sym_sizes: g,
        self=lambda m, g, self_sym_sizes: m.zeros(self_sym_sizes, g),
    )


def tied_to(grad, x, op):
    """A gradient recorded as an op of (grad, x), as PyTorch records a pool's or a pad's backward."""
    return apply_op(op, (grad, x), (tuple(x.shape),))
