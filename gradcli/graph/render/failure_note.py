"""What every format says about a file that raised: where, the exception, and that the graph is
drawn as it was then; and the text of the nodes `gradcli anomaly --graph` marks."""

from __future__ import annotations

from .. import Graph, Mark, Raised


def raised_lines(raised: Raised) -> list[str]:
    """`FILE:LINE: the backward of this graph raised; drawn as it was then`, the line's code, numbered,
    and the exception's first line."""
    where = raised.file if raised.line is None else f"{raised.file}:{raised.line}"
    whose = "the backward of this graph" if raised.in_backward else "the file"
    lines = [f"{where}: {whose} raised; drawn as it was then"]
    if raised.code and raised.line is not None:
        lines.append(f"    {raised.line} | {raised.code.strip()}")
    return [*lines, raised.exception.split("\n", 1)[0]]


def heading_target(graph: Graph) -> str:
    """The drawn roots' names, with the function they are variables of."""
    shown = ", ".join(r.name for r in graph.roots)
    if graph.targets_from == "cases":
        shown = f"case outputs {shown}"
    if graph.scope is not None:
        shown += f" (in {graph.scope})"
    return shown


def marks_of(graph: Graph) -> dict[int, list[Mark]]:
    """The marks at each node id."""
    marks: dict[int, list[Mark]] = {}
    for mark in graph.marks:
        marks.setdefault(mark.node, []).append(mark)
    return marks
