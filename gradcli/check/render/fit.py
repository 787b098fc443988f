"""Tables that fit the console: columns dropped by priority until rich lays the rest out uncut.

rich shrinks a table that is too wide by wrapping its wrappable columns and, as a last resort,
by cutting every column evenly, numbers included (`1.33e…`). Numbers here are `no_wrap` cells
that rich may only cut, never wrap; so a table is built with all its columns, laid out by rich
at the console's width, and rebuilt without the least useful column while any cell came out cut.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text

#: What rich puts where it cut a cell.
ELLIPSIS = "…"


def number(text: str, style: str = "") -> Text:
    """A cell rich must never wrap: a number, an index, a verdict."""
    return Text(text, style=style, no_wrap=True, overflow="ellipsis")


def fitted(
    console: Console,
    build: Callable[[frozenset[str]], Any],
    drop_order: Sequence[str],
    indent: int = 0,
) -> Any:
    """`build(dropped)` with the fewest columns dropped (in `drop_order`) that renders uncut.

    `indent` is what the caller will pad the renderable with. With every droppable column gone
    and still cut, the last build is returned: the console is narrower than the essentials.
    """
    dropped: list[str] = []
    width = max(console.width - indent, 1)
    for name in [None, *drop_order]:
        if name is not None:
            dropped.append(name)
        renderable = build(frozenset(dropped))
        lines = console.render_lines(renderable, console.options.update(width=width), pad=False)
        if not _cut(lines, width):
            return LaidOut(renderable, lines, width)
    return renderable


def _cut(lines: list[list[Segment]], width: int) -> bool:
    """Whether rich, laying a renderable out `width` wide as `lines`, cut a cell or overran the width."""
    return any(ELLIPSIS in "".join(s.text for s in line) or _length(line) > width for line in lines)


class LaidOut:
    """A renderable with the lines rich laid it out in while `fitted` measured it, printed as they
    are (a report's tables are not laid out twice); at another width it is laid out afresh."""

    def __init__(self, renderable: Any, lines: list[list[Segment]], width: int):
        self.renderable, self.lines, self.width = renderable, lines, width
        self.longest = max((_length(line) for line in lines), default=0)

    def _same_layout(self, options: ConsoleOptions) -> bool:
        # A table no wider than the room it is given lays out the same in any room up to `width`.
        return self.longest <= options.max_width <= self.width

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        if self._same_layout(options):
            return Measurement(self.longest, self.longest)
        return Measurement.get(console, options, self.renderable)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not self._same_layout(options):
            yield self.renderable
            return
        newline = Segment.line()
        for line in self.lines:
            yield from line
            yield newline


def _length(line: list[Any]) -> int:
    return sum(len(segment.text) for segment in line)


class Name:
    """A name that wraps after `.`, `_`, `,` and before `[` or `(` (`swish_` / `second_order`),
    where rich would fold it anywhere; a piece longer than the width is still folded."""

    BREAKS = re.compile(r"[\[(]?[^._,\[( ]*[._, ]*")

    def __init__(self, text: str, style: str = ""):
        self.text, self.style = text, style

    def pieces(self) -> list[str]:
        return [piece for piece in self.BREAKS.findall(self.text) if piece] or [self.text]

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(max(len(piece.rstrip()) for piece in self.pieces()), len(self.text))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = [""]
        for piece in self.pieces():
            if lines[-1] and len(lines[-1]) + len(piece) > options.max_width:
                lines.append("")
            lines[-1] += piece
        yield Text("\n".join(line.rstrip() for line in lines), style=self.style, overflow="fold")

    def __str__(self) -> str:
        return self.text
