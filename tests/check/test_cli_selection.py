"""`gradcli check` selection as pytest selects: directories, node ids, -k expressions, -x, exit 5.

Runs the real command (typer's CliRunner, and one subprocess) on small projects written to
tmp_path; which cases ran is read from the JSON document.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_runner import run_gradcli, run_gradcli_json
from paths import ROOT

CASES = """
import engine, gradcli

def x():
    return (engine.randn(3, dtype=engine.float64, requires_grad=True),)

@gradcli.case(x)
def swish(x):
    return x * x.sigmoid()

@gradcli.case(x)
def square(x):
    return x * x

@gradcli.case(x)
def wrong_square(x):  # a wrong backward: d(x*x)/dx is 2x, this one gives x
    return Half.apply(x)

class Half(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x
"""

RUN_ME_NOT = "raise SystemExit('this file must not be executed')\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def run(*args, cwd: Path | None = None):
    previous = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return run_gradcli("check", *args)
    finally:
        os.chdir(previous)


def ran(*args, cwd: Path | None = None) -> tuple[int, list[str], dict]:
    """Exit code, the `file::case` ids that ran (file names only), and the JSON document."""
    result = run(*args, "--json", cwd=cwd)
    doc = json.loads(result.stdout)
    return result.exit_code, [f"{Path(c['file']).name}::{c['name']}" for c in doc["cases"]], doc


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """check_a.py and sub/b_check.py hold cases; every other .py file exits if executed."""
    write(tmp_path / "check_a.py", CASES)
    write(tmp_path / "sub" / "b_check.py", CASES)
    write(tmp_path / "helper.py", RUN_ME_NOT)
    write(tmp_path / "sub" / "test_model.py", RUN_ME_NOT)
    for skipped in (".hidden", "__pycache__", "env", "node_modules"):
        write(tmp_path / skipped / "check_skipped.py", RUN_ME_NOT)
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return tmp_path


# ----------------------------------------------------------------------- paths


def test_a_directory_is_searched_for_check_files_only(project):
    code, ids, _ = ran(project, "-k", "not wrong")
    assert code == 0
    assert ids == ["check_a.py::swish", "check_a.py::square", "b_check.py::swish", "b_check.py::square"]


def test_pyproject_files_patterns_replace_the_defaults(project):
    write(project / "pyproject.toml", '[tool.gradcli]\nfiles = ["grad_*.py"]\n')
    write(project / "sub" / "grad_c.py", CASES)
    code, ids, _ = ran(project, "-k", "square and not wrong")
    assert code == 0 and ids == ["grad_c.py::square"]


def test_several_paths_and_node_ids(project):
    check_a, b_check = project / "check_a.py", project / "sub" / "b_check.py"
    code, ids, _ = ran(f"{check_a}::square", f"{b_check}::swish", f"{check_a}::swish")
    assert code == 0 and ids == ["check_a.py::swish", "check_a.py::square", "b_check.py::swish"]
    # a file named on the command line runs whatever its name; a node id of a file also given whole
    write(project / "model.py", CASES)
    code, ids, _ = ran(project / "model.py", f"{project / 'model.py'}::square", "-k", "not wrong")
    assert ids == ["model.py::swish", "model.py::square"]


def test_a_node_id_names_stacked_cases_and_an_unknown_one_is_a_usage_error(tmp_path):
    path = write(
        tmp_path / "check_stacked.py",
        """
        import engine, gradcli

        @gradcli.case(engine.randn(2, dtype=engine.float64, requires_grad=True))
        @gradcli.case(engine.randn(3, dtype=engine.float64, requires_grad=True))
        def cube(x):
            return x**3
        """,
    )
    code, ids, _ = ran(f"{path}::cube")
    assert code == 0 and ids == ["check_stacked.py::cube[0]", "check_stacked.py::cube[1]"]
    code, ids, _ = ran(f"{path}::cube[1]")
    assert ids == ["check_stacked.py::cube[1]"]
    result = run(f"{path}::cub")
    assert result.exit_code == 2
    assert f"no case named 'cub' (node id {path}::cub); its cases are cube[0], cube[1]" in result.stderr


# ----------------------------------------------------------------------- -k


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("not swish", ["square", "wrong_square"]),
        ("square and not wrong", ["square"]),
        ("SWISH or wrong", ["swish", "wrong_square"]),
        ("(swish or wrong) and not (wrong and square)", ["swish"]),
        ("not not swish", ["swish"]),
        ("sq*", ["square"]),  # gradcli's glob: the whole name
        ("check_a", ["swish", "square", "wrong_square"]),  # the file's name matches, as in pytest
        ("", ["swish", "square", "wrong_square"]),
    ],
)
def test_k_uses_pytests_expression_grammar(project, expression, expected):
    _, ids, doc = ran(project / "check_a.py", "-k", expression)
    assert ids == [f"check_a.py::{name}" for name in expected]
    assert doc["summary"]["deselected"] == 3 - len(expected)


@pytest.mark.parametrize(
    "expression, message",
    [
        ("swish and", "at column 10: expected not OR left parenthesis OR identifier; got end of input"),
        ("(swish or square", "at column 17: expected right parenthesis; got end of input"),
        ("swish square", "at column 7: expected and OR or OR end of input; got 'square'"),
        ("swish | square", "at column 7: unexpected character '|'"),
    ],
)
def test_a_malformed_k_expression_is_a_usage_error(project, expression, message):
    result = run(project / "check_a.py", "-k", expression)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: -k {expression!r}: {message}"


# ----------------------------------------------------------------------- -x, exit 5


def test_exitfirst_stops_after_the_first_failing_case(project):
    code, ids, doc = ran(project, "-x")
    assert code == 1 and ids == ["check_a.py::swish", "check_a.py::square", "check_a.py::wrong_square"]
    assert doc["summary"]["failed"] == 1
    result = run(project, "--exitfirst")
    assert result.exit_code == 1 and "stopped after the first failure (-x); 3 not run" in result.stdout
    code, ids, _ = ran(project)
    assert code == 1 and len(ids) == 6


def test_exit_5_when_nothing_is_collected(project, tmp_path):
    empty = tmp_path / "sub" / "empty"
    empty.mkdir()
    result = run(empty)
    assert result.exit_code == 5 and result.stdout.strip().startswith("no cases ran in")
    result = run(project, "-k", "nothing_like_this")
    assert result.exit_code == 5 and result.stdout.strip().startswith("6 deselected in")
    code, ids, doc = ran(project, "-k", "nothing_like_this")
    assert (code, ids, doc["exit_code"], doc["summary"]["deselected"]) == (5, [], 5, 6)


def test_loading_errors_stay_exit_2(project):
    write(project / "check_broken.py", "def f(:\n")
    result = run(project)
    assert result.exit_code == 2 and "check_broken.py:1" in result.stderr
    write(project / "pyproject.toml", "[tool.gradcli]\nfiles = 3\n")
    result = run(project)
    assert result.exit_code == 2 and "files must be a list of glob patterns" in result.stderr


# ------------------------------------------------------------- options precedence


def test_options_come_from_case_then_command_line_then_pyproject(project):
    write(
        project / "check_tol.py",
        """
        import engine, gradcli

        class Half(engine.autograd.Function):  # backward gives x, not 2x
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                return g * ctx.saved_tensors[0]

        x = engine.tensor([1.0, 2.0, 3.0], dtype=engine.float64, requires_grad=True)

        @gradcli.case(x)
        def off_by_x(x):  # error x: at most 3
            return Half.apply(x)

        @gradcli.case(x, atol=0.5)
        def strict(x):
            return Half.apply(x)
        """,
    )
    results = lambda *flags: {
        c["name"]: (c["passed"], c["settings"]["atol"]) for c in ran(*flags)[2]["cases"]
    }
    assert results(project / "check_tol.py") == {"off_by_x": (False, 1e-5), "strict": (False, 0.5)}
    write(project / "pyproject.toml", "[tool.gradcli]\natol = 10.0\neps = 1e-5\n")
    assert results(project / "check_tol.py") == {"off_by_x": (True, 10.0), "strict": (False, 0.5)}
    assert results(project / "check_tol.py", "--atol", "1") == {
        "off_by_x": (False, 1.0),
        "strict": (False, 0.5),
    }
    doc = ran(project / "check_tol.py")[2]
    assert all(c["settings"]["eps"] == 1e-5 for c in doc["cases"])
    # the top level reports what the cases started from: [tool.gradcli] under the command line
    assert (doc["settings"]["atol"], doc["settings"]["eps"]) == (10.0, 1e-5)
    assert ran(project / "check_tol.py", "--atol", "1")[2]["settings"]["atol"] == 1.0


def test_files_of_projects_with_different_tables_share_no_top_level_settings(project):
    write(project / "sub" / "pyproject.toml", "[tool.gradcli]\natol = 0.5\n")
    write(project / "pyproject.toml", "[tool.gradcli]\natol = 0.25\n")
    doc = ran(project / "check_a.py", project / "sub" / "b_check.py")[2]
    assert {c["settings"]["atol"] for c in doc["cases"]} == {0.25, 0.5}
    assert doc["settings"]["atol"] == 1e-5  # the command line over the defaults


@pytest.mark.parametrize("pattern, exit_code", [("not wrong", 0), ("square", 1), ("nothing", 5)])
def test_the_top_level_settings_are_the_projects_whatever_was_selected(project, pattern, exit_code):
    write(project / "pyproject.toml", "[tool.gradcli]\natol = 1e-4\n")
    code, doc = run_gradcli_json("check", project / "check_a.py", "--json", "-k", pattern)
    assert code == exit_code, doc
    assert doc["settings"]["atol"] == 1e-4


# ------------------------------------------------------------------- real command


def test_the_installed_command_on_a_directory_with_a_node_id_and_k(project):
    command = [sys.executable, "-m", "gradcli", "check", "sub", "check_a.py::square", "-k", "not swish"]
    done = subprocess.run(
        command, cwd=project, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED sub/b_check.py::wrong_square" in done.stdout
    assert done.stdout.strip().splitlines()[-1].startswith("2 passed, 1 failed, 1 deselected in")
