"""A `gradcli check` run: files collected one at a time, each file's cases checked before the next
file loads, then the report (text or JSON), the JUnit XML, the Jacobians' dump and plots, and the
exit code."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..render.error import EXIT_FAILED, EXIT_NO_CASES, EXIT_OK, EXIT_USAGE, UsageError
from ..render.output_files import refuse_clashes
from . import run_case as checking
from .config import inputs_of, run_settings, starting_settings
from .results import MISMATCH_ROWS, SHOW_DEFAULT, CaseResult

if TYPE_CHECKING:
    from rich.console import Console

    from .selection import Matcher


@dataclass
class CheckRun:
    """What the command line asked of a check run, besides the paths."""

    given: dict[str, object]  # check options given on the command line
    device: str
    seed: int
    pattern: str | None
    exitfirst: bool
    json_output: bool
    debug: bool
    junitxml: str | None = None
    show: int | None = None  # --show N: entries listed per failing pair
    dump: str | None = None  # --dump FILE.npz
    plot: str | None = None  # --plot DIR
    timeout: float | None = None  # --timeout SECONDS, per case
    output: str | None = None  # -o FILE

    def outputs(self) -> dict[str, str | None]:
        """The files the run writes, by option."""
        return {
            "--output": self.output,
            "--junitxml": self.junitxml,
            "--dump": self.dump,
            "--plot": self.plot,
        }


def run_check(
    files: list[str], matcher: Matcher, run: CheckRun, out: Console, err: Console, started: float
) -> int:
    """Collect, check and report the cases of `files`; the exit code."""
    from engine.backend import CudaUnavailable  # the engine (numpy) only once a check runs

    from ..program import running
    from . import collection
    from .render import report as render
    from .render.progress import check_progress

    results: list[CaseResult] = []
    show = run.show or SHOW_DEFAULT
    keep = run.dump is not None or run.plot is not None  # the full Jacobians of failing pairs
    try:
        chosen, errors = collection.targets(files)
        read = [f.partition("::")[0] for f in files] + [t.path for t in chosen]
        refuse_clashes(run.outputs(), inputs_of(read))
        with running.using_device(run.device, [t.path for t in chosen]):
            collected = collection.Collection(errors=errors)
            prepared = collected.prepared
            # a file's cases run before the next file loads: in the state their file left
            stopped = False  # -x: the files after the failure are still collected, to count them
            with check_progress(err, 0, enabled=not run.json_output) as bar:
                for part in collection.each_file(chosen, matcher, seed=run.seed, timeout=run.timeout):
                    collected.add(part)
                    bar.add(0 if stopped else len(part.prepared))
                    for case in [] if stopped else part.prepared:
                        settings = starting_settings(case.file.project_options, run.given)
                        with bar.case(f"{case.file.path}::{case.case.name}") as step:
                            results.append(
                                checking.run_case(
                                    case,
                                    settings,
                                    show=show,
                                    progress=step,
                                    keep_jacobians=keep,
                                    timeout=run.timeout,
                                )
                            )
                        if run.exitfirst and not results[-1].passed:
                            stopped = True
                            break
            errors = collected.errors
    except CudaUnavailable as exc:
        raise UsageError(f"--device {run.device} is unavailable: {exc}") from None
    elapsed = time.perf_counter() - started
    skipped = collected.skipped
    if run.junitxml is not None:
        from .junit import write_junit_xml  # a path it cannot write: UsageError

        write_junit_xml(run.junitxml, results, errors, elapsed, skipped)
    if run.dump is not None or run.plot is not None:
        from . import jacobians  # --dump / --plot only
    if run.dump is not None:
        jacobians.dump(run.dump, results)
    if run.plot is not None:
        for path in jacobians.plot(run.plot, results):
            err.print(f"wrote {path}", soft_wrap=True, highlight=False)

    failed = sum(not r.passed for r in results)
    if errors:
        code = EXIT_USAGE
    elif not prepared:
        code = EXIT_NO_CASES
    else:
        code = EXIT_FAILED if failed else EXIT_OK
    render.print_skipped(err, skipped)
    if errors:
        render.print_errors(err, errors, run.debug)
    if run.json_output:
        document = render.json_document(
            results,
            errors,
            skipped,
            settings=run_settings([t.path for t in chosen], run.given).for_run(),
            device=run.device,
            seed=run.seed,
            pattern=run.pattern,
            elapsed=elapsed,
            exit_code=code,
            deselected=collected.deselected,
        )
        out.file.write(document + "\n")
        return code
    by_file: dict[str, list[CaseResult]] = {}
    for result in results:
        by_file.setdefault(result.file, []).append(result)
    for path, file_results in by_file.items():
        render.print_file_results(out, path, file_results)
    render.print_failures(out, results, run.debug, rows=run.show or MISMATCH_ROWS)
    render.print_warnings(out, results)
    if len(results) < len(prepared):
        out.print(f"stopped after the first failure (-x); {len(prepared) - len(results)} not run")
    warnings = sum(len(r.warnings) for r in results)
    render.print_summary(
        out, len(results) - failed, failed, len(errors), elapsed, collected.deselected, warnings, len(skipped)
    )
    return code
