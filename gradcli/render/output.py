"""Where a command's report or document goes: stdout, or the file given with `-o/--output`."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console

from .console import make_console
from .error import UsageError


class _OutputFile(io.TextIOWrapper):
    """The -o file: a write that fails (a full disk, /dev/full) is a usage error naming it."""

    def __init__(self, path: str):
        super().__init__(open(path, "wb"), encoding="utf-8")  # noqa: SIM115 (closed with self)
        self.path = path

    def write(self, text: str) -> int:
        with self._named():
            return super().write(text)

    def flush(self) -> None:
        with self._named():
            super().flush()

    def close(self) -> None:
        with self._named():
            super().close()

    @contextmanager
    def _named(self) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            raise _cannot_write(self.path, exc) from None


def _cannot_write(path: str, exc: OSError) -> UsageError:
    return UsageError(f"cannot write --output {path}: {exc.strerror or exc}")


def output_file(path: str) -> TextIO:
    """`path` opened for writing text; failing to open or to write it is a UsageError naming it."""
    try:
        return _OutputFile(path)
    except OSError as exc:
        raise _cannot_write(path, exc) from None


@contextmanager
def output_console(path: str | None, stdout: Console) -> Iterator[Console]:
    """`stdout`, or a plain console writing to `path` (a file that cannot be written: exit 2)."""
    if path is None:
        yield stdout
        return
    with output_file(path) as handle:
        yield make_console(handle)
