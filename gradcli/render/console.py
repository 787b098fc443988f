"""The rich consoles every command prints through: plain text off a terminal, wide enough for tables.

User text (file names, messages, source lines) may contain [brackets], so markup, highlighting
and emoji codes are off. Off a terminal rich would wrap at 80 columns; tables get 120 unless
COLUMNS says otherwise.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import TextIO

from rich.console import Console

#: Width off a terminal when COLUMNS is not set.
PLAIN_WIDTH = 120


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """A reader that went away: rich would exit 1; gradcli.cli.stdout_guard exits 141."""
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


def make_console(stream: TextIO | None = None) -> Console:
    """A console on `stream` (default stdout); off a terminal: no colour, ASCII, PLAIN_WIDTH wide."""
    stream = stream if stream is not None else sys.stdout
    plain = dict(highlight=False, markup=False, emoji=False)
    console = _Console(file=stream, **plain)
    if not console.is_terminal and not os.environ.get("COLUMNS", "").strip().isdigit():
        console = _Console(file=stream, width=PLAIN_WIDTH, **plain)
    return console
