"""Running the user's script as `__main__` under the instrument, and turning how it ended into a Report.

`run_script` never raises for the user's errors: a script that cannot be compiled, an exit
status, an anomaly (`classify`) or an unrelated exception all end up in the Report, with the
user's frames of the traceback only.
"""

from __future__ import annotations

import builtins
import linecache
import os
import sys
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager

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
    import engine
    from engine.backend import CudaUnavailable

    from ..loading import using_device

    started = time.perf_counter()
    args = list(args or [])
    report = Report(path, [path, *args], device, seed, check_forward)
    abspath = os.path.abspath(path)
    sites = Sites(abspath, path)
    code = _compile(path, abspath, report)
    if code is None:
        report.elapsed = time.perf_counter() - started
        return report
    instrument = Instrument(sites, check_forward)
    module = None
    try:
        with using_device(device), _as_main(abspath, report.argv) as module:
            if seed is not None:
                engine.manual_seed(seed)
            try:
                with instrumented(instrument):
                    exec(code, module.__dict__)
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


@contextmanager
def _as_main(abspath: str, argv: list[str]) -> Iterator[types.ModuleType]:
    """A fresh `__main__` module, `sys.argv` and `sys.path[0]` as `python SCRIPT ARGS` sets them."""
    module = types.ModuleType("__main__")
    module.__file__ = abspath
    module.__builtins__ = builtins
    module.__cached__ = None
    saved_main = sys.modules.get("__main__")
    saved_argv = sys.argv
    folder = os.path.dirname(abspath)
    sys.modules["__main__"] = module
    sys.argv = list(argv)
    sys.path.insert(0, folder)
    try:
        yield module
    finally:
        sys.argv = saved_argv
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        try:
            sys.path.remove(folder)
        except ValueError:
            pass


def _compile(path: str, abspath: str, report: Report):
    """The script's code object, or None with `report.failure` saying why it cannot run."""
    if not os.path.exists(abspath):
        report.failure = ScriptFailure("not-found", f"{path}: file not found")
        return None
    if os.path.isdir(abspath):
        report.failure = ScriptFailure("not-a-file", f"{path}: is a directory, not a script")
        return None
    try:
        with open(abspath, "rb") as handle:
            source = handle.read()
        return compile(source, abspath, "exec", dont_inherit=True)
    except SyntaxError as exc:
        line = exc.lineno
        location = None
        if line is not None:
            text = (exc.text or linecache.getline(abspath, line)).strip() or None
            location = Location(path, line, None, text)
        report.failure = ScriptFailure("syntax-error", f"syntax error: {exc.msg}", "SyntaxError", location)
    except (OSError, ValueError) as exc:  # unreadable, or null bytes
        report.failure = ScriptFailure("unreadable", f"{path}: cannot read the script: {exc}")
    return None


def _failure(exc: BaseException, sites: Sites) -> ScriptFailure:
    """The failure for an exception unrelated to autograd."""
    text = str(exc)
    message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return ScriptFailure(
        "exception", message, type(exc).__name__, raise_site(exc, sites), user_traceback(exc, sites)
    )
