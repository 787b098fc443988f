"""Running a user's file as `python FILE` would: compiled from its bytes, its folder first on
sys.path, engine seeded and on the chosen device.

`gradcli check` and `gradcli graph` run a file as a fresh module (`gradcli.check.loading`),
`gradcli anomaly` runs a script as `__main__` with its own argv (`gradcli.anomaly.runner`);
both go through here. A file that cannot be run, or user code that raises, becomes a
`LoadError` naming the file and the line.
"""

from __future__ import annotations

import builtins
import importlib.util
import os
import stat
import sys
import traceback
import types
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from ..libraries import LIBRARIES, TORCH_MISSING, for_files, is_missing_torch
from .exception_text import exception_text, message_of
from .source_tree import imported_modules


class LoadError(Exception):
    """A user file that cannot be checked (exit code 2): what went wrong, where, and the cause."""

    def __init__(
        self,
        message: str,
        file: str | None,
        line: int | None = None,
        source_line: str | None = None,
        cause: BaseException | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.source_line = source_line
        self.cause = cause

    @property
    def location(self) -> str:
        if self.file is None:
            return ""
        return self.file if self.line is None else f"{self.file}:{self.line}"

    @property
    def headline(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message

    @property
    def source_text(self) -> str | None:
        """The offending line, numbered, as shown under the headline."""
        if not self.source_line:
            return None
        return f"    {self.line} | {self.source_line.strip()}"

    def __str__(self) -> str:
        return self.headline + (f"\n{self.source_text}" if self.source_text else "")

    def traceback_text(self) -> str | None:
        """The full traceback of the cause, for --debug."""
        if self.cause is None:
            return None
        return "".join(traceback.format_exception(type(self.cause), self.cause, self.cause.__traceback__))


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while user code ran (exit 130); `where` says what it interrupted."""

    def __init__(self, where: str):
        super().__init__(where)
        self.where = where


def interrupted(where: str, exc: KeyboardInterrupt) -> Interrupted:
    """The KeyboardInterrupt to raise: the innermost `where` wins (a case inside a file)."""
    return exc if isinstance(exc, Interrupted) else Interrupted(where)


class CannotRun(LoadError):
    """The file cannot even be compiled; `reason` is one of "not-found", "not-a-file",
    "unreadable", "syntax-error", "too-complex" (the anomaly schema's failure reasons)."""

    def __init__(
        self,
        reason: str,
        message: str,
        file: str,
        line: int | None = None,
        source_line: str | None = None,
        cause: BaseException | None = None,
    ):
        super().__init__(message, file, line, source_line, cause)
        self.reason = reason


@dataclass
class UserFile:
    """A compiled user file: the path as given, its absolute path, its code and source lines."""

    path: str
    abspath: str
    code: types.CodeType
    source: str

    @property
    def lines(self) -> list[str]:
        return self.source.splitlines()


def compile_file(path: str, kind: str) -> UserFile:
    """Read and compile `path` as Python does (bytes, so a BOM or coding declaration is honoured);
    CannotRun says why not. `kind` names what the file should be ("check file", "script").

    Only a regular file is read (a FIFO or /dev/zero would be read forever), and one with null
    bytes is binary, not Python. A file too deep for the compiler is a file that cannot run.
    """
    abspath = os.path.abspath(path)
    try:
        mode = os.stat(abspath).st_mode
    except FileNotFoundError:
        raise CannotRun("not-found", "file not found", path) from None
    except OSError as exc:
        raise CannotRun("unreadable", f"cannot read the {kind}: {exc}", path, cause=exc) from None
    if not stat.S_ISREG(mode):
        what = "a directory" if stat.S_ISDIR(mode) else _special_file(mode)
        raise CannotRun("not-a-file", f"not a regular Python file ({what})", path)
    try:
        with open(abspath, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise CannotRun("unreadable", f"cannot read the {kind}: {exc}", path, cause=exc) from None
    if b"\0" in data:
        raise CannotRun("not-a-file", "not a regular Python file (binary: it contains null bytes)", path)
    try:
        code = compile(data, abspath, "exec", dont_inherit=True)
    except SyntaxError as exc:
        lines = _decode(data).splitlines()
        line = exc.lineno
        text = exc.text or (lines[line - 1] if line and line <= len(lines) else None)
        raise CannotRun(
            "syntax-error", f"syntax error: {exc.msg}", path, line, source_line=text, cause=exc
        ) from None
    except (RecursionError, MemoryError) as exc:  # nested or chained too deeply for the compiler
        raise CannotRun(
            "too-complex", f"Python cannot compile it: {exception_text(exc)}", path, cause=exc
        ) from None
    except ValueError as exc:
        raise CannotRun("unreadable", f"cannot read the {kind}: {message_of(exc)}", path, cause=exc) from None
    return UserFile(path, abspath, code, _decode(data))


def _special_file(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "not a file"


def _decode(data: bytes) -> str:
    """The source text as the compiler read it (its coding declaration, universal newlines)."""
    try:
        return importlib.util.decode_source(data)
    except (SyntaxError, UnicodeDecodeError):  # a bad declaration or bytes: compile says so
        return data.decode("utf-8", "replace")


def file_module(name: str, abspath: str) -> types.ModuleType:
    """A fresh module `name` for the file (with the spec an import would give a .py file)."""
    spec = importlib.util.spec_from_file_location(name, abspath)
    if spec is not None:
        return importlib.util.module_from_spec(spec)
    module = types.ModuleType(name)  # not a .py name: still plain Python
    module.__file__ = abspath
    return module


@contextmanager
def main_module(abspath: str) -> Iterator[types.ModuleType]:
    """A fresh `__main__` module for the file, in sys.modules for the block."""
    module = types.ModuleType("__main__")
    module.__file__ = abspath
    module.__builtins__ = builtins
    module.__cached__ = None
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        yield module
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


#: gradcli's own package: its frames are never the user's (see `running`).
GRADCLI_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@contextmanager
def running(user: UserFile, *, seed: int | None, argv: list[str] | None = None) -> Iterator[None]:
    """For the block: the file's folder first on sys.path, `argv` as sys.argv (when given) and
    engine seeded with `seed` (unless None), as `python FILE ARGS` would have them; torch too,
    as soon as the file imports it.

    Before any user code runs, gradcli's folder is registered with the engine's rule for the
    user's frames (`engine.autograd.anomaly.is_internal_file`), which every part of gradcli
    asks; here rather than at import, so that `gradcli --help` does not import the engine.
    """
    from engine.autograd import anomaly

    anomaly.register_internal_root(GRADCLI_DIR)
    folder = os.path.dirname(user.abspath)
    saved_argv = sys.argv
    if argv is not None:
        sys.argv = list(argv)
    sys.path.insert(0, folder)
    try:
        if seed is None:
            yield
        else:
            with ExitStack() as seeded:
                for library in LIBRARIES:
                    seeded.enter_context(library.seeded(seed))
                yield
    finally:
        sys.argv = saved_argv
        try:
            sys.path.remove(folder)
        except ValueError:
            pass


@contextmanager
def using_device(device: str, paths: list[str] = ()) -> Iterator[None]:
    """Make `device` the default device for the block, of the libraries `paths` use (engine when
    they name none) and of torch once imported.

    `paths` are the files to run: when they import torch and not engine, engine's device is
    left alone (CuPy need not be installed to run torch on CUDA). Raises
    engine.backend.CudaUnavailable when the device cannot be had.
    """
    imported = set().union(*(imported_modules(_text_of(p)) for p in paths)) if paths else set()
    used = for_files(imported)
    with ExitStack() as devices:
        for library in reversed(LIBRARIES):  # torch's check first: its message names torch
            devices.enter_context(library.on_device(device, library in used))
        yield


def _text_of(path: str) -> str:
    """A file's text for a first look at its imports ("" when unreadable: compile_file says why)."""
    if not os.path.isfile(path):  # never read a FIFO or a device
        return ""
    try:
        with open(path, "rb") as handle:
            return _decode(handle.read())
    except OSError:
        return ""


def user_error(
    what: str, exc: BaseException, path: str, abspath: str, lines: list[str], *, message: str | None = None
) -> LoadError:
    """A LoadError at the innermost frame of the traceback that lies in the user's file (`message`:
    what it says, instead of `what` and the exception)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != abspath:
        tb = tb.tb_next  # drop gradcli's own frames from what --debug shows
    if tb is not None:
        exc.__traceback__ = tb
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == abspath:
            line = frame.lineno
    text = lines[line - 1] if line and line <= len(lines) else None
    if is_missing_torch(exc):
        return LoadError(TORCH_MISSING, path, line, text, exc)
    return LoadError(message or f"{what}: {exception_text(exc)}", path, line, text, exc)
