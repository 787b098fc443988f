"""What `gradcli anomaly` does per op, kept small: each gradient read once for NaN/Inf, no copy
of a transposed array to check it, and creation traces that stop at gradcli's own frame.
(scripts/bench_anomaly.py measures the time; docs/performance.md has the figures.)"""

from __future__ import annotations

import sys
import tracemalloc

import numpy

import engine
from engine.autograd import anomaly
from gradcli.anomaly import stats
from gradcli.anomaly.instrument import Instrument, instrumented
from gradcli.program.sites import Sites


def allocated_while(check, array) -> int:
    """Peak bytes numpy allocated while `check(array)` ran."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        check(array)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_transposed_array_is_checked_without_a_copy():
    transposed = numpy.ones((1000, 500)).T  # 4 MB, not C-contiguous
    for check in (stats.finite_fast, anomaly.has_nan):
        assert allocated_while(check, transposed) < 100_000, check.__name__
    assert stats.finite_fast(transposed) and not anomaly.has_nan(transposed)
    transposed[3, 7] = numpy.nan
    assert not stats.finite_fast(transposed) and anomaly.has_nan(transposed)


def test_each_gradient_is_read_once_for_nan_and_inf(monkeypatch):
    """The instrument's finiteness check covers torch's NaN check: the engine skips its own."""
    reads = []
    monkeypatch.setattr(anomaly, "has_nan", lambda data: reads.append(data) or False)
    x = engine.ones(3, requires_grad=True)
    with instrumented(Instrument(Sites(__file__, __file__), check_forward=True)):
        (x.exp() * 2).sum().backward()
    assert reads == [] and numpy.allclose(x.grad.numpy(), 2 * numpy.e)


def run_instrumented(make):
    """`make()` under gradcli's instrument, entered here: gradcli's frame, as the runner's is."""
    with instrumented(Instrument(Sites(__file__, __file__))):
        return make()


def test_traces_stop_at_the_frame_that_runs_the_users_code():
    def users_code():
        x = engine.ones(2, requires_grad=True)
        return x * 2

    y = run_instrumented(users_code)
    names = [code.co_name for code, _ in y.grad_fn._trace]
    assert names == ["users_code"]
    assert sys._getframe().f_code.co_name not in names
