"""`gradcli check --modes`: forward mode's JVPs beside reverse mode's VJPs, on torch files.

A custom Function with a wrong `jvp` fails in forward mode only, and the report shows that jvp's
source; one without `jvp` passes with a note; each pair says what it compared, as JAX does.
"""

from __future__ import annotations

import textwrap

import pytest
from cli_runner import run_gradcli, run_gradcli_json

pytest.importorskip("torch")
pytestmark = pytest.mark.torch_parity

FUNCTIONS = """\
import torch

import gradcli


class WrongJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.exp()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.exp()

    @staticmethod
    def jvp(ctx, t):
        return t * 2


class NoJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return g * 3


x = torch.linspace(-1, 1, 3, dtype=torch.float64, requires_grad=True)


@gradcli.case(x)
def wrong(x):
    return WrongJvp.apply(x)


@gradcli.case(x)
def no_jvp(x):
    return NoJvp.apply(x).sin()


@gradcli.case(x, order=2)
def right(x):
    return x.tanh() * x
"""


@pytest.fixture
def path(tmp_path):
    file = tmp_path / "check_modes.py"
    file.write_text(FUNCTIONS)
    return file


def cases(document: dict) -> dict:
    return {case["name"]: case for case in document["cases"]}


def compared(case: dict) -> list[tuple]:
    return [(p["comparison"], p["mode"], p["order"], p["input"], p["passed"]) for p in case["pairs"]]


def test_both_modes_by_default_each_pair_labelled(path):
    code, document = run_gradcli_json("check", path, "--json")
    assert code == 1 and document["settings"]["modes"] == ["rev", "fwd"]
    found = cases(document)
    assert compared(found["wrong"]) == [("VJP", "rev", 1, "x", True), ("JVP", "fwd", 1, "x", False)]
    assert compared(found["right"]) == [
        ("VJP", "rev", 1, "x", True),
        ("JVP", "fwd", 1, "x", True),
        ("VJP of VJP", "rev", 2, "x", True),
        ("VJP of VJP", "rev", 2, "grad_out", True),
        ("JVP of VJP", "fwd", 2, "x", True),
        ("JVP of VJP", "fwd", 2, "grad_out", True),
    ]
    wrong = found["wrong"]
    assert wrong["verdict"] == "BUG" and wrong["reason"].startswith(
        "the forward-mode derivative (JVP) of out w.r.t. x is wrong at out[0] w.r.t. x[0]"
    )
    assert [(b["function"], b["line"]) for b in wrong["backwards"]] == [("WrongJvp.jvp", 17)]
    assert [p["mismatch_count"] for p in wrong["pairs"]] == [0, 3]


def test_a_function_without_jvp_passes_with_a_note(path):
    code, document = run_gradcli_json("check", f"{path}::no_jvp", "--json")
    (case,) = document["cases"]
    assert code == 0 and case["verdict"] == "PASS" and compared(case) == [("VJP", "rev", 1, "x", True)]
    assert case["notes"] == [
        f"forward mode not checked: NoJvp has no jvp, which forward-mode AD needs (at {path}:22)"
    ]


def test_the_text_report_names_the_comparison_and_the_jvp(path):
    result = run_gradcli("check", path, env={"COLUMNS": "120"})
    assert result.exit_code == 1
    lines = result.output.splitlines()
    (wrong,) = [line.split() for line in lines if line.startswith("wrong ")]
    assert wrong[:3] == ["wrong", "out", "x"] and wrong[-4:-2] == ["BUG", "(JVP)"]
    assert [line.split()[-3] for line in lines if line.startswith(("no_jvp ", "right "))] == ["PASS"] * 2
    assert "x (JVP): max abs err" in result.output
    assert f"jvp of WrongJvp: {path}:17" in result.output and "return t * 2" in result.output
    assert "NOTE" in result.output and "forward mode not checked" in result.output


@pytest.mark.parametrize(
    ("modes", "expected"),
    [("rev", ["VJP"]), ("fwd", ["JVP"]), ("fwd,rev", ["VJP", "JVP"]), (" rev , fwd ", ["VJP", "JVP"])],
)
def test_modes_choose_the_comparisons(path, modes, expected):
    code, document = run_gradcli_json("check", f"{path}::wrong", "--modes", modes, "--json")
    (case,) = document["cases"]
    assert [p["comparison"] for p in case["pairs"]] == expected
    assert code == (1 if "JVP" in expected else 0)
    assert case["settings"]["modes"] == [{"VJP": "rev", "JVP": "fwd"}[c] for c in expected]


def test_rows_agreeing_in_both_modes_name_no_mode(path):
    result = run_gradcli("check", f"{path}::right", env={"COLUMNS": "120"})
    assert result.exit_code == 0 and "(JVP)" not in result.output and "(VJP)" not in result.output


@pytest.mark.parametrize("modes", ["", "jvp", "rev,vjp", ","])
def test_bad_modes_are_a_usage_error(path, modes):
    result = run_gradcli("check", path, "--modes", modes)
    assert result.exit_code == 2
    assert f'--modes must be "rev", "fwd" or "rev,fwd", not {modes!r}' in result.output


def test_a_case_and_the_project_choose_modes_too(path, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gradcli]\nmodes = ["rev"]\n')
    source = path.read_text().replace(
        "@gradcli.case(x)\ndef no_jvp", '@gradcli.case(x, modes="fwd")\ndef no_jvp'
    )
    path.write_text(source)
    code, document = run_gradcli_json("check", path, "--json")
    found = cases(document)
    assert document["settings"]["modes"] == ["rev"] and code == 0
    assert [p["comparison"] for p in found["wrong"]["pairs"]] == ["VJP"]
    assert found["no_jvp"]["pairs"] == [] and found["no_jvp"]["notes"]  # forward mode only: a note


def test_a_bad_case_option_names_the_case_line(tmp_path):
    file = tmp_path / "check_bad.py"
    file.write_text(
        textwrap.dedent(
            """\
            import torch
            import gradcli

            @gradcli.case(torch.ones(2, dtype=torch.float64, requires_grad=True), modes=["rev", "jvp"])
            def f(x):
                return x * 2
            """
        )
    )
    result = run_gradcli("check", file)
    assert result.exit_code == 2
    assert (
        'gradcli.case(modes=...) must be "rev", "fwd" or "rev,fwd", not [\'rev\', \'jvp\']' in result.output
    )
    assert f"{file}:4" in result.output


def test_ordinary_torch_layers_in_both_modes():
    """LSTM, eval-mode BatchNorm with an in-place ReLU, Embedding, conv and pooling, SDPA: both
    modes pass; what torch has no forward AD for is a one-line note, the case still passing."""
    from paths import ROOT

    code, document = run_gradcli_json("check", ROOT / "tests/corpus/torch_modules_modes.py", "--json")
    found = cases(document)
    assert code == 0 and all(case["passed"] for case in found.values())
    for name in ("lstm_case", "batchnorm_eval", "embedding", "convnet", "sdpa"):
        assert {p["mode"] for p in found[name]["pairs"]} == {"rev", "fwd"} and found[name]["notes"] == [], (
            name
        )
    for name, op in (("attention", "aten::_native_multi_head_attention"), ("masked", "_cdist_forward")):
        assert {p["mode"] for p in found[name]["pairs"]} == {"rev"}
        (note,) = found[name]["notes"]
        assert f"Trying to use forward AD with {op} that does not support it" in note and "\n" not in note
