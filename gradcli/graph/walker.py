"""The iterative walk of a backward graph, and its assembly into a `Graph`.

The walk is an explicit-stack depth-first preorder over `next_functions`, so a 100,000-node
chain never meets Python's recursion limit, and a node reached by several paths (a DAG) gets
one id: its position in that preorder. Every later pass (topological order, levels, depth)
is iterative too.

The walk needs only `next_functions`, which engine and torch nodes share; what each node
holds is read by a `Reader`, one per library (`ENGINE`: `meta` and `nodes`; `TORCH`:
`torch_nodes`), chosen by the library of the targets' tensors.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import libraries
from ..program.names import NameIndex
from . import meta, nodes, torch_nodes
from .forward_lines import ForwardLines
from .gc_pause import gc_paused
from .model import Constant, Graph, GraphNode, Root, Summary, Tally, TensorMeta


@dataclass(frozen=True)
class Reader:
    """How one library's nodes are read into records; the walk and the renderers are shared."""

    #: (order, index, topo, used, names, wanted) -> per node its outputs' metadata (None: not
    #: wanted, nor needed for a wanted node's); constants by (node, input)
    infer_metas: Callable[..., tuple[list[list[TensorMeta] | None], dict[tuple[int, int], Constant]]]
    #: (i, node, level, consumers, metas, names, index, constants) -> the node's record
    node_record: Callable[..., GraphNode]
    #: node -> (key, bytes, buffer) of each buffer its saved tensors hold
    saved_buffers: Callable[[Any], list[tuple[Any, int, Any]]]
    #: node -> its share of the totals without a record (None: read from the record)
    tally: Callable[[Any], Tally] | None = None


ENGINE = Reader(meta.infer_metas, nodes.node_record, nodes.saved_buffers, nodes.tally)
TORCH = Reader(torch_nodes.infer_metas, torch_nodes.node_record, torch_nodes.saved_buffers)


class _Readers:
    """The `Reader` of each library (`libraries.Library.pick`)."""

    def engine(self) -> Reader:
        return ENGINE

    def torch(self) -> Reader:
        return TORCH


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
    lines: ForwardLines | None = None,
    levels: int | None = None,
) -> Graph:
    """Walk the backward graph of `targets` (name, tensor with a grad_fn) into a `Graph`.

    With `lines`, each node gets its forward line (recorded by `sites.recording` as it ran).
    With `levels` (the tree's depth), only nodes with `level < levels` get a record; the others
    are `None` in `Graph.nodes` and only counted into the summary, so a long chain drawn 50
    levels deep costs little more than its walk.

    Raises `gradcli.libraries.MixedTensors` when the targets are engine and torch tensors.
    """
    reader = (libraries.library_of(targets) or libraries.ENGINE).pick(_Readers())
    with gc_paused():  # tens of thousands of small records, none cyclic: collections only cost time
        return _build(reader, targets, names, file, targets_from, device, seed, lines, levels)


def _build(
    reader: Reader,
    targets: list[tuple[str, Any]],
    names: NameIndex | None,
    file: str,
    targets_from: str,
    device: str,
    seed: int,
    lines: ForwardLines | None,
    levels: int | None,
) -> Graph:
    names = names if names is not None else NameIndex()
    for name, tensor in targets:
        if not names.of(tensor):
            names.add(name, tensor, NameIndex.ARGUMENT)
    root_nodes = [t.grad_fn for _, t in targets]
    order = walk(root_nodes)
    index = {id(node): i for i, node in enumerate(order)}
    consumers, used = _incoming(order, index)
    topo = _topological(order, index, consumers)
    level = _levels(order, index, root_nodes)
    drawn = levels is not None and reader.tally is not None
    wanted = [i for i in range(len(order)) if level[i] < levels] if drawn else None
    metas, constants = reader.infer_metas(order, index, topo, used, names, wanted)

    nodes: list[GraphNode | None] = []
    buffers: dict[int, int] = {}
    keep: list[Any] = []  # buffers stay referenced while their ids are keys
    saved_count = stale = freed = leaves = n_constants = 0
    for i, node in enumerate(order):
        if drawn and level[i] >= levels:
            nodes.append(None)
            tally = reader.tally(node)
        else:
            record = reader.node_record(i, node, level[i], consumers[i], metas[i], names, index, constants)
            if lines is not None and record.kind != "leaf":  # a leaf is the user's, made by no forward call
                record.forward_line = lines.of(node)
            nodes.append(record)
            tally = _tally(record, reader.saved_buffers(node))
        leaves += tally.leaf
        freed += tally.freed
        saved_count += tally.saved
        stale += tally.stale
        n_constants += tally.constants
        for key, size, buffer in tally.buffers:
            if key not in buffers:
                buffers[key] = size
                keep.append(buffer)

    roots: list[Root] = []
    seen_roots: set[tuple[int, int]] = set()
    for name, tensor in targets:
        key = (index[id(tensor.grad_fn)], int(tensor.output_nr))
        if key not in seen_roots:
            seen_roots.add(key)
            roots.append(Root(name, *key))
    summary = Summary(
        nodes=len(order),
        leaves=leaves,
        constants=n_constants,
        saved_tensors=saved_count,
        saved_bytes=sum(buffers.values()),
        stale_saved=stale,
        freed_nodes=freed,
        depth=_depth(order, index, topo),
    )
    return Graph(file, roots, nodes, summary, targets_from, device, seed)


def _tally(record: GraphNode, buffers: list[tuple[Any, int, Any]]) -> Tally:
    """A recorded node's share of the totals."""
    tensors = [s for s in record.saved if s.kind == "tensor"]
    return Tally(
        leaf=record.kind == "leaf",
        constants=sum(edge.next is None for edge in record.edges),
        saved=len(tensors),
        stale=sum(s.stale for s in tensors),
        freed=record.saved_freed,
        buffers=buffers,
    )


def _incoming(order: list[Any], index: dict[int, int]) -> tuple[list[int], list[int]]:
    """Per node, the edges that point at it (> 1: a shared subgraph) and how many of its
    outputs they use (the highest `output_nr` + 1)."""
    consumers = [0] * len(order)
    used = [0] * len(order)
    for node in order:
        for nxt, nr in node.next_functions:
            if nxt is not None:
                j = index[id(nxt)]
                consumers[j] += 1
                if nr >= used[j]:
                    used[j] = nr + 1
    return consumers, used


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


def _levels(order: list[Any], index: dict[int, int], root_nodes: list[Any]) -> list[int]:
    """Per node, the shortest distance from a root (breadth-first)."""
    level = [-1] * len(order)
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
    return level


def _depth(order: list[Any], index: dict[int, int], topo: list[int]) -> int:
    """Nodes on the longest path from a root to a leaf."""
    count = len(order)
    longest = [0] * count
    for i in topo:
        for nxt, _ in order[i].next_functions:
            if nxt is not None:
                j = index[id(nxt)]
                if longest[j] < longest[i] + 1:
                    longest[j] = longest[i] + 1
    return max(longest) + 1 if count else 0
