"""`gradcli check`: kinks are KINK with a warning and exit 0; a wrong gradient at a kink
still fails; the progress bar shows only on a terminal and never with --json."""

from __future__ import annotations

import io
import textwrap
import time
from pathlib import Path

import pytest
from cli_runner import run_gradcli
from json_contract import validated
from rich.console import Console
from rich.text import Text
from typer.testing import CliRunner

from gradcli.check.render import progress
from gradcli.cli.app import app

KINKS = """
    import engine

    f = lambda x: x.abs() + x.relu()
    inputs = (engine.tensor([1e-7, -3e-7, 0.5, -0.5], dtype=engine.float64, requires_grad=True),)
"""

WRONG_AT_KINK = """
    import engine

    class WrongAtKink(engine.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.abs()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            near = (x.abs() < 1e-5).to(x.dtype)
            return g * (near * 7 + (1 - near) * x.sign())

    f = WrongAtKink.apply
    inputs = (engine.tensor([1e-7, 0.5, -0.5], dtype=engine.float64, requires_grad=True),)
"""


def write(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "check_kinks.py"
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def check(*args: str):
    return run_gradcli("check", *args)


def test_kinks_are_nondiff_with_a_warning_and_exit_0(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    result = check(write(tmp_path, KINKS))
    assert result.exit_code == 0, result.output
    assert "KINK" in result.output and "FAIL" not in result.output and "BUG" not in result.output
    assert "WARNING" in result.output and "x[0], x[1]: not differentiable within eps=1e-06" in result.output
    assert "--seed" in result.output and "1 passed, 1 warning in" in result.output
    warning = result.output.split("WARNING", 1)[1].split("::f\n", 1)[1].splitlines()[:4]  # after the title
    assert warning[0].startswith("  - x[0]") and all(line.startswith("    ") for line in warning[1:])
    assert max(len(line) for line in warning) <= 80


def test_kinks_in_json_validate_and_carry_the_entries_and_warning(tmp_path):
    result = check(write(tmp_path, KINKS), "--json")
    document = validated(result.stdout)
    assert result.exit_code == 0 and document["passed"] and document["exit_code"] == 0
    (case,) = document["cases"]
    pair, jvp = case["pairs"]
    assert (pair["comparison"], jvp["comparison"]) == ("VJP", "JVP")
    assert case["passed"] and pair["passed"] and pair["mismatches"] == []
    for compared in (pair, jvp):
        assert [k["input_index"] for k in compared["nondifferentiable"]] == [[0], [1]]
    assert pair["nondifferentiable"][0]["numerical"] == pytest.approx(0.65)
    assert len(case["warnings"]) == 1 and "move the input" in case["warnings"][0].lower()


def test_a_wrong_gradient_at_a_kink_still_fails(tmp_path):
    result = check(write(tmp_path, WRONG_AT_KINK), "--json")
    document = validated(result.stdout)
    (case,) = document["cases"]
    assert result.exit_code == 1 and not case["passed"] and case["warnings"] == []
    (pair,) = case["pairs"]
    assert [m["input_index"] for m in pair["mismatches"]] == [[0]] and pair["nondifferentiable"] == []
    assert "FAIL" in check(write(tmp_path, WRONG_AT_KINK)).output


KINK_AND_BUG = """
    import engine

    mask = engine.tensor([0.0, 0.0, 1.0, 0.0], dtype=engine.float64)
    f = lambda x: x.abs() + x.relu() + x * x.detach() * mask  # x[2]'s gradient is 2.5, not 3
    inputs = (engine.tensor([1e-7, -3e-7, 0.5, -0.5], dtype=engine.float64, requires_grad=True),)
"""


def test_the_headline_and_count_leave_the_kinks_out(tmp_path):
    """x[0]'s kink (error 1.35) is larger than x[2]'s real bug (0.5): the headline names x[2]."""
    result = check(write(tmp_path, KINK_AND_BUG))
    assert result.exit_code == 1, result.output
    assert "max abs err 5.00e-01, max rel err 1.67e-01 at x[2]" in result.output
    assert "x (VJP, JVP): max abs err" in result.output  # one wrong formula, said once
    assert result.output.count("1 of 16 entries differ") == 1
    assert "x[0], x[1]: not differentiable" in result.output
    (pair, _) = validated(check(write(tmp_path, KINK_AND_BUG), "--json").stdout)["cases"][0]["pairs"]
    assert pair["mismatch_count"] == 1 and pair["worst_input_index"] == [2]
    assert [k["input_index"] for k in pair["nondifferentiable"]] == [[0], [1]]


# ------------------------------------------------------------------------- progress


def terminal(width: int = 80) -> tuple[Console, io.StringIO]:
    stream = io.StringIO()
    return Console(file=stream, force_terminal=True, width=width), stream


def test_progress_bar_on_a_terminal_shows_total_and_time_left():
    console, stream = terminal()
    with progress.check_progress(console, 2, delay=0) as bar:
        for name in ("a.py::one", "a.py::two"):
            with bar.case(name):
                time.sleep(0.15)
    drawn = stream.getvalue()
    assert all(len(line) <= 80 for line in Text.from_ansi(drawn).plain.replace("\r", "\n").splitlines())
    assert "a.py::one" in drawn and "0/2" in drawn and "1/2" in drawn and "left" in drawn


def test_the_bar_moves_inside_a_case_with_the_checkers_steps():
    console, _ = terminal()
    with progress.check_progress(console, 2, delay=60) as bar:
        completed = lambda: bar._bar.tasks[0].completed  # noqa: E731 (the rich task behind the bar)
        with bar.case("a.py::one") as step:
            step(1, 4)
            assert completed() == 0.25
            step(3, 4)
            assert completed() == 0.75
            step(1, 4)  # order 2 counts again from 0: the bar never goes back
            assert completed() == 0.75
        assert completed() == 1
        with bar.case("a.py::two") as step:
            step(2, 4)
            assert completed() == 1.5
    plain = io.StringIO()
    with progress.check_progress(Console(file=plain), 1, delay=0) as bar, bar.case("a.py::one") as step:
        assert step is None  # off a terminal the checker is given nothing to call


def test_no_progress_bar_off_a_terminal_with_json_or_before_the_delay():
    plain = io.StringIO()
    with progress.check_progress(Console(file=plain), 1, delay=0) as bar, bar.case("a.py::one"):
        time.sleep(0.1)
    assert plain.getvalue() == ""
    console, stream = terminal()
    with progress.check_progress(console, 1, enabled=False, delay=0) as bar, bar.case("a.py::one"):
        time.sleep(0.1)
    assert stream.getvalue() == ""
    with progress.check_progress(console, 1, delay=5) as bar, bar.case("a.py::quick"):
        pass
    assert "quick" not in stream.getvalue()


def test_check_json_on_a_terminal_draws_no_bar(tmp_path, monkeypatch):
    """FORCE_COLOR makes rich's stderr console a terminal; --json still gets no bar."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setattr(progress, "PROGRESS_DELAY", 0.0)
    path = write(tmp_path, KINKS)
    drawn = CliRunner().invoke(app, ["check", str(path)]).stderr
    assert "0/1" in drawn and "left" in drawn
    result = CliRunner().invoke(app, ["check", str(path), "--json"])
    assert "0/1" not in result.stderr and validated(result.stdout)["passed"]
