"""Running the user's script as `__main__` under the instrument, and turning how it ended into a Report.

`run_script` never raises for the user's errors: a script that cannot be compiled, an exit
status, an anomaly (`classify`) or an unrelated exception all end up in the Report, with the
user's frames of the traceback only.
"""

from __future__ import annotations

import time

from ..running import CannotRun, compile_file, main_module, running, using_device
from .error_kinds import classify
from .findings import Location, Report, ScriptFailure
from .instrument import Instrument, instrumented
from .sites import Sites, raise_site, user_traceback
from .warning_kinds import collect_warnings


def run_script(
    path: str,
    args: list[str] | None = None,
    *,
    device: str = "cpu",
    seed: int | None = 0,
    check_forward: bool = False,
) -> Report:
    """Run `path` as `__main__` under instrumented anomaly mode; never raises for the user's errors."""
    from engine.backend import CudaUnavailable

    started = time.perf_counter()
    args = list(args or [])
    report = Report(path, [path, *args], device, seed, check_forward)
    try:
        user = compile_file(path, "script")
    except CannotRun as exc:
        report.failure = _cannot_run(exc)
        report.elapsed = time.perf_counter() - started
        return report
    sites = Sites(user.abspath, path)
    instrument = Instrument(sites, check_forward)
    module = None
    try:
        with (
            using_device(device, [path]),
            main_module(user.abspath) as module,
            running(user, seed=seed, argv=report.argv),
        ):
            try:
                with instrumented(instrument):
                    exec(user.code, module.__dict__)
                report.completed = True
            except SystemExit as exc:
                status = exc.code
                if status in (None, 0):
                    report.completed = True
                else:
                    report.failure = ScriptFailure(
                        "exit-status",
                        f"the script exited with status {status}",
                        "SystemExit",
                        raise_site(exc, sites),
                        user_traceback(exc, sites),
                    )
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # the user's script may raise anything
                finding = classify(exc, instrument, sites, module)
                if finding is not None:
                    report.findings.append(finding)
                else:
                    report.failure = _failure(exc, sites)
    except CudaUnavailable as exc:
        report.failure = ScriptFailure("device", f"--device {device} is unavailable: {exc}")
    report.findings.extend(collect_warnings(instrument, sites, module, report.completed))
    report.elapsed = time.perf_counter() - started
    return report


def _cannot_run(exc: CannotRun) -> ScriptFailure:
    """The failure for a script that cannot be compiled; a syntax error's line is its location."""
    if exc.reason != "syntax-error":
        return ScriptFailure(exc.reason, exc.headline)
    text = (exc.source_line or "").strip() or None
    location = Location(exc.file, exc.line, None, text) if exc.line is not None else None
    return ScriptFailure(exc.reason, exc.message, "SyntaxError", location)


def _failure(exc: BaseException, sites: Sites) -> ScriptFailure:
    """The failure for an exception unrelated to autograd."""
    text = str(exc)
    message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return ScriptFailure(
        "exception", message, type(exc).__name__, raise_site(exc, sites), user_traceback(exc, sites)
    )
