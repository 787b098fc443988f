"""Showing `gradcli anomaly` findings: a rich panel per finding for people, JSON for tools.

Each panel shows the finding's message, the culprit line and its related lines as one
source excerpt per file (the culprit marked with `>`, each line labelled with its role),
statistics of the tensors involved (NaN / Inf findings) and the fix. Off a terminal the
panels are ASCII and uncoloured.

JSON schema (`gradcli anomaly --json`, schema id "gradcli.anomaly/1"); a location is
`{"file": str, "line": int, "function": str | null, "source": str | null, "role": str}`
(`role` says what the line is: "saved by MulBackward0 (version 0)", "modified in place
(version 0 -> 1)", "backward", "first backward (freed the graph)", ...; it may be "" for the
culprit)::

    {
      "schema": "gradcli.anomaly/1",
      "version": str,                          # gradcli version
      "script": str, "argv": [str],            # argv as the script saw it (argv[0] is the script)
      "device": "cpu" | "cuda", "seed": int | null, "check_forward": bool, "strict": bool,
      "exit_code": 0 | 1 | 2,
      "completed": bool,                       # the script ran to its end
      "summary": {"errors": int, "warnings": int, "elapsed": float},
      "failure": null | {                      # exit code 2: could not run, or failed for another reason
        "reason": "not-found" | "not-a-file" | "unreadable" | "syntax-error" | "too-complex"
                  | "exception" | "exit-status" | "device" | "missing-torch",
        "message": str, "exception": str | null,
        "location": location | null,           # the innermost line of the user's code
        "traceback": [location]                # the user's frames only, outermost first
      },
      "findings": [{                           # errors first (at most one: it stopped the script), then warnings
        "kind": str,                           # see gradcli.anomaly.ERROR_KINDS / WARNING_KINDS
        "severity": "error" | "warning",
        "message": str,
        "location": location | null,           # the culprit line
        "related": [location],
        "hint": str | null,                    # how to fix it
        "count": int,                          # occurrences (a warning raised in a loop)
        "details": {...},                      # kind-specific: node, tensor, shape, versions, ...;
                                               # inplace-modified-saved inside an nn.Module's forward:
                                               # "module": "model.2", "module_class": "ReLU(inplace=True)";
                                               # NaN/Inf kinds: "cause" (gradcli.anomaly.causes.CAUSES),
                                               # "origin" (the node that made a NaN in forward);
                                               # nan-in-where-branch: "op", "where" (the where() node);
                                               # backward-twice through a module's output that fed
                                               # both losses: "detach": "fake", "module": "G"
        "stats": [{"name": str, "shape": [int], "dtype": str, "numel": int, "nan": int,
                   "posinf": int, "neginf": int, "min": float | null, "max": float | null}]
      }]
    }
"""

from __future__ import annotations

import json
import linecache
import os
from typing import Any

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ..anomaly import ERROR, Finding, Location, Report, ScriptFailure, TensorStats
from ..render.jsonable import as_json
from ..render.plurals import plural

SCHEMA = "gradcli.anomaly/1"
#: Lines of context shown around a culprit line.
CONTEXT = 1
#: A width no excerpt reaches, to measure one's natural width.
UNBOUNDED = 1 << 16


# ------------------------------------------------------------------------------ JSON


def json_document(report: Report, *, strict: bool = False) -> str:
    """The report as one JSON document (schema above)."""
    from ..version import __version__

    findings = sorted(report.findings, key=lambda f: f.severity != ERROR)
    document = {
        "schema": SCHEMA,
        "version": __version__,
        "script": report.script,
        "argv": report.argv,
        "device": report.device,
        "seed": report.seed,
        "check_forward": report.check_forward,
        "strict": strict,
        "exit_code": report.exit_code(strict),
        "completed": report.completed,
        "summary": {
            "errors": len(report.errors),
            "warnings": len(report.warnings),
            "elapsed": round(report.elapsed, 4),
        },
        "failure": None if report.failure is None else as_json(report.failure),
        "findings": [as_json(f) for f in findings],
        "notes": report.notes,
    }
    return json.dumps(document, indent=2)


# ---------------------------------------------------------------------- human output


def print_report(console: Console, report: Report, *, strict: bool = False) -> None:
    """A panel per finding (errors first), the failure if any, then a summary line."""
    for finding in sorted(report.findings, key=lambda f: f.severity != ERROR):
        console.print(finding_panel(finding, console.is_terminal))
    if report.failure is not None:
        console.print(failure_panel(report.failure, console.is_terminal))
    for note in report.notes:
        console.print(Text(f"note: {note}", style="dim"))
    console.print(summary_text(report, strict))


def finding_panel(finding: Finding, terminal: bool) -> Panel:
    error = finding.severity == ERROR
    color = "red" if error else "yellow"
    title = Text(f"{'ERROR' if error else 'WARNING'} ", style=f"bold {color}") + Text(
        finding.kind, style="bold"
    )
    if finding.count > 1:
        title += Text(f" (x{finding.count})", style="dim")
    parts: list[Any] = []
    head = Text()
    if finding.location is not None:
        head += Text(finding.location.where, style="bold") + Text("  ")
    head += Text(finding.message)
    parts.append(head)
    excerpt = source_excerpt(finding.location, finding.related, terminal, color)
    if excerpt is not None:
        parts += [Text(""), excerpt]
    if finding.stats:
        parts += [Text(""), stats_table(finding.stats, terminal)]
    if finding.hint:
        parts += [Text(""), Text("fix: ", style="bold green") + Text(finding.hint)]
    return Panel(
        Group(*parts),
        title=title,
        title_align="left",
        box=box.ROUNDED if terminal else box.ASCII,
        border_style=color,
        expand=True,
    )


def source_excerpt(
    primary: Location | None, related: list[Location], terminal: bool, color: str = "red"
) -> Excerpt | None:
    """The culprit and related lines, grouped per file in line order, each with its role."""
    locations = ([primary] if primary is not None else []) + [r for r in related if r is not None]
    if not locations:
        return None
    by_file: dict[str, dict[int, list[Location]]] = {}
    for location in locations:
        by_file.setdefault(location.file, {}).setdefault(location.line, []).append(location)
    rows: list[tuple[Text, Text, str]] = []  # gutter, code, roles
    several = len(by_file) > 1
    for file, lines in by_file.items():
        if several:
            rows.append((Text(""), Text(file, style="bold underline"), ""))
        shown = sorted(lines)
        if primary is not None and primary.file == file:
            shown = sorted(set(shown) | _context(primary, CONTEXT))
        previous = None
        width = len(str(max(shown)))
        for number in shown:
            if previous is not None and number > previous + 1:
                rows.append((Text(" " * (width + 2)), Text("..."), ""))
            previous = number
            here = lines.get(number, [])
            is_culprit = primary is not None and any(loc is primary for loc in here)
            code = _code_line(file, number, here)
            roles = "; ".join(loc.role for loc in here if loc.role)
            marker = ">" if is_culprit else " "
            gutter = Text(f"{marker} {number:>{width}} |", style=f"bold {color}" if is_culprit else "dim")
            rows.append(
                (gutter, _code_text(code, terminal, is_culprit, bool(here)), f"<- {roles}" if roles else "")
            )
    return Excerpt(rows)


class Excerpt:
    """Source lines with their line numbers and roles, laid out for the width rich gives it.

    Where every line and its role fit side by side, the roles are a column; where they do not,
    each role goes on its own line under its code, and long code wraps under itself: the line
    numbers are never cut and a role is never squeezed into a column one letter wide.
    """

    def __init__(self, rows: list[tuple[Text, Text, str]]):
        self.rows = rows

    def side_by_side(self) -> Table:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(justify="right", no_wrap=True)  # marker and line number
        grid.add_column(no_wrap=True)  # code
        grid.add_column(style="dim", no_wrap=True)  # roles
        for row in self.rows:
            grid.add_row(*row)
        return grid

    def stacked(self) -> Table:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(justify="right", no_wrap=True)
        grid.add_column(overflow="fold")
        for gutter, code, roles in self.rows:
            grid.add_row(gutter, code)
            if roles:
                grid.add_row("", Text(roles, style="dim"))
        return grid

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.stacked())

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        wide = self.side_by_side()
        unbounded = options.update_width(UNBOUNDED)  # rich clamps a measurement to the width it is given
        fits = Measurement.get(console, unbounded, wide).maximum <= options.max_width
        yield wide if fits else self.stacked()


def _context(primary: Location, lines: int) -> set[int]:
    """Neighbouring lines of the culprit that exist in its file."""
    path = _real_path(primary.file)
    out = set()
    for number in range(max(1, primary.line - lines), primary.line + lines + 1):
        if number == primary.line or (path and linecache.getline(path, number).strip()):
            out.add(number)
    return out


def _real_path(file: str) -> str | None:
    return file if os.path.exists(file) else None


def _code_line(file: str, number: int, here: list[Location]) -> str:
    path = _real_path(file)
    text = linecache.getline(path, number).rstrip() if path else ""
    if not text and here and here[0].source:
        text = here[0].source
    return text


def _code_text(code: str, terminal: bool, culprit: bool, marked: bool) -> Text:
    if terminal and code.strip():
        text = Syntax(code, "python", background_color="default").highlight(code)
        text.rstrip()
        if culprit:
            text.stylize("bold")
        return text
    return Text(code, style="" if marked else "dim")


def stats_table(stats: list[TensorStats], terminal: bool) -> Table:
    """One row per tensor; on a narrow console the names fold, the numbers are never cut."""
    table = Table(box=box.SIMPLE_HEAD if terminal else box.ASCII2, pad_edge=False, show_edge=False)
    rows = [
        [
            Text(s.name, style="bold red" if s.nonfinite > 0 and terminal else ""),
            "[" + ", ".join(map(str, s.shape)) + "]",
            str(s.nan),
            str(s.posinf),
            str(s.neginf),
            _num(s.min),
            _num(s.max),
        ]
        for s in stats
    ]
    table.add_column("tensor", overflow="fold")
    table.add_column("shape", overflow="fold")
    for k, column in enumerate(("nan", "+inf", "-inf", "min", "max"), 2):
        widest = max([len(column), *(len(row[k]) for row in rows)])
        table.add_column(column, justify="right", no_wrap=True, min_width=widest)
    for row in rows:
        table.add_row(*row)
    return table


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def failure_panel(failure: ScriptFailure, terminal: bool) -> Panel:
    """Why the script did not run, or the unrelated exception that ended it (user frames only)."""
    parts: list[Any] = []
    head = Text()
    if failure.location is not None:
        head += Text(failure.location.where, style="bold") + Text("  ")
    head += Text(failure.message)
    parts.append(head)
    if failure.traceback:
        parts += [Text(""), Text("Traceback (the script's frames):", style="dim")]
        for frame in failure.traceback:
            parts.append(Text(f'  File "{frame.file}", line {frame.line}, in {frame.function}'))
            if frame.source:
                parts.append(
                    Text(f"    {frame.source}", style="bold" if frame is failure.traceback[-1] else "")
                )
        parts.append(Text(failure.message, style="bold red"))
    elif failure.location is not None and failure.location.source:
        parts += [Text(""), Text(f"  {failure.location.line} | {failure.location.source}")]
    if failure.reason == "exception":
        parts += [
            Text(""),
            Text("not an autograd anomaly: the script failed for another reason", style="dim"),
        ]
    return Panel(
        Group(*parts),
        title=Text("SCRIPT FAILED ", style="bold red") + Text(failure.reason, style="bold"),
        title_align="left",
        box=box.ROUNDED if terminal else box.ASCII,
        border_style="red",
        expand=True,
    )


def summary_text(report: Report, strict: bool = False) -> Text:
    """The closing line: '1 error, 2 warnings in examples/script.py (0.05s)'."""
    errors, warns = len(report.errors), len(report.warnings)
    timing = f" ({report.elapsed:.2f}s)"
    if report.failure is not None:
        counted = f"; {plural(warns, 'warning')} before that" if warns else ""
        return Text(f"{report.script} could not be run or failed{counted}{timing}", style="bold red")
    if not errors and not warns:
        return Text(f"no anomalies in {report.script}{timing}", style="green")
    parts = []
    if errors:
        parts.append(plural(errors, "error"))
    if warns:
        parts.append(plural(warns, "warning") + (" (--strict)" if strict and not errors else ""))
    style = "bold red" if errors or strict else "yellow"
    return Text(f"{', '.join(parts)} in {report.script}{timing}", style=style)
