"""|analytical - numerical| of a failing pair as a grid of shaded cells, for the terminal.

A wrong gradient that is transposed, shifted by one or missing a factor leaves a pattern in
this grid that a list of the worst entries hides. Rows are output entries and columns input
entries, both in row-major order (the Jacobian's own layout). On a terminal a cell is a
coloured block; off one it is a character from a ramp, darkest for the largest error.
A Jacobian larger than MAX_ROWS x MAX_COLUMNS is drawn in blocks (`block_max`): each cell is
the largest error of an R x C block, so a band or a stripe still shows, only coarser.
"""

from __future__ import annotations

import math

import numpy
from rich.color import Color
from rich.style import Style
from rich.table import Table
from rich.text import Text

#: The largest Jacobian drawn in the terminal (input entries across, output entries down).
MAX_COLUMNS, MAX_ROWS = 40, 20
#: Off a terminal: one character per level, from no error to the largest.
RAMP = ".:-=+*#%@"


def fits(jacobian_shape: tuple) -> bool:
    """Whether a Jacobian is small enough to draw cell by cell."""
    rows, columns = jacobian_shape
    return 0 < rows <= MAX_ROWS and 0 < columns <= MAX_COLUMNS


def block_shape(jacobian_shape: tuple, max_rows: int = MAX_ROWS, max_columns: int = MAX_COLUMNS) -> tuple:
    """The smallest R x C block that brings the Jacobian within max_rows x max_columns cells."""
    rows, columns = jacobian_shape
    return max(1, math.ceil(rows / max_rows)), max(1, math.ceil(columns / max_columns))


def block_max(values: numpy.ndarray, block: tuple) -> numpy.ndarray:
    """Each R x C block's largest value (NaN if any is NaN; padding at the edges counts as 0 / False)."""
    r, c = block
    if (r, c) == (1, 1):
        return values
    rows, columns = values.shape
    padded = numpy.pad(values, ((0, -rows % r), (0, -columns % c)))
    return padded.reshape(padded.shape[0] // r, r, padded.shape[1] // c, c).max(axis=(1, 3))


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
