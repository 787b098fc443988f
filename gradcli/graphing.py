"""Walking a backward graph into plain dataclasses, for `gradcli graph`.

The walk reads the engine's nodes (`next_functions`, saved values, hooks) once and turns
them into `Graph` / `GraphNode` records that hold no engine objects, so the renderers
(`gradcli.render.graph`: tree, dot, svg, json) need nothing else.

Decisions:

- **Iterative, each node once.** The walk is an explicit-stack depth-first preorder over
  `next_functions`, so a 100,000-node chain never meets Python's recursion limit, and a node
  reached by several paths (a DAG) gets one id: its position in that preorder.
- **Names are the user's.** A node's produced tensor is named after the top-level variable
  whose `grad_fn` (and `output_nr`) it is, an AccumulateGrad after its `.variable`, and
  parameters of top-level objects with `named_parameters()` as `model.fc1.weight`.
- **Shapes are read, never guessed.** A produced tensor's shape, dtype and device come from
  what the graph itself records: a named tensor, a saved result, a consumer's saved input,
  its broadcasting metadata (`_meta`) or `<input>_sym_sizes` / `_dtype` / `_device` attrs, a
  custom Function's recorded input and output metadata. What none of these tells is `None`
  (drawn as `?`).
- **Targets** (what to draw), in order: `--target NAME`; else every top-level tensor with a
  `grad_fn` that no other such tensor's graph consumes; else the outputs of the file's cases
  (the `gradcli check` forms, found by `gradcli.loading`).
"""

from __future__ import annotations

import gc
import inspect
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import engine
from engine import Tensor, backend
from engine.autograd.function import BackwardCFunction
from engine.autograd.node import AccumulateGrad
from engine.ops import derivatives
from engine.ops.inplace import CopySlices
from engine.ops.op import FormulaNode, Op

from . import loading
from .loading import LoadError

# ------------------------------------------------------------------------------ records


@dataclass(slots=True)
class TensorMeta:
    """Shape, dtype and device of a tensor; None where the graph does not record it.

    `known_from` says where they were first read: "variable" (a live tensor: a named one, a
    leaf's variable, a retained one), "saved" (a saved tensor), "function" (a custom Function's
    recorded outputs), "consumer" (what the node that uses it recorded about its input) or
    "inputs" (an elementwise op that recorded no broadcasting: its output matches its inputs).
    """

    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    device: str | None = None
    known_from: str | None = None

    def merge(
        self, shape: Any = None, dtype: str | None = None, device: str | None = None, source: str = ""
    ) -> bool:
        """Fill the fields still unknown (the first source to know a field wins); True if any."""
        filled = False
        if self.shape is None and shape is not None:
            self.shape = tuple(int(n) for n in shape)
            filled = True
        if self.dtype is None and dtype is not None:
            self.dtype = dtype
            filled = True
        if self.device is None and device is not None:
            self.device = device
            filled = True
        if filled and self.known_from is None:
            self.known_from = source
        return filled

    @property
    def known(self) -> bool:
        return self.shape is not None and self.dtype is not None and self.device is not None


@dataclass(slots=True)
class Output:
    """One tensor a node produced: its metadata, the user's names for it, retain_grad state."""

    output_nr: int
    meta: TensorMeta
    names: list[str] = field(default_factory=list)
    retains_grad: bool = False
    grad_norm: float | None = None  # of a retained gradient, once backward populated it


@dataclass(slots=True)
class Leaf:
    """What an AccumulateGrad writes into: the leaf tensor's autograd state."""

    requires_grad: bool
    is_leaf: bool
    has_grad: bool
    grad_norm: float | None


@dataclass(slots=True)
class Saved:
    """A value a node saved for backward (`_saved_self`), or an attribute (`_saved_alpha`).

    For a tensor, `saved_version` is its version when saved and `current_version` its version
    now: when they differ the backward through this node raises.
    """

    name: str
    kind: str  # "tensor" | "value"
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    device: str | None = None
    nbytes: int = 0
    saved_version: int | None = None
    current_version: int | None = None
    names: list[str] = field(default_factory=list)
    value: str | None = None  # short repr of a non-tensor value
    is_output: bool = False  # the node's own result (saved as `_saved_result`)

    @property
    def stale(self) -> bool:
        """Modified in place since it was saved: the backward through this node will fail."""
        return (
            self.kind == "tensor"
            and self.saved_version is not None
            and self.saved_version != self.current_version
        )


@dataclass(slots=True)
class Constant:
    """What a `(None, 0)` edge stands for: an input that does not require grad."""

    meta: TensorMeta
    names: list[str] = field(default_factory=list)
    value: str | None = None  # a Python number's repr


@dataclass(slots=True)
class Edge:
    """`node.next_functions[index] == (next, output_nr)`; `next` is None for a constant."""

    index: int
    input: str | None  # the op's name for that input (self, other, ...) when known
    next: int | None
    output_nr: int
    constant: Constant | None = None


@dataclass(slots=True)
class Hooks:
    """Registered hooks: node pre-hooks and post-hooks, tensor hooks (on a leaf: its variable's)."""

    pre: int = 0
    post: int = 0
    tensor: int = 0

    @property
    def total(self) -> int:
        return self.pre + self.post + self.tensor


@dataclass(slots=True)
class GraphNode:
    """One Function node (`MulBackward0`) or leaf sink (`AccumulateGrad`)."""

    id: int
    name: str  # type(node).__name__, as torch's repr shows it
    kind: str  # "function" | "leaf"
    level: int = 0  # shortest distance from a root
    consumers: int = 0  # edges that point at it (> 1: a shared subgraph)
    outputs: list[Output] = field(default_factory=list)
    leaf: Leaf | None = None
    hooks: Hooks = field(default_factory=Hooks)
    saved: list[Saved] = field(default_factory=list)
    saved_freed: bool = False  # a backward already freed what it had saved
    edges: list[Edge] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [name for out in self.outputs for name in out.names]


@dataclass(slots=True)
class Root:
    """A drawn target: the user's name for it and the (node, output_nr) that produced it."""

    name: str
    node: int
    output_nr: int


@dataclass(slots=True)
class Summary:
    """Whole-graph totals; `saved_bytes` counts each distinct buffer once (views share one)."""

    nodes: int
    leaves: int
    constants: int
    saved_tensors: int
    saved_bytes: int
    stale_saved: int
    freed_nodes: int
    depth: int  # nodes on the longest path from a root to a leaf


@dataclass
class Graph:
    """The walked graph: nodes in preorder (ids are positions), roots, totals."""

    file: str
    roots: list[Root]
    nodes: list[GraphNode]
    summary: Summary
    targets_from: str = "target"  # "target" | "top-level" | "cases"
    device: str = "cpu"
    seed: int = 0


# ------------------------------------------------------------------------------ loading


def load_graph(path: str, *, target: str | None = None, device: str = "cpu", seed: int = 0) -> Graph:
    """Run `path` with `device` as the default device and walk the graph of its target(s).

    Every problem with the file or the target raises `LoadError` (exit code 2), naming the
    file and line where there is one.
    """
    try:
        with loading.using_device(device):
            loaded = loading.load_file(path, seed=seed, require_cases=False)
            targets, names, source = find_targets(loaded, target, seed=seed)
    except backend.CudaUnavailable as exc:
        raise LoadError(f"--device {device} is unavailable: {exc}", path) from None
    return build_graph(targets, names, file=path, targets_from=source, device=device, seed=seed)


def find_targets(
    loaded: loading.LoadedFile, target: str | None, *, seed: int = 0
) -> tuple[list[tuple[str, Any]], NameIndex, str]:
    """The (name, tensor) pairs to draw, the file's names, and how they were chosen."""
    namespace = loaded.module.__dict__
    names = NameIndex.from_namespace(namespace)
    where = loading._top_level_lines("\n".join(loaded.source_lines))

    def error(message: str, name: str | None = None) -> LoadError:
        line = where.get(name) if name is not None else None
        return LoadError(message, loaded.path, line, loaded.line_text(line))

    with_graph = [(n, t) for n, t in names.top_level if t.grad_fn is not None]
    if target is not None:
        chosen = [c for c in loaded.cases if c.name == target]
        defined = target in namespace and not target.startswith("__")
        value = namespace[target] if defined else None
        if defined and (_is_tensor(value) or not chosen):  # else the case of that name (`model`)
            if not _is_tensor(value):
                raise error(
                    f"--target {target}: `{target}` is {_article(type(value).__name__)}, not a tensor; "
                    f"pass the name of a tensor computed from tensors that require grad{_choices(with_graph)}",
                    target,
                )
            if value.grad_fn is None:
                raise error(f"--target {target}: {_no_grad_fn(target, value)}{_choices(with_graph)}", target)
            return [(target, value)], names, "target"
        if chosen:
            return _case_targets(loaded, chosen, names, seed), names, "cases"
        known = [n for n, _ in names.top_level] + [c.name for c in loaded.cases]
        listed = f" (top-level tensors and cases: {', '.join(known)})" if known else ""
        raise error(f"--target {target}: the file defines no top-level variable or case `{target}`{listed}")
    if with_graph:
        consumed: set[int] = set()
        for node in walk([t.grad_fn for _, t in with_graph]):
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    consumed.add(id(nxt))
        roots = [(n, t) for n, t in with_graph if id(t.grad_fn) not in consumed]
        return roots, names, "top-level"
    if loaded.cases:
        return _case_targets(loaded, loaded.cases, names, seed), names, "cases"
    problem = loaded.cases_error
    if problem is not None and loading.ANY_CASES_HINT not in problem.message:
        raise problem  # a case was meant (`f` without `inputs`, ...): say what is wrong with it
    plain = ", ".join(n for n, _ in names.top_level)
    tensors = f" (its top-level tensors, {plain}, have none)" if plain else ""
    raise error(
        f"no target found: no top-level tensor has a grad_fn{tensors} and the file declares no "
        "case. Assign the result to a top-level variable (`loss = ...`) computed from tensors "
        "created with requires_grad=True, pass --target NAME, or declare a case as for gradcli "
        f"check ({loading.ANY_CASES_HINT})"
    )


def _article(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def _choices(with_graph: list[tuple[str, Any]]) -> str:
    if not with_graph:
        return ""
    return f" (tensors with a grad_fn: {', '.join(n for n, _ in with_graph[:12])}{', ...' if len(with_graph) > 12 else ''})"


def _no_grad_fn(name: str, tensor: Any) -> str:
    if tensor.requires_grad:
        return (
            f"`{name}` has no grad_fn: it is a leaf (requires_grad=True, created by the user), so no "
            "backward graph leads to it; pass a result computed from it"
        )
    return (
        f"`{name}` has no grad_fn: it does not require grad (nothing it was computed from requires "
        "grad, or it was computed under no_grad), so no backward graph was recorded"
    )


def _case_targets(
    loaded: loading.LoadedFile, cases: list[Any], names: NameIndex, seed: int
) -> list[tuple[str, Any]]:
    """Run each case once (grad enabled) and return its outputs that have a grad_fn."""
    targets: list[tuple[str, Any]] = []
    for case in cases:
        prepared = loading.prepare(loaded, case, seed=seed)
        for name, value in zip(prepared.input_names, prepared.inputs):
            if _is_tensor(value):
                names.add(name, value, NameIndex.ARGUMENT)
        for name, value in prepared.params:
            names.add(name, value, NameIndex.PARAMETER)
        try:
            with engine.enable_grad():
                result = case.func(*prepared.inputs)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # user code: a LoadError naming its line
            raise loading._user_error(
                f"exception while running case {case.name!r}",
                exc,
                loaded.path,
                loaded.abspath,
                loaded.source_lines,
            ) from None
        outputs = list(result) if isinstance(result, (tuple, list)) else [result]
        found = [
            (case.name if len(outputs) == 1 else f"{case.name}[{k}]", out)
            for k, out in enumerate(outputs)
            if _is_tensor(out) and out.grad_fn is not None
        ]
        if not found:
            kinds = ", ".join(
                "tensor without grad_fn" if _is_tensor(o) else type(o).__name__ for o in outputs
            )
            raise LoadError(
                f"case {case.name!r} returned no tensor with a grad_fn ({kinds or 'nothing'}), so there is "
                "no backward graph to draw",
                loaded.path,
                case.line,
                loaded.line_text(case.line),
            )
        targets.extend(found)
    return targets


# ------------------------------------------------------------------------------ names


class NameIndex:
    """The user's names for tensors: top-level variables, `obj.param`, case arguments, `seq[i]`.

    A tensor may have several names; they are listed most telling first (the rank given to
    `add`: 0 a top-level variable, 1 a parameter, 2 a case's argument, 3 a sequence item).
    """

    VARIABLE, PARAMETER, ARGUMENT, ITEM = 0, 1, 2, 3

    def __init__(self) -> None:
        self.tensors: list[tuple[str, Any]] = []
        self.top_level: list[tuple[str, Any]] = []  # plain top-level variables only
        self._by_id: dict[int, list[tuple[int, str]]] = {}
        self._by_output: dict[tuple[int, int], list[str]] | None = None

    def add(self, name: str, tensor: Any, rank: int = 0) -> None:
        entries = self._by_id.setdefault(id(tensor), [])
        if any(n == name for _, n in entries):
            return
        self.tensors.append((name, tensor))
        entries.append((rank, name))
        entries.sort(key=lambda e: e[0])  # stable: equal ranks keep definition order
        self._by_output = None

    def of(self, tensor: Any) -> list[str]:
        return [name for _, name in self._by_id.get(id(tensor), ())]

    def of_output(self, node: Any, output_nr: int) -> list[str]:
        """Names of the tensors `node` produced as output `output_nr` (their grad_fn is it)."""
        if self._by_output is None:
            self._by_output = {}
            done: set[int] = set()
            for _, t in self.tensors:
                if t.grad_fn is not None and id(t) not in done:
                    done.add(id(t))
                    self._by_output.setdefault((id(t.grad_fn), t._output_nr), []).extend(self.of(t))
        return self._by_output.get((id(node), output_nr), [])

    @classmethod
    def from_namespace(cls, namespace: dict[str, Any]) -> NameIndex:
        """Top-level tensors first (in definition order), then parameters, then sequence items."""
        index = cls()
        later: list[tuple[str, Any]] = []
        for name, value in namespace.items():
            if name.startswith("__"):
                continue
            if isinstance(value, Tensor):
                index.add(name, value)
                index.top_level.append((name, value))
            else:
                later.append((name, value))
        for name, value in later:
            for attr, tensor in _named_parameters(value):
                index.add(f"{name}.{attr}", tensor, cls.PARAMETER)
        for name, value in later:
            if isinstance(value, (list, tuple)) and len(value) <= 10_000:
                for i, item in enumerate(value):
                    if isinstance(item, Tensor):
                        index.add(f"{name}[{i}]", item, cls.ITEM)
        return index


def _named_parameters(value: Any) -> list[tuple[str, Any]]:
    """`value.named_parameters()` for an object (not a class or module) that has it; else []."""
    if inspect.isclass(value) or inspect.ismodule(value) or inspect.isroutine(value):
        return []
    method = getattr(value, "named_parameters", None)
    if not callable(method):
        return []
    try:
        return [(str(k), t) for k, t in method() if isinstance(t, Tensor)]
    except Exception:  # a user object's method: never let it break the drawing
        return []


# ------------------------------------------------------------------------------ walk


def walk(roots: list[Any]) -> list[Any]:
    """Every node reachable from `roots` once, in depth-first preorder (iterative)."""
    order: list[Any] = []
    seen: set[int] = set()
    stack = [r for r in reversed(roots) if r is not None]
    while stack:
        node = stack.pop()
        key = id(node)
        if key in seen:
            continue
        seen.add(key)
        order.append(node)
        edges = node.next_functions
        for i in range(len(edges) - 1, -1, -1):
            nxt = edges[i][0]
            if nxt is not None and id(nxt) not in seen:
                stack.append(nxt)
    return order


def build_graph(
    targets: list[tuple[str, Any]],
    names: NameIndex | None = None,
    *,
    file: str = "",
    targets_from: str = "target",
    device: str = "cpu",
    seed: int = 0,
) -> Graph:
    """Walk the backward graph of `targets` (name, tensor with a grad_fn) into a `Graph`."""
    paused = gc.isenabled()
    gc.disable()  # tens of thousands of small records, none cyclic: collections only cost time
    try:
        return _build(targets, names, file, targets_from, device, seed)
    finally:
        if paused:
            gc.enable()


def _build(
    targets: list[tuple[str, Any]],
    names: NameIndex | None,
    file: str,
    targets_from: str,
    device: str,
    seed: int,
) -> Graph:
    names = names if names is not None else NameIndex()
    for name, tensor in targets:
        if not names.of(tensor):
            names.add(name, tensor, NameIndex.ARGUMENT)
    root_nodes = [t.grad_fn for _, t in targets]
    order = walk(root_nodes)
    index = {id(node): i for i, node in enumerate(order)}
    count = len(order)

    # outputs and their exactly known metadata --------------------------------------------
    metas: list[list[TensorMeta]] = []
    for node in order:
        n_out = int(getattr(node, "num_outputs", 1) or 1)
        metas.append([TensorMeta() for _ in range(n_out)])
    consumers = [0] * count
    for node in order:
        for nxt, nr in node.next_functions:
            if nxt is not None:
                i = index[id(nxt)]
                consumers[i] += 1
                while len(metas[i]) <= nr:
                    metas[i].append(TensorMeta())
    for _, tensor in names.tensors:
        fn = tensor.grad_fn
        if fn is not None and id(fn) in index:
            _merge_tensor(metas[index[id(fn)]][tensor._output_nr], tensor, "variable")
    for i, node in enumerate(order):
        if isinstance(node, AccumulateGrad):
            _merge_tensor(metas[i][0], node.variable, "variable")
        elif isinstance(node, FormulaNode):
            saved = node._saved
            if saved:
                for k, src in enumerate(node.saved_sources):
                    if src == -1 and k < len(saved) and _is_tensor(saved[k]):
                        _merge_tensor(metas[i][0], saved[k], "saved")
                if not any(a.endswith("_device") for a in node.attr_names):
                    for value in saved:  # an op's tensors share one device
                        if _is_tensor(value):
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

    # what consumers recorded about their inputs, and (for ops whose output matches every
    # input) what inputs tell about the output, until nothing more is learnt ------------------
    topo = _topological(order, index, consumers)
    constants: dict[tuple[int, int], Constant] = {}
    for i in topo:
        node = order[i]
        for k, (nxt, _) in enumerate(node.next_functions):
            if nxt is None:
                constant = Constant(TensorMeta())
                _describe_input(node, k, metas[i], constant.meta, constant, names)
                constants[(i, k)] = constant
    matching = _matching_nodes(order)
    one_device = {
        i
        for i, node in enumerate(order)
        if isinstance(node, FormulaNode) and not any(a.endswith("_device") for a in node.attr_names)
    }
    for i in matching:  # a saved tensor input (a constant too) has the output's shape and dtype
        node = order[i]
        for j, src in enumerate(node.saved_sources):
            if src is not None and src >= 0 and j < len(node._saved or ()) and _is_tensor(node._saved[j]):
                _merge_tensor(metas[i][0], node._saved[j], "inputs")
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

    # levels (shortest distance from a root) and depth (longest path) -------------------------
    level = [-1] * count
    queue: deque[int] = deque()
    for fn in root_nodes:
        r = index[id(fn)]
        if level[r] < 0:
            level[r] = 0
            queue.append(r)
    while queue:
        i = queue.popleft()
        for nxt, _ in order[i].next_functions:
            if nxt is not None:
                j = index[id(nxt)]
                if level[j] < 0:
                    level[j] = level[i] + 1
                    queue.append(j)
    longest = [0] * count
    for i in topo:
        for nxt, _ in order[i].next_functions:
            if nxt is not None:
                j = index[id(nxt)]
                if longest[j] < longest[i] + 1:
                    longest[j] = longest[i] + 1
    depth = max(longest) + 1 if count else 0

    # records ------------------------------------------------------------------------------
    nodes: list[GraphNode] = []
    buffers: dict[int, int] = {}
    keep: list[Any] = []  # buffers stay referenced while their ids are keys
    saved_count = stale = freed = leaves = n_constants = 0
    for i, node in enumerate(order):
        is_leaf = isinstance(node, AccumulateGrad)
        record = GraphNode(
            id=i,
            name=type(node).__name__,
            kind="leaf" if is_leaf else "function",
            level=level[i],
            consumers=consumers[i],
        )
        retained = node._hooks.retained if node._hooks is not None else {}
        for nr, meta in enumerate(metas[i]):
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
            leaves += 1
            variable = node.variable
            grad = variable._grad
            record.leaf = Leaf(
                requires_grad=bool(variable._rg),
                is_leaf=variable.grad_fn is None,
                has_grad=grad is not None,
                grad_norm=_norm(grad) if grad is not None else None,
            )
        record.saved, record.saved_freed = _saved_values(node, names)
        freed += record.saved_freed
        for s in record.saved:
            if s.kind == "tensor":
                saved_count += 1
                stale += s.stale
        for tensor in _saved_tensors(node):
            key, size, buffer = _buffer(tensor._data)
            if key not in buffers:
                buffers[key] = size
                keep.append(buffer)
        input_names = _input_names(node)
        for k, (nxt, nr) in enumerate(node.next_functions):
            edge = Edge(
                index=k,
                input=input_names[k] if k < len(input_names) else None,
                next=None if nxt is None else index[id(nxt)],
                output_nr=int(nr),
            )
            if nxt is None:
                edge.constant = constants.get((i, k))
                n_constants += 1
            record.edges.append(edge)
        nodes.append(record)

    roots: list[Root] = []
    seen_roots: set[tuple[int, int]] = set()
    for name, tensor in targets:
        key = (index[id(tensor.grad_fn)], int(tensor._output_nr))
        if key not in seen_roots:
            seen_roots.add(key)
            roots.append(Root(name, *key))
    summary = Summary(
        nodes=count,
        leaves=leaves,
        constants=n_constants,
        saved_tensors=saved_count,
        saved_bytes=sum(buffers.values()),
        stale_saved=stale,
        freed_nodes=freed,
        depth=depth,
    )
    return Graph(file, roots, nodes, summary, targets_from, device, seed)


def _topological(order: list[Any], index: dict[int, int], consumers: list[int]) -> list[int]:
    """Node positions with every consumer before what it consumes (Kahn's algorithm)."""
    pending = list(consumers)
    ready = [i for i in range(len(order)) if pending[i] == 0]
    out: list[int] = []
    while ready:
        i = ready.pop()
        out.append(i)
        for nxt, _ in order[i].next_functions:
            if nxt is not None:
                j = index[id(nxt)]
                pending[j] -= 1
                if pending[j] == 0:
                    ready.append(j)
    return out


def _input_names(node: Any) -> tuple:
    """The op's names for its inputs (self, other, ...), when they line up with the edges."""
    declared = getattr(type(node), "input_names", ())
    return declared if len(declared) == len(node.next_functions) else ()


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
    saved = node._saved
    if saved:
        for j, src in enumerate(node.saved_sources):
            if src == k and j < len(saved):
                value = saved[j]
                if _is_tensor(value):
                    _merge_tensor(meta, value, "saved")
                    if constant is not None and not constant.names:
                        constant.names = list(names.of(value))
                elif constant is not None and constant.value is None:
                    constant.value = _short_repr(value)
    if constant is not None:
        return  # unsaved, a constant may be a Python number: what follows holds for tensors only
    labels = _input_names(node)
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
            frozenset(v.node for v in vars(derivatives).values() if isinstance(v, Op) and v.broadcast)
        )
    return _BROADCAST[0]


def _merge_tensor(meta: TensorMeta, tensor: Any, source: str) -> None:
    meta.merge(tensor._data.shape, tensor.dtype.name, str(tensor.device), source)


def _dtype_name(np_dtype: Any) -> str:
    name = str(np_dtype)
    return "bool" if name == "bool_" else name


def _is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor)


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


def _saved_tensors(node: Any) -> list[Any]:
    """The tensors a node holds for its backward (for the memory total)."""
    if isinstance(node, CopySlices):
        return _saved_tensors(node.fn)
    if isinstance(node, FormulaNode):
        return [v for v in node._saved or () if _is_tensor(v)]
    if isinstance(node, BackwardCFunction):
        return [t for t, _ in node.__dict__.get("_saved_entries") or () if t is not None]
    return []


def _saved_values(node: Any, names: NameIndex, prefix: str = "") -> tuple[list[Saved], bool]:
    """`_saved_*` entries of a node (tensors with versions, then attributes) and whether freed."""
    if isinstance(node, CopySlices):
        return _saved_values(node.fn, names, f"{type(node.fn).__name__}.")
    out: list[Saved] = []
    if isinstance(node, FormulaNode):
        freed = bool(node._versions) and node._saved is None
        if not freed:
            for j, (value, version) in enumerate(zip(node._saved, node._versions)):
                label = prefix + "_saved_" + node.saved_names[j]
                result = j < len(node.saved_sources) and node.saved_sources[j] == -1
                out.append(_saved_record(label, value, version, names, result))
        for attr, value in zip(node.attr_names, node._attrs):
            out.append(Saved(prefix + "_saved_" + attr, "value", value=_short_repr(value)))
        return out, freed
    if isinstance(node, BackwardCFunction):
        entries = node.__dict__.get("_saved_entries", ())
        if entries is None:
            return out, True
        for j, (tensor, version) in enumerate(entries):
            out.append(_saved_record(f"saved_tensors[{j}]", tensor, version, names, False))
        return out, False
    return out, False


def _saved_record(label: str, value: Any, version: int | None, names: NameIndex, result: bool) -> Saved:
    if not _is_tensor(value):
        return Saved(label, "value", value=_short_repr(value))
    return Saved(
        label,
        "tensor",
        shape=tuple(int(n) for n in value._data.shape),
        dtype=value.dtype.name,
        device=str(value.device),
        nbytes=int(value._data.nbytes),
        saved_version=version,
        current_version=value._vc[0],
        names=list(names.of(value)),
        is_output=result,
    )


def _buffer(array: Any) -> tuple[int, int, Any]:
    """The buffer an array's memory belongs to (a view's base), as (id, bytes, buffer)."""
    base = array
    while True:
        parent = getattr(base, "base", None)
        if parent is None or parent.__class__ is not array.__class__:
            break
        base = parent
    return id(base), int(base.nbytes), base


def _short_repr(value: Any, limit: int = 60) -> str:
    if callable(value) and not isinstance(value, type):
        text = f"<{getattr(value, '__qualname__', type(value).__name__)}>"
    elif isinstance(value, tuple) and type(value) is not tuple:
        text = repr(tuple(value))  # engine.Size([4]) reads as torch's _saved_self_sym_sizes: (4,)
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
