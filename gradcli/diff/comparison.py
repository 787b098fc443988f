"""Two recordings compared: their nodes aligned, the first forward value and the first gradient
that differ, the ops on one side only, and the gradient table."""

from __future__ import annotations

from difflib import SequenceMatcher

import numpy

from .recording import NodeRecord, Recording
from .results import Difference, Finding, Gap, GradientRow, NodeSide


def aligned(
    reference: list[NodeRecord], candidate: list[NodeRecord]
) -> tuple[list[tuple[int, int]], list[Gap]]:
    """Nodes paired by op and position in topological order; where the ops differ, one for one when
    both sides have as many there, else by the forward line and module; a node paired with one of
    another shape is no counterpart. What is left is a `Gap`."""
    matcher = SequenceMatcher(None, [n.name for n in reference], [n.name for n in candidate], autojunk=False)
    pairs: list[tuple[int, int]] = []
    gaps: list[Gap] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            matched = [(k, k) for k in range(i2 - i1) if _fits(reference[i1 + k], candidate[j1 + k])]
        else:
            matched = _by_place(reference[i1:i2], candidate[j1:j2])
        pairs.extend((i1 + a, j1 + b) for a, b in matched)
        left = [n for k, n in enumerate(reference[i1:i2]) if k not in {a for a, _ in matched}]
        right = [n for k, n in enumerate(candidate[j1:j2]) if k not in {b for _, b in matched}]
        if left or right:
            gaps.append(Gap([node_side(n) for n in left], [node_side(n) for n in right]))
    pairs.sort()
    return pairs, gaps


def _by_place(reference: list[NodeRecord], candidate: list[NodeRecord]) -> list[tuple[int, int]]:
    """Within a stretch of differing ops, those made by the same forward line in the same module, in order."""
    places = [(n.site.source if n.site else None, n.module) for n in candidate]
    pairs, start = [], 0
    for i, node in enumerate(reference):
        place = (node.site.source if node.site else None, node.module)
        if place[0] is None:
            continue
        for j in range(start, len(candidate)):
            if places[j] == place and _fits(node, candidate[j]):
                pairs.append((i, j))
                start = j + 1
                break
    return pairs


def _fits(reference: NodeRecord, candidate: NodeRecord) -> bool:
    """Whether two nodes can be counterparts: their outputs' shapes agree (where both are known)."""
    mine, theirs = reference.shapes(), candidate.shapes()
    return all(mine[k] == theirs[k] for k in set(mine) & set(theirs))


def difference(
    reference: numpy.ndarray, candidate: numpy.ndarray, rtol: float, atol: float
) -> Difference | None:
    """How far `candidate` is from `reference` where it is beyond atol + rtol |reference| (None: within)."""
    a = numpy.asarray(reference, dtype=numpy.float64)
    b = numpy.asarray(candidate, dtype=numpy.float64)
    with numpy.errstate(invalid="ignore", over="ignore"):
        gap = numpy.abs(a - b)
        same = (a == b) | (numpy.isnan(a) & numpy.isnan(b))
        off = ~same & (~(gap <= atol + rtol * numpy.abs(a)) | ~numpy.isfinite(a) | ~numpy.isfinite(b))
    count = int(off.sum())
    if not count:
        return None
    score = numpy.where(off, numpy.nan_to_num(gap, nan=numpy.inf), -1.0)
    flat = int(numpy.argmax(score))
    at = [int(i) for i in numpy.unravel_index(flat, a.shape)] if a.shape else []
    return Difference(float(gap.flat[flat]), at, float(a.flat[flat]), float(b.flat[flat]), count, int(a.size))


def first_forward(
    reference: Recording, candidate: Recording, pairs: list[tuple[int, int]], rtol: float, atol: float
) -> Finding | None:
    """Walking from the inputs, the first aligned node whose forward output differs."""
    for i, j in pairs:
        r, c = reference.nodes[i], candidate.nodes[j]
        for nr in sorted(set(r.outputs) & set(c.outputs)):
            found = _compared("forward", f"output {nr}", r, c, r.outputs[nr], c.outputs[nr], rtol, atol)
            if found:
                return found
    return None


def first_backward(
    reference: Recording, candidate: Recording, pairs: list[tuple[int, int]], rtol: float, atol: float
) -> Finding | None:
    """Walking from the loss, the first aligned node whose incoming, then outgoing, gradient differs."""
    for i, j in reversed(pairs):
        r, c = reference.nodes[i], candidate.nodes[j]
        for what, left, right in (("incoming", r.incoming, c.incoming), ("outgoing", r.outgoing, c.outgoing)):
            for k, (a, b) in enumerate(zip(left, right)):
                if a is None or b is None:
                    continue
                found = _compared("backward", f"{what} gradient {k}", r, c, a, b, rtol, atol)
                if found:
                    return found
    return None


def _compared(
    kind: str,
    what: str,
    r: NodeRecord,
    c: NodeRecord,
    a: numpy.ndarray,
    b: numpy.ndarray,
    rtol: float,
    atol: float,
) -> Finding | None:
    if a.shape != b.shape:
        return Finding(kind, what, node_side(r), node_side(c), None, list(a.shape), list(b.shape))
    found = difference(a, b, rtol, atol)
    return (
        None
        if found is None
        else Finding(kind, what, node_side(r), node_side(c), found, list(a.shape), list(b.shape))
    )


def gradient_rows(reference: Recording, candidate: Recording, rtol: float, atol: float) -> list[GradientRow]:
    """Each leaf's gradient on both sides (matched by name), compared."""
    theirs = dict(candidate.grads)
    rows = []
    for name, a in reference.grads:
        rows.append(compared_row(name, a, theirs.get(name), rtol, atol))
    return rows


def compared_row(
    name: str, a: numpy.ndarray | None, b: numpy.ndarray | None, rtol: float, atol: float
) -> GradientRow:
    if a is None and b is None:
        return GradientRow(name, None, "none")
    if a is None or b is None or a.shape != b.shape:
        shape = list((a if a is not None else b).shape)
        return GradientRow(name, shape, "missing")
    found = difference(a, b, rtol, atol)
    return GradientRow(name, list(a.shape), "agree" if found is None else "differ", found)


def node_side(node: NodeRecord) -> NodeSide:
    shape = node.shapes().get(0)
    site = node.site
    return NodeSide(
        node.name,
        site.where if site else None,
        site.source if site else None,
        node.module,
        None if shape is None else list(shape),
    )
