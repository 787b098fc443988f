"""Human output at 60, 80, 120 and 200 columns: no line past the width, no number cut, line numbers kept.

The commands run in process with COLUMNS set, as a terminal of that width would set it (the
consoles of gradcli/render/console.py read it); off a terminal the output is plain text.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from cli_runner import run_gradcli
from paths import ROOT, TESTS

SCRIPTS = TESTS / "anomaly_scripts"
WIDTHS = (60, 80, 120, 200)
#: An ellipsis touching a digit, a point or an exponent: a number rich cut.
CUT_NUMBER = re.compile(r"[0-9.e+-]…|…[0-9]")

LONG_LINES = """
    import engine

    weights_for_the_first_layer_of_the_model = engine.randn(4, 3, dtype=engine.float64, requires_grad=True)
    activations_after_the_exponential = weights_for_the_first_layer_of_the_model.exp()  # saved by exp
    activations_after_the_exponential.add_(1.0)  # an in-place change of a tensor the backward still needs
    activations_after_the_exponential.sum().backward()
"""


def run(width: int, *args: str) -> str:
    return run_gradcli(*args, traceback=True, env={"COLUMNS": str(width)}).stdout


def assert_fits(output: str, width: int) -> None:
    assert output.strip()
    for line in output.splitlines():
        assert len(line) <= width, f"{len(line)} > {width}: {line!r}"
        assert not CUT_NUMBER.search(line), f"a number cut: {line!r}"


# ----------------------------------------------------------------------------- check


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("file", ["examples/model.py", "examples/buggy.py"])
def test_check_fits_every_width(width: int, file: str):
    output = run(width, "check", ROOT / file)
    assert_fits(output, width)
    # the essentials survive every width: the largest error beside its verdict
    assert re.search(r"\d\.\d\de[+-]\d\d .*(PASS|FAIL)", output)


def header(output: str) -> str:
    """The file table's header lines, down to its rule."""
    lines = output.splitlines()
    rule = next(n for n, line in enumerate(lines) if line.startswith("---"))
    return "\n".join(lines[1:rule])


def test_check_drops_time_and_mode_before_the_errors():
    wide, narrow = run(200, "check", ROOT / "examples/buggy.py"), run(60, "check", ROOT / "examples/buggy.py")
    assert all(name in header(wide) for name in ("time", "mode", "max rel err", "worst index"))
    assert "time" not in header(narrow) and "mode" not in header(narrow)
    assert "max abs" in header(narrow) and "2.33e+00" in narrow and "FAIL" in narrow


def test_check_names_wrap_after_underscores_not_mid_word():
    output = run(60, "check", ROOT / "examples/model.py")
    lines = output.splitlines()
    at = next(
        n for n, line in enumerate(lines) if line.startswith("swish_ ")
    )  # not "swish_seco" / "nd_order"
    assert lines[at + 1].strip() in ("second_", "second_order"), lines[at : at + 3]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.torch_parity
def test_failing_torch_check_fits(width: int):
    output = run(width, "check", ROOT / "examples/torch/check_function.py")
    assert_fits(output, width)
    assert "FAILED" in output and "backward of Cube" in output


def test_long_backward_line_wraps_under_its_code():
    output = run(60, "check", ROOT / "examples/buggy.py")
    numbered = [line for line in output.splitlines() if re.match(r" +2[01] \| ", line)]
    assert len(numbered) == 2  # lines 20 and 21 both keep their number
    after = output.splitlines()[output.splitlines().index(numbered[1]) + 1]
    assert after.startswith(" " * 9) and "transposed" in after  # the wrapped rest, under the code


# --------------------------------------------------------------------------- anomaly


def anomaly_scripts() -> list[Path]:
    return [ROOT / "examples/script.py", *sorted(SCRIPTS.glob("*.py"))]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("script", anomaly_scripts(), ids=lambda p: p.name)
def test_anomaly_fits_every_width(width: int, script: Path):
    if script.name.startswith("torch_"):
        pytest.importorskip("torch")
    output = run(width, "anomaly", script)
    assert_fits(output, width)
    culprit = re.search(r"> +(\d+) \|", output)
    if "ERROR" in output and "SCRIPT FAILED" not in output:
        assert culprit, output  # the culprit's line number is always there


@pytest.mark.parametrize("width", WIDTHS)
def test_anomaly_long_lines_put_roles_on_their_own_line(tmp_path: Path, width: int):
    script = tmp_path / "long.py"
    script.write_text(textwrap.dedent(LONG_LINES).lstrip())
    output = run(width, "anomaly", script)
    assert_fits(output, width)
    for number in (4, 5, 6):
        assert re.search(rf"\| +[> ] {number} \|", output), output
    # each role whole on one line: never folded into a column one letter wide
    assert "<- saved by ExpBackward0 (version 0)" in output
    assert "<- modified in place (version 0 -> 1)" in output
    if width < 200:  # the code does not fit beside its role: the role has a line of its own
        assert re.search(r"^\| +<- backward +\|$", output, re.M), output
    else:
        assert re.search(r"\.backward\(\) +<- backward", output), output


# -------------------------------------------------------------------- modules in findings

SEQUENTIAL_INPLACE_RELU = """
    import engine
    from engine import nn

    model = nn.Sequential(nn.Sigmoid(), nn.ReLU(inplace=True))
    X = engine.randn(5, 3, requires_grad=True)
    out = model(X)
    out.sum().backward()
"""


def test_inplace_relu_in_sequential_names_the_module_and_its_fix(tmp_path: Path):
    from json_contract import validated

    script = tmp_path / "seq.py"
    script.write_text(textwrap.dedent(SEQUENTIAL_INPLACE_RELU).lstrip())
    document = validated(run(200, "anomaly", "--json", script))
    (finding,) = document["findings"]
    assert finding["kind"] == "inplace-modified-saved"
    assert finding["details"]["module"] == "model.1"
    assert finding["details"]["module_class"] == "ReLU(inplace=True)"
    assert "modified in place by model.1 (ReLU(inplace=True))" in finding["message"]
    assert "inplace=False" in finding["hint"]
    forward = [r for r in finding["related"] if r["role"] == "ReLU.forward (model.1)"]
    assert forward and "relu" in forward[0]["source"]  # the module's forward line
    for width in (60, 80):
        output = run(width, "anomaly", script)
        assert_fits(output, width)
        assert "model.1" in output and "ReLU(inplace=False)" in output


def test_inplace_outside_modules_keeps_the_generic_fix():
    document = run(200, "anomaly", "--json", SCRIPTS / "inplace_saved.py")
    assert '"module"' not in document and "compute out of place" in document
