"""`gradcli check`: the corpus of right and wrong custom Functions, exit codes, output formats.

In-process through typer's CliRunner (fast); two subprocess smoke tests run the real entry point.
"""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_runner import run_gradcli
from json_contract import validated
from paths import ROOT, TESTS
from typer.testing import CliRunner

from gradcli.cli.app import app

CORPUS = TESTS / "corpus"
GOOD = CORPUS / "good.py"
BAD = CORPUS / "bad.py"


def case_names(path: Path, prefix: str) -> list[str]:
    return re.findall(rf"^def ({prefix}\w+)\(", path.read_text(), flags=re.M)


GOOD_CASES = case_names(GOOD, "ok_")
BAD_CASES = case_names(BAD, "bug_")


def run(*args: str):
    return run_gradcli("check", *args)


def run_json(*args: str):
    result = run(*args, "--json")
    return result, validated(result.stdout)


def write(tmp_path: Path, source: str, name: str = "check_me.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source).lstrip())
    return path


# ----------------------------------------------------------------------------- corpus


def test_corpus_is_big_enough_and_names_are_unambiguous():
    assert len(GOOD_CASES) >= 20 and len(BAD_CASES) >= 20
    names = GOOD_CASES + BAD_CASES
    assert not [(a, b) for a in names for b in names if a != b and a in b]


@pytest.mark.parametrize("name", GOOD_CASES)
def test_correct_function_passes(name):
    result, doc = run_json(GOOD, "-k", name)
    assert result.exit_code == 0, result.output
    assert doc["summary"] == {**doc["summary"], "passed": 1, "failed": 0, "total": 1}


@pytest.mark.parametrize("name", BAD_CASES)
def test_wrong_function_fails(name):
    result, doc = run_json(BAD, "-k", name)
    assert result.exit_code == 1, result.output
    assert doc["summary"]["total"] == 1 and doc["summary"]["failed"] == 1
    case = doc["cases"][0]
    assert case["problems"] or any(not p["passed"] for p in case["pairs"])
    assert [b["function"] for b in case["backwards"]], "the failing backward's source is located"


def test_whole_bad_corpus_renders_every_failure():
    result = run(BAD)
    assert result.exit_code == 1
    assert f"{len(BAD_CASES)} failed in " in result.output
    assert result.output.count("FAILED ") == len(BAD_CASES)
    # a backward that raises: the problem names the user's line and shows it
    assert "no attribute 'result'" in result.output
    assert "return grad / (2 * ctx.result)" in result.output


def test_second_order_only_bug_needs_order_2():
    path = CORPUS / "second_order.py"
    assert run(path).exit_code == 0
    result, doc = run_json(path, "--order", "2")
    assert result.exit_code == 1
    failing = [p for p in doc["cases"][0]["pairs"] if not p["passed"]]
    assert failing and all(p["order"] == 2 for p in failing)
    assert failing[0]["input"] == "x" and failing[0]["output"] == "grad(x)"


def test_tolerances_from_the_command_line_and_per_case(tmp_path):
    assert run(BAD, "-k", "bug_wrong_constant", "--atol", "100").exit_code == 0
    path = write(
        tmp_path,
        """
        import engine
        import gradcli

        class Twice(engine.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return 2 * x

            @staticmethod
            def backward(ctx, g):
                return 2.01 * g

        @gradcli.case(engine.randn(3, dtype=engine.float64, requires_grad=True), rtol=1e-2)
        def loose(x):
            return Twice.apply(x)

        @gradcli.case(engine.randn(3, dtype=engine.float64, requires_grad=True))
        def strict(x):
            return Twice.apply(x)
        """,
    )
    result, doc = run_json(path)
    assert result.exit_code == 1
    assert {c["name"]: c["passed"] for c in doc["cases"]} == {"loose": True, "strict": False}
    assert doc["cases"][0]["settings"]["rtol"] == 1e-2


def test_mode_is_full_for_small_cases_fast_for_big_ones_and_forced_by_flags(tmp_path):
    path = write(
        tmp_path,
        """
        import engine
        import gradcli

        @gradcli.case(engine.randn(10, dtype=engine.float64, requires_grad=True))
        def small(x):
            return x.sin()

        @gradcli.case(engine.randn(40, 25, dtype=engine.float64, requires_grad=True))
        def big(x):
            return x.sin()
        """,
    )
    modes = lambda *flags: {c["name"]: c["mode"] for c in run_json(path, *flags)[1]["cases"]}
    assert modes() == {"small": "full", "big": "fast"}
    assert modes("--fast", "-k", "small") == {"small": "fast"}
    assert modes("--full", "-k", "big") == {"big": "full"}


# ------------------------------------------------------------------------ model form


def test_model_form_checks_every_parameter_by_name():
    result, doc = run_json(CORPUS / "model_form.py")
    assert result.exit_code == 0, result.output
    (case,) = doc["cases"]
    assert case["name"] == "model"
    inputs = [p["input"] for p in case["pairs"]]
    assert inputs == ["model.hidden.weight", "model.hidden.bias", "model.out.weight", "model.out.bias"]
    assert case["dtype"] == "float64"


def test_model_parameters_are_restored_exactly():
    from gradcli.check import loading, results
    from gradcli.check import run_case as checking

    loaded = loading.load_file(str(CORPUS / "model_form.py"))
    prepared = loading.prepare(loaded, loaded.cases[0])
    params = [p for _, p in prepared.params]
    before = [(p._data, p.dtype, p._data.copy()) for p in params]
    result = checking.run_case(prepared, results.Settings())
    assert result.passed
    for p, (data, dtype, values) in zip(params, before):
        assert p._data is data and p.dtype is dtype and (p._data == values).all() and p.grad is None


def test_model_without_named_parameters_and_a_wrong_parameter_gradient(tmp_path):
    path = write(
        tmp_path,
        """
        import engine

        class ScaleBackwardWrong(engine.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                ctx.save_for_backward(x, w)
                return x * w

            @staticmethod
            def backward(ctx, g):
                x, w = ctx.saved_tensors
                return g * w, g * w  # the weight's gradient should be g * x

        class Model:
            def __init__(self):
                self.w = engine.randn(4, requires_grad=True)

            def parameters(self):
                return [self.w]

            def __call__(self, x):
                return ScaleBackwardWrong.apply(x, self.w)

        model = Model()
        inputs = (engine.randn(4, requires_grad=True),)
        """,
    )
    result, doc = run_json(path)
    assert result.exit_code == 1
    verdicts = {p["input"]: p["passed"] for p in doc["cases"][0]["pairs"]}
    assert verdicts == {"x": True, "param[0]": False}


# ------------------------------------------------------------------------ exit code 2


def test_missing_file():
    result = run("no/such/file.py")
    assert result.exit_code == 2
    assert "no/such/file.py: file not found" in result.stderr


def test_syntax_error_names_its_line(tmp_path):
    path = write(tmp_path, "import engine\n\ndef f(x):\n    return x * = 2\n")
    result = run(path)
    assert result.exit_code == 2
    assert f"{path}:4: syntax error" in result.stderr


def test_exception_while_loading_names_the_innermost_user_line(tmp_path):
    path = write(
        tmp_path,
        """
        import engine

        def make():
            return engine.randn(3) @ engine.randn(4)

        f = lambda x: x
        inputs = (make(),)
        """,
    )
    result = run(path)
    assert result.exit_code == 2
    assert f"{path}:4: exception while loading: RuntimeError" in result.stderr
    assert "return engine.randn(3) @ engine.randn(4)" in result.stderr
    debug = CliRunner().invoke(app, ["check", str(path), "--debug"])
    assert debug.exit_code == 2 and "Traceback" in debug.stderr


def test_exception_in_an_inputs_factory(tmp_path):
    path = write(
        tmp_path,
        """
        import gradcli

        @gradcli.case(lambda: (1 / 0,))
        def g(x):
            return x
        """,
    )
    result = run(path)
    assert result.exit_code == 2
    assert f"{path}:3: exception while building the inputs of case 'g': ZeroDivisionError" in result.stderr


def test_no_cases_found(tmp_path):
    path = write(tmp_path, "import engine\nx = engine.randn(3)\n")
    result = run(path)
    assert result.exit_code == 2
    assert f"{path}: no cases found" in result.stderr


def test_f_without_inputs(tmp_path):
    path = write(tmp_path, "def f(x):\n    return x\n")
    result = run(path)
    assert result.exit_code == 2
    assert f"{path}:1: `f` is defined but `inputs` is not" in result.stderr


@pytest.mark.parametrize(
    "inputs, described",
    [
        ("(engine.arange(5),)", "int64 tensor"),
        ("(engine.randn(3), 2)", "float32 tensor without requires_grad"),
    ],
)
def test_no_float_input_requiring_grad(tmp_path, inputs, described):
    path = write(tmp_path, f"import engine\n\ndef f(x, n=1):\n    return x * n\n\ninputs = {inputs}\n")
    result = run(path)
    assert result.exit_code == 2
    assert f"{path}:6: case 'f': no input is a floating-point tensor with requires_grad=True" in result.stderr
    assert described in result.stderr


def test_unknown_case_option_is_reported_at_its_line(tmp_path):
    path = write(
        tmp_path,
        """
        import engine
        import gradcli

        @gradcli.case(engine.randn(3, requires_grad=True), tol=1e-3)
        def g(x):
            return x
        """,
    )
    result = run(path)
    assert result.exit_code == 2
    assert f"{path}:4: exception while loading: TypeError: gradcli.case() got an unexpected option 'tol'" in (
        result.stderr
    )


def test_model_that_is_a_class(tmp_path):
    path = write(
        tmp_path, "class Net:\n    def parameters(self):\n        return []\n\nmodel = Net\ninputs = ()\n"
    )
    result = run(path)
    assert result.exit_code == 2 and f"{path}:5: `model` is the class Net" in result.stderr


def test_errors_in_several_files_are_all_reported(tmp_path):
    result = run(tmp_path / "a.py", tmp_path / "b.py", GOOD)
    assert result.exit_code == 2
    assert "a.py: file not found" in result.stderr and "b.py: file not found" in result.stderr
    assert "2 errors in" in result.stdout


def test_device_cuda_without_cupy_is_a_one_line_usage_error():
    pytest.importorskip("numpy")
    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy is installed here")
    except ImportError:
        pass
    result = run(GOOD, "--device", "cuda")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "CuPy is not installed" in lines[0] and "pip install" in lines[0]


def test_bad_option_values_are_usage_errors():
    assert CliRunner().invoke(app, ["check", str(GOOD), "--order", "3"]).exit_code == 2
    assert CliRunner().invoke(app, ["check", str(GOOD), "--device", "tpu"]).exit_code == 2


# ---------------------------------------------------------------------- selection, JSON


def test_k_selects_by_substring_and_by_glob():
    names = lambda *flags: [c["name"] for c in run_json(GOOD, *flags)[1]["cases"]]
    assert names("-k", "SQRT") == ["ok_sqrt"]
    assert names("-k", "ok_s*") == [n for n in GOOD_CASES if n.startswith("ok_s")]
    result = run(GOOD, "-k", "nothing_like_this")  # nothing collected: pytest's exit code 5
    assert result.exit_code == 5 and f"{len(GOOD_CASES)} deselected in" in result.stdout


def test_json_schema(tmp_path):
    result, doc = run_json(ROOT / "examples" / "buggy.py")
    assert result.exit_code == 1
    assert doc["schema"] == "gradcli.check/1" and doc["exit_code"] == 1 and doc["passed"] is False
    assert set(doc) == {
        "schema", "version", "passed", "exit_code", "summary", "settings", "errors", "skipped", "cases",
    }  # fmt: skip
    assert set(doc["summary"]) == {"passed", "failed", "errors", "total", "deselected", "skipped", "elapsed"}
    assert doc["skipped"] == [] and doc["summary"]["skipped"] == 0
    assert set(doc["settings"]) == {
        "order",
        "modes",
        "fast",
        "eps",
        "atol",
        "rtol",
        "nondet_tol",
        "dtype",
        "reference",
        "device",
        "seed",
        "pattern",
    }
    assert (doc["settings"]["eps"], doc["settings"]["dtype"], doc["settings"]["reference"]) == (
        1e-6,
        "float64",
        "float64",
    )
    (case,) = doc["cases"]
    assert set(case) == {
        "file", "name", "line", "passed", "order", "mode", "localized", "device", "dtype", "upcast",
        "elapsed", "differentiable_elements", "settings", "verdict", "reason", "problems", "backwards",
        "graph_cuts", "no_gradient", "pairs", "warnings", "notes", "reference",
    }  # fmt: skip
    assert (case["dtype"], case["reference"], case["settings"]["dtype"]) == ("float64", "float64", "float64")
    assert case["backwards"][0]["function"] == "Linear.backward"
    pair = next(p for p in case["pairs"] if not p["passed"])
    assert set(pair) == {
        "input", "output", "input_index", "output_index", "order", "mode", "comparison", "passed", "input_shape", "output_shape",
        "jacobian_shape", "max_abs_err", "max_rel_err", "worst_input_index", "worst_output_index",
        "numerical", "analytical", "mismatch_count", "mismatch_count_exact", "mismatches", "nondifferentiable",
        "noise", "estimates_tried", "verdict",
    }  # fmt: skip
    assert pair["input"] == "weight" and pair["input_shape"] == [3, 3]
    mismatch = pair["mismatches"][0]
    assert set(mismatch) == {"output_index", "input_index", "numerical", "analytical"}
    assert isinstance(mismatch["input_index"], list)

    missing, doc = run_json(tmp_path / "gone.py")
    assert missing.exit_code == 2 and doc["exit_code"] == 2 and doc["cases"] == []
    assert doc["errors"] == [
        {"file": str(tmp_path / "gone.py"), "line": None, "message": "file not found", "source": None}
    ]


def test_undefined_relative_error_is_a_dash_in_the_table_and_inf_in_json(tmp_path):
    path = write(
        tmp_path,
        """
        import engine
        import gradcli
        from engine.autograd import Function


        def constant(slope):
            class Constant(Function):
                @staticmethod
                def forward(ctx, x):
                    return x * 0.0

                @staticmethod
                def backward(ctx, grad):
                    return grad * slope  # the derivative of a constant is 0

            return Constant.apply


        small, big = constant(0.5), constant(7.0)


        @gradcli.case(engine.randn(3, dtype=engine.float64, requires_grad=True))
        def off_by_half(x):
            return small(x)


        @gradcli.case(engine.randn(3, dtype=engine.float64, requires_grad=True))
        def off_by_seven(x):
            return big(x)
        """,
    )
    result = run(path)
    assert result.exit_code == 1
    rows = [line.split() for line in result.stdout.splitlines() if line.startswith("off_by_")]
    assert [row[4] for row in rows] == ["-", "-"]  # the max rel err column
    assert "max rel err" not in result.stdout.split("FAILED", 1)[1]
    _, doc = run_json(path)
    assert [case["pairs"][0]["max_rel_err"] for case in doc["cases"]] == ["inf", "inf"]


def test_json_stdout_stays_clean_when_user_code_prints(tmp_path):
    path = write(
        tmp_path,
        """
        import engine
        print("hello from the check file")

        def f(x):
            print("in f")
            return x * 2

        inputs = (engine.randn(2, dtype=engine.float64, requires_grad=True),)
        """,
    )
    result, doc = run_json(path)
    assert result.exit_code == 0 and doc["passed"] is True
    assert "hello from the check file" in result.stderr


def test_human_output_for_a_failure(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = run("examples/buggy.py")
    assert result.exit_code == 1
    out = result.stdout
    assert "FAILED examples/buggy.py::linear" in out
    assert "backward of Linear: examples/buggy.py:17" in out
    assert "grad_weight = x.t() @ grad_output" in out
    assert re.search(r"weight\s+\(3, 3\).*BUG", out)
    assert re.search(r"1 failed in \d+\.\d\ds$", out.strip())


# --------------------------------------------------------------------- real entry point


def subprocess_run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )


def test_entry_point_on_the_examples():
    ok = subprocess_run("-m", "gradcli", "check", "examples/model.py")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert re.search(r"\d+ passed in", ok.stdout)
    bad = subprocess_run("-m", "gradcli", "check", "examples/buggy.py")
    assert bad.returncode == 1 and "FAILED" in bad.stdout and "Traceback" not in bad.stdout + bad.stderr


def test_import_gradcli_is_light():
    probe = "import sys, gradcli; print(sorted(m for m in ('typer', 'pydantic', 'rich', 'click') if m in sys.modules))"
    result = subprocess_run("-c", probe)
    assert result.returncode == 0 and result.stdout.strip() == "[]", result.stdout + result.stderr
