"""The diff report: text for people (80 columns, the two sides side by side) and `gradcli.diff/1`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.text import Text

from ..render.jsonable import as_json
from ..render.plurals import plural
from .results import Compared, Difference, Finding, Gap, GradientRow, NodeSide, PairResult

if TYPE_CHECKING:
    from rich.console import Console


SCHEMA = "gradcli.diff/1"
WIDTH = 80
LABEL = 9  # the first column: what a row shows
COLUMN = (WIDTH - 2 - LABEL - 3) // 2  # each side's column
STYLES = {"agree": "bold green", "differ": "bold red", "error": "bold red"}


def print_report(console: Console, compared: Compared, elapsed: float) -> None:
    """Each item's verdict and findings, then the closing line."""
    for result in compared.results:
        for line in result_lines(result):
            console.print(line, soft_wrap=True, highlight=False)
    console.print(Text(summary_line(compared, elapsed), style=_summary_style(compared)), highlight=False)


def result_lines(result: PairResult) -> list[Text | str]:
    """One item: its headline, then its findings and gradient table when it has any."""
    head = Text(f"{result.file}::{result.name}  {result.reference_label} vs {result.candidate_label}  ")
    head.append(result.verdict.upper(), style=STYLES[result.verdict])
    lines: list[Text | str] = [head]
    if result.error:
        return [*lines, f"  error: {result.error}"]
    tolerance = f"rtol {result.rtol:g}, atol {result.atol:g}"
    if result.forward:
        lines += _finding_lines(
            result.forward, "forward: walking from the inputs, the first output that differs", result
        )
    if result.backward:
        lines += _finding_lines(
            result.backward, "backward: walking from the loss, the first gradient that differs", result
        )
    for gap in result.structure:
        lines += _gap_lines(gap)
    if result.differs or result.structure:
        lines += _table_lines(result, tolerance)
    return lines


def _finding_lines(finding: Finding, title: str, result: PairResult) -> list[str]:
    lines = [f"  {title}:", _row("", result.reference_label, result.candidate_label)]
    lines += _node_rows(finding.reference, finding.candidate)
    if finding.difference is None:
        lines.append(
            f"  {finding.what}: shapes differ, {finding.reference_shape} vs {finding.candidate_shape}"
        )
    else:
        lines += _difference_lines(finding.what, finding.difference)
    return lines


def _node_rows(reference: NodeSide | None, candidate: NodeSide | None) -> list[str]:
    rows = [_row("node", _field(reference, "name"), _field(candidate, "name"))]
    if (reference and reference.module) or (candidate and candidate.module):
        rows.append(_row("module", _field(reference, "module"), _field(candidate, "module")))
    rows.append(_row("line", _tail(_field(reference, "where")), _tail(_field(candidate, "where"))))
    rows.append(_row("code", _field(reference, "source"), _field(candidate, "source")))
    rows.append(_row("shape", _shape(reference), _shape(candidate)))
    return rows


def _difference_lines(what: str, difference: Difference) -> list[str]:
    at = "[" + ", ".join(map(str, difference.at)) + "]"
    return [
        f"  {what}: {difference.differing} of {plural(difference.size, 'entry', 'entries')} differ",
        _row("largest", f"{difference.reference:.6g}", f"{difference.candidate:.6g}"),
        f"    {'':<{LABEL - 2}} difference {difference.largest:.3g} at {at}",
    ]


def _gap_lines(gap: Gap) -> list[str]:
    lines = ["  structure: ops on one side only"]
    for k in range(max(len(gap.reference), len(gap.candidate))):
        left = gap.reference[k] if k < len(gap.reference) else None
        right = gap.candidate[k] if k < len(gap.candidate) else None
        lines.append(_row("node", _field(left, "name"), _field(right, "name")))
        lines.append(_row("line", _tail(_field(left, "where")), _tail(_field(right, "where"))))
    return lines


def _field(node: NodeSide | None, name: str) -> str:
    value = None if node is None else getattr(node, name)
    return "-" if value is None else str(value)


def _table_lines(result: PairResult, tolerance: str) -> list[str]:
    rows = [*([result.output] if result.output else []), *result.gradients]
    named = max([len(r.name) for r in rows] + [4])
    lines = [
        f"  gradients ({tolerance}):",
        f"    {'name':<{named}}  {'shape':<12} {'status':<7} largest difference",
    ]
    for row in rows:
        lines.append(
            f"    {row.name:<{named}}  {_shape_text(row.shape):<12} {row.status:<7} {_largest(row)}".rstrip()
        )
    return lines


def _largest(row: GradientRow) -> str:
    if row.difference is None:
        return ""
    at = "[" + ", ".join(map(str, row.difference.at)) + "]"
    return f"{row.difference.largest:.3g} at {at}"


def _shape(node: NodeSide | None) -> str:
    return "-" if node is None else _shape_text(node.shape)


def _shape_text(shape: list[int] | None) -> str:
    return "-" if shape is None else "[" + ", ".join(map(str, shape)) + "]"


def _row(label: str, left: str, right: str) -> str:
    return f"    {label:<{LABEL - 2}} {_cut(left):<{COLUMN}} {_cut(right)}".rstrip()


def _tail(text: str) -> str:
    """A long FILE:LINE cut at its start, so the file's name and the line stay."""
    return text if len(text) <= COLUMN else "…" + text[len(text) - COLUMN + 1 :]


def _cut(text: str) -> str:
    return text if len(text) <= COLUMN else text[: COLUMN - 1] + "…"


def summary_line(compared: Compared, elapsed: float) -> str:
    results = compared.results
    differ = sum(r.verdict == "differ" for r in results)
    errors = sum(r.verdict == "error" for r in results) + len(compared.errors)
    parts = [f"{sum(r.verdict == 'agree' for r in results)} agree"] if results else []
    if differ:
        parts.append(f"{differ} differ")
    if errors:
        parts.append(plural(errors, "error"))
    if compared.skipped:
        parts.append(f"{len(compared.skipped)} skipped")
    if compared.deselected:
        parts.append(f"{compared.deselected} deselected")
    return f"{', '.join(parts) or 'nothing compared'} in {elapsed:.2f}s"


def _summary_style(compared: Compared) -> str:
    bad = compared.errors or any(r.verdict != "agree" for r in compared.results) or not compared.results
    return "red" if bad else "green"


def json_document(compared: Compared, settings: dict[str, Any], *, elapsed: float, exit_code: int) -> str:
    """The --json output: `gradcli schema diff` describes it."""
    from ..check.render.report import load_error_data
    from ..version import __version__

    results = compared.results
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "version": __version__,
        "agree": exit_code == 0,
        "exit_code": exit_code,
        "summary": {
            "agree": sum(r.verdict == "agree" for r in results),
            "differ": sum(r.verdict == "differ" for r in results),
            "errors": len(compared.errors) + sum(r.verdict == "error" for r in results),
            "total": len(results),
            "deselected": compared.deselected,
            "skipped": len(compared.skipped),
            "elapsed": elapsed,
        },
        "settings": settings,
        "errors": [load_error_data(e) for e in compared.errors],
        "skipped": [load_error_data(e) for e in compared.skipped],
        "pairs": [{**as_json(r), "verdict": r.verdict, "node_id": f"{r.file}::{r.name}"} for r in results],
    }
    return json.dumps(document, indent=2)
