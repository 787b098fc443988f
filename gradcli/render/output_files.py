"""The files a command writes besides stdout (`-o`, `--junitxml`, `--dump`, `--plot`'s PNGs, graph
images): never one of its inputs, never two on one path, and each written whole or not at all.

`written(path, flag)` writes a temporary file beside `path` and renames it over `path` only when
the block ends without an exception, so an error (or Ctrl-C) leaves the old file, or none, never
half a file. A path that is not a regular file (`/dev/null`, `/dev/full`, a FIFO, a terminal) is
written in place: it cannot be renamed over. A link is followed: the file it points at is
replaced, the link stays. A child that the user's code forked gets the temporary file as
/dev/null and never renames it: only the process that opened it writes the result.

`refuse_clashes` is asked before user code runs: an output path that is an input (the files the
command runs and the pyproject.toml they read) or the path of another output is a usage error.
"""

from __future__ import annotations

import io
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO

from .error import UsageError
from .forked_children import keep_from_forked_children, release


def cannot_write(flag: str, path: str, exc: OSError) -> UsageError:
    return UsageError(f"cannot write {flag} {path}: {exc.strerror or exc}")


class _Destination:
    """Where the bytes go: a temporary file renamed over the target on `commit`, or a special
    file written in place."""

    def __init__(self, path: str, flag: str):
        self.owner = os.getpid()
        self.temporary: str | None = None
        try:
            target = _replaceable(path)
            if target is None:
                self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0))
                return
            folder, name = os.path.split(target)
            self.fd, self.temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
            self.target = target
            os.chmod(self.temporary, _mode_for(target))
        except OSError as exc:
            raise cannot_write(flag, path, exc) from None
        keep_from_forked_children(self.fd)  # a forked child writes to /dev/null instead

    def commit(self) -> None:
        if self.temporary is not None and os.getpid() == self.owner:
            release(self.fd)
            os.replace(self.temporary, self.target)

    def discard(self) -> None:
        release(self.fd)
        if self.temporary is not None and os.getpid() == self.owner:
            try:
                os.unlink(self.temporary)
            except OSError:
                pass


def _replaceable(path: str) -> str | None:
    """The regular file `path` names (links followed), to be replaced; None for a special file."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # a new file (a dangling link: the file it names), or unreachable: mkstemp says why
        return os.path.realpath(path)
    return os.path.realpath(path) if stat.S_ISREG(mode) else None


def _mode_for(target: str) -> int:
    """The permissions `open(target, "w")` would leave: the old file's, or the umask's for a new one."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


class _NamedErrors:
    """A write, flush or close that fails (a full disk, /dev/full) is a UsageError naming the path."""

    flag: str
    path: str

    def write(self, data):  # noqa: ANN001, ANN201 - str or bytes, as the stream takes
        try:
            return super().write(data)
        except OSError as exc:
            raise cannot_write(self.flag, self.path, exc) from None

    def flush(self) -> None:
        try:
            super().flush()
        except OSError as exc:
            raise cannot_write(self.flag, self.path, exc) from None

    def close(self) -> None:
        try:
            super().close()
        except OSError as exc:
            raise cannot_write(self.flag, self.path, exc) from None

    def close_quietly(self) -> None:
        """Closed after an error: what it could not write no longer matters."""
        try:
            super().close()
        except OSError:
            pass


class _TextFile(_NamedErrors, io.TextIOWrapper):
    """UTF-8; a path or name that was not UTF-8 (read with surrogateescape) is written back as its bytes."""


class _BinaryFile(_NamedErrors, io.BufferedWriter):
    """Bytes: an image, an .npz, a PNG."""


@contextmanager
def written(path: str, flag: str, *, text: bool = False) -> Iterator[IO]:
    """`path` opened for writing (`flag` names it in errors), in place only when the block ends
    without an exception. Failing to open, write or replace it is a UsageError naming it."""
    destination = _Destination(path, flag)
    binary = _BinaryFile(io.FileIO(destination.fd, "wb", closefd=True))
    handle = _TextFile(binary, encoding="utf-8", errors="surrogateescape") if text else binary
    for stream in {binary, handle}:
        stream.flag, stream.path = flag, path
    try:
        yield handle
    except BaseException:
        destination.discard()
        handle.close_quietly()
        raise
    handle.close()
    try:
        destination.commit()
    except OSError as exc:
        destination.discard()
        raise cannot_write(flag, path, exc) from None


def _identity(path: str) -> tuple[int, int] | str | None:
    """What a path names: the file's device and inode when it exists, else its resolved path;
    None for a special file (`/dev/null`), which any number of outputs may share."""
    try:
        found = os.stat(path)
    except OSError:
        return os.path.realpath(path)
    if not (stat.S_ISREG(found.st_mode) or stat.S_ISDIR(found.st_mode)):
        return None
    return (found.st_dev, found.st_ino)


def names_stdout(path: str) -> bool:
    """Whether `path` is the file stdout writes to now (`/dev/stdout`, or the file it is redirected to)."""
    try:
        return os.path.samestat(os.stat(path), os.fstat(1))
    except OSError:
        return False


def refuse_clashes(outputs: dict[str, str | None], inputs: Iterable[str] = ()) -> None:
    """UsageError, before anything runs, when an output (flag -> path) is one of the `inputs` or
    when two outputs name one path (links and relative paths resolved)."""
    given = {flag: path for flag, path in outputs.items() if path is not None}
    taken: dict[tuple[int, int] | str, str] = {}
    for flag, path in given.items():
        identity = _identity(path)
        other = flag if identity is None else taken.setdefault(identity, flag)
        if other != flag:
            raise UsageError(
                f"{other} {given[other]} and {flag} {path} are the same file: each output needs its own path"
            )
    for source in inputs:
        flag = taken.get(_identity(source))
        if flag is not None:
            raise UsageError(
                f"{flag} {given[flag]} is {source}, an input of this run: writing it would destroy it; "
                "give another path"
            )
