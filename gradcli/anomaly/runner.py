"""Running the user's script as `__main__` under the instrument, and turning how it ended into a Report.

`run_script` never raises for the user's errors: a script that cannot be compiled, an exit
status, an anomaly (`classify`) or an unrelated exception all end up in the Report, with the
user's frames of the traceback only.
"""

from __future__ import annotations

import linecache
import re
import time
from collections.abc import Callable
from contextlib import ExitStack

from ..libraries import TORCH_MISSING, MixedTensors, after_torch_import, is_missing_torch, library_of, loaded
from ..program.exception_text import exception_text
from ..program.running import CannotRun, compile_file, interrupted, main_module, running, using_device
from ..program.sites import Sites, raise_site, user_tb_frames, user_traceback
from ..program.threads import thread_errors
from .error_kinds import caught_findings, classify
from .findings import Location, Report, ScriptFailure
from .instrument import Instrument, instrumented
from .warning_kinds import collect_warnings


def run_script(
    path: str,
    args: list[str] | None = None,
    *,
    device: str = "cpu",
    seed: int | None = 0,
    check_forward: bool = False,
    ended: Callable[[BaseException], None] | None = None,
) -> Report:
    """Run `path` as `__main__` under instrumented anomaly mode; never raises for the user's errors.

    `ended` is handed the exception that ended the script, if one did (`anomaly --graph` draws
    the graph as it was then)."""
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
    torch_side = _TorchSide(sites, check_forward)
    module = None
    escaped = None
    in_threads: list[BaseException] = []

    def finding_of(exc: BaseException):
        return torch_side.classify(exc, sites, module) or classify(exc, instrument, sites, module)

    def ended_a_thread(exc: BaseException) -> bool:
        """An anomaly that ended one of the script's threads: reported as a finding, not printed."""
        found = finding_of(exc) is not None
        if found:
            in_threads.append(exc)
        return found

    try:
        with (
            using_device(device, [path]),
            main_module(user.abspath) as module,
            running(user, seed=seed, argv=report.argv),
        ):
            try:
                with instrumented(instrument), torch_side.installed(), thread_errors(ended_a_thread):
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
            except KeyboardInterrupt as exc:
                raise interrupted(f"while running {path}", exc) from None
            except BaseException as exc:  # the user's script may raise anything
                escaped = exc
                if ended is not None:
                    ended(exc)
                finding = finding_of(exc)
                if finding is not None:
                    report.findings.append(finding)
                else:
                    report.failure = _failure(exc, sites)
    except CudaUnavailable as exc:
        report.failure = ScriptFailure("device", f"--device {device} is unavailable: {exc}")
    errors = [*instrument.errors, *torch_side.errors, *in_threads]
    report.findings.extend(caught_findings(errors, finding_of, escaped, report.findings))
    report.findings.extend(collect_warnings(instrument, sites, module, report.completed))
    if torch_side.instrument is not None:
        report.findings.extend(collect_warnings(torch_side.instrument, sites, module, report.completed))
        report.notes.extend(unwatched_notes(torch_side.instrument.unwatched, sites))
    report.elapsed = time.perf_counter() - started
    return report


class _TorchSide:
    """torch's instrument, installed only if the script imports torch (gradcli never imports it)."""

    def __init__(self, sites: Sites, check_forward: bool):
        self.instrument = None
        self._sites = sites
        self._check_forward = check_forward
        self._stack = ExitStack()

    @property
    def errors(self) -> list[BaseException]:
        return self.instrument.errors if self.instrument is not None else []

    def installed(self) -> ExitStack:
        """For the block: as soon as torch is imported, its instrument; removed at the end."""
        self._stack.enter_context(after_torch_import(self._install))
        return self._stack

    def _install(self, torch) -> None:
        from .torch_instrument import TorchInstrument, torch_instrumented

        self.instrument = TorchInstrument(torch, self._sites, self._check_forward)
        self._stack.enter_context(torch_instrumented(self.instrument))

    def classify(self, exc: BaseException, sites: Sites, module):
        if self.instrument is None:
            return None
        from .torch_errors import classify_torch

        return classify_torch(exc, self.instrument, sites, module)


def unwatched_notes(unwatched: dict[str, list], sites: Sites) -> list[str]:
    """What the instrument stepped aside from, each with the first line where, and how often."""
    notes = []
    for what, (site, count) in unwatched.items():
        location = sites.location(site)
        where = f" at {location.where}" if location is not None else ""
        times = f" ({count} times)" if count > 1 else ""
        notes.append(f"not watched{where}{times}: {what}")
    return notes


def _cannot_run(exc: CannotRun) -> ScriptFailure:
    """The failure for a script that cannot be compiled; a syntax error's line is its location."""
    if exc.reason != "syntax-error":
        return ScriptFailure(exc.reason, exc.headline)
    text = (exc.source_line or "").strip() or None
    location = Location(exc.file, exc.line, None, text) if exc.line is not None else None
    return ScriptFailure(exc.reason, exc.message, "SyntaxError", location)


def _failure(exc: BaseException, sites: Sites) -> ScriptFailure:
    """The failure for an exception unrelated to autograd."""
    if is_missing_torch(exc):
        return ScriptFailure("missing-torch", TORCH_MISSING, type(exc).__name__, raise_site(exc, sites))
    message = exception_text(exc)
    mixed = _mixed_tensors(exc)
    if mixed is not None:
        message = f"this line {mixed} ({message})"
    return ScriptFailure(
        "exception", message, type(exc).__name__, raise_site(exc, sites), user_traceback(exc, sites)
    )


def _mixed_tensors(exc: BaseException) -> str | None:
    """Why the line that raised failed, when the variables it names are engine and torch tensors both."""
    if len(loaded()) < 2 or not isinstance(exc, (TypeError, RuntimeError, ValueError)):
        return None
    frames = user_tb_frames(exc.__traceback__)
    if not frames:
        return None
    frame, lineno = frames[-1]
    scope = {**frame.f_globals, **frame.f_locals}
    names = dict.fromkeys(re.findall(r"[A-Za-z_]\w*", linecache.getline(frame.f_code.co_filename, lineno)))
    try:
        library_of((name, scope[name]) for name in names if name in scope)
    except MixedTensors as mixed:
        return str(mixed)
    return None
