"""stdout for a command: one document that nothing the user's code does can reach, and `| head`.

With `--json` (or any document format) to stdout, stdout is a contract: exactly one document.
User code may print, write to `sys.__stdout__` or to file descriptor 1, start a subprocess, fork,
or register an atexit handler that prints after the command ended. So while the command runs,
fd 1 is a copy of fd 2 and `sys.stdout`/`sys.__stdout__` a stream of their own onto fd 2: all of
that lands on stderr at the OS level. The document goes to a saved copy of the original fd 1 (not
inheritable, swapped for /dev/null in forked children), closed once written, before any atexit
handler runs. Without a document the user's code also gets a stream of its own (onto fd 1): one
it may close (`sys.stdout.close()`) without closing the command's report.

A reader that went away (`gradcli check ... | head -1`) ends the command quietly with 141, as a
shell reports a process killed by SIGPIPE: the rest of the output goes to /dev/null (Python's
recipe), no "internal error", no traceback.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from typing import TextIO

from typer import Exit

from ..render.forked_children import keep_from_forked_children, release

#: 128 + SIGPIPE: what a shell reports for a writer whose reader closed the pipe.
EXIT_CLOSED_PIPE = 141


@contextmanager
def command_stdout(document: bool) -> Iterator[TextIO]:
    """The stream a command writes its output to; with `document`, the one document's own stream.

    A closed pipe, raised in the block or when the document is flushed, exits 141 quietly.
    """
    if not document:
        stream = sys.stdout
        try:
            if _file_descriptor(stream) == 1:
                with _stdout_of_its_own(1, stream):
                    yield stream
            else:
                yield stream
        except BrokenPipeError:
            raise _closed_pipe(stream) from None
        return
    if _file_descriptor(sys.stdout) != 1:  # streams of Python objects (a test's runner): no fds to move
        stream = sys.stdout
        try:
            with redirect_stdout(sys.stderr):
                yield stream
        except BrokenPipeError:
            raise _closed_pipe(stream) from None
        return
    with _fd1_to_stderr() as stream:
        try:
            yield stream
            stream.flush()
        except BrokenPipeError:
            raise _closed_pipe(stream) from None


@contextmanager
def _fd1_to_stderr() -> Iterator[TextIO]:
    """fd 1 becomes stderr for good; the yielded stream writes to where fd 1 went, until closed."""
    sys.stdout.flush()
    saved = os.dup(1)  # os.dup: not inherited by subprocesses
    os.dup2(2, 1)
    keep_from_forked_children(saved)
    stream = open(saved, "w", encoding="utf-8", closefd=True)  # noqa: SIM115 (closed below)
    try:
        with _stdout_of_its_own(2, sys.stderr):  # after it, fd 1 is stderr: late writers land there
            yield stream
    finally:
        release(saved)
        try:
            stream.close()
        except OSError:  # the reader went away: closed all the same
            pass


def _twin(fd: int, like: TextIO) -> TextIO:
    """A stream of its own onto `fd`, for user code to have as sys.stdout: closing it
    (`sys.stdout.close()`) leaves the command's streams open for the report and errors that follow.
    Unbuffered, so that what the user's code wrote comes before what the command writes after it."""
    return io.TextIOWrapper(
        io.FileIO(fd, "w", closefd=False),
        encoding=getattr(like, "encoding", None) or "utf-8",
        errors="backslashreplace",
        write_through=True,
    )


@contextmanager
def _stdout_of_its_own(fd: int, like: TextIO) -> Iterator[None]:
    """sys.stdout and sys.__stdout__ a twin on `fd` (see `_twin`) for the block."""
    before = sys.stdout, sys.__stdout__
    like.flush()
    sys.stdout = sys.__stdout__ = _twin(fd, like)
    try:
        yield
    finally:
        sys.stdout, sys.__stdout__ = before


def _file_descriptor(stream: TextIO) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _closed_pipe(stream: TextIO) -> Exit:
    """What is still to be written to `stream` goes to /dev/null; the exit that says why (141)."""
    fd = _file_descriptor(stream)
    if fd is not None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    return Exit(EXIT_CLOSED_PIPE)
