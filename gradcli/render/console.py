"""The rich consoles every command prints through: plain text off a terminal, wide enough for tables.

User text (file names, messages, source lines) may contain [brackets], so markup, highlighting
and emoji codes are off. Off a terminal rich would wrap at 80 columns; tables get 120 unless
COLUMNS says otherwise.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from rich.console import Console

#: Width off a terminal when COLUMNS is not set.
PLAIN_WIDTH = 120


def make_console(stream: TextIO | None = None) -> Console:
    """A console on `stream` (default stdout); off a terminal: no colour, ASCII, PLAIN_WIDTH wide."""
    stream = stream if stream is not None else sys.stdout
    plain = dict(highlight=False, markup=False, emoji=False)
    console = Console(file=stream, **plain)
    if not console.is_terminal and not os.environ.get("COLUMNS", "").strip().isdigit():
        console = Console(file=stream, width=PLAIN_WIDTH, **plain)
    return console


def consoles() -> tuple[Console, Console]:
    """stdout's and stderr's consoles, made when a command starts (tests swap the streams per call)."""
    return make_console(sys.stdout), make_console(sys.stderr)
