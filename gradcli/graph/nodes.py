"""One engine node read into its `GraphNode` record: outputs, leaf state, hooks, saved values, edges.

Also what a node holds for backward as buffers (for the memory total), and the small readers
of engine values the other modules share (`is_tensor`, `input_names`, `short_repr`).
"""

from __future__ import annotations

import math
from typing import Any

from engine import Tensor, backend
from engine.autograd.backward import AccumulateGrad
from engine.autograd.function import BackwardCFunction
from engine.ops.inplace import CopySlices
from engine.ops.op import FormulaNode
from engine.tensor import SavedOutput

from ..program.names import NameIndex
from .model import Constant, Edge, GraphNode, Hooks, Leaf, Output, Saved, Tally, TensorMeta


def node_record(
    i: int,
    node: Any,
    level: int,
    consumers: int,
    metas: list[TensorMeta],
    names: NameIndex,
    index: dict[int, int],
    constants: dict[tuple[int, int], Constant],
) -> GraphNode:
    """The record of `node`, at position `i` of the walk (`index`: id(node) -> position)."""
    is_leaf = isinstance(node, AccumulateGrad)
    record = GraphNode(
        id=i,
        name=type(node).__name__,
        kind="leaf" if is_leaf else "function",
        level=level,
        consumers=consumers,
    )
    retained = node._hooks.retained if node._hooks is not None else {}
    for nr, meta in enumerate(metas):
        out = Output(nr, meta)
        if is_leaf:
            out.names = list(names.of(node.variable))
        else:
            out.names = list(names.of_output(node, nr))
            ref = retained.get(nr)
            tensor = ref() if ref is not None else None
            if tensor is not None and tensor._retains_grad and tensor.grad_fn is node:
                out.retains_grad = True
                if tensor._grad is not None:
                    out.grad_norm = _norm(tensor._grad)
        record.outputs.append(out)
    record.hooks = _hooks(node, is_leaf)
    if is_leaf:
        variable = node.variable
        grad = variable._grad
        record.leaf = Leaf(
            requires_grad=bool(variable._rg),
            is_leaf=variable.grad_fn is None,
            has_grad=grad is not None,
            grad_norm=_norm(grad) if grad is not None else None,
        )
    record.saved, record.saved_freed = _saved_values(node, names)
    labels = input_names(node)
    for k, (nxt, nr) in enumerate(node.next_functions):
        edge = Edge(
            index=k,
            input=labels[k] if k < len(labels) else None,
            next=None if nxt is None else index[id(nxt)],
            output_nr=int(nr),
        )
        if nxt is None:
            edge.constant = constants.get((i, k))
        record.edges.append(edge)
    return record


def tally(node: Any) -> Tally:
    """What a node not drawn adds to the totals, read without building its record (nor
    rebuilding its saved outputs as tensors: their array and version counter are enough)."""
    owner = node.fn if isinstance(node, CopySlices) else node
    if isinstance(owner, FormulaNode):
        saved = owner._saved
        pairs = None if saved is None else zip(saved, owner._versions)
    elif isinstance(owner, BackwardCFunction):
        pairs = owner.__dict__.get("_saved_entries", ())
    else:
        pairs = ()
    tensors = [(v, version) for v, version in pairs or () if v.__class__ is SavedOutput or is_tensor(v)]
    return Tally(
        leaf=isinstance(node, AccumulateGrad),
        constants=sum(nxt is None for nxt, _ in node.next_functions),
        saved=len(tensors),
        stale=sum(version is not None and version != v._vc.version for v, version in tensors),
        freed=pairs is None,
        buffers=[buffer_of(v._data) for v, _ in tensors],
    )


def is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor)


def input_names(node: Any) -> tuple:
    """The op's names for its inputs (self, other, ...), when they line up with the edges."""
    declared = getattr(type(node), "input_names", ())
    return declared if len(declared) == len(node.next_functions) else ()


def short_repr(value: Any, limit: int = 60) -> str:
    if callable(value) and not isinstance(value, type):
        text = f"<{getattr(value, '__qualname__', type(value).__name__)}>"
    elif isinstance(value, tuple) and type(value) is not tuple:
        text = repr(tuple(value))  # engine.Size([4]) reads as torch's _saved_self_sym_sizes: (4,)
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def saved_values(node: Any) -> list[Any]:
    """A formula node's saved values in row order (outputs rebuilt as tensors); [] once freed."""
    return [v for v, _ in node.saved_pairs() or ()]


def saved_tensors(node: Any) -> list[Any]:
    """The tensors a node holds for its backward (for the memory total)."""
    if isinstance(node, CopySlices):
        return saved_tensors(node.fn)
    if isinstance(node, (FormulaNode, BackwardCFunction)):
        return [v for v in saved_values(node) if is_tensor(v)]
    return []


def saved_buffers(node: Any) -> list[tuple[int, int, Any]]:
    """The buffers a node's saved tensors hold, as (id, bytes, buffer), for the memory total."""
    return [buffer_of(tensor._data) for tensor in saved_tensors(node)]


def buffer_of(array: Any) -> tuple[int, int, Any]:
    """The buffer an array's memory belongs to (a view's base), as (id, bytes, buffer)."""
    base = array
    while True:
        parent = getattr(base, "base", None)
        if parent is None or parent.__class__ is not array.__class__:
            break
        base = parent
    return id(base), int(base.nbytes), base


def _norm(tensor: Any) -> float:
    """The 2-norm of a gradient, in float64, on the host."""
    array = backend.to_numpy(tensor._data).astype("float64")
    return math.sqrt(float((array * array).sum()))


def _hooks(node: Any, is_leaf: bool) -> Hooks:
    table = node._hooks
    hooks = Hooks()
    if table is not None:
        hooks.pre = len(table.pre)
        hooks.post = len(table.post)
        hooks.tensor = sum(len(d) for d in table.tensor.values())
    if is_leaf and node.variable._hooks:
        hooks.tensor += len(node.variable._hooks)
    return hooks


def _saved_values(node: Any, names: NameIndex, prefix: str = "") -> tuple[list[Saved], bool]:
    """`_saved_*` entries of a node (tensors with versions, then attributes) and whether freed."""
    if isinstance(node, CopySlices):
        return _saved_values(node.fn, names, f"{type(node.fn).__name__}.")
    out: list[Saved] = []
    if isinstance(node, FormulaNode):
        pairs = node.saved_pairs()
        freed = pairs is None
        for j, (value, version) in enumerate(pairs or ()):
            label = prefix + "_saved_" + node.saved_names[j]
            out.append(_saved_record(label, value, version, names, _is_output_of(value, node)))
        for attr, value in zip(node.attr_names, node._attrs):
            out.append(Saved(prefix + "_saved_" + attr, "value", value=short_repr(value)))
        return out, freed
    if isinstance(node, BackwardCFunction):
        pairs = node.saved_pairs()
        for j, (tensor, version) in enumerate(pairs or ()):
            out.append(
                _saved_record(f"saved_tensors[{j}]", tensor, version, names, _is_output_of(tensor, node))
            )
        return out, pairs is None
    return out, False


def _is_output_of(value: Any, node: Any) -> bool:
    """A saved output: engine hands it back rebuilt, so it is named by its producer, not its id."""
    return is_tensor(value) and value.grad_fn is node


def _saved_record(label: str, value: Any, version: int | None, names: NameIndex, result: bool) -> Saved:
    if not is_tensor(value):
        return Saved(label, "value", value=short_repr(value))
    return Saved(
        label,
        "tensor",
        shape=tuple(int(n) for n in value._data.shape),
        dtype=value.dtype.name,
        device=str(value.device),
        nbytes=int(value._data.nbytes),
        saved_version=version,
        current_version=value._vc.version,
        names=list(names.of_output(value.grad_fn, value._output_nr) if result else names.of(value)),
        is_output=result,
    )
