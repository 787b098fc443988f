"""Shape, dtype and device of every tensor the graph produced, read from what the graph records.

Never guessed: first what is known exactly (a named tensor, a leaf's variable, a saved result,
a custom Function's recorded outputs, a retained tensor); then what consumers recorded about
their inputs (saved inputs, `_meta`, `<input>_sym_sizes` / `_dtype` / `_device` attrs) and,
for ops whose output matches every input, what inputs tell about the output, until nothing
more is learnt. What none of these tells stays `None`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.autograd.backward import AccumulateGrad
from engine.autograd.function import BackwardCFunction
from engine.ops import derivatives
from engine.ops.inplace import CopySlices
from engine.ops.op import FormulaNode, Op

from ..program.names import NameIndex
from .model import Constant, TensorMeta
from .nodes import input_names, is_tensor, saved_values, short_repr


def infer_metas(
    order: list[Any],
    index: dict[int, int],
    topo: list[int],
    used: list[int],
    names: NameIndex,
    wanted: list[int] | None = None,
) -> tuple[list[list[TensorMeta] | None], dict[tuple[int, int], Constant]]:
    """Per node (in `order`), the metadata of each output; and the constants, by (node, input).

    `used[i]`: how many outputs of node i its consumers' edges use (a node may have more).
    With `wanted` (the positions a tree draws), inference runs only over them and the nodes their
    metadata depends on (`_scope`): what it finds for them is what a whole-graph run finds, and
    the other nodes' metadata is None. Constants are read for the wanted nodes only.
    """
    return _Inference(order, index, topo, used, names).run(wanted)


class _Inference:
    """One graph's inference: each node's saved values read once, each node started once."""

    def __init__(
        self, order: list[Any], index: dict[int, int], topo: list[int], used: list[int], names: NameIndex
    ) -> None:
        self.order, self.index, self.topo, self.used, self.names = order, index, topo, used, names
        self.metas: list[list[TensorMeta] | None] = [None] * len(order)
        self.constants: dict[tuple[int, int], Constant] = {}
        self.named: dict[int, list[Any]] = {}  # position -> its named tensors, in `names` order
        for _, tensor in names.tensors:
            fn = tensor.grad_fn
            if fn is not None and id(fn) in index:
                self.named.setdefault(index[id(fn)], []).append(tensor)
        self.saved: dict[int, list[Any]] = {}  # id(node) -> saved_values(node)
        self.matching = _broadcast_nodes()

    def run(self, wanted: list[int] | None) -> tuple[list[list[TensorMeta] | None], dict]:
        if wanted is None:
            scope = list(range(len(self.order)))
            for i in scope:
                self.start(i, constants=True)
        else:
            scope = self.scope(wanted)
        inside = bytearray(len(self.order))
        for i in scope:
            inside[i] = 1
        _propagate(self, [i for i in self.topo if inside[i]], inside)
        return self.metas, self.constants

    def saved_of(self, node: Any) -> list[Any]:
        """`saved_values(node)`, read once per node (each read rebuilds saved outputs)."""
        key = id(node)
        values = self.saved.get(key)
        if values is None:
            values = self.saved[key] = saved_values(node)
        return values

    def is_matching(self, i: int) -> bool:
        """A broadcasting op that recorded no `_meta`: its output matches every input."""
        node = self.order[i]
        return type(node) in self.matching and node._meta is None

    def is_one_device(self, i: int) -> bool:
        return _one_device(self.order[i])

    def start(self, i: int, constants: bool) -> list[TensorMeta]:
        """Node i's metadata from what is known exactly, then (for a matching op) its saved inputs;
        its constants in between, as they read only what is known exactly."""
        node = self.order[i]
        own = [TensorMeta() for _ in range(max(int(getattr(node, "num_outputs", 1) or 1), self.used[i]))]
        self.metas[i] = own
        for tensor in self.named.get(i, ()):
            _merge_tensor(own[tensor._output_nr], tensor, "variable")
        _read_known(self, node, own)
        if constants:
            for k, (nxt, _) in enumerate(node.next_functions):
                if nxt is None:
                    constant = Constant(TensorMeta())
                    _describe_input(self, node, k, own, constant.meta, constant)
                    self.constants[(i, k)] = constant
        if self.is_matching(i):  # a saved tensor input (a constant too) has the output's shape and dtype
            saved = self.saved_of(node)
            for j, src in enumerate(node.saved_sources):
                if src is not None and src >= 0 and j < len(saved) and is_tensor(saved[j]):
                    _merge_tensor(own[0], saved[j], "inputs")
        return own

    def scope(self, wanted: list[int]) -> list[int]:
        """`wanted` and every node their metadata depends on: the consumers of a node not fully
        known (they describe their inputs), and the inputs of a node that takes its metadata from
        them (a matching op, or a one-device op whose device is unknown)."""
        order, index = self.order, self.index
        consumers = _consumers(order, index)
        drawn = set(wanted)
        seen = set(wanted)
        stack = list(wanted)
        while stack:
            i = stack.pop()
            own = self.start(i, constants=i in drawn)
            reached: list[int] = []
            if not all(meta.known for meta in own):
                reached += consumers(i)
            first = own[0]
            if (not first.known and self.is_matching(i)) or (first.device is None and self.is_one_device(i)):
                reached += [index[id(nxt)] for nxt, _ in order[i].next_functions if nxt is not None]
            for j in reached:
                if j not in seen:
                    seen.add(j)
                    stack.append(j)
        return list(seen)


def _one_device(node: Any) -> bool:
    """An op whose tensors share one device (it records no `<input>_device`)."""
    return isinstance(node, FormulaNode) and not any(a.endswith("_device") for a in node.attr_names)


def _consumers(order: list[Any], index: dict[int, int]) -> Callable[[int], list[int]]:
    """Position -> the positions of the nodes whose edges point at it (one int per node for a chain)."""
    first = [-1] * len(order)
    more: dict[int, list[int]] = {}
    for i, node in enumerate(order):
        for nxt, _ in node.next_functions:
            if nxt is not None:
                j = index[id(nxt)]
                if first[j] < 0:
                    first[j] = i
                else:
                    more.setdefault(j, []).append(i)
    return lambda j: ([first[j]] if first[j] >= 0 else []) + more.get(j, [])


def _read_known(inference: _Inference, node: Any, own: list[TensorMeta]) -> None:
    """Fill what is known exactly: a leaf's variable, saved results, a custom Function's outputs,
    retained tensors."""
    if isinstance(node, AccumulateGrad):
        _merge_tensor(own[0], node.variable, "variable")
    elif isinstance(node, FormulaNode):
        saved = inference.saved_of(node)
        if saved:
            for k, src in enumerate(node.saved_sources):
                if src == -1 and k < len(saved) and is_tensor(saved[k]):
                    _merge_tensor(own[0], saved[k], "saved")
            if _one_device(node):
                for value in saved:  # an op's tensors share one device
                    if is_tensor(value):
                        own[0].merge(None, None, str(value.device), "saved")
                        break
    elif isinstance(node, BackwardCFunction):
        for nr, (shape, dt, dev) in enumerate(node.__dict__.get("_output_meta", ())):
            if dt is not None and nr < len(own):
                own[nr].merge(shape, dt.name, str(dev), "function")
    hooks = node._hooks
    if hooks is not None:
        for nr, ref in hooks.retained.items():
            tensor = ref()
            if tensor is not None and nr < len(own):
                _merge_tensor(own[nr], tensor, "variable")


def _propagate(inference: _Inference, topo: list[int], inside: bytearray) -> None:
    """What consumers recorded about their inputs, and (for ops whose output matches every
    input) what inputs tell about the output, until nothing more is learnt; over the nodes in
    `topo` (those `inside`), which hold every node their metadata depends on."""
    order, index, metas = inference.order, inference.index, inference.metas
    matching = {i for i in topo if inference.is_matching(i)}
    one_device = {i for i in topo if inference.is_one_device(i)}
    for _ in range(4):
        changed = False
        for i in topo:
            node = order[i]
            for k, (nxt, nr) in enumerate(node.next_functions):
                if nxt is not None:
                    j = index[id(nxt)]
                    if not inside[j]:
                        continue
                    target = metas[j][nr]
                    if not target.known:
                        before = (target.shape, target.dtype, target.device)
                        _describe_input(inference, node, k, metas[i], target, None)
                        changed |= before != (target.shape, target.dtype, target.device)
        for i in reversed(topo):
            own = metas[i][0]
            if own.known or not (i in matching or (i in one_device and own.device is None)):
                continue
            for nxt, nr in order[i].next_functions:
                if nxt is not None:
                    source = metas[index[id(nxt)]][nr]
                    if i in matching:
                        changed |= own.merge(source.shape, source.dtype, source.device, "inputs")
                    else:  # an op's tensors share one device
                        changed |= own.merge(None, None, source.device, "inputs")
        if not changed:
            break


def _describe_input(
    inference: _Inference,
    node: Any,
    k: int,
    own: list[TensorMeta],
    meta: TensorMeta,
    constant: Constant | None,
) -> None:
    """Fill `meta` (input k of `node`) from what `node` recorded about that input."""
    out = own[0] if own else TensorMeta()
    if isinstance(node, CopySlices):
        if k == 0:  # the base's history before the in-place write: the same tensor
            meta.merge(out.shape, out.dtype, out.device, "consumer")
        else:
            _describe_input(inference, node.fn, k, [TensorMeta(device=out.device)], meta, constant)
        return
    if isinstance(node, BackwardCFunction):
        recorded = node.__dict__.get("_input_meta", ())
        if k < len(recorded):
            shape, dt = recorded[k]
            meta.merge(shape, dt.name, None, "consumer")
        return
    if not isinstance(node, FormulaNode):
        return
    saved = inference.saved_of(node)
    if saved:
        for j, src in enumerate(node.saved_sources):
            if src == k and j < len(saved):
                value = saved[j]
                if is_tensor(value):
                    _merge_tensor(meta, value, "saved")
                    if constant is not None and not constant.names:
                        constant.names = list(inference.names.of(value))
                elif constant is not None and constant.value is None:
                    constant.value = short_repr(value)
    if constant is not None:
        return  # unsaved, a constant may be a Python number: what follows holds for tensors only
    labels = input_names(node)
    label = labels[k] if k < len(labels) else None
    attrs = dict(zip(node.attr_names, node._attrs)) if node.attr_names else {}
    crosses = label is not None and f"{label}_device" in attrs  # ToCopyBackward0 records the old device
    device = None if crosses else out.device  # otherwise an op's tensors share one device
    if label is not None:
        if f"{label}_sym_sizes" in attrs:
            meta.merge(attrs[f"{label}_sym_sizes"], None, None, "consumer")
        if attrs.get(f"{label}_dtype") is not None:
            meta.merge(None, getattr(attrs[f"{label}_dtype"], "name", None), None, "consumer")
        if crosses and attrs[f"{label}_device"] is not None:
            meta.merge(None, None, str(attrs[f"{label}_device"]), "consumer")
    recorded = node._meta
    if recorded is not None and k < len(recorded):
        shape, dt = recorded[k]
        meta.merge(shape, _dtype_name(dt), device, "consumer")
    elif recorded is None and type(node) in _broadcast_nodes():
        # A broadcasting op records input metadata only when a tensor input's shape or dtype
        # differs from the output's: none recorded means every tensor input matches the output.
        meta.merge(out.shape, out.dtype, device, "consumer")
    meta.merge(None, None, device, "consumer")


_BROADCAST: list[frozenset] = []


def _broadcast_nodes() -> frozenset:
    """Node classes of the rows declared with broadcast=True (their `_meta` is conditional)."""
    if not _BROADCAST:
        _BROADCAST.append(
            frozenset(v.node for v in vars(derivatives).values() if isinstance(v, Op) and v.broadcasts)
        )
    return _BROADCAST[0]


def _merge_tensor(meta: TensorMeta, tensor: Any, source: str) -> None:
    meta.merge(tensor._data.shape, tensor.dtype.name, str(tensor.device), source)


def _dtype_name(np_dtype: Any) -> str:
    name = str(np_dtype)
    return "bool" if name == "bool_" else name
