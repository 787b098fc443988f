"""autograd.profiler: every op and backward node timed while a profile runs, torch's table and
summaries, and nothing left on the op path once it ends."""

import re
import warnings

import pytest

import engine
from engine.autograd import profiler
from engine.ops.op import ROWS


def _by_key(events) -> dict:
    return {e.key: e for e in events}


def test_ops_backward_nodes_and_ranges_are_rows():
    x = engine.randn(16, 16, requires_grad=True)
    with profiler.profile() as prof:
        with profiler.record_function("block"):
            y = (x @ x).sin() + x
        y.sum().backward()
    rows = _by_key(prof.key_averages())
    assert {"aten::mm", "aten::sin", "aten::add", "aten::sum", "block", "MmBackward0", "SinBackward0"} <= set(
        rows
    )
    assert rows["engine::autograd::AccumulateGrad"].count == 1
    block = rows["block"]
    inside = sum(rows[k].cpu_time_total for k in ("aten::mm", "aten::sin", "aten::add"))
    assert block.cpu_time_total >= inside
    assert block.self_cpu_time_total == pytest.approx(block.cpu_time_total - inside, abs=1e-3)
    assert all(e.self_cpu_time_total > 0 for e in rows.values())


def test_calls_counted_and_averaged():
    x = engine.ones(8, requires_grad=True)
    with profiler.profile() as prof:
        for _ in range(5):
            x.exp()
    exp = _by_key(prof.key_averages())["aten::exp"]
    assert exp.count == 5
    assert exp.cpu_time == pytest.approx(exp.cpu_time_total / 5)
    assert len([e for e in prof.function_events if e.name == "aten::exp"]) == 5
    assert prof.self_cpu_time_total == pytest.approx(sum(e.self_cpu_time_total for e in prof.function_events))


def test_backward_under_create_graph_times_its_ops_inside_the_node():
    x = engine.ones(4, requires_grad=True)
    y = (x * x).sum()
    with profiler.profile() as prof:
        engine.autograd.grad(y, x, create_graph=True)
    rows = _by_key(prof.key_averages())
    node = rows["MulBackward0"]
    assert rows["aten::mul"].count >= 1
    assert node.cpu_time_total > node.self_cpu_time_total


def test_table_sorted_and_limited():
    x = engine.ones(4, 4, requires_grad=True)
    with profiler.profile(record_shapes=True) as prof:
        for _ in range(3):
            x.sin()
        x @ x
    table = prof.key_averages().table(sort_by="count", row_limit=1)
    lines = table.splitlines()
    assert (
        lines[1].split() == "Name Self CPU % Self CPU CPU total % CPU total CPU time avg # of Calls".split()
    )
    assert len(lines) == 6 and lines[3].split()[0] == "aten::sin" and lines[3].split()[-1] == "3"
    assert re.fullmatch(r"Self CPU time total: \d+\.\d{3}(us|ms|s)", lines[-1])
    grouped = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total")
    assert "Input Shapes" in grouped and "[[4, 4], [4, 4]]" in grouped


def test_table_laid_out_as_torch(torch):
    tables = []
    for lib in (engine, torch):
        with lib.autograd.profiler.profile() as prof:
            with lib.autograd.profiler.record_function("block"):
                pass
        tables.append(prof.key_averages().table().splitlines())
    ours, theirs = tables
    assert [ours[i] for i in (0, 1, 2, 4)] == [theirs[i] for i in (0, 1, 2, 4)]
    numbers = r"\s+block\s+100\.00%\s+[\d.]+(us|ms)\s+100\.00%\s+[\d.]+(us|ms)\s+[\d.]+(us|ms)\s+1  "
    assert re.fullmatch(numbers, ours[3]) and re.fullmatch(numbers, theirs[3])
    assert len(ours[3]) == len(theirs[3])


def test_nothing_stays_on_the_op_path():
    forwards = [op.forward for op in ROWS]
    applies = [op.node.__dict__.get("apply") for op in ROWS]
    with profiler.profile():
        assert ROWS[0].forward is not forwards[0]
        assert ROWS[0].node.__dict__.get("apply") is not applies[0]
        with profiler.profile() as inner:  # a second profile records too
            engine.ones(2, requires_grad=True).exp()
        assert ROWS[0].forward is not forwards[0]
    assert [op.forward for op in ROWS] == forwards
    assert [op.node.__dict__.get("apply") for op in ROWS] == applies
    assert "aten::exp" in _by_key(inner.key_averages())
    with profiler.record_function("outside"):  # no profile: nothing recorded, nothing raised
        engine.ones(2).exp()


def test_arguments_and_errors_as_torch():
    assert profiler.profile(enabled=False).__enter__() is None
    prof = profiler.profile()
    with pytest.raises(AssertionError, match="^Expected profiling results$"):
        prof.key_averages()
    with prof, pytest.raises(RuntimeError, match="^Profiler context manager is not reentrant$"):
        prof.__enter__()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        profiler.profile(use_cuda=True)
    messages = [str(w.message) for w in seen]
    assert (
        messages[0]
        == "The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` instead."
    )
    if not engine.cuda.is_available():
        assert messages[1] == "CUDA is not available, disabling CUDA profiling"


def test_aten_names():
    assert profiler.aten_name("MulBackward0") == "aten::mul"
    assert profiler.aten_name("NativeBatchNormBackward0") == "aten::native_batch_norm"
    assert profiler.aten_name("PowBackward1") == "aten::pow"
    assert profiler.aten_name("AdaptiveAvgPool2DBackward0") == "aten::adaptive_avg_pool2d"
