"""Walking a backward graph into plain dataclasses, for `gradcli graph`.

The walk reads the engine's nodes (`next_functions`, saved values, hooks) once and turns
them into `Graph` / `GraphNode` records that hold no engine objects, so the renderers
(`gradcli.graph.render.drawing`: tree, dot, svg, json) need nothing else.

Decisions:

- **Iterative, each node once.** The walk is an explicit-stack depth-first preorder over
  `next_functions`, so a 100,000-node chain never meets Python's recursion limit, and a node
  reached by several paths (a DAG) gets one id: its position in that preorder.
- **Names are the user's.** A node's produced tensor is named after the top-level variable
  (or the variable of the function the targets come from) whose `grad_fn` (and `output_nr`) it is, an AccumulateGrad after its `.variable`, and
  parameters of top-level objects with `named_parameters()` as `model.fc1.weight`.
- **Shapes are read, never guessed.** A produced tensor's shape, dtype and device come from
  what the graph itself records: a named tensor, a saved result, a consumer's saved input,
  its broadcasting metadata (`_meta`) or `<input>_sym_sizes` / `_dtype` / `_device` attrs, a
  custom Function's recorded input and output metadata. What none of these tells is `None`
  (drawn as `?`).
- **Targets** (what to draw), in order: `--target NAME` (a top-level tensor, a case, or a
  variable of a function: `main.loss`); the tensors whose backward raised the error that ended
  the file; every top-level tensor with a `grad_fn` that no other such tensor's graph consumes;
  the tensors of the last backward call; the outputs of the file's cases (`targets`).
- **At the point of failure.** A file that raised is drawn as it was then (`Graph.raised`),
  and `gradcli anomaly --graph` marks the nodes its findings name (`Graph.marks`).

Modules, from the entry point down:

- `targets`: `load_graph`, `find_targets`: run the file, choose the targets and their names
- `backward_calls`: the file's backward() / autograd.grad() calls and the functions running then
- `walker`: `walk`, `build_graph`: the iterative walk, topology, levels, totals -> `Graph`
- `meta`: shape / dtype / device of each produced tensor, from what the graph records
- `nodes`: one engine node -> its `GraphNode` (outputs, leaf, hooks, saved values, edges)
- `torch_nodes`: the same records from torch's nodes, when the targets are torch tensors
- `sites`: each node's forward line (the user's line that made it), recorded as the file runs
- `names`: `NameIndex`, the user's names for tensors
- `model`: the dataclasses (`Graph`, `GraphNode`, `TensorMeta`, `Saved`, ...)
"""

from ..program.names import NameIndex
from .model import (
    Constant,
    Edge,
    ForwardLine,
    Graph,
    GraphNode,
    Hooks,
    Leaf,
    Mark,
    Output,
    Raised,
    Root,
    Saved,
    Summary,
    TensorMeta,
)
from .targets import find_targets, load_graph
from .walker import build_graph, walk

__all__ = [
    "Constant",
    "Edge",
    "ForwardLine",
    "Graph",
    "GraphNode",
    "Hooks",
    "Leaf",
    "Mark",
    "NameIndex",
    "Output",
    "Raised",
    "Root",
    "Saved",
    "Summary",
    "TensorMeta",
    "build_graph",
    "find_targets",
    "load_graph",
    "walk",
]
