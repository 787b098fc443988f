"""The walked graph as plain dataclasses: nodes, their outputs, saved values, edges, totals.

They hold no engine objects, so the renderers (`gradcli.graph.render.drawing`: tree, dot, svg, json)
need nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
class ForwardLine:
    """The user's line whose forward call made a node: `file:line` and its text (None if unreadable)."""

    file: str
    line: int
    code: str | None


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
    forward_line: ForwardLine | None = None  # recorded only when the output shows it

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
class Tally:
    """What one node adds to the `Summary`: read alike from its record or, for a node the
    tree does not draw, straight from the node (`nodes.tally`)."""

    leaf: bool
    constants: int
    saved: int
    stale: int
    freed: bool
    buffers: list[tuple[Any, int, Any]]  # (key, bytes, buffer) of each buffer its saved tensors hold


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


@dataclass(slots=True)
class Raised:
    """The exception that ended the file: the graph is drawn as it was when it was raised."""

    exception: str  # "RuntimeError: one of the variables needed ..."
    file: str
    line: int | None  # the innermost line of the file in its traceback
    code: str | None
    in_backward: bool  # raised by the backward of the drawn targets


@dataclass(slots=True)
class Mark:
    """An anomaly found at a node (`gradcli anomaly --graph`): drawn red, its text in the node's label."""

    node: int
    kind: str  # "failed": its backward raised; "nonfinite": it made the first NaN/Inf; "modified-saved"
    text: str


@dataclass
class Graph:
    """The walked graph: nodes in preorder (ids are positions), roots, totals."""

    file: str
    roots: list[Root]
    nodes: list[GraphNode | None]  # None: below the levels recorded (`build_graph(levels=...)`)
    summary: Summary
    targets_from: str = "target"  # "target" | "top-level" | "cases"
    device: str = "cpu"
    seed: int = 0
    modules: dict[int, str] = field(default_factory=dict)  # node id -> the module whose forward made it
    scope: str | None = None  # the function whose variables the targets are (None: the top level)
    raised: Raised | None = None  # the error that ended the file, if one did
    marks: list[Mark] = field(default_factory=list)
