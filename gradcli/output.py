"""Where a command's report or document goes: stdout, or the file given with `-o/--output`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console

from .exits import UsageError
from .render.console import make_console


@contextmanager
def output_console(path: str | None, stdout: Console) -> Iterator[Console]:
    """`stdout`, or a plain console writing to `path` (a file that cannot be written: exit 2)."""
    if path is None:
        yield stdout
        return
    try:
        handle = open(path, "w", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write --output {path}: {exc.strerror or exc}") from None
    with handle:
        yield make_console(handle)
