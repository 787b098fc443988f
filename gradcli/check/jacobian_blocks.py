"""A failing pair's |analytical - numerical| reduced to a grid of blocks, each its largest error.

The terminal heatmap needs no more than this grid, so a run without --dump or --plot keeps
the grid and drops the full Jacobians of a pair too big to draw cell by cell: the memory a
run holds per failing pair is then bounded by the grid (MAX_ROWS x MAX_COLUMNS), not by the
Jacobian's output x input entries. numpy only: checking imports it, rich stays unloaded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy

#: The largest Jacobian drawn in the terminal cell by cell (input entries across, output entries down).
MAX_COLUMNS, MAX_ROWS = 40, 20


@dataclass(frozen=True)
class BlockGrid:
    """`difference[i, j]`: the largest |analytical - numerical| in block (i, j), NaN if any is NaN;
    `failing[i, j]`: whether any entry of the block is outside the tolerance; `block`: (R, C)."""

    difference: numpy.ndarray
    failing: numpy.ndarray
    block: tuple[int, int]


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


def block_grid(numerical: numpy.ndarray, analytical: numpy.ndarray, *, rtol: float, atol: float) -> BlockGrid:
    """The terminal heatmap's grid of one pair (see BlockGrid)."""
    block = block_shape(numerical.shape)
    with numpy.errstate(invalid="ignore"):
        difference = block_max(numpy.abs(analytical - numerical), block)
    failing = block_max(~numpy.isclose(analytical, numerical, rtol=rtol, atol=atol), block)
    return BlockGrid(difference, failing, block)
