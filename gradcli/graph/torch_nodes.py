"""torch's grad_fn nodes read into the same `GraphNode` records as the engine's, for `gradcli graph`.

The walk, the topology and the renderers are shared; only reading a node differs. This module
reads what torch exposes to Python, and nothing else (torch is never imported here: the
user's file has imported it, and its nodes are handed in):

- names: `type(node).__name__` (`MulBackward0`, `AccumulateGrad`, a custom Function's
  `MyFnBackward`), as torch's repr prints them;
- each output's shape, dtype and device: `node._input_metadata` (what torch recorded to check
  the gradient the node receives), or the live tensor when the user named it;
- saved values: the `_saved_<name>` attributes `dir(node)` lists (a custom Function's
  `saved_tensors`). Reading one runs torch's own check, so a tensor modified in place since
  it was saved raises torch's "is at version N; expected version M instead": the saved
  version is read from that message, torch exposes it nowhere else. `_raw_saved_<name>.data`
  gives the tensor unchecked (None once a backward freed it);
- hooks: torch keeps the hooks registered on a node in C++ and does not expose them, so only
  tensor hooks are counted: a named tensor's `_backward_hooks`, a leaf's (and its
  `_post_accumulate_grad_hooks`, counted as post hooks); `retains_grad` is known for named
  tensors only, for the same reason.
- constants (`(None, 0)` edges): torch does not say which argument an edge is, so their
  metadata is unknown.
"""

from __future__ import annotations

import re
from typing import Any

from ..anomaly.torch_instrument import SavedRecord
from ..libraries import TORCH
from ..program.names import NameIndex
from .model import Constant, Edge, GraphNode, Hooks, Leaf, Output, Saved, TensorMeta

SAVED = "_saved_"
RAW = "_raw_saved_"
FREED = "backward through the graph a second time"
VERSIONS = re.compile(r"is at version (\d+); expected version (\d+) instead")
RESULT = re.compile(r"result(\d*)$")  # derivatives.yaml's names for saved outputs


def infer_metas(
    order: list[Any],
    index: dict[int, int],
    topo: list[int],
    used: list[int],
    names: NameIndex,
    wanted: list[int] | None = None,
) -> tuple[list[list[TensorMeta]], dict[tuple[int, int], Constant]]:
    """Per node, each output's metadata (a named tensor, else what the node recorded); and the
    constants, by (node, input), whose metadata torch does not expose. Every node's: torch
    graphs are recorded in full, so `wanted` is always None."""
    metas: list[list[TensorMeta]] = []
    constants: dict[tuple[int, int], Constant] = {}
    for i, node in enumerate(order):
        recorded = _recorded_outputs(node)
        row = [TensorMeta() for _ in range(max(len(recorded), used[i], 1))]
        if _is_accumulate_grad(node):
            _merge_tensor(row[0], node.variable, "variable")
        else:
            for nr, meta in enumerate(row):
                for tensor in names.outputs_of(node, nr):
                    _merge_tensor(meta, tensor, "variable")
        for nr, (shape, dtype, device) in enumerate(recorded):
            row[nr].merge(shape, dtype, device, "function")
        metas.append(row)
        for k, (nxt, _) in enumerate(node.next_functions):
            if nxt is None:
                constants[(i, k)] = Constant(TensorMeta())
    return metas, constants


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
    """The record of torch node `node`, at position `i` of the walk (`index`: id(node) -> position)."""
    is_leaf = _is_accumulate_grad(node)
    record = GraphNode(
        id=i,
        name=type(node).__name__,
        kind="leaf" if is_leaf else "function",
        level=level,
        consumers=consumers,
    )
    hooks = Hooks()
    for nr, meta in enumerate(metas):
        out = Output(nr, meta)
        if is_leaf:
            out.names = list(names.of(node.variable))
        else:
            out.names = list(names.of_output(node, nr))
            for tensor in names.outputs_of(node, nr):
                hooks.tensor += len(tensor._backward_hooks or ())
                if tensor.retains_grad:
                    out.retains_grad = True
                    if tensor.grad is not None:
                        out.grad_norm = _norm(tensor.grad)
        record.outputs.append(out)
    if is_leaf:
        variable = node.variable
        grad = variable.grad
        record.leaf = Leaf(
            requires_grad=bool(variable.requires_grad),
            is_leaf=bool(variable.is_leaf),
            has_grad=grad is not None,
            grad_norm=_norm(grad) if grad is not None else None,
        )
        hooks.tensor += len(variable._backward_hooks or ())
        hooks.post += len(getattr(variable, "_post_accumulate_grad_hooks", None) or ())
    record.hooks = hooks
    record.saved, record.saved_freed = _saved_values(node, names)
    for k, (nxt, nr) in enumerate(node.next_functions):
        edge = Edge(index=k, input=None, next=None if nxt is None else index[id(nxt)], output_nr=int(nr))
        if nxt is None:
            edge.constant = constants.get((i, k))
        record.edges.append(edge)
    return record


def saved_buffers(node: Any) -> list[tuple[Any, int, Any]]:
    """The storages a node's saved tensors hold, as (key, bytes, storage), for the memory total."""
    out = []
    for _, tensor in _raw_saved(node):
        if not TORCH.is_tensor(tensor):  # freed, or packed by saved_tensors_hooks (held elsewhere)
            continue
        try:
            storage = tensor.untyped_storage()
            out.append(((str(tensor.device), storage.data_ptr()), int(storage.nbytes()), storage))
        except (RuntimeError, NotImplementedError):  # sparse, nested, ...: its own elements
            out.append((id(tensor), _nbytes(tensor), tensor))
    return out


# ------------------------------------------------------------------------------ reading


def _is_accumulate_grad(node: Any) -> bool:
    return type(node).__name__ == "AccumulateGrad" and hasattr(node, "variable")


def _is_custom_function(node: Any) -> bool:
    return hasattr(node, "_raw_saved_tensors") and hasattr(node, "_forward_cls")


def _recorded_outputs(node: Any) -> list[tuple[Any, str | None, str | None]]:
    """(shape, dtype, device) of each output, as the node recorded them (torch's `_input_metadata`)."""
    try:
        recorded = node._input_metadata
    except (AttributeError, RuntimeError):
        return []
    out = []
    for meta in recorded:
        try:
            out.append((tuple(meta.shape), dtype_name(meta.dtype), str(meta.device)))
        except (AttributeError, RuntimeError):  # a nested tensor's metadata has no plain shape
            out.append((None, None, None))
    return out


def _attributes(node: Any) -> list[str]:
    """The node class's attributes in torch's declaration order (derivatives.yaml's), not dir's."""
    return list(type(node).__dict__)


def _raw_saved(node: Any) -> list[tuple[str, Any]]:
    """(label, tensor or None) of every saved tensor, unchecked: None where a backward freed it."""
    if _is_custom_function(node):
        return [(f"saved_tensors[{j}]", raw.data) for j, raw in enumerate(node._raw_saved_tensors or ())]
    out = []
    for attr in _attributes(node):
        if not attr.startswith(RAW):
            continue
        label = SAVED + attr[len(RAW) :]
        raw = getattr(node, attr)
        if isinstance(raw, (tuple, list)):
            out.extend((f"{label}[{j}]", item.data) for j, item in enumerate(raw))
        else:
            out.append((label, raw.data))
    return out


def _saved_values(node: Any, names: NameIndex) -> tuple[list[Saved], bool]:
    """The node's saved tensors (with versions), then its saved values, and whether freed."""
    if _is_custom_function(node):
        return _custom_function_saved(node, names)
    tensors: list[Saved] = []
    values: list[Saved] = []
    freed = False
    for attr in _attributes(node):
        if not attr.startswith(SAVED):
            continue
        raw = getattr(node, RAW + attr[len(SAVED) :], None)
        try:
            value, versions = getattr(node, attr), None
        except Exception as exc:  # torch's checks; a user's unpack hook may raise anything
            if FREED in str(exc):
                freed = True
                continue
            value, versions = None, _versions(exc)
            if versions is None:  # an error of a user's unpack hook, ...: shown, never raised
                values.append(Saved(attr, "value", value=_unreadable(exc)))
                continue
        if raw is None:
            values.append(Saved(attr, "value", value=_short_repr(value)))
        elif isinstance(raw, (tuple, list)):
            items = value if isinstance(value, (tuple, list)) else [None] * len(raw)
            for j, (item, checked) in enumerate(zip(raw, items)):
                tensors.append(_saved_tensor(f"{attr}[{j}]", item.data, checked, versions, node, names))
        else:
            tensors.append(_saved_tensor(attr, raw.data, value, versions, node, names))
    return tensors + values, freed


def _custom_function_saved(node: Any, names: NameIndex) -> tuple[list[Saved], bool]:
    """`saved_tensors[j]`: torch checks them all at once and names no index when one is stale,
    so the stale one is the first whose current version is the one torch's message gives."""
    raws = node._raw_saved_tensors or ()
    try:
        checked, versions = node.saved_tensors, None
    except Exception as exc:  # torch's checks; a user's unpack hook may raise anything
        if FREED in str(exc):
            return [], True
        checked, versions = [None] * len(raws), _versions(exc)
        if versions is None:  # an error of a user's unpack hook, ...: shown, never raised
            return [Saved("saved_tensors", "value", value=_unreadable(exc))], False
    out = []
    blamed = False
    for j, (raw, value) in enumerate(zip(raws, checked)):
        tensor = raw.data
        mine = versions
        if versions is not None:
            mine = None
            if not blamed and TORCH.is_tensor(tensor) and tensor._version == versions[0]:
                mine, blamed = versions, True
        out.append(_saved_tensor(f"saved_tensors[{j}]", tensor, value, mine, node, names, known=not versions))
    return out, False


def _saved_tensor(
    label: str,
    tensor: Any,
    checked: Any,
    versions: tuple[int, int] | None,
    node: Any,
    names: NameIndex,
    known: bool = True,
) -> Saved:
    """One saved tensor: `tensor` is the unchecked `_raw_saved_*.data` (what a pack hook of
    saved_tensors_hooks returned, if one ran), `checked` what torch's checked read returned
    (None when it raised `versions`, (current, saved)); `known` is False when its saved
    version cannot be told."""
    if isinstance(tensor, SavedRecord):  # what gradcli anomaly's hooks packed: the tensor, or its alias
        original = tensor.ref()
        tensor = original if original is not None else tensor.tensor
    if not TORCH.is_tensor(tensor):  # what saved_tensors_hooks packed: its unpacked tensor, if read
        if not TORCH.is_tensor(checked):
            return Saved(label, "value", value=_short_repr(tensor))
        tensor = checked
    current = int(tensor._version)
    saved_version: int | None = current if known else None
    if versions is not None:
        current, saved_version = versions
    output_nr = _saved_output_nr(label, checked, node)
    found = names.of_output(node, output_nr) if output_nr is not None else names.of(tensor)
    return Saved(
        label,
        "tensor",
        shape=tuple(int(n) for n in tensor.shape),
        dtype=dtype_name(tensor.dtype),
        device=str(tensor.device),
        nbytes=_nbytes(tensor),
        saved_version=saved_version,
        current_version=current,
        names=list(found),
        is_output=output_nr is not None,
    )


def _saved_output_nr(label: str, checked: Any, node: Any) -> int | None:
    """Which output of `node` a saved tensor is (torch saves it without its grad_fn), or None."""
    if TORCH.is_tensor(checked) and checked.grad_fn is node:
        return int(checked.output_nr)
    match = RESULT.search(label.split("[")[0])
    if match and label.startswith(SAVED + "result"):
        return int(match.group(1) or 0)
    return None


def _versions(exc: Exception) -> tuple[int, int] | None:
    """(current, saved) from torch's message about a saved tensor modified in place."""
    match = VERSIONS.search(str(exc))
    return (int(match.group(1)), int(match.group(2))) if match else None


def dtype_name(dtype: Any) -> str:
    """'float32' for torch.float32: the engine's form, so both libraries' graphs read alike."""
    return str(dtype).removeprefix("torch.")


def _merge_tensor(meta: TensorMeta, tensor: Any, source: str) -> None:
    meta.merge(tuple(tensor.shape), dtype_name(tensor.dtype), str(tensor.device), source)


def _nbytes(tensor: Any) -> int:
    return int(tensor.numel()) * int(tensor.element_size())


def _norm(tensor: Any) -> float:
    """The 2-norm of a gradient, in float64."""
    return float(tensor.detach().double().norm().item())


def _unreadable(exc: Exception, limit: int = 60) -> str:
    """What reading a saved value raised, shown in its place."""
    text = f"<unreadable: {type(exc).__name__}: {exc}>"
    return text if len(text) <= limit else text[: limit - 4] + "...>"


def _short_repr(value: Any, limit: int = 60) -> str:
    text = f"tensor of shape {tuple(value.shape)}" if TORCH.is_tensor(value) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
