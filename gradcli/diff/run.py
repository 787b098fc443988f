"""A `gradcli diff` run: files collected as `check` collects them, each item compared before the next
file loads, then the report (text or JSON), the JUnit XML and the exit code."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..render.error import EXIT_FAILED, EXIT_NO_CASES, EXIT_OK, EXIT_USAGE, UsageError
from ..render.output_files import refuse_clashes
from .results import Compared

if TYPE_CHECKING:
    from rich.console import Console

    from ..check.selection import Matcher


@dataclass
class DiffRun:
    """What the command line asked of a diff run, besides the paths."""

    device: str
    seed: int
    pattern: str | None
    against: str | None
    rtol: float | None
    atol: float | None
    json_output: bool
    debug: bool
    junitxml: str | None = None
    output: str | None = None

    def outputs(self) -> dict[str, str | None]:
        return {"--output": self.output, "--junitxml": self.junitxml}


def run_diff(
    files: list[str], matcher: Matcher, run: DiffRun, out: Console, err: Console, started: float
) -> int:
    """Collect, compare and report the items of `files`; the exit code."""
    from engine.backend import CudaUnavailable

    from ..check.collection import targets
    from ..check.config import inputs_of
    from ..check.render import report as check_report
    from ..program import running
    from ..program.isolation import fresh_files
    from . import render

    if run.against == "cpu" and run.device == "cpu":
        raise UsageError("--against cpu compares a run on another device with the CPU: give --device cuda")
    try:
        chosen, errors = targets(files)
        refuse_clashes(
            run.outputs(), inputs_of([f.partition("::")[0] for f in files] + [t.path for t in chosen])
        )
        compared = Compared(errors=errors)
        with running.using_device(run.device, [t.path for t in chosen]), fresh_files() as fresh:
            for target in chosen:
                fresh()
                _compare_file(target, matcher, run, compared)
    except CudaUnavailable as exc:
        raise UsageError(f"--device {run.device} is unavailable: {exc}") from None
    elapsed = time.perf_counter() - started
    results = compared.results
    if compared.errors or any(r.error for r in results):
        code = EXIT_USAGE
    elif not results:
        code = EXIT_NO_CASES
    else:
        code = EXIT_FAILED if any(r.differs for r in results) else EXIT_OK
    if run.junitxml is not None:
        from .junit import write_junit_xml

        write_junit_xml(run.junitxml, results, compared.errors, elapsed)
    check_report.print_skipped(err, compared.skipped)
    check_report.print_errors(err, compared.errors, run.debug)
    if run.json_output:
        settings = {
            "against": run.against,
            "rtol": run.rtol,
            "atol": run.atol,
            "device": run.device,
            "seed": run.seed,
            "pattern": run.pattern,
        }
        out.file.write(render.json_document(compared, settings, elapsed=elapsed, exit_code=code) + "\n")
    else:
        render.print_report(out, compared, elapsed)
    return code


def _compare_file(target, matcher: Matcher, run: DiffRun, compared: Compared) -> None:
    from ..check.collection import named
    from ..check.config import load_config
    from ..libraries import is_missing_torch
    from ..program.running import LoadError
    from .compare import compare
    from .loading import against_item, load, pair_item

    try:
        diff_file = load(target.path, seed=run.seed, against=run.against)
        records = diff_file.loaded.cases if run.against else diff_file.pairs
        records = named(records, target.names, target.path, "case" if run.against else "pair")
        project = load_config(target.path).options
    except LoadError as exc:
        missing_torch = target.searched and exc.cause is not None and is_missing_torch(exc.cause)
        (compared.skipped if missing_torch else compared.errors).append(exc)
        return
    rtol = run.rtol if run.rtol is not None else project.get("rtol")
    atol = run.atol if run.atol is not None else project.get("atol")
    for record in records:
        if not matcher([record.name, os.path.basename(target.path)]):
            compared.deselected += 1
            continue
        try:
            if run.against:
                item = against_item(
                    diff_file, record, run.against, seed=run.seed, timeout=None, device=run.device
                )
            else:
                item = pair_item(diff_file, record, seed=run.seed, timeout=None)
        except LoadError as exc:
            compared.errors.append(exc)
            continue
        compared.results.append(compare(item, seed=run.seed, rtol=rtol, atol=atol))
