"""The pytest plugin and gradcli.assert_gradients, through real pytest runs (pytester).

Until gradcli is installed with its `pytest11` entry point, the plugin is named with `-p`; once
it is, pytest loads it by itself (and `-p` would register it twice), see PLUGIN.
"""

import importlib.metadata
import json
import os
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from paths import ROOT
from typer.testing import CliRunner

import engine
import gradcli
from gradcli.check.cases import collecting
from gradcli.check.config import tomllib
from gradcli.check.loading import load_file
from gradcli.cli.app import app

pytest_plugins = ["pytester"]

ENTRY_POINT = "gradcli.pytest_plugin"


def _installed_entry_point() -> str | None:
    found = [ep.value for ep in importlib.metadata.entry_points(group="pytest11") if ep.name == "gradcli"]
    return found[0] if found else None


PLUGIN = [] if _installed_entry_point() == ENTRY_POINT else ["-p", ENTRY_POINT]

HEADER = """
import engine, gradcli, pytest

def r(*shape):
    return engine.randn(*shape, dtype=engine.float64, requires_grad=True)

class Lin(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w.t(), (x.t() @ g) * 2  # BUG: twice the weight's gradient
"""

GRADS = (
    HEADER
    + """
@gradcli.case(lambda: (r(4, 3),))
def swish(x):
    return x * x.sigmoid()

@gradcli.case(lambda: (r(3, 2), r(2, 2)))
def linear(x, w):
    return Lin.apply(x, w)
"""
)


def write(pytester: pytest.Pytester, source: str, name: str = "test_grads.py", header: str = "") -> Path:
    path = pytester.path / name
    path.write_text((textwrap.dedent(header) + textwrap.dedent(source)).lstrip())
    return path


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider", *args)


def test_one_passing_one_failing_case_with_gradclis_report(pytester):
    write(pytester, GRADS)
    result = run(pytester, "-v")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "test_grads.py::swish PASSED" in out
    assert "test_grads.py::linear FAILED" in out
    result.stdout.fnmatch_lines(
        [
            "gradient check of linear failed: BUG: the gradient of out w.r.t. w is wrong at *",
            "FAILED test_grads.py::linear BUG (order 1, full mode, float64, cpu)",
            "  w: max abs err *, max rel err 1.00e+00 at w[[]*[]] of out[[]*[]]",
            "*output*input*numerical*analytical*difference",
            "*out[[]*, *[]]*w[[]*, *[]]*e-01*e+00*",  # the worst entries, side by side
            "  backward of Lin: test_grads.py:12",
            # pytester's terminal is 80 wide: the long line wraps under its code, not its number
            "*15 |     return g @ w.t(), (x.t() @ g) * 2  # BUG: twice the weight's",
            "         gradient",
        ]
    )
    # the passing case's input is not in the report, the short summary names the failing pair
    assert "x: max abs err" not in out
    result.stdout.fnmatch_lines(["FAILED test_grads.py::linear - gradient check of linear failed: BUG: *"])


def test_cases_are_selected_as_pytest_selects(pytester):
    write(pytester, GRADS)
    run(pytester, "-k", "not linear").assert_outcomes(passed=1, deselected=1)
    run(pytester, "-k", "swish or linear").assert_outcomes(passed=1, failed=1)
    run(pytester, "test_grads.py::linear").assert_outcomes(failed=1)
    run(pytester, "-m", "not slow").assert_outcomes(passed=1, failed=1)


def test_exitfirst_stops_at_the_first_failing_case(pytester):
    write(
        pytester,
        GRADS + "\n@gradcli.case(lambda: (r(2, 2), r(2, 2)))\ndef linear_again(x, w):\n"
        "    return Lin.apply(x, w)\n",
    )
    run(pytester).assert_outcomes(passed=1, failed=2)
    run(pytester, "-x").assert_outcomes(passed=1, failed=1)


def test_last_failed_reruns_only_the_failing_case(pytester):
    write(pytester, GRADS)
    pytester.runpytest(*PLUGIN).assert_outcomes(passed=1, failed=1)
    result = pytester.runpytest(*PLUGIN, "--lf", "-v")
    result.assert_outcomes(failed=1)
    assert "test_grads.py::linear FAILED" in result.stdout.str()


def test_junit_xml_carries_the_report(pytester):
    write(pytester, GRADS)
    run(pytester, "--junitxml=report.xml").assert_outcomes(passed=1, failed=1)
    cases = {c.get("name"): c for c in ET.parse(pytester.path / "report.xml").iter("testcase")}
    assert set(cases) == {"swish", "linear"}
    assert cases["swish"].find("failure") is None
    failure = cases["linear"].find("failure")
    assert failure.get("message").startswith(
        "gradient check of linear failed: BUG: the gradient of out w.r.t. w"
    )
    assert "backward of Lin: test_grads.py:12" in failure.text
    assert "# BUG: twice the weight's" in failure.text  # pytester is 80 wide: the rest wraps


def test_pyproject_options_come_after_the_case_own(pytester):
    write(
        pytester,
        GRADS + "\n@gradcli.case(lambda: (r(3, 2), r(2, 2)), atol=1e-5, rtol=1e-3)\n"
        "def strict(x, w):\n    return Lin.apply(x, w)\n",
    )
    run(pytester).assert_outcomes(passed=1, failed=2)
    (pytester.path / "pyproject.toml").write_text("[tool.gradcli]\natol = 100.0\n")
    result = run(pytester, "-v")
    result.assert_outcomes(passed=2, failed=1)  # linear passes under the loose atol, strict keeps its own
    assert "test_grads.py::strict FAILED" in result.stdout.str()
    (pytester.path / "pyproject.toml").write_text("[tool.gradcli]\natool = 1\n")
    result = run(pytester)
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["*pyproject.toml: [[]tool.gradcli[]] has unknown key atool*"])


def test_marks_and_repeated_names(pytester):
    path = write(
        pytester,
        header=HEADER,
        source="""
        @pytest.mark.skip(reason="not today")
        @gradcli.case(lambda: (r(3),))
        def skipped(x):
            return x.exp()

        @gradcli.case(lambda: (r(3),), name="twice")
        @gradcli.case(lambda: (r(2),), name="twice")
        def tanh(x):
            return x.tanh()
        """,
    )
    result = run(pytester, "-v", "-rs")
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] test_grads.py:*: not today"])
    ids = sorted(line.split(" ")[0] for line in result.stdout.lines if " PASSED" in line)
    cli_names = sorted(f"test_grads.py::{c.name}" for c in load_file(str(path)).cases if c.name != "skipped")
    assert ids == cli_names == ["test_grads.py::twice[0]", "test_grads.py::twice[1]"]


def test_nested_collecting_blocks_each_keep_their_own_cases():
    def square(x):
        return x * x

    with collecting() as outer:
        with collecting() as inner:  # both empty, so equal: leaving must not remove the outer one
            pass
        gradcli.case(engine.ones(2, requires_grad=True))(square)
    assert [c.name for c in outer] == ["square"] and inner == []


MADE = """
def power(x):
    return x * x

for k in range(3):
    gradcli.case(lambda: (r(3),))(power)

also_power = power  # one function under two names: its cases once

for fn in [lambda x, w: x @ w, Lin.apply]:
    gradcli.case(lambda: (r(3, 2), r(2, 2)), name="matmul")(fn)

@gradcli.case(lambda: (r(3),))
@gradcli.case(lambda: (r(2),))
def stacked(x):
    return x.cos()

for n in range(2):

    @gradcli.case(lambda: (r(2),))
    def looped(x):
        return x.sigmoid()
"""

MADE_IDS = [
    "test_grads.py::power[0]",
    "test_grads.py::power[1]",
    "test_grads.py::power[2]",
    "test_grads.py::matmul[0]",
    "test_grads.py::matmul[1]",
    "test_grads.py::stacked[0]",
    "test_grads.py::stacked[1]",
    "test_grads.py::looped[0]",
    "test_grads.py::looped[1]",
]

IN_A_CLASS = """
class TestGroup:
    @gradcli.case(lambda: (r(2),))
    @staticmethod
    def above_static(x):
        return x.exp()

    @staticmethod
    @gradcli.case(lambda: (r(2),))
    def test_under_static(x):  # named as a test, but a case: not a test method asking for fixture x
        return x.exp()

    def test_plain(self):
        pass
"""


def collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    """The node ids `pytest --collect-only -q` lists."""
    return [line for line in run(pytester, "--collect-only", "-q", *args).stdout.lines if "::" in line]


def cli_ids(path: Path) -> list[str]:
    """The `file::case` ids `gradcli check --json` reports for a file in the working directory."""
    result = CliRunner().invoke(app, ["check", path.name, "--json"])
    return [f"{Path(c['file']).name}::{c['name']}" for c in json.loads(result.stdout)["cases"]]


def test_cases_made_in_a_loop_or_stacked_are_items_named_as_the_cli_names_them(pytester):
    path = write(pytester, MADE, header=HEADER)
    assert collected(pytester) == cli_ids(path) == MADE_IDS
    assert collected(pytester, "--doctest-modules") == MADE_IDS  # a doctest module does not make them again
    result = run(pytester)
    result.assert_outcomes(passed=8, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["FAILED test_grads.py::matmul[[]1[]] BUG (order 1, full mode, float64, cpu)"]
    )


def test_node_ids_and_k_select_numbered_cases(pytester):
    write(pytester, MADE, header=HEADER)
    run(pytester, "test_grads.py::power[1]").assert_outcomes(passed=1)
    run(pytester, "test_grads.py::matmul[1]", "test_grads.py::looped[0]").assert_outcomes(passed=1, failed=1)
    run(pytester, "-k", "stacked or looped").assert_outcomes(passed=4, deselected=5)


def test_a_case_on_a_test_class_method_is_an_item_of_its_module(pytester):
    path = write(pytester, IN_A_CLASS, header=HEADER)
    cases = ["test_grads.py::above_static", "test_grads.py::test_under_static"]
    assert collected(pytester) == ["test_grads.py::TestGroup::test_plain", *cases]  # after the class's tests
    assert cli_ids(path) == cases
    result = run(pytester)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK


def test_cases_of_a_module_imported_before_it_is_collected_are_its_items(pytester):
    write(pytester, GRADS, header=HEADER)
    write(pytester, "import test_grads\n", name="conftest.py")  # imported before collection starts
    write(pytester, "from test_grads import swish\n\ndef test_b():\n    pass\n", name="test_a.py")
    assert collected(pytester) == ["test_a.py::test_b", "test_grads.py::swish", "test_grads.py::linear"]


def test_top_level_f_model_and_inputs_are_no_items(pytester):
    write(
        pytester,
        header=HEADER,
        source="""
        f = engine.sin
        model = engine.nn.Linear  # the CLI refuses a class; here it is an ordinary global
        inputs = (r(3),)

        @gradcli.case(lambda: (r(3),))
        def swish(x):
            return x * x.sigmoid()

        def test_uses_the_globals():
            assert f(inputs[0]).shape == (3,)
        """,
    )
    assert collected(pytester) == ["test_grads.py::swish", "test_grads.py::test_uses_the_globals"]


def test_files_without_cases_are_left_alone(pytester):
    write(pytester, GRADS, name="grads_lib.py")  # not a test file: its cases are not items
    write(
        pytester,
        """
        from grads_lib import linear  # an imported case belongs to its own module

        def test_plain():
            assert linear is not None
        """,
        name="test_plain.py",
    )
    pytester.syspathinsert()
    result = run(pytester, "-v")
    result.assert_outcomes(passed=1)
    assert "linear" not in result.stdout.str()


def test_the_plugin_imports_nothing_heavy_for_plain_tests(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    write(
        pytester,
        """
        import sys

        def test_nothing_heavy():
            assert "gradcli.pytest_plugin" in sys.modules
            assert not {"engine", "rich", "numpy"} & set(sys.modules)
        """,
        name="test_plain.py",
    )
    pytester.runpytest_subprocess(*PLUGIN, "-p", "no:xdist").assert_outcomes(passed=1)


def test_parallel_runs_with_xdist(pytester, monkeypatch):
    pytest.importorskip("xdist")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    write(pytester, GRADS)
    result = pytester.runpytest_subprocess(*PLUGIN, "-n", "2")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["  backward of Lin: test_grads.py:12"])


@pytest.mark.torch_parity
def test_a_torch_case(pytester):
    write(
        pytester,
        """
        import torch, gradcli

        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * x  # BUG: should be 2 * g * x

        @gradcli.case(lambda: (torch.randn(5, dtype=torch.float64, requires_grad=True),))
        def square(x):
            return Square.apply(x)

        @gradcli.case(lambda: (torch.randn(5, requires_grad=True),))
        def softplus(x):
            return torch.nn.functional.softplus(x)
        """,
    )
    # in a subprocess: an in-process run drops the torch modules it imported, and torch cannot be
    # imported again in the same process
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["FAILED test_grads.py::square BUG (*", "*return g * x  # BUG*"])


def test_assert_gradients_in_plain_tests(pytester):
    write(
        pytester,
        header=HEADER,
        source="""
        def test_good():
            result = gradcli.assert_gradients(lambda x: x.sin(), (r(3),))
            assert result.passed and [p.input for p in result.pairs if p.mode == "rev"] == ["x"]

        def test_bad():
            gradcli.assert_gradients(Lin.apply, (r(3, 2), r(2, 2)))

        def test_bad_but_loose():
            gradcli.assert_gradients(Lin.apply, (r(3, 2), r(2, 2)), atol=100.0)
        """,
    )
    result = run(pytester, "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: gradient check of Lin.apply failed: BUG: the gradient of out w.r.t. inputs[[]1[]] *",
            "E       FAILED test_grads.py::Lin.apply BUG (order 1, full mode, float64, cpu)",
            "E           *return g @ w.t(), (x.t() @ g) * 2  # BUG*",
        ]
    )


def test_assert_gradients_reads_the_nearest_pyproject(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.gradcli]\natol = 100.0\nrtol = 0.5\n")
    test_file = tmp_path / "test_loose.py"
    test_file.write_text(
        "import gradcli\n"
        "def check(f, inputs, **options):\n"
        "    return gradcli.assert_gradients(f, inputs, **options)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from test_loose import check

    wrong = engine.autograd.Function
    x = engine.randn(3, dtype=engine.float64, requires_grad=True)

    class Twice(wrong):
        @staticmethod
        def forward(ctx, a):
            return a * 3

        @staticmethod
        def backward(ctx, g):
            return g * 6

    result = check(Twice.apply, (x,))
    assert result.passed and result.settings.atol == 100.0 and result.settings.rtol == 0.5
    with pytest.raises(AssertionError, match=r"(?s)max abs err 3\.00e\+00.*return g \* 6"):
        check(Twice.apply, (x,), atol=1e-5)  # keywords over [tool.gradcli]
    sys.modules.pop("test_loose", None)


def test_assert_gradients_refuses_what_it_cannot_check():
    with pytest.raises(TypeError, match="unexpected option 'tol'"):
        gradcli.assert_gradients(lambda x: x, (engine.ones(2, requires_grad=True),), tol=1)
    with pytest.raises(ValueError, match="nothing to check"):
        gradcli.assert_gradients(lambda x: x * 2, (engine.ones(2),))
    with pytest.raises(ZeroDivisionError):
        gradcli.assert_gradients(lambda x: x, lambda: (1 / 0,))


def test_assert_gradients_checks_a_modules_parameters():
    model = engine.nn.Linear(3, 2)
    result = gradcli.assert_gradients(model, (engine.randn(4, 3, requires_grad=True),))
    assert [p.input for p in result.pairs if p.mode == "rev"] == ["input", "model.weight", "model.bias"]
    assert model.weight.dtype == engine.float32  # checked on float64 copies, restored


def test_the_entry_point_names_the_plugin():
    with open(ROOT / "pyproject.toml", "rb") as handle:
        declared = tomllib.load(handle)["project"]["entry-points"]["pytest11"]
    assert declared == {"gradcli": ENTRY_POINT}
    installed = _installed_entry_point()
    if installed is None:
        pytest.skip("gradcli is installed without its pytest11 entry point yet (reinstall it)")
    assert installed == ENTRY_POINT


def test_the_example_file_as_the_readme_shows_it(pytester):
    write(pytester, (ROOT / "examples" / "test_grads.py").read_text())
    result = run(pytester, "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "test_grads.py::swish PASSED*",
            "test_grads.py::cube FAILED*",
            "test_grads.py::test_swish_layer PASSED*",
            "FAILED test_grads.py::cube BUG (order 1, full mode, float64, cpu)",
            "  backward of Cube: test_grads.py:30",
            "*33 |     return grad_output * 3 * x  # BUG: should be 3 * x**2",
        ]
    )


KINKED = """
@gradcli.case(lambda: (engine.tensor([1e-7, -3e-7, 0.5, -0.5], dtype=engine.float64, requires_grad=True),))
def kinked(x):
    return x.abs() + x.relu()

def test_assert_kinked():
    x = engine.tensor([1e-7, 0.5], dtype=engine.float64, requires_grad=True)
    assert gradcli.assert_gradients(lambda x: x.abs(), (x,)).passed
"""


def test_kinks_pass_with_a_gradcli_warning_in_pytests_summary(pytester):
    write(pytester, KINKED, header=HEADER)
    result = run(pytester, "-rw")
    result.assert_outcomes(passed=2, warnings=2)
    result.stdout.fnmatch_lines(
        [
            "*warnings summary*",
            "test_grads.py::kinked",
            "  *test_grads.py:*: NondifferentiableWarning: kinked: x[[]0[]], x[[]1[]]: not differentiable within*",
            "test_grads.py::test_assert_kinked",
            "  *test_grads.py:*: NondifferentiableWarning: <lambda>: x[[]0[]]: not differentiable within*",
        ]
    )
    # the category is gradcli's, so a project can make kinks errors
    run(pytester, "-W", "error::gradcli.GradcliWarning").assert_outcomes(failed=2)


def test_no_warning_without_kinks(pytester):
    write(pytester, GRADS)
    result = run(pytester, "-k", "swish")
    result.assert_outcomes(passed=1, deselected=1)
    assert "NondifferentiableWarning" not in result.stdout.str()
