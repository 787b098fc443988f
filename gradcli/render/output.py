"""Where a command's report or document goes: stdout, or the file given with `-o/--output`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TextIO

from rich.console import Console

from .console import make_console
from .output_files import written


def output_file(path: str) -> AbstractContextManager[TextIO]:
    """`path` to write text to, whole when the block ends without an error (`output_files.written`);
    failing to open or to write it is a UsageError naming it."""
    return written(path, "--output", text=True)


@contextmanager
def output_console(path: str | None, stdout: Console) -> Iterator[Console]:
    """`stdout`, or a plain console writing to `path` (a file that cannot be written: exit 2)."""
    if path is None:
        yield stdout
        return
    with output_file(path) as handle:
        yield make_console(handle)
