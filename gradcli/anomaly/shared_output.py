"""The module output that fed two losses, when a second backward finds its graph freed by the first.

A GAN step that backwards the discriminator's loss through the generator's output frees the
generator's graph, and the generator's own loss then cannot go through it. `retain_graph=True`
hides that (and runs the generator's backward twice); the fix is to detach the output where the
first loss uses it. Found from the user's variables: a tensor whose graph holds a freed node (the
one the second backward stopped at, where the library says which) and reaches the parameters of
one module only, the module that made it, and that the second backward reaches after running a graph
of its own. Engine and torch nodes are read alike (`next_functions`,
an AccumulateGrad's `variable`, saved values that raise or are gone once freed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..libraries import is_tensor
from ..program.modules import is_module
from .nonfinite import walk

#: Nodes looked at per variable; a larger graph is not searched further.
MAX_NODES = 1 << 14


@dataclass
class SharedOutput:
    """`name`, the output of the module `module`, whose graph the first backward freed."""

    name: str
    module: str


def freed_module_output(
    scopes: list[dict[str, Any]], roots: list, stopped_at: Any | None, ran_saved: bool
) -> SharedOutput | None:
    """The user's variable to detach: `scopes` are the user's namespaces, innermost first; `roots` the
    second backward's root nodes; `stopped_at` the node whose saved values it found freed, where the
    library names it; `ran_saved`, whether it ran nodes holding saved tensors before (a graph of its own:
    a backward that repeats the first one stops at its first such node)."""
    if not ran_saved:
        return None
    reached = {id(node) for node in walk(roots)}
    modules = _named(scopes, is_module)
    found = None
    for name, tensor in _named(scopes, lambda v: is_tensor(v) and v.grad_fn is not None):
        if id(tensor.grad_fn) not in reached:
            continue
        nodes = _graph(tensor.grad_fn)
        if nodes is None or not _holds_freed(nodes, stopped_at):
            continue
        owner = _owner({id(n.variable) for n in nodes if hasattr(n, "variable")}, modules)
        if owner is not None and (found is None or len(nodes) > found[2]):
            found = (name, owner, len(nodes))
    return SharedOutput(found[0], found[1]) if found is not None else None


def _named(scopes: list[dict[str, Any]], wanted) -> list[tuple[str, Any]]:
    """(name, value) of the values `wanted` keeps, each once, the innermost scope's name first."""
    out, seen = [], set()
    for scope in scopes:
        for name, value in list(scope.items()):
            if name.startswith("_") or id(value) in seen:
                continue
            try:
                keep = wanted(value)
            except Exception:  # a user object whose attributes raise
                continue
            if keep:
                seen.add(id(value))
                out.append((name, value))
    return out


def _graph(root: Any) -> list | None:
    nodes = []
    for node in walk([root]):
        nodes.append(node)
        if len(nodes) > MAX_NODES:
            return None
    return nodes


def _holds_freed(nodes: list, stopped_at: Any | None) -> bool:
    if stopped_at is not None:
        return any(node is stopped_at for node in nodes)
    return any(_saved_state(node) == "freed" for node in nodes)


def _saved_state(node: Any) -> str | None:
    """What became of the tensors `node` saved for backward: "held", "freed", or None (it saved none)."""
    names = getattr(node, "saved_names", None)
    if names is not None:  # the engine's node
        return None if not names else "freed" if node.saved_pairs() is None else "held"
    state = None
    for attr in dir(node):
        if attr.startswith("_saved_"):
            try:
                value = getattr(node, attr)
            except RuntimeError:  # torch's node: its saved tensors are gone
                return "freed"
            if is_tensor(value):
                state = "held"
    return state


def _owner(leaves: set[int], modules: list[tuple[str, Any]]) -> str | None:
    """The smallest module whose parameters include every leaf the graph reaches; None if none does."""
    best = None
    for name, module in modules:
        params = {id(p) for p in module.parameters()}
        if leaves and leaves <= params and (best is None or len(params) < best[1]):
            best = (name, len(params))
    return best[0] if best is not None else None
