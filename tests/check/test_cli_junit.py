"""`gradcli check --junitxml FILE`: the run as JUnit XML (pytest's layout), parsed back here."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from paths import ROOT
from typer.testing import CliRunner

from gradcli.cli.app import app


def junit(tmp_path: Path, *args: str) -> tuple[int, ET.Element, str]:
    """Exit code, the <testsuite> element and stdout of `gradcli check ARGS --junitxml FILE`."""
    path = tmp_path / "report.xml"
    result = CliRunner().invoke(app, ["check", *map(str, args), "--junitxml", str(path)])
    assert result.exit_code != 3, result.output
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root
    assert suite.tag == "testsuite" and suite.get("name") == "gradcli"
    return result.exit_code, suite, result.stdout


def test_a_testcase_per_case_with_the_failure_report_as_body(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, suite, stdout = junit(tmp_path, "examples/model.py", "examples/buggy.py")
    assert code == 1
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    assert set(cases) == {
        ("examples/model.py", "model"),
        ("examples/model.py", "swish"),
        ("examples/model.py", "swish_second_order"),
        ("examples/model.py", "mse_loss"),
        ("examples/buggy.py", "linear"),
    }
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "5",
        "1",
        "0",
        "0",
    )
    assert float(suite.get("time")) > 0 and all(float(c.get("time")) >= 0 for c in cases.values())
    for key, case in cases.items():
        assert (case.find("failure") is not None) == (key[1] == "linear")
    failure = cases["examples/buggy.py", "linear"].find("failure")
    assert failure.get("type") == "BUG"
    assert failure.get("message").startswith("BUG: the gradient of out w.r.t. weight is wrong at ")
    assert failure.text.startswith("FAILED examples/buggy.py::linear")
    assert "grad_weight = x.t() @ grad_output" in failure.text  # the backward's source
    assert failure.text.strip() in stdout  # the report gradcli printed for that case


def test_a_case_failing_on_a_problem_has_the_problem_as_its_message(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, suite, stdout = junit(tmp_path, "tests/corpus/bad.py", "-k", "nondeterministic")
    (case,) = suite.iter("testcase")
    failure = case.find("failure")
    assert code == 1 and failure is not None
    assert "nondetermin" in failure.get("message").lower() and "\n" not in failure.get("message")


def test_a_file_that_cannot_be_loaded_is_an_error(tmp_path, monkeypatch):
    broken = tmp_path / "broken.py"
    broken.write_text("import engine\nx = 1 / 0\n")
    code, suite, _ = junit(tmp_path, broken)
    assert code == 2 and suite.get("errors") == "1" and suite.get("failures") == "0"
    (case,) = suite.iter("testcase")
    error = case.find("error")
    assert case.get("name") == str(broken)
    assert error.get("message").startswith(f"{broken}:2: exception while loading: ZeroDivisionError")
    assert "x = 1 / 0" in error.text


def test_an_unwritable_junitxml_path_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    path = tmp_path / "missing" / "report.xml"
    result = CliRunner().invoke(app, ["check", "examples/model.py", "--junitxml", str(path)])
    assert result.exit_code == 2 and f"cannot write --junitxml {path}" in result.stderr


def test_kinks_pass_with_their_warning_in_system_err(tmp_path):
    kinked = tmp_path / "check_kinks.py"
    kinked.write_text(
        "import engine\n"
        "f = lambda x: x.abs() + x.relu()\n"
        "inputs = (engine.tensor([1e-7, -3e-7, 0.5, -0.5], dtype=engine.float64, requires_grad=True),)\n"
    )
    smooth = tmp_path / "check_smooth.py"
    smooth.write_text(
        "import engine\nf = lambda x: x.sin()\n"
        "inputs = (engine.tensor([0.5, -0.5], dtype=engine.float64, requires_grad=True),)\n"
    )
    code, suite, _ = junit(tmp_path, kinked, smooth)
    assert code == 0 and suite.get("failures") == "0"
    by_file = {Path(c.get("classname")).name: c for c in suite.iter("testcase")}
    assert by_file["check_kinks.py"].find("failure") is None
    err = by_file["check_kinks.py"].find("system-err")
    assert err.text.startswith("WARNING: x[0], x[1]: not differentiable within eps=1e-06")
    assert by_file["check_smooth.py"].find("system-err") is None
