"""A failure's lost gradients, for people: the inputs that get none, and where each was cut.

Printed under a failed case by `check.print_failures` (so also in JUnit and pytest reports):

    gradient lost:
      - x gets no gradient at all: its analytical gradient is zero or missing, its numerical one is not
      - x's gradient is cut at cut.py:13: `.detach().numpy()` (the value leaves the graph; ...)
          13 | y = engine.tensor(x.detach().numpy() ** 2)
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...render.text_blocks import Indented, numbered_source, print_block
from ..replay.graph_cuts import no_gradient_text
from ..results import CaseResult


def print_lost_gradients(console: Console, result: CaseResult) -> None:
    """The `gradient lost:` block of a failed case, if it has anything to say."""
    if not result.no_gradient and not result.graph_cuts:
        return
    console.print("  gradient lost:")
    items = Table.grid(padding=(0, 1))  # a hanging indent: wrapped lines stay under the text
    items.add_column(no_wrap=True)
    items.add_column(ratio=1)
    for name in result.no_gradient:
        items.add_row("-", Text(no_gradient_text(name)))
    for cut in result.graph_cuts:
        items.add_row("-", Text(cut.describe()))
        if cut.source:
            items.add_row("", Indented(numbered_source([cut.source], cut.line), by=2))
    print_block(console, Indented(items, by=4))
