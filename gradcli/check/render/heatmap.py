"""|analytical - numerical| of a failing pair as a grid of shaded cells, for the terminal.

A wrong gradient that is transposed, shifted by one or missing a factor leaves a pattern in
this grid that a list of the worst entries hides. Rows are output entries and columns input
entries, both in row-major order (the Jacobian's own layout). On a terminal a cell is a
coloured block; off one it is a character from a ramp, darkest for the largest error.
A Jacobian larger than 20 x 40 is drawn in blocks (gradcli/jacobian_blocks.py): each cell is
the largest error of an R x C block, so a band or a stripe still shows, only coarser.
"""

from __future__ import annotations

import math

import numpy
from rich.color import Color
from rich.style import Style
from rich.table import Table
from rich.text import Text

#: Off a terminal: one character per level, from no error to the largest.
RAMP = ".:-=+*#%@"


def levels(difference: numpy.ndarray, failing: numpy.ndarray) -> numpy.ndarray:
    """Each entry's level 0 .. len(RAMP) - 1, scaled to the largest finite error (NaN, inf: top).

    Level 0 is exactly the entries within tolerance (`failing` False), so rounding noise
    stays blank and the smallest real mismatch still shows."""
    top = len(RAMP) - 1
    finite = numpy.isfinite(difference)
    largest = float(difference[finite].max()) if finite.any() else 0.0
    if largest <= 0.0:
        scaled = numpy.zeros(difference.shape)
    else:
        scaled = numpy.ceil(numpy.where(finite, difference, 0.0) / largest * top)
    scaled = numpy.where(finite, numpy.clip(scaled, 1, top), top)
    return numpy.where(failing, scaled, 0).astype(int)


def heatmap(
    difference: numpy.ndarray, failing: numpy.ndarray, row_labels: list[str], *, terminal: bool
) -> Table:
    """The grid: a label per row (the output entry), then one cell per input entry."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="dim", no_wrap=True, justify="right")
    grid.add_column(no_wrap=True)
    for label, row in zip(row_labels, levels(difference, failing)):
        cells = Text()
        for level in row:
            if terminal:
                cells.append("█", _shade(int(level)))
            else:
                cells.append(RAMP[int(level)])
        grid.add_row(label, cells)
    return grid


def _shade(level: int) -> Style:
    """Dark grey for no error, through yellow to red for the largest."""
    if level == 0:
        return Style(color=Color.from_rgb(60, 60, 60))
    fraction = level / (len(RAMP) - 1)
    green = int(220 * (1 - fraction) + 30 * fraction)
    return Style(color=Color.from_rgb(240, green, 40))


def legend(input_name: str, largest: float, *, terminal: bool, block: tuple = (1, 1)) -> str:
    """What the rows, columns and shades mean."""
    top = "nan" if math.isnan(largest) else f"{largest:.2e}"
    scale = (
        f"grey within tolerance, then darker to red at {top}"
        if terminal
        else f"{RAMP[0]} within tolerance, then {RAMP[1]} to {RAMP[-1]} at {top}"
    )
    if block == (1, 1):
        return f"|analytical - numerical|, a column per entry of {input_name} (row-major): {scale}"
    r, c = block
    return (
        f"|analytical - numerical| of {input_name} (row-major), each cell is a {r} x {c} block "
        f"(output x input entries, its largest error): {scale}"
    )
