"""The check report's ranking, counts, --show, --dump, the heatmap and --plot."""

import sys
import textwrap
from pathlib import Path

import numpy
import pytest
from cli_runner import run_gradcli
from json_contract import validated
from paths import ROOT

import engine
from engine.autograd import check_gradients
from gradcli.check.render.heatmap import RAMP

BUGGY = ROOT / "examples" / "buggy.py"

# y = x @ W.T + b with the weight's gradient transposed (examples/buggy.py's bug), on fixed inputs
# so the test can work out both Jacobians with numpy alone.
X = numpy.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-2.0, 1.0, 0.5], [0.3, -0.6, 0.9]])
W = numpy.array([[1.0, 2.0, -1.0], [0.5, -0.5, 3.0], [-2.0, 1.5, 0.25]])
B = numpy.array([0.1, -0.2, 0.3])
TRANSPOSED = f"""
import engine
import gradcli


class Linear(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.t() + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output @ weight, x.t() @ grad_output, grad_output.sum(0)


def t(values):
    return engine.tensor(values, dtype=engine.float64, requires_grad=True)


@gradcli.case(t({X.tolist()}), t({W.tolist()}), t({B.tolist()}))
def linear(x, weight, bias):
    return Linear.apply(x, weight, bias)
"""


def run(*args: str):
    return run_gradcli("check", *args)


def write(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "check_report.py"
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def weight_jacobians() -> tuple[numpy.ndarray, numpy.ndarray]:
    """(numerical, analytical) d out / d weight, rows out entries, columns weight entries."""
    rows, cols = X.shape[0] * W.shape[0], W.size
    numerical, analytical = numpy.zeros((rows, cols)), numpy.zeros((rows, cols))
    eps = 1e-6
    for c in range(cols):
        step = numpy.zeros(W.size)
        step[c] = eps
        up, down = W + step.reshape(W.shape), W - step.reshape(W.shape)
        numerical[:, c] = ((X @ up.T + B) - (X @ down.T + B)).reshape(-1) / (2 * eps)
    for r in range(rows):
        grad_output = numpy.zeros(rows)
        grad_output[r] = 1.0
        analytical[r] = (X.T @ grad_output.reshape(X.shape[0], W.shape[0])).reshape(-1)  # the bug
    return numerical, analytical


# ---------------------------------------------------------------------------- ranking


class ScaledWrong(engine.autograd.Function):
    """d/dx (c * x) = c, returned with an error of 2.0 at c = 1000 and of 0.1 at c = 0.001."""

    @staticmethod
    def forward(ctx, x):
        return x * engine.tensor([1000.0, 0.001], dtype=engine.float64)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * engine.tensor([1002.0, 0.101], dtype=engine.float64)


def test_the_worst_entry_is_the_largest_absolute_error_not_the_furthest_outside_tolerance():
    x = engine.tensor([0.5, -0.25], dtype=engine.float64, requires_grad=True)
    report = check_gradients(ScaledWrong.apply, (x,))
    (pair,) = report.pairs
    # x[1]: error 0.1 at a derivative of 0.001 is ~10^4 tolerances out; x[0]: 2.0 is ~2 tolerances
    assert pair.worst_input_index == (0,) and pair.max_abs_err == pytest.approx(2.0, rel=1e-6)
    assert pair.analytical == pytest.approx(1002.0) and pair.numerical == pytest.approx(1000.0, rel=1e-6)
    assert [m[1] for m in pair.mismatches] == [(0,), (1,)] and pair.mismatch_count == 2


def test_a_report_lists_at_most_max_mismatches_and_counts_them_all():
    x = engine.randn(4, 3, dtype=engine.float64, requires_grad=True)
    w = engine.randn(3, 3, dtype=engine.float64, requires_grad=True)
    report = check_gradients(lambda a, b: a @ b.t(), (x, w), max_mismatches=3)
    assert report.passed and all(p.mismatch_count == 0 and p.numerical_jacobian is None for p in report.pairs)

    x = engine.tensor(X, dtype=engine.float64, requires_grad=True)
    w = engine.tensor(W, dtype=engine.float64, requires_grad=True)
    b = engine.tensor(B, dtype=engine.float64, requires_grad=True)
    namespace: dict = {}
    exec(compile(TRANSPOSED, "transposed", "exec"), namespace)
    report = check_gradients(namespace["Linear"].apply, (x, w, b), max_mismatches=3)
    pair = next(p for p in report.pairs if not p.passed)
    numerical, analytical = weight_jacobians()
    expected = int((~numpy.isclose(analytical, numerical, rtol=1e-3, atol=1e-5)).sum())
    assert len(pair.mismatches) == 3 and pair.mismatch_count == expected > 3
    errors = [abs(m[2] - m[3]) for m in pair.mismatches]
    assert errors == sorted(errors, reverse=True)
    assert errors[0] == pytest.approx(numpy.abs(analytical - numerical).max(), rel=1e-6)


# ------------------------------------------------------------------ counts and --show


def test_text_counts_the_entries_that_differ_and_show_sets_the_rows(tmp_path):
    path = write(tmp_path, TRANSPOSED)
    numerical, analytical = weight_jacobians()
    count = int((~numpy.isclose(analytical, numerical, rtol=1e-3, atol=1e-5)).sum())
    result = run(path)
    assert result.exit_code == 1
    assert f"    {count} of {numerical.size} entries differ" in result.stdout
    assert f"    ... {count - 5} more (see --show N, --json)" in result.stdout
    assert "listed in --json" not in result.stdout

    shown = run(path, "--show", "2")
    failure = shown.stdout.split("FAILED", 1)[1]
    assert failure.count("   weight[") == 2
    assert f"    ... {count - 2} more (see --show N, --json)" in shown.stdout


def test_json_carries_the_total_and_the_worst_n(tmp_path):
    path = write(tmp_path, TRANSPOSED)
    numerical, analytical = weight_jacobians()
    count = int((~numpy.isclose(analytical, numerical, rtol=1e-3, atol=1e-5)).sum())
    for args, listed in (((), 10), (("--show", "4"), 4), (("--show", "500"), count)):
        doc = validated(run(path, "--json", *args).stdout)
        (pair,) = [p for p in doc["cases"][0]["pairs"] if not p["passed"]]
        assert pair["mismatch_count"] == count and len(pair["mismatches"]) == listed
        assert pair["max_abs_err"] == pytest.approx(numpy.abs(analytical - numerical).max(), rel=1e-6)
        passing = [p for p in doc["cases"][0]["pairs"] if p["passed"]]
        assert all(p["mismatch_count"] == 0 and p["mismatches"] == [] for p in passing)


# ------------------------------------------------------------------------------ --dump


def test_dump_writes_the_jacobians_of_failing_pairs(tmp_path):
    path = write(tmp_path, TRANSPOSED)
    target = tmp_path / "jacobians.npz"
    assert run(path, "--dump", target).exit_code == 1
    numerical, analytical = weight_jacobians()
    with numpy.load(target) as data:
        assert sorted(data.files) == ["linear/out/weight/analytical", "linear/out/weight/numerical"]
        assert numpy.allclose(data["linear/out/weight/numerical"], numerical, atol=1e-8)
        assert numpy.array_equal(data["linear/out/weight/analytical"], analytical)


def test_dump_to_a_folder_that_does_not_exist_is_a_usage_error(tmp_path):
    result = run(write(tmp_path, TRANSPOSED), "--dump", tmp_path / "no" / "such" / "j.npz")
    assert result.exit_code == 2 and "--dump" in result.output


# ----------------------------------------------------------------------------- heatmap


def heatmap_rows(stdout: str, output: str = "out") -> dict[str, str]:
    """The grid's rows: `out[i, j]` -> its cells."""
    rows = {}
    for line in stdout.splitlines():
        label, _, cells = line.strip().rpartition(" ")
        if label.startswith(f"{output}[") and cells and set(cells) <= set(RAMP):
            rows[label] = cells
    return rows


def test_the_heatmap_shows_a_transposed_gradient_as_a_pattern():
    result = run(BUGGY)
    rows = heatmap_rows(result.stdout)
    assert list(rows) == [f"out[{i}, {j}]" for i in range(5) for j in range(3)]
    assert all(len(cells) == 9 for cells in rows.values())
    columns = ["".join(cells[c] for cells in rows.values()) for c in range(9)]
    diagonal = {0, 4, 8}  # weight[k, k]: a transpose leaves these right
    assert all(set(columns[c]) == {"."} for c in diagonal)
    assert all(set(columns[c]) != {"."} for c in range(9) if c not in diagonal)
    # row out[i, j] touches weight[j, :] (numerical) and weight[:, j] (the transposed analytical)
    for (_i, j), cells in zip([(i, j) for i in range(5) for j in range(3)], rows.values()):
        marked = {c for c, cell in enumerate(cells) if cell != "."}
        assert marked <= {3 * j + k for k in range(3)} | {3 * k + j for k in range(3)}


def test_the_heatmap_levels_follow_the_dumped_errors(tmp_path):
    path = write(tmp_path, TRANSPOSED)
    rows = heatmap_rows(run(path).stdout)
    numerical, analytical = weight_jacobians()
    difference = numpy.abs(analytical - numerical)
    grid = numpy.array([[RAMP.index(c) for c in cells] for cells in rows.values()])
    failing = ~numpy.isclose(analytical, numerical, rtol=1e-3, atol=1e-5)
    assert numpy.array_equal(grid > 0, failing)
    assert numpy.array_equal(grid == len(RAMP) - 1, numpy.isclose(difference, difference.max()))


TRANSPOSED_LARGE = """
import engine
import gradcli


class Double(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return (grad_output * 2).t()  # BUG: transposed


@gradcli.case(engine.randn(10, 10, dtype=engine.float64, requires_grad=True), fast=False)
def double(x):
    return Double.apply(x)
"""


def test_a_large_jacobian_is_drawn_in_blocks_and_a_transposed_gradient_shows_its_band(tmp_path):
    """100 x 100: 20 rows of 5 output entries by 34 columns of 3 input entries, each its block's max."""
    path = tmp_path / "large.py"
    path.write_text(TRANSPOSED_LARGE)
    result = run(path)
    assert result.exit_code == 1 and "180 of 10000 entries differ" in result.stdout
    assert "each cell is a 5 x 3 block" in " ".join(result.stdout.split())
    rows = heatmap_rows(result.stdout)
    assert list(rows) == [f"out[{k // 2}, {5 * (k % 2)}]" for k in range(20)]  # each block's first entry
    assert all(len(cells) == 34 for cells in rows.values())
    grid = numpy.array([[c != "." for c in cells] for cells in rows.values()])
    # the band: numerical 2 on the diagonal, analytical 0 there (out (a, b) -> x (b, a)) but where a == b
    for k in range(20):
        assert grid[k, (5 * k) // 3] or grid[k, (5 * k + 4) // 3]
    assert grid.sum() < grid.size / 4  # the rest of the grid stays blank


def _run_first_case(path, keep_jacobians):
    from gradcli.check import collection, results
    from gradcli.check import run_case as checking
    from gradcli.check.selection import compile_expression

    chosen, _ = collection.targets([str(path)])
    collected = collection.collect(chosen, compile_expression(None), seed=0)
    return checking.run_case(collected.prepared[0], results.Settings(), keep_jacobians=keep_jacobians)


def test_a_run_without_dump_keeps_only_the_heatmap_grid_of_a_large_jacobian(tmp_path):
    """Memory per failing pair is bounded by the 20 x 40 grid, and the grid is the one the full
    Jacobians give."""
    path = tmp_path / "large.py"
    path.write_text(TRANSPOSED_LARGE)
    (kept,) = _run_first_case(path, keep_jacobians=True).pairs
    (trimmed,) = _run_first_case(path, keep_jacobians=False).pairs
    assert kept.numerical_jacobian.shape == (100, 100)
    assert trimmed.numerical_jacobian is None and trimmed.analytical_jacobian is None
    assert trimmed.blocks.difference.shape == (20, 34) and trimmed.blocks.block == (5, 3)
    full = kept.heatmap_grid(rtol=1e-3, atol=1e-5)
    assert numpy.array_equal(trimmed.blocks.difference, full.difference)
    assert numpy.array_equal(trimmed.blocks.failing, full.failing)
    assert trimmed.mismatch_count == kept.mismatch_count == 180


def test_a_small_jacobian_is_kept_whole_and_dump_keeps_a_large_one(tmp_path):
    (small,) = [p for p in _run_first_case(write(tmp_path, TRANSPOSED), False).pairs if not p.passed]
    assert small.numerical_jacobian is not None and small.blocks is None
    path = tmp_path / "large.py"
    path.write_text(TRANSPOSED_LARGE)
    dump = tmp_path / "j.npz"
    assert run(path, "--dump", dump).exit_code == 1
    with numpy.load(dump) as arrays:
        assert arrays["double/out/x/numerical"].shape == (100, 100)


@pytest.mark.parametrize("width", [60, 80, 120, 200])
def test_the_failure_text_fits_the_width(width):
    from gradcli.check import collection, results
    from gradcli.check import run_case as checking
    from gradcli.check.render.failure_text import failure_report
    from gradcli.check.selection import compile_expression

    chosen, _ = collection.targets([str(BUGGY)])
    collected = collection.collect(chosen, compile_expression(None), seed=0)
    result = checking.run_case(collected.prepared[0], results.Settings())
    text = failure_report(result, width=width)
    grid = [line for line in text.splitlines() if line.strip().startswith("out[")]
    assert len(grid) >= 15 and all(len(line) <= width for line in grid)


# ------------------------------------------------------------------------------ --plot


def test_plot_writes_a_png_per_failing_pair(tmp_path):
    pytest.importorskip("matplotlib")
    folder = tmp_path / "plots"
    result = run(write(tmp_path, TRANSPOSED), "--plot", folder)
    assert result.exit_code == 1
    (png,) = folder.iterdir()
    assert png.name == "linear-out-weight.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000


def test_plot_without_matplotlib_exits_2_before_running(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    result = run(write(tmp_path, TRANSPOSED), "--plot", tmp_path / "plots")
    assert result.exit_code == 2
    assert "--plot needs matplotlib: pip install 'gradcli[plot]'" in result.output
    assert not (tmp_path / "plots").exists() and "FAILED" not in result.output
