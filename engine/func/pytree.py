"""Nested tuples, lists and dicts of values (torch's pytrees): flattened to leaves and rebuilt."""

from __future__ import annotations

from typing import Any


class TreeSpec:
    """The structure of a pytree: its container type, context (dict keys) and children's specs."""

    __slots__ = ("kind", "context", "children")

    def __init__(self, kind, context, children: list):
        self.kind, self.context, self.children = kind, context, children

    @property
    def num_leaves(self) -> int:
        return 1 if self.kind is None else sum(child.num_leaves for child in self.children)

    def __eq__(self, other) -> bool:
        return isinstance(other, TreeSpec) and (self.kind, self.context, self.children) == (
            other.kind,
            other.context,
            other.children,
        )

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        children = ",\n  ".join(repr(child) for child in self.children)
        return f"TreeSpec({self.kind.__name__}, {self.context}, [{children}])"


LEAF = TreeSpec(None, None, [])


def tree_flatten(tree) -> tuple[list, TreeSpec]:
    """The leaves of `tree`, left to right, and its structure."""
    if isinstance(tree, (tuple, list)):
        kind, context, values = type(tree), None, list(tree)
    elif isinstance(tree, dict):
        kind, context, values = dict, list(tree), list(tree.values())
    else:
        return [tree], LEAF
    leaves, children = [], []
    for value in values:
        sub, spec = tree_flatten(value)
        leaves.extend(sub)
        children.append(spec)
    return leaves, TreeSpec(kind, context, children)


def tree_unflatten(leaves: list, spec: TreeSpec) -> Any:
    """`spec`'s structure over `leaves`."""
    it = iter(leaves)

    def build(spec):
        if spec.kind is None:
            return next(it)
        values = [build(child) for child in spec.children]
        if spec.kind is dict:
            return dict(zip(spec.context, values))
        return spec.kind(values) if spec.kind in (tuple, list) else spec.kind(*values)

    return build(spec)


def broadcast_prefix(prefix, spec: TreeSpec) -> list | None:
    """`prefix` (an int/None, or a tree whose leaves stand for whole subtrees) as one value per leaf of `spec`; None where the structures differ."""
    if not isinstance(prefix, (tuple, list, dict)):
        return [prefix] * spec.num_leaves
    if (
        spec.kind is None
        or type(prefix) is not spec.kind
        and not (
            isinstance(prefix, (tuple, list)) and spec.kind in (tuple, list) and type(prefix) is spec.kind
        )
    ):
        return None
    values = list(prefix.values()) if isinstance(prefix, dict) else list(prefix)
    if len(values) != len(spec.children) or (isinstance(prefix, dict) and list(prefix) != spec.context):
        return None
    out = []
    for value, child in zip(values, spec.children):
        sub = broadcast_prefix(value, child)
        if sub is None:
            return None
        out.extend(sub)
    return out
