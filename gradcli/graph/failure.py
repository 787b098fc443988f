"""The graph at the point of failure, for `gradcli anomaly --graph FILE`.

`FailureGraph` watches the script's backward calls while `gradcli anomaly` runs it and is handed
the exception that ended it (`ended`); `graph(report)` then walks the graph of, in order: the
tensors of the backward call the error escaped from; the results so far of the function that
raised it (`targets.raising_targets`: where a forward op made NaN under --check-forward, what
led to that op, which never finished, so it has no node); the tensors of the last backward
call. The nodes the report's findings name are marked (`Graph.marks`), matched by their name
and the line that made them, so a finding needs nothing but its record.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from ..anomaly.findings import ERROR, Finding, Report
from ..program.exception_text import exception_text
from ..program.sites import Sites, raise_site
from .backward_calls import BackwardCalls, watching
from .forward_lines import ForwardLines
from .model import Graph, GraphNode, Mark, Raised
from .targets import Targets, backward_targets, raising_targets
from .walker import build_graph

#: The mark each error finding puts on the node it names (in `details["node"]` or `["saved_by"]`).
MARK_KINDS = {
    "inplace-modified-saved": "modified-saved",
    "nan-in-backward": "nonfinite",
    "inf-in-backward": "nonfinite",
    "nan-in-where-branch": "nonfinite",
    "backward-error": "failed",
    "backward-twice": "failed",
}


class FailureGraph:
    """The graph of the script `script` as it was when it ended (see the module's docstring)."""

    def __init__(self, script: str):
        self.script = script
        self.calls = BackwardCalls()
        self.exception: BaseException | None = None

    @contextmanager
    def watching(self) -> Iterator[None]:
        """For the block (the script's run): its backward calls."""
        with watching(self.script) as calls:
            self.calls = calls
            yield

    def ended(self, exc: BaseException) -> None:
        """The script ended with `exc`."""
        self.exception = exc

    def graph(self, report: Report) -> Graph | None:
        """The graph to draw, its findings marked; None when the script differentiated nothing."""
        chosen = self._targets()
        if chosen is None or not chosen.tensors:
            return None
        graph = build_graph(
            chosen.tensors,
            chosen.names,
            file=self.script,
            targets_from=chosen.source,
            device=report.device,
            seed=report.seed or 0,
            lines=ForwardLines(self.script),
        )
        graph.scope = chosen.scope
        graph.raised = self._raised(chosen.failed)
        graph.marks = marks(graph, report.findings)
        return graph

    def _targets(self) -> Targets | None:
        exc = self.exception
        failed = self.calls.raised(exc) if exc is not None else None
        if failed is not None:
            return backward_targets(failed, failed=True)
        found = raising_targets(exc) if exc is not None else None
        if found is not None and found.tensors:
            return found
        return backward_targets(self.calls.last) if self.calls.last is not None else None

    def _raised(self, in_backward: bool) -> Raised | None:
        exc = self.exception
        if exc is None:
            return None
        where = raise_site(exc, Sites(os.path.abspath(self.script), self.script))
        if where is None:
            return Raised(exception_text(exc), self.script, None, None, in_backward)
        return Raised(exception_text(exc), where.file, where.line, where.source, in_backward)


def marks(graph: Graph, findings: list[Finding]) -> list[Mark]:
    """A mark on each node an error finding names: the node of that name made at one of the
    finding's lines (the one node of that name, when no line tells them apart)."""
    out = []
    for finding in findings:
        kind = MARK_KINDS.get(finding.kind)
        name = finding.details.get("node") or finding.details.get("saved_by")
        if finding.severity != ERROR or kind is None or not name:
            continue
        for node in _named_nodes(graph, name, finding):
            out.append(Mark(node.id, kind, _mark_text(finding)))
    return out


def _named_nodes(graph: Graph, name: str, finding: Finding) -> list[GraphNode]:
    candidates = [n for n in graph.nodes if n is not None and n.name == name]
    lines = {(where.file, where.line) for where in [finding.location, *finding.related] if where is not None}
    made_there = [
        n for n in candidates if n.forward_line and (n.forward_line.file, n.forward_line.line) in lines
    ]
    if finding.kind == "inplace-modified-saved":
        made_there = [n for n in made_there or candidates if any(s.stale for s in n.saved)]
    return made_there or (candidates if len(candidates) == 1 else [])


def _mark_text(finding: Finding) -> str:
    details = finding.details
    if finding.kind == "inplace-modified-saved":
        tensor = details.get("tensor") or "a saved tensor"
        return (
            f"{finding.kind}: {tensor} saved at version {details.get('saved_version')}, "
            f"modified in place (now {details.get('current_version')})"
        )
    if finding.kind in ("nan-in-backward", "inf-in-backward"):
        return f"{finding.kind}: the first {finding.kind[:3]} came from this backward (output {details.get('output')})"
    if finding.kind == "nan-in-where-branch":
        return (
            f"{finding.kind}: the first nan came from this backward (output {details.get('output')}), "
            "in the branch where() did not take"
        )
    return f"{finding.kind}: this node's backward raised"
