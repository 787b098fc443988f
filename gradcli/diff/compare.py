"""One diff item run and compared: both sides recorded on the same values, then the findings."""

from __future__ import annotations

from collections.abc import Callable

import numpy

from ..program.running import LoadError
from ..program.sites import Sites, raise_site
from .comparison import aligned, compared_row, first_backward, first_forward, gradient_rows
from .loading import DiffItem
from .recording import record
from .results import PairResult, default_tolerance


def cotangents(seed: int) -> Callable[[list[tuple[int, ...]]], list[numpy.ndarray]]:
    """The gradients the outputs' backward starts from, the same on both sides: 1 for a scalar,
    else standard normal draws of a generator of its own (`seed`), so that a sum cannot hide an error."""

    def chosen(shapes: list[tuple[int, ...]]) -> list[numpy.ndarray]:
        draws = numpy.random.default_rng(seed)
        return [numpy.array(1.0) if not shape else draws.standard_normal(shape) for shape in shapes]

    return chosen


def compare(item: DiffItem, *, seed: int, rtol: float | None, atol: float | None) -> PairResult:
    """Both sides of `item` recorded and compared; a side that raises is the result's error."""
    loaded = item.file
    sites = Sites(loaded.abspath, loaded.path)
    dtypes = (item.reference.dtype_label(), item.candidate.dtype_label())
    default_rtol, default_atol = default_tolerance(*dtypes)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    result = PairResult(item.name, loaded.path, *item.labels, rtol, atol, dtypes)
    recordings = []
    for label, side in zip(item.labels, (item.reference, item.candidate)):
        side.library.seed(seed)
        try:
            recordings.append(record(side, cotangents(seed), sites))
        except KeyboardInterrupt:
            raise
        except LoadError as exc:
            result.error = f"{label}: {exc.headline}"
            return result
        except BaseException as exc:  # the user's code may raise anything
            where = raise_site(exc, sites)
            at = f" ({where.where}: {where.source})" if where else ""
            result.error = f"{label} raised {type(exc).__name__}: {exc}{at}"
            return result
    reference, candidate = recordings
    pairs, result.structure = aligned(reference.nodes, candidate.nodes)
    result.nodes = (len(reference.nodes), len(candidate.nodes))
    result.gradients = gradient_rows(reference, candidate, rtol, atol)
    result.output = _output_row(reference.output, candidate.output, rtol, atol)
    if result.differs:  # where the answers agree, inner differences are the alignment's, not the code's
        result.forward = first_forward(reference, candidate, pairs, rtol, atol)
        result.backward = first_backward(reference, candidate, pairs, rtol, atol)
    return result


def _output_row(reference: list, candidate: list, rtol: float, atol: float):
    if len(reference) != len(candidate):
        return compared_row("output", reference[0] if reference else None, None, rtol, atol)
    rows = [compared_row("output", a, b, rtol, atol) for a, b in zip(reference, candidate)]
    return next((r for r in rows if r.status != "agree"), rows[0] if rows else None)
