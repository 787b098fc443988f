"""Pieces every report's text is made of: an indented block, numbered source lines, and printing
that leaves no trailing blanks off a terminal."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rich.console import Console
from rich.table import Table


def print_block(console: Console, renderable: Any) -> None:
    """Print; off a terminal without the trailing blanks rich pads table rows with."""
    if console.is_terminal:
        console.print(renderable)
        return
    with console.capture() as captured:
        console.print(renderable)
    console.file.write("\n".join(line.rstrip() for line in captured.get().splitlines()) + "\n")


def numbered_source(source: list[str], first: int) -> Table:
    """Dedented source lines after `N |` gutters; a long line wraps under its code, never its number."""
    width = len(str(first + len(source)))
    indent = min((len(s) - len(s.lstrip()) for s in source if s.strip()), default=0)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for offset, text in enumerate(source):
        grid.add_row(f"{first + offset:>{width}} |", text[indent:])
    return grid


class Indented:
    """Render a renderable shifted right, so failure tables sit under their heading."""

    def __init__(self, renderable: Any, by: int = 4):
        self.renderable, self.by = renderable, by

    def __rich_console__(self, console: Console, options: Any) -> Iterator[Any]:
        from rich.padding import Padding

        yield Padding(self.renderable, (0, 0, 0, self.by), expand=False)
