"""`gradcli diff --junitxml FILE`: check's JUnit layout, one `<testcase>` per pair, a pair that
differs holding its text report as the failure's body."""

from __future__ import annotations

import io

from ..check.junit import JUnitCase, write_suite
from ..program.running import LoadError
from ..render.console import make_console
from .render import result_lines
from .results import PairResult


def write_junit_xml(path: str, results: list[PairResult], errors: list[LoadError], elapsed: float) -> None:
    """Write the run's pairs to `path` (a UsageError if it cannot be written)."""
    write_suite(path, [_entry(r) for r in results], errors, elapsed)


def _entry(result: PairResult) -> JUnitCase:
    if result.verdict == "agree":
        return JUnitCase(result.file, result.name, 0.0)
    buffer = io.StringIO()
    console = make_console(buffer)
    for line in result_lines(result):
        console.print(line, soft_wrap=True, highlight=False)
    message = result.error or f"{result.reference_label} and {result.candidate_label} differ"
    return JUnitCase(result.file, result.name, 0.0, (result.verdict, message, buffer.getvalue()))
