"""stdout for a command: one document that nothing the user's code does can reach, and `| head`.

With `--json` (or any document format) to stdout, stdout is a contract: exactly one document.
User code may print, write to `sys.__stdout__` or to file descriptor 1, start a subprocess, fork,
or register an atexit handler that prints after the command ended. So while the command runs,
fd 1 is a copy of fd 2 and `sys.stdout`/`sys.__stdout__` are `sys.stderr`: all of that lands on
stderr at the OS level. The document goes to a saved copy of the original fd 1 (not inheritable,
swapped for /dev/null in forked children), closed once written, before any atexit handler runs.

A reader that went away (`gradcli check ... | head -1`) ends the command quietly with 141, as a
shell reports a process killed by SIGPIPE: the rest of the output goes to /dev/null (Python's
recipe), no "internal error", no traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from typing import TextIO

from typer import Exit

#: 128 + SIGPIPE: what a shell reports for a writer whose reader closed the pipe.
EXIT_CLOSED_PIPE = 141

_saved_fds: set[int] = set()  # the document descriptors open now, for forked children to drop


@contextmanager
def command_stdout(document: bool) -> Iterator[TextIO]:
    """The stream a command writes its output to; with `document`, the one document's own stream.

    A closed pipe, raised in the block or when the document is flushed, exits 141 quietly.
    """
    if not document:
        try:
            yield sys.stdout
        except BrokenPipeError:
            raise _closed_pipe(sys.stdout) from None
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
    _saved_fds.add(saved)
    stream = open(saved, "w", encoding="utf-8", closefd=True)  # noqa: SIM115 (closed below)
    before = sys.stdout, sys.__stdout__
    sys.stdout = sys.__stdout__ = sys.stderr
    try:
        yield stream
    finally:
        sys.stdout, sys.__stdout__ = before  # their fd 1 is stderr now: late writers land there
        _saved_fds.discard(saved)
        try:
            stream.close()
        except OSError:  # the reader went away: closed all the same
            pass


def _drop_in_child() -> None:
    """A forked child that goes on running must not write into the parent's document."""
    if not _saved_fds:
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in _saved_fds:
        os.dup2(devnull, fd, inheritable=False)
    os.close(devnull)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_in_child)


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
