"""Shape, dtype and device of every tensor the graph produced, read from what the graph records.

Never guessed: first what is known exactly (a named tensor, a leaf's variable, a saved result,
a custom Function's recorded outputs, a retained tensor); then what consumers recorded about
their inputs (saved inputs, `_meta`, `<input>_sym_sizes` / `_dtype` / `_device` attrs) and,
for ops whose output matches every input, what inputs tell about the output, until nothing
more is learnt. What none of these tells stays `None`.
"""

from __future__ import annotations

from typing import Any

from engine.autograd.backward import AccumulateGrad
from engine.autograd.function import BackwardCFunction
from engine.ops import derivatives
from engine.ops.inplace import CopySlices
from engine.ops.op import FormulaNode, Op

from .model import Constant, TensorMeta
from .names import NameIndex
from .nodes import input_names, is_tensor, saved_values, short_repr


def infer_metas(
    order: list[Any], index: dict[int, int], topo: list[int], used: list[int], names: NameIndex
) -> tuple[list[list[TensorMeta]], dict[tuple[int, int], Constant]]:
    """Per node (in `order`), the metadata of each output; and the constants, by (node, input).

    `used[i]`: how many outputs of node i its consumers' edges use (a node may have more).
    """
    metas = [
        [TensorMeta() for _ in range(max(int(getattr(node, "num_outputs", 1) or 1), used[i]))]
        for i, node in enumerate(order)
    ]
    _read_known(order, index, metas, names)
    constants: dict[tuple[int, int], Constant] = {}
    for i in topo:
        node = order[i]
        for k, (nxt, _) in enumerate(node.next_functions):
            if nxt is None:
                constant = Constant(TensorMeta())
                _describe_input(node, k, metas[i], constant.meta, constant, names)
                constants[(i, k)] = constant
    _propagate(order, index, topo, metas, names)
    return metas, constants


def _read_known(
    order: list[Any], index: dict[int, int], metas: list[list[TensorMeta]], names: NameIndex
) -> None:
    """Fill what is known exactly: live tensors, saved results, a custom Function's outputs."""
    for _, tensor in names.tensors:
        fn = tensor.grad_fn
        if fn is not None and id(fn) in index:
            _merge_tensor(metas[index[id(fn)]][tensor._output_nr], tensor, "variable")
    for i, node in enumerate(order):
        if isinstance(node, AccumulateGrad):
            _merge_tensor(metas[i][0], node.variable, "variable")
        elif isinstance(node, FormulaNode):
            saved = saved_values(node)
            if saved:
                for k, src in enumerate(node.saved_sources):
                    if src == -1 and k < len(saved) and is_tensor(saved[k]):
                        _merge_tensor(metas[i][0], saved[k], "saved")
                if not any(a.endswith("_device") for a in node.attr_names):
                    for value in saved:  # an op's tensors share one device
                        if is_tensor(value):
                            metas[i][0].merge(None, None, str(value.device), "saved")
                            break
        elif isinstance(node, BackwardCFunction):
            for nr, (shape, dt, dev) in enumerate(node.__dict__.get("_output_meta", ())):
                if dt is not None and nr < len(metas[i]):
                    metas[i][nr].merge(shape, dt.name, str(dev), "function")
        hooks = node._hooks
        if hooks is not None:
            for nr, ref in hooks.retained.items():
                tensor = ref()
                if tensor is not None and nr < len(metas[i]):
                    _merge_tensor(metas[i][nr], tensor, "variable")


def _propagate(
    order: list[Any], index: dict[int, int], topo: list[int], metas: list[list[TensorMeta]], names: NameIndex
) -> None:
    """What consumers recorded about their inputs, and (for ops whose output matches every
    input) what inputs tell about the output, until nothing more is learnt."""
    matching = _matching_nodes(order)
    one_device = {
        i
        for i, node in enumerate(order)
        if isinstance(node, FormulaNode) and not any(a.endswith("_device") for a in node.attr_names)
    }
    for i in matching:  # a saved tensor input (a constant too) has the output's shape and dtype
        node = order[i]
        saved = saved_values(node)
        for j, src in enumerate(node.saved_sources):
            if src is not None and src >= 0 and j < len(saved) and is_tensor(saved[j]):
                _merge_tensor(metas[i][0], saved[j], "inputs")
    for _ in range(4):
        changed = False
        for i in topo:
            node = order[i]
            for k, (nxt, nr) in enumerate(node.next_functions):
                if nxt is not None:
                    target = metas[index[id(nxt)]][nr]
                    if not target.known:
                        before = (target.shape, target.dtype, target.device)
                        _describe_input(node, k, metas[i], target, None, names)
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
    node: Any, k: int, own: list[TensorMeta], meta: TensorMeta, constant: Constant | None, names: NameIndex
) -> None:
    """Fill `meta` (input k of `node`) from what `node` recorded about that input."""
    out = own[0] if own else TensorMeta()
    if isinstance(node, CopySlices):
        if k == 0:  # the base's history before the in-place write: the same tensor
            meta.merge(out.shape, out.dtype, out.device, "consumer")
        else:
            _describe_input(node.fn, k, [TensorMeta(device=out.device)], meta, constant, names)
        return
    if isinstance(node, BackwardCFunction):
        recorded = node.__dict__.get("_input_meta", ())
        if k < len(recorded):
            shape, dt = recorded[k]
            meta.merge(shape, dt.name, None, "consumer")
        return
    if not isinstance(node, FormulaNode):
        return
    saved = saved_values(node)
    if saved:
        for j, src in enumerate(node.saved_sources):
            if src == k and j < len(saved):
                value = saved[j]
                if is_tensor(value):
                    _merge_tensor(meta, value, "saved")
                    if constant is not None and not constant.names:
                        constant.names = list(names.of(value))
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


def _matching_nodes(order: list[Any]) -> set[int]:
    """Positions of broadcasting-op nodes that recorded no `_meta`: output matches every input."""
    classes = _broadcast_nodes()
    return {i for i, node in enumerate(order) if type(node) in classes and node._meta is None}


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
