"""How one row of the derivative table becomes a forward call and a graph node.

`Op` pairs a forward on raw arrays with a node class whose `apply` runs the row's
backward formulas; `apply_op` is the hot path every differentiable op goes through.
"""

from __future__ import annotations

import numpy

from .. import backend
from ..autograd import anomaly, grad_mode
from ..autograd.node import FREED_MESSAGE, Node, edge_of

ndarray = numpy.ndarray
_RESULT = object()  # stands for the op's output in a `saved` tuple


def tensor_type_name(t) -> str:
    prefix = "engine.cuda." if t._data.__class__ is not ndarray and t.device.type == "cuda" else "engine."
    return prefix + t.dtype.tensor_type


def _short_name(node) -> str:
    """How PyTorch 2.x names the producer in that message: `MulBackward0` -> `Mul`."""
    name = node.name()
    for suffix in ("Backward0", "Backward"):
        if name.endswith(suffix) and "::" not in name:
            return name[: -len(suffix)]
    return name


def version_error(tensor, expected, producer) -> RuntimeError:
    """PyTorch's message for a saved tensor modified in place, word for word (torch -> engine).

    `producer` is the (node, output_nr) that made the tensor, or None for a leaf.
    """
    where = f", which is output {producer[1]} of {_short_name(producer[0])}," if producer else ""
    hint = (
        "Hint: the backtrace further above shows the operation that failed to compute its "
        "gradient. The variable in question was changed in there or anywhere later. Good luck!"
        if anomaly.state[0]
        else "Hint: enable anomaly detection to find the operation that failed to compute its "
        "gradient, with engine.autograd.set_detect_anomaly(True, check_nan=False)."
    )
    sizes = "[" + ", ".join(str(n) for n in tensor.shape) + "]"
    err = RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{tensor_type_name(tensor)} {sizes}]{where} is at version "
        f"{tensor._vc[0]}; expected version {expected} instead. {hint}"
    )
    err.saved_tensor = tensor
    err.expected_version = expected
    return err


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

    def unpack(self, as_tensors: bool) -> list:
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        out = []
        for value, version in zip(saved, self._versions):
            if version is None:
                out.append(value)
            elif value._vc[0] != version:
                raise version_error(value, version, _producer_of(value))
            else:
                out.append(value if as_tensors else value._data)
        return out

    def apply(self, grads, m, create_graph):
        g = grads[0]
        args = self.unpack(create_graph) if self._versions else ()
        attrs = self._attrs
        if self.joint is not None:
            out = list(self.joint(m, g, *args, *attrs))
        else:
            out = []
            for (fn, _), formula in zip(self.next_functions, self.formulas):
                out.append(None if fn is None else formula(m, g, *args, *attrs))
        meta = self._meta
        if meta is not None:
            for i, gi in enumerate(out):
                if gi is None:
                    continue
                shape, dt = meta[i]
                if gi.shape != shape:
                    gi = m.sum_to(gi, shape)
                if (gi.dtype is not dt) if create_graph else (gi.dtype != dt.np):
                    gi = m.cast(gi, dt)
                out[i] = gi
        return out

    def release(self) -> None:
        if self._versions:
            self._saved = None

    def _saved_value(self, name):
        i = self.saved_names.index(name)
        from ..tensor import Tensor

        value = self.unpack(True)[i]
        return value if isinstance(value, Tensor) else _as_tensor(value)


def _as_tensor(value):
    from ..tensor import tensor

    return tensor(value)


def _saved_property(name, index, is_attr):
    if is_attr:
        return property(lambda self: self._attrs[index])
    return property(lambda self: self._saved_value(name))


def node_class(name, formulas=(), joint=None, saves=(), inputs=("self",), attrs=()):
    """Make the node class for one row: named as PyTorch names it, with `_saved_*` properties."""
    sources = tuple(-1 if s == "result" else (inputs.index(s) if s in inputs else None) for s in saves)
    ns = {
        "__slots__": (),
        "formulas": tuple(formulas),
        "joint": staticmethod(joint) if joint else None,
        "saved_names": tuple(saves),
        "saved_sources": sources,
        "attr_names": tuple(attrs),
    }
    for i, s in enumerate(saves):
        ns["_saved_" + s] = _saved_property(s, i, False)
    for i, a in enumerate(attrs):
        ns["_saved_" + a] = _saved_property(a, i, True)
    return type(name, (FormulaNode,), ns)


class Op:
    """One row of the table: the forward on arrays, the node class, and what to save."""

    __slots__ = ("forward", "node", "save_index", "broadcast")

    def __init__(self, forward, node, inputs=("self",), saves=(), broadcast=False):
        self.forward = forward
        self.node = node
        self.save_index = tuple(-1 if s == "result" else inputs.index(s) for s in saves)
        self.broadcast = broadcast


def _xp_of_inputs(datas):
    for d in datas:
        if d.__class__ is ndarray:
            return numpy
        if backend.is_array(d):
            return backend.xp_of(d)
    return numpy


def new_node(cls, next_functions, saved=(), attrs=(), meta=None):
    """A FormulaNode with its saved values stamped with their current versions."""
    from ..tensor import Tensor

    node = cls.__new__(cls)
    node._pre_hooks = node._post_hooks = node._tensor_hooks = node._retained = None
    node._trace = anomaly.creation_trace() if anomaly.state[0] else None
    node.next_functions = next_functions
    node._saved = saved
    node._versions = [v._vc[0] if isinstance(v, Tensor) else None for v in saved] if saved else ()
    node._attrs = attrs
    node._meta = meta
    return node


def apply_op(op: Op, inputs: tuple, attrs: tuple = ()):
    """Run `op` forward; record a node when grad mode is on and an input requires grad."""
    from ..tensor import Tensor, wrap

    datas = [x._data if isinstance(x, Tensor) else x for x in inputs]
    d0 = datas[0]
    xp = numpy if d0.__class__ is ndarray else _xp_of_inputs(datas)
    out = wrap(op.forward(xp, *datas, *attrs))
    if not grad_mode.state[0]:
        return out
    for x in inputs:
        if isinstance(x, Tensor) and x._rg:
            break
    else:
        return out
    edges = tuple(edge_of(x) if isinstance(x, Tensor) else (None, 0) for x in inputs)
    saved = [out if i < 0 else inputs[i] for i in op.save_index] if op.save_index else ()
    meta = None
    if op.broadcast:
        meta = tuple((x._data.shape, x.dtype) if isinstance(x, Tensor) else ((), out.dtype) for x in inputs)
    out.grad_fn = new_node(op.node, edges, saved, attrs, meta)
    out._rg = True
    return out
