"""`gradcli check --dtype native`: a check in the case's own dtype, the analytical gradient against a
float64 numerical reference (--reference float64, the default) or a native one; eps and tolerances
from the dtype; the option from the case, the command line or [tool.gradcli]. Engine and torch.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from cli_runner import run_gradcli_json
from paths import ROOT
from typer.testing import CliRunner

from gradcli.check.tolerances import NATIVE
from gradcli.cli.app import app

KERNEL = """
import {lib} as torch
import gradcli

FACTOR = {factor}  # 1.0: the backward is right; 1.01: 1% off


class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return g * s * (1 + x * (1 - s)) * FACTOR


torch.manual_seed(0)
lin = torch.nn.Linear(6, 5).to(torch.{dtype})
norm = torch.nn.BatchNorm1d(5).to(torch.{dtype})


@gradcli.case(lambda: (torch.randn(8, 6, dtype=torch.{dtype}, requires_grad=True),), modules=lin{options})
def layer(x):
    return Swish.apply(norm(lin(x))).sum(1)
"""


def write(tmp_path: Path, lib, *, factor: float = 1.0, dtype: str = "float32", options: str = "") -> Path:
    path = tmp_path / "check_kernel.py"
    text = KERNEL.format(lib=lib.__name__, factor=factor, dtype=dtype, options=options)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def check(path: Path, *flags: str) -> tuple[int, dict]:
    return run_gradcli_json("check", path, "--json", *flags)


@pytest.mark.parametrize("reference", ["float64", "native"])
def test_a_right_float32_backward_passes_in_its_own_dtype(tmp_path, lib, reference):
    code, doc = check(write(tmp_path, lib), "--dtype", "native", "--reference", reference)
    (case,) = doc["cases"]
    assert code == 0, case["problems"] or [(p["input"], p["max_abs_err"]) for p in case["pairs"]]
    assert (case["dtype"], case["upcast"]) == ("float32", False)
    assert case["reference"] == ("float64" if reference == "float64" else "float32")
    eps, against_float64, against_native = NATIVE["float32"]
    expected = (1e-6, against_float64) if reference == "float64" else (eps, against_native)
    assert (case["settings"]["eps"], case["settings"]["atol"], case["settings"]["rtol"]) == (
        *expected,
        expected[1],
    )
    assert (case["settings"]["dtype"], case["settings"]["reference"]) == ("native", reference)
    assert [p["input"] for p in case["pairs"]] == ["x", "lin.weight", "lin.bias"]
    assert all(p["max_abs_err"] > 0 for p in case["pairs"])  # computed, not vacuously equal


@pytest.mark.parametrize("reference", ["float64", "native"])
def test_a_backward_one_percent_off_fails_in_float32(tmp_path, lib, reference):
    code, doc = check(write(tmp_path, lib, factor=1.01), "--dtype", "native", "--reference", reference)
    (case,) = doc["cases"]
    assert code == 1 and not case["problems"]
    assert {p["input"] for p in case["pairs"] if not p["passed"]} >= {"x", "lin.weight"}


def test_the_float64_reference_is_what_makes_float64_steps_usable(tmp_path, lib):
    """eps=1e-6 is below float32's rounding: with a native reference the numbers are noise, which
    only a larger step sees through (NOISE); with the float64 reference they agree at eps."""
    path = write(tmp_path, lib)
    code, doc = check(path, "--dtype", "native", "--eps", "1e-6")
    assert code == 0 and doc["cases"][0]["verdict"] == "PASS"
    code, doc = check(path, "--dtype", "native", "--reference", "native", "--eps", "1e-6")
    (case,) = doc["cases"]
    assert code == 0 and case["verdict"] == "NOISE" and case["settings"]["eps"] == 1e-6
    assert all(entry["how"].startswith("eps=") for pair in case["pairs"] for entry in pair["noise"])


def test_the_failure_headline_names_dtype_and_reference(tmp_path, lib):
    path = write(tmp_path, lib, factor=1.5)
    for flags, label in (
        (("--dtype", "native"), "float32 (native, float64 reference)"),
        (("--dtype", "native", "--reference", "native"), "float32 (native, float32 reference)"),
        ((), "float64 (upcast)"),
    ):
        result = CliRunner().invoke(app, ["check", str(path), *flags])
        text = " ".join(result.stdout.split())  # the headline wraps at the console's width
        assert result.exit_code == 1 and f"(order 1, full mode, {label}, cpu)" in text, result.stdout


def test_a_native_check_leaves_no_trace(tmp_path, lib):
    """BatchNorm's running statistics and the weights, read and perturbed in float32, are put back."""
    from gradcli.check.collection import Target, collect
    from gradcli.check.results import Settings
    from gradcli.check.run_case import run_case
    from gradcli.check.selection import compile_expression

    collected = collect([Target(str(write(tmp_path, lib)))], compile_expression(None))
    module = collected.prepared[0].file.module
    tensors = [*module.lin.parameters(), *module.norm.parameters(), *module.norm.buffers()]
    before = [(t.dtype, t.detach().clone() if lib.__name__ == "torch" else t._data.copy()) for t in tensors]
    for reference in ("float64", "native"):
        result = run_case(collected.prepared[0], Settings(dtype="native", reference=reference))
        assert result.passed and not result.upcast
    for t, (dtype, values) in zip(tensors, before):
        assert t.dtype == dtype and (t.detach() == values).all()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precisions_pass_with_their_own_tolerances(tmp_path, lib, dtype):
    path = tmp_path / "check_half.py"
    path.write_text(
        textwrap.dedent(
            f"""
            import {lib.__name__} as torch
            import gradcli

            torch.manual_seed(0)
            W = (torch.randn(3, 2) / 2).to(torch.{dtype})

            @gradcli.case(lambda: (torch.randn(4, 3, requires_grad=True).to(torch.{dtype}).detach().requires_grad_(),))
            def f(x):
                return torch.tanh(x @ W)
            """
        ).lstrip()
    )
    for reference in ("float64", "native"):
        code, doc = check(path, "--dtype", "native", "--reference", reference)
        (case,) = doc["cases"]
        assert code == 0, (reference, case["problems"], [p["max_abs_err"] for p in case["pairs"]])
        assert (
            case["dtype"] == dtype
            and case["settings"]["atol"] == NATIVE[dtype][1 if reference == "float64" else 2]
        )


def test_second_order_runs_in_the_native_dtype(tmp_path, lib):
    code, doc = check(write(tmp_path, lib), "--dtype", "native", "--order", "2", "-k", "layer")
    (case,) = doc["cases"]
    assert code == 0, case["problems"]
    assert {p["order"] for p in case["pairs"]} == {1, 2}


# ----------------------------------------------------------------- where the option comes from


def _project(tmp_path: Path, table: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.gradcli]\n{table}\n")


def test_the_option_comes_from_the_case_then_the_command_line_then_the_project(tmp_path, lib):
    engine_or_torch = lib
    path = write(tmp_path, engine_or_torch)
    _project(tmp_path, 'dtype = "native"\nreference = "native"')
    settings = check(path)[1]["cases"][0]["settings"]
    assert (settings["dtype"], settings["reference"]) == ("native", "native")
    settings = check(path, "--reference", "float64")[1]["cases"][0]["settings"]
    assert (settings["dtype"], settings["reference"]) == ("native", "float64")
    settings = check(path, "--dtype", "float64")[1]["cases"][0]["settings"]
    assert (settings["dtype"], settings["reference"], settings["eps"]) == ("float64", "float64", 1e-6)
    path = write(tmp_path, engine_or_torch, options=', dtype="float64"')
    code, doc = check(path, "--dtype", "native")
    assert doc["settings"]["dtype"] == "native" and doc["cases"][0]["settings"]["dtype"] == "float64"
    assert doc["cases"][0]["upcast"] and code == 0


def test_given_tolerances_win_over_the_dtypes(tmp_path, lib):
    _project(tmp_path, "atol = 0.5")
    code, doc = check(write(tmp_path, lib), "--dtype", "native", "--rtol", "0.25")
    settings = doc["cases"][0]["settings"]
    assert (settings["eps"], settings["atol"], settings["rtol"]) == (1e-6, 0.5, 0.25)
    # the run's settings are what the cases started from (command line over the project); the
    # dtype's eps is per case
    assert (doc["settings"]["eps"], doc["settings"]["atol"], doc["settings"]["rtol"]) == (None, 0.5, 0.25)


def test_wrong_values_are_refused_where_they_are_written(tmp_path, lib):
    result = CliRunner().invoke(app, ["check", str(write(tmp_path, lib)), "--dtype", "float32"])
    assert result.exit_code == 2 and "'float32' is not one of 'float64', 'native'" in result.stderr
    result = CliRunner().invoke(app, ["check", str(write(tmp_path, lib, options=', reference="half"'))])
    assert result.exit_code == 2
    assert 'gradcli.case(reference=...) must be "float64" or "native", not \'half\'' in result.stderr
    _project(tmp_path, 'dtype = "double"')
    result = CliRunner().invoke(app, ["check", str(write(tmp_path, lib))])
    assert (
        result.exit_code == 2 and '[tool.gradcli]: (dtype=...) must be "float64" or "native"' in result.stderr
    )


# ------------------------------------------------------------------------------ the docs

TIMES = re.compile(r"\d+\.\d+s\b")


def readme_block(command: str) -> str:
    readme = (ROOT / "docs" / "check.md").read_text()
    return readme.split(f"```text\n$ {command}\n", 1)[1].split("```", 1)[0]


def test_the_readme_shows_what_dtype_native_prints(monkeypatch):
    monkeypatch.chdir(ROOT)
    shown = readme_block("gradcli check examples/native.py --dtype native")
    result = CliRunner().invoke(app, ["check", "examples/native.py", "--dtype", "native"])
    assert result.exit_code == 1
    assert TIMES.sub("T", result.output).rstrip("\n") == TIMES.sub("T", shown).rstrip("\n")


def test_the_readme_shows_what_a_dtype_problem_prints(monkeypatch):
    monkeypatch.chdir(ROOT)
    shown = readme_block("gradcli check tests/corpus/dtype_error.py").removeprefix("...\n")
    result = CliRunner().invoke(app, ["check", "tests/corpus/dtype_error.py"])
    assert result.exit_code == 1 and shown.rstrip("\n") in result.output
