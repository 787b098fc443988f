"""A command's streams: stdout (guarded when it carries a document) and stderr's console, with
how the command ends turned into an exit code."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .exits import exit_codes
from .stdout_guard import command_stdout

if TYPE_CHECKING:  # rich only when a command writes
    from typing import TextIO

    from rich.console import Console


@contextmanager
def command_streams(
    debug: bool, *, document: bool, json_output: bool, usage: tuple[type[Exception], ...] = ()
) -> Iterator[tuple["TextIO", "Console"]]:
    """(stdout, stderr's console) for a command: stdout guarded when it carries a `document`
    (json, dot, svg, ...), and how the command ends turned into an exit code (with the error
    document when it is JSON)."""
    import sys

    from ..render.console import make_console

    err = make_console(sys.stderr)
    with (
        command_stdout(document) as stdout,
        exit_codes(err, debug, usage=usage, document=stdout if json_output else None),
    ):
        yield stdout, err
