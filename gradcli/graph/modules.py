"""Which `nn.Module` a node belongs to, for `gradcli graph --group-modules`.

A function node is in the module whose forward made it, as the forward hooks recorded it
(`module_hooks`, in `Graph.modules`): an activation such as ReLU, which owns no parameter, too.
A leaf is in the module its parameter's name says (`model.0.weight` is in `model.0`). A graph
drawn without hooks falls back on the names alone: a function node is in the module whose
parameters it reads, directly or through a chain of one-input nodes that start at a parameter
(`TBackward0` of a Linear's weight).
"""

from __future__ import annotations

from .model import Graph


def module_of_name(name: str) -> str | None:
    """'model.0.weight' -> 'model.0'; a name with no dot is not a parameter of a module."""
    owner, dot, _ = name.rpartition(".")
    return owner if dot and owner else None


def node_modules(graph: Graph) -> dict[int, str]:
    """Node id -> the module path it is grouped under (nodes in no module left out)."""
    found: dict[int, str] = {}
    for node in graph.nodes:  # leaves first: the parameters
        if node.kind == "leaf":
            owners = {module_of_name(name) for name in node.names} - {None}
            if len(owners) == 1:
                found[node.id] = owners.pop()
    # "pure": a parameter, or a one-input node over a pure one (TBackward0 of a weight)
    pure = set(found)
    for ident in inputs_first(graph):
        node = graph.nodes[ident]
        if node.kind == "leaf":
            continue
        inputs = [edge.next for edge in node.edges if edge.next is not None]
        if len(inputs) == 1 and inputs[0] in pure:
            pure.add(ident)
            found[ident] = found[inputs[0]]
            continue
        owned = {found[k] for k in inputs if k in pure}
        if len(owned) == 1:
            found[ident] = owned.pop()
    found.update(graph.modules)
    return found


def inputs_first(graph: Graph) -> list[int]:
    """Node ids with every node after its inputs (iterative depth-first postorder)."""
    seen = [False] * len(graph.nodes)
    order: list[int] = []
    for root in graph.roots:
        if seen[root.node]:
            continue
        seen[root.node] = True
        stack = [(root.node, 0)]
        while stack:
            ident, k = stack.pop()
            edges = graph.nodes[ident].edges
            while k < len(edges) and (edges[k].next is None or seen[edges[k].next]):
                k += 1
            if k == len(edges):
                order.append(ident)
                continue
            child = edges[k].next
            assert child is not None
            seen[child] = True
            stack.append((ident, k + 1))
            stack.append((child, 0))
    return order
