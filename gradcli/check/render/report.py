"""Showing check results: rich tables for people, a JSON document for machines.

Off a terminal rich prints no colour codes and the tables use ASCII rules, so redirected
output is plain text that diffs and greps well.

JSON schema (`gradcli check --json`, schema id "gradcli.check/1"); numbers that are not
finite are written as the strings "nan", "inf", "-inf"; indices and shapes are lists::

    {
      "schema": "gradcli.check/1",
      "version": str,                      # gradcli version
      "passed": bool,                      # every selected case passed and nothing failed to load
      "exit_code": 0 | 1 | 2 | 5,          # 5: no case was selected (none found, all skipped, or -k left none)
      "summary": {"passed": int, "failed": int, "errors": int, "total": int,
                  "deselected": int,       # cases -k left out
                  "skipped": int,          # files a directory search found that import torch, not installed
                  "elapsed": float},
      "settings": {"order": 1 | 2, "modes": ["rev" | "fwd"], "fast": bool | null,
                   "eps": float | null, "atol": float | null, "rtol": float | null,   # null: from each case's dtype
                   "nondet_tol": float, "dtype": "float64" | "native", "reference": "float64" | "native",
                   "device": "cpu" | "cuda", "seed": int, "pattern": str | null},
                                           # what the cases started from: the command line over the
                                           # files' [tool.gradcli] (when they share one) over the defaults
      "errors": [{"file": str | null, "line": int | null, "message": str, "source": str | null}],
      "skipped": [same entries as errors],   # the files summary.skipped counts, and why
      "cases": [{
        "file": str, "name": str, "line": int | null, "passed": bool,
        "order": int, "mode": "fast" | "full", "localized": bool, "device": str,
        "dtype": str,                      # of the analytical gradient ("float64", native "float32", ...)
        "upcast": bool, "elapsed": float, "differentiable_elements": int,
        "settings": {"order", "modes", "fast", "eps", "atol", "rtol", "nondet_tol", "dtype", "reference"},
                                           # after the case's own options, eps and tolerances resolved
        "verdict": "PASS" | "NOISE" | "KINK" | "BUG" | "RANDOM FORWARD" | "NONDETERMINISTIC FORWARD"
                   | "NONDETERMINISTIC BACKWARD" | "DTYPE" | "ERROR",   # the case's class (verdicts.py)
        "reason": str,                                                # why, in one sentence
        "problems": [{"message": str, "file": str | null, "line": int | null,
                      "kind": str | null}],   # failures besides mismatches; kind: the class it decides
        "backwards": [{"function": str, "file": str, "line": int}],         # only for failed cases:
                                            # the custom Functions in the case's graph
        "graph_cuts": [{"input": str, "how": str, "file": str, "line": int}],
                                            # failed cases: where a failing input's value left the
                                            # graph and still reaches an output the failure involves;
                                            # how: `.detach()`, `.detach().numpy()`, `.item()`, `.data`,
                                            # `engine.tensor()`, `torch.as_tensor()`, `no_grad` ...
        "no_gradient": [str],               # failed cases: inputs that get no gradient at all
        "pairs": [{
          "input": str, "output": str, "input_index": int, "output_index": int, "order": int,
          "mode": "rev" | "fwd",            # the analytical side: reverse mode (VJPs) or forward mode (JVPs)
          "comparison": "VJP" | "JVP" | "VJP of VJP" | "JVP of VJP",   # order and mode, in JAX's words
          "passed": bool,
          "input_shape": [int], "output_shape": [int], "jacobian_shape": [int],
          "max_abs_err": float, "max_rel_err": float,   # max_rel_err "inf": undefined (a numerical 0)
          "worst_input_index": [int] | null, "worst_output_index": [int] | null,
          "numerical": float | null, "analytical": float | null,   # at the worst (largest abs err) entry
          "mismatch_count": int,            # entries outside the tolerance, all of them
          "mismatch_count_exact": bool,     # false: located by bisection (fast mode, a large Jacobian);
                                            # mismatch_count and the errors are then lower bounds
          "mismatches": [{"output_index": [int], "input_index": [int], "numerical": float, "analytical": float}],
                                            # the worst --show N of them (default 10), largest abs err first
          "nondifferentiable": [same entries as mismatches],  # KINK: kinks within eps, not failures
          "noise": [{...entry, "estimate": float, "how": str}],  # NOISE: agree with another estimate
          "estimates_tried": [str],         # BUG: the other estimates its mismatches disagree with too
          "verdict": "PASS" | "NOISE" | "KINK" | "BUG"
        }],
        "warnings": [str],       # why entries were set apart as kinks, and the fix; exit 0 if nothing else failed
        "notes": [str],          # why entries were set apart as noise; never a failure
        "reference": str         # the numerical Jacobian's dtype: "float64", or the native one (reference native)
      }]
    }
"""

from __future__ import annotations

import json
import math
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...program.running import LoadError
from ...render.jsonable import as_json
from ...render.plurals import plural
from ...render.text_blocks import Indented, numbered_source, print_block
from ..results import MISMATCH_ROWS, CaseResult, PairResult, Settings, entry_name
from ..verdicts import PASS, PASSING, SHORT
from .dtype_label import dtype_label
from .fit import Name, fitted, number
from .lost_gradients import print_lost_gradients

SCHEMA = "gradcli.check/1"
#: Lines of a custom backward's source shown under a failure.
SOURCE_LINES = 15
#: What --json leaves out of a CaseResult: --debug's traceback, the source lines shown to people.
CASE_JSON_LEAVES_OUT = frozenset(
    {"traceback", "source", "numerical_jacobian", "analytical_jacobian", "blocks"}
)

PLAIN_BOX = box.Box("    \n    \n -- \n    \n    \n -- \n    \n    \n", ascii=True)


# ----------------------------------------------------------------------- human output


#: The file table's columns the narrowest consoles go without, least useful first.
FILE_DROP_ORDER = ("time", "mode", "max rel err", "worst index", "shape")
#: The failure table's, likewise.
MISMATCH_DROP_ORDER = ("difference", "output")


def print_file_results(console: Console, path: str, results: list[CaseResult]) -> None:
    """One table for a file: a row per (case, input) pair, as many columns as the width holds."""
    console.print(Text(path, style="bold"))
    show_output = any(_names_outputs(r) for r in results)
    rows = [row for result in results for row in _file_rows(result, show_output)]

    def build(dropped: frozenset[str]) -> Table:
        table = Table(
            box=box.SIMPLE_HEAD if console.is_terminal else PLAIN_BOX,
            pad_edge=False,
            show_edge=False,
        )
        keep = [name for name in rows[0] if name not in dropped] if rows else []
        for name in keep:
            table.add_column(name, **_FILE_COLUMNS[name])
        for row in rows:
            table.add_row(*(row[name] for name in keep))
        return table

    print_block(console, fitted(console, build, FILE_DROP_ORDER))
    console.print()


#: How each column of the file table is laid out: names fold, numbers never wrap.
_FILE_COLUMNS: dict[str, dict[str, Any]] = {
    "case": {"overflow": "fold"},
    "output": {"overflow": "fold"},
    "input": {"overflow": "fold"},
    "shape": {},
    "max abs err": {"justify": "right"},
    "max rel err": {"justify": "right"},
    "worst index": {},
    "result": {},
    "mode": {},
    "time": {"justify": "right"},
}


def _file_rows(result: CaseResult, show_output: bool) -> list[dict[str, Any]]:
    """A case's rows of the file table, by column name: one per (output, input), whichever modes
    compared it (the worst of them shown; see `_row_result`)."""
    rows: list[list[PairResult] | None] = list(_by_block(result.pairs))
    if not result.passed and all(p.passed for p in result.pairs):
        rows.append(None)  # failed on a problem (raised, nondeterministic...): a row with its class
    out = []
    for number_, block in enumerate(rows):
        first = number_ == 0
        row: dict[str, Any] = {"case": Name(result.name) if first else ""}
        if show_output:
            row["output"] = Name(block[0].output) if block is not None else "-"
        if block is None:
            row["input"] = "-"  # no pair was compared: the FAILED section says why
            row.update({"shape": "-", "max abs err": "-", "max rel err": "-", "worst index": "-"})
            row["result"] = _verdict(result.verdict)
        else:
            pair = max(block, key=_severity)
            row["input"] = Name(pair.input)
            row["shape"] = _shape(pair.input_shape)
            row["max abs err"] = number(_num(pair.max_abs_err))
            row["max rel err"] = number(_rel_err(pair))
            row["worst index"] = _index(pair.worst_input_index)
            row["result"] = _row_result(block, pair)
        row["mode"] = (result.mode + (" (localized)" if result.localized else "")) if first else ""
        row["time"] = number(f"{result.elapsed:.2f}s") if first else ""
        out.append(row)
    return out


def print_failures(
    console: Console, results: list[CaseResult], debug: bool = False, rows: int = MISMATCH_ROWS
) -> None:
    """For each failed case: the `rows` worst entries side by side and, for a small Jacobian, a
    heatmap of the errors; the problems; the backward's source."""
    for result in results:
        if result.passed:
            continue
        title = f"FAILED {result.file}::{result.name} {result.verdict}"
        details = f"order {result.order}, {result.mode} mode"
        if result.localized:
            details += ", localized"
        if result.dtype:
            details += f", {dtype_label(result)}"
        details += f", {result.device}"
        console.print(Text(title, style="bold red") + Text(f" ({details})", style="dim"))
        print_block(console, Indented(Text(f"why: {result.reason}"), by=2))
        problems = list(result.problems)
        if problems and problems[0].message.splitlines()[0] == result.reason:
            reason = problems.pop(0)  # the reason is this problem: its line goes under it
            if reason.source:
                print_block(console, Indented(numbered_source([reason.source], reason.line), by=6))
        for pair, comparisons in _failures(result):
            _print_pair_failure(console, pair, result, rows, comparisons)
        if problems:
            console.print("  problems:")
            for problem in problems:
                print_block(console, Indented(Text("- " + problem.message), by=4))
                if problem.source:
                    print_block(console, Indented(numbered_source([problem.source], problem.line), by=8))
        print_lost_gradients(console, result)
        for location in result.backwards:
            function, method = location.function.rsplit(".", 1)
            console.print(f"  {method} of {function}: {location.file}:{location.line}")
            source = location.source[:SOURCE_LINES]
            if console.is_terminal:
                from rich.syntax import Syntax  # pygments: only to colour a failure

                code = Syntax(
                    "\n".join(source),
                    "python",
                    line_numbers=True,
                    start_line=location.line,
                    dedent=True,
                    word_wrap=True,
                    background_color="default",
                )
                console.print(Indented(code))
            else:
                print_block(console, Indented(numbered_source(source, location.line)))
            if len(location.source) > SOURCE_LINES:
                console.print("    ...")
        if debug and result.traceback:
            console.print(Text(result.traceback))
        console.print()


def print_warnings(console: Console, results: list[CaseResult]) -> None:
    """Kinks (WARNING: the numerical side means nothing there) and noise (NOTE: another estimate
    agrees), for passed and failed cases alike."""
    for result in results:
        for label, texts, style in (
            ("WARNING", result.warnings, "bold yellow"),
            ("NOTE", result.notes, "bold"),
        ):
            if not texts:
                continue
            console.print(Text(f"{label} {result.file}::{result.name}", style=style))
            items = Table.grid(padding=(0, 1))  # a hanging indent: wrapped lines stay under the text
            items.add_column(no_wrap=True)
            items.add_column(ratio=1)
            for text in texts:
                items.add_row("-", Text(text))
            print_block(console, Indented(items, by=2))
            console.print()


def _failures(result: CaseResult) -> list[tuple[PairResult, list[str]]]:
    """Each failed pair with the comparisons it stands for: a JVP that fails on the very entries
    its block's VJP fails on (a wrong formula both modes share) is said once, as `(VJP, JVP)`."""
    shown: list[tuple[PairResult, list[str]]] = []
    for block in _by_block(result.pairs):
        for pair in (p for p in block if not p.passed):
            same = next((s for s in shown if s[0] in block and _same_failure(s[0], pair)), None)
            if same:
                same[1].append(pair.comparison)
            else:
                shown.append((pair, [pair.comparison]))
    return shown


def _same_failure(one: PairResult, other: PairResult) -> bool:
    """Whether two comparisons of one block found the same wrong entries with the same values."""
    entries = [(m.output_index, m.input_index) for m in one.mismatches]
    return (
        one.mismatch_count == other.mismatch_count
        and entries == [(m.output_index, m.input_index) for m in other.mismatches]
        and all(
            math.isclose(a.analytical, b.analytical, rel_tol=1e-6, abs_tol=1e-12)
            for a, b in zip(one.mismatches, other.mismatches, strict=True)
        )
    )


def _print_pair_failure(
    console: Console, pair: PairResult, result: CaseResult, rows: int, comparisons: list[str]
) -> None:
    label = _pair_label(pair, result, comparisons)
    where = ""
    if pair.worst_input_index is not None:
        where = f" at {entry_name(pair.input, pair.worst_input_index)}"
        if pair.worst_output_index is not None:
            where += f" of {entry_name(pair.output, pair.worst_output_index)}"
    errors = f"max abs err {_num(pair.max_abs_err)}"
    relative = _rel_err(pair)
    if relative != "-":
        errors += f", max rel err {relative}"
    console.print(f"  {label}: {errors}{where}")
    if pair.mismatch_count:
        total = math.prod(pair.jacobian_shape)
        count = f"{pair.mismatch_count} of {plural(total, 'entry', 'entries')} differ"
        if not pair.mismatch_count_exact:
            count = f"at least {count}; showing the first {len(pair.mismatches)} located by bisection"
        console.print(f"    {count}", soft_wrap=True)
    if not pair.mismatches:
        return
    shown = pair.mismatches[:rows]

    def build(dropped: frozenset[str]) -> Table:
        table = Table(
            box=box.SIMPLE_HEAD if console.is_terminal else PLAIN_BOX, show_edge=False, padding=(0, 1)
        )
        columns = {
            "output": ({}, lambda m: Name(entry_name(pair.output, m.output_index), "dim")),
            "input": ({}, lambda m: Name(entry_name(pair.input, m.input_index))),
            "numerical": (dict(justify="right"), lambda m: number(_num(m.numerical, 6))),
            "analytical": (dict(justify="right"), lambda m: number(_num(m.analytical, 6))),
            "difference": (dict(justify="right"), lambda m: number(_num(m.analytical - m.numerical))),
        }
        keep = [name for name in columns if name not in dropped]
        for name in keep:
            table.add_column(name, **columns[name][0])
        for mismatch in shown:
            table.add_row(*(columns[name][1](mismatch) for name in keep))
        return table

    table = fitted(console, build, MISMATCH_DROP_ORDER, indent=4)
    print_block(console, Indented(table))
    shown = min(rows, len(pair.mismatches))
    if pair.mismatch_count > shown:
        console.print(f"    ... {pair.mismatch_count - shown} more (see --show N, --json)")
    _print_heatmap(console, pair, result.settings)


def _print_heatmap(console: Console, pair: PairResult, settings: Settings) -> None:
    """|analytical - numerical| cell by cell, or in blocks (each its largest error) when larger."""
    from . import heatmap

    grid = pair.heatmap_grid(rtol=settings.rtol, atol=settings.atol)
    if grid is None:
        return
    block = grid.block
    rows = [
        entry_name(pair.output, _unravel(r * block[0], pair.output_shape))
        for r in range(grid.difference.shape[0])
    ]
    terminal = console.is_terminal
    legend = Text(heatmap.legend(pair.input, pair.max_abs_err, terminal=terminal, block=block), style="dim")
    print_block(console, Indented(legend))  # wraps under its own indent
    print_block(console, Indented(heatmap.heatmap(grid.difference, grid.failing, rows, terminal=terminal)))


def print_errors(console: Console, errors: list[LoadError], debug: bool = False) -> None:
    """Loading and usage errors: one paragraph each, the traceback only with --debug."""
    for error in errors:
        text = error.traceback_text() if debug else None
        if text:
            console.print(Text(text.rstrip()), soft_wrap=True)
        message = Text("error: ", style="bold red") + Text(error.headline)
        if not debug and error.cause is not None and not isinstance(error.cause, SyntaxError):
            message += Text(" (--debug shows the traceback)", style="dim")
        if error.source_text:
            message += Text("\n" + error.source_text)
        console.print(message, soft_wrap=True)


def print_skipped(console: Console, skipped: list[LoadError]) -> None:
    """Files a directory search found but that could not run here (torch missing): one line each,
    so that a run that checked less than the directory holds says so."""
    for file in skipped:
        console.print(Text("skipped: ", style="bold yellow") + Text(file.headline), soft_wrap=True)


def print_summary(
    console: Console,
    passed: int,
    failed: int,
    errors: int,
    elapsed: float,
    deselected: int = 0,
    warnings: int = 0,
    skipped: int = 0,
) -> None:
    """The closing line, pytest style: '3 passed, 1 failed, 1 skipped, 1 warning, 2 deselected in 0.42s'."""
    style = "red" if failed or errors or not passed else ("yellow" if warnings or skipped else "green")
    line = summary_line(passed, failed, errors, elapsed, deselected, warnings, skipped)
    console.print(Text(line, style=style))


def summary_line(
    passed: int,
    failed: int,
    errors: int,
    elapsed: float,
    deselected: int = 0,
    warnings: int = 0,
    skipped: int = 0,
) -> str:
    parts = []
    if passed:
        parts.append(f"{passed} passed")
    if failed:
        parts.append(f"{failed} failed")
    if errors:
        parts.append(plural(errors, "error"))
    if skipped:
        parts.append(f"{skipped} skipped")
    if warnings:
        parts.append(plural(warnings, "warning"))
    if deselected:
        parts.append(f"{deselected} deselected")
    if not parts:
        parts.append("no cases ran")
    return f"{', '.join(parts)} in {elapsed:.2f}s"


# ------------------------------------------------------------------------------ JSON


def json_document(
    results: list[CaseResult],
    errors: list[LoadError],
    skipped: list[LoadError] = (),
    *,
    settings: Settings,
    device: str,
    seed: int,
    pattern: str | None,
    elapsed: float,
    exit_code: int,
    deselected: int = 0,
) -> str:
    """The --json output (schema in this module's docstring)."""
    from ...version import __version__

    passed = sum(r.passed for r in results)
    document = {
        "schema": SCHEMA,
        "version": __version__,
        "passed": exit_code == 0,
        "exit_code": exit_code,
        "summary": {
            "passed": passed,
            "failed": len(results) - passed,
            "errors": len(errors),
            "total": len(results),
            "deselected": deselected,
            "skipped": len(skipped),
            "elapsed": elapsed,
        },
        "settings": {**as_json(settings), "device": device, "seed": seed, "pattern": pattern},
        "errors": [load_error_data(e) for e in errors],
        "skipped": [load_error_data(e) for e in skipped],
        "cases": [as_json(r, leave_out=CASE_JSON_LEAVES_OUT) for r in results],
    }
    return json.dumps(document, indent=2)  # the records' nan/inf already made finite by as_json


# --------------------------------------------------------------------------- helpers


def load_error_data(error: LoadError) -> dict[str, Any]:
    return {"file": error.file, "line": error.line, "message": error.message, "source": error.source_line}


def _verdict(verdict: str) -> Text:
    """A class as the table shows it: green for a plain pass, yellow for one with entries set
    apart (NOISE, KINK), red for a failure."""
    style = "bold green" if verdict == PASS else "bold yellow" if verdict in PASSING else "bold red"
    return number(SHORT.get(verdict, verdict), style)


def _by_block(pairs: list[PairResult]) -> list[list[PairResult]]:
    """The pairs of each (order, output, input) block of the Jacobian: its VJP and its JVP."""
    blocks: dict[tuple, list[PairResult]] = {}
    for pair in pairs:
        blocks.setdefault((pair.order, pair.output, pair.input), []).append(pair)
    return list(blocks.values())


def _severity(pair: PairResult) -> tuple:
    """A failing pair before a passing one, then the larger error (NaN largest)."""
    err = pair.max_abs_err
    return (not pair.passed, pair.verdict != PASS, math.inf if math.isnan(err) else err)


def _row_result(block: list[PairResult], worst: PairResult) -> Text:
    """The worst verdict of a block; `BUG (JVP)` where its comparisons disagree on it."""
    if len({p.verdict for p in block}) == 1:
        return _verdict(worst.verdict)
    return _verdict(worst.verdict) + Text(f" ({worst.comparison})")


def _pair_label(pair: PairResult, result: CaseResult, comparisons: list[str]) -> str:
    """`x`, or `grad(x) w.r.t. x` where the case has several outputs or second-order pairs; then
    `(JVP)` or `(VJP, JVP)` where the case compared more than one kind of derivative."""
    label = f"{pair.output} w.r.t. {pair.input}" if _names_outputs(result) else pair.input
    return f"{label} ({', '.join(comparisons)})" if _compares_several(result) else label


def _compares_several(result: CaseResult) -> bool:
    """Whether a case's pairs need their comparison named: more than one (VJP and JVP, ...)."""
    return len({p.comparison for p in result.pairs}) > 1


def _names_outputs(result: CaseResult) -> bool:
    """Whether a case's pairs need their output named: several outputs, or order 2."""
    return any(p.order != 1 for p in result.pairs) or len({p.output for p in result.pairs}) > 1


def _unravel(flat: int, shape: tuple) -> tuple:
    """The multi-index of entry `flat` of a tensor of `shape`, row-major."""
    index = []
    for size in reversed(shape):
        flat, rest = divmod(flat, size)
        index.append(rest)
    return tuple(reversed(index))


def _index(index: tuple | None) -> str:
    if index is None:
        return "-"
    return "[" + ", ".join(str(i) for i in index) + "]"


def _shape(shape: tuple) -> str:
    return str(tuple(shape))


def _num(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "-"
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.{digits}e}"


def _rel_err(pair: PairResult) -> str:
    """The max relative error; "-" where it is undefined (inf from a numerical derivative of 0,
    told from an infinite error by a finite absolute one)."""
    if math.isinf(pair.max_rel_err) and math.isfinite(pair.max_abs_err):
        return "-"
    return _num(pair.max_rel_err)
