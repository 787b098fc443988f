"""`gradcli check --timeout`: a case over the limit fails where it is, and the run goes on."""

import textwrap

from json_contract import validated
from typer.testing import CliRunner

from gradcli.cli.app import app

CASES = """
import time

import engine
import gradcli

x = engine.randn(3, dtype=engine.float64, requires_grad=True)


@gradcli.case(x)
def slow(x):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            time.sleep(0.01)
        except Exception:  # a user's catch-all does not swallow the timeout
            pass
    return x * 2


@gradcli.case(x)
def quick(x):
    return x.sin()
"""


def write(tmp_path):
    path = tmp_path / "check_slow.py"
    path.write_text(textwrap.dedent(CASES))
    return path


def test_a_case_over_the_limit_fails_and_the_next_one_runs(tmp_path):
    path = write(tmp_path)
    result = CliRunner().invoke(app, ["check", str(path), "--timeout", "0.3"])
    assert result.exit_code == 1, result.output
    assert "timed out after 0.3 s (at " in result.output and "check_slow.py:1" in result.output
    assert "1 passed, 1 failed" in result.output


def test_the_timeout_is_a_problem_of_the_case_in_json(tmp_path):
    path = write(tmp_path)
    result = CliRunner().invoke(app, ["check", str(path), "--timeout", "0.3", "--json"])
    doc = validated(result.stdout)
    assert result.exit_code == 1 and doc["exit_code"] == 1
    slow, quick = doc["cases"]
    assert not slow["passed"] and quick["passed"]
    (problem,) = slow["problems"]
    assert (
        problem["message"].startswith("timed out after 0.3 s") and 13 <= problem["line"] <= 18
    )  # in the loop


def test_the_timeout_must_be_positive(tmp_path):
    path = write(tmp_path)
    for bad in ("0", "-1", "nan"):
        result = CliRunner().invoke(app, ["check", str(path), "--timeout", bad])
        assert result.exit_code == 2 and "--timeout must be a positive number" in result.output
