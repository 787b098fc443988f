"""Forward-mode AD's state: the open dual level and the tangents tensors carry at it.

Tangents are held here, by the tensor's id beside a weak reference to it, rather than in a
Tensor slot: a tensor costs nothing while no tangent exists, and closing the level drops every
tangent at once. As in PyTorch 2.13, one level is open at a time.
"""

from __future__ import annotations

import weakref
from contextlib import contextmanager

# [the open level's tangents {id(tensor): (weak reference, tangent)}], or [None] with no level
# open, or while a tangent is being computed. ops/op.py's apply_op reads it once per op: an empty
# table is falsy, so ops cost one test until some tensor has a tangent.
state: list = [None]
level = [-1]  # the open level (0), or -1
opened = [0]  # how many levels were ever opened: a saved output's tangent is for the level it names
rule: list = [None]  # [propagate(op, inputs, attrs, outputs)]: ops/forward_mode.py, handed over by use_rule
_table: dict = {}  # the open level's tangents, also while `state` is suspended


def use_rule(propagate) -> None:
    """Where apply_op finds forward AD's propagation, which sits above it (ops/tensor_methods.py hands it over)."""
    rule[0] = propagate


def enter_level() -> int:
    if level[0] >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    level[0] = 0
    opened[0] += 1
    _table.clear()
    state[0] = _table
    return 0


def exit_level(at: int | None = None) -> None:
    if at is None:
        at = level[0]
    if at != level[0]:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one "
            "that was created. This is not supported."
        )
    _table.clear()
    state[0] = None
    level[0] = at - 1


def tangent_of(tensor):
    """The tensor's tangent at the open level, or None."""
    entry = _table.get(id(tensor))
    if entry is None or entry[0]() is not tensor:
        return None
    return entry[1]


def set_tangent(tensor, tangent) -> None:
    """Attach `tangent` (None: remove it); dropped with the tensor or when the level closes."""
    key = id(tensor)
    if tangent is None:
        if tangent_of(tensor) is not None:
            del _table[key]
        return

    def forget(ref, key=key, table=_table):
        entry = table.get(key)
        if entry is not None and entry[0] is ref:
            del table[key]

    _table[key] = (weakref.ref(tensor, forget), tangent)
    node = getattr(tensor, "_node", None)
    if node is not None:
        _keep_in_saved(node, tensor, tangent)


def _keep_in_saved(node, output, tangent) -> None:
    """Give the node's saved copy of `output` (a SavedOutput, which keeps no reference to the
    tensor) its tangent too, as torch's SavedVariable keeps its fw_grad: a backward recorded under
    forward AD (forward over reverse) reads the output with its tangent."""
    saved = getattr(node, "_saved", None) or [e[0] for e in getattr(node, "_saved_entries", ())]
    for value in saved:
        keep = getattr(value, "keep_tangent", None)
        if keep is not None:
            keep(output, tangent, opened[0])


def kept_tangent(kept):
    """A saved output's (level, tangent), as a tangent while that level is open; else None."""
    if kept is None or level[0] < 0 or kept[0] != opened[0]:
        return None
    return kept[1]


@contextmanager
def suspended():
    """No tangents propagate inside: a tangent's own ops, and a custom Function's forward."""
    saved = state[0]
    state[0] = None
    try:
        yield
    finally:
        state[0] = saved
