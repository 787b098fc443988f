"""`gradcli diff` on declared pairs: the findings, exit codes, selection, JSON, JUnit, config."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from cli_runner import run_gradcli, run_gradcli_json
from paths import TESTS

FILES = TESTS / "diff" / "files"


def diff_json(*args: object) -> tuple[int, dict]:
    """`gradcli diff ARGS --json`: the exit code and the document, validated against its schema."""
    return run_gradcli_json("diff", *args, "--json")


PAIRS = FILES / "pairs.py"


def pair(document: dict, name: str) -> dict:
    return next(p for p in document["pairs"] if p["name"] == name)


def test_pairs_that_agree_exit_0():
    code, document = diff_json(f"{PAIRS}::same")
    assert code == 0 and document["agree"]
    same = pair(document, "same")
    assert same["verdict"] == "agree" and same["forward"] is None and same["backward"] is None
    assert [r["name"] for r in same["gradients"]] == ["x", "w"]
    assert {r["status"] for r in same["gradients"]} == {"agree"}
    assert same["nodes"] == [6, 6]


def test_a_wrong_backward_is_found_at_its_node_not_at_the_loss():
    code, document = diff_json(f"{PAIRS}::wrong_tanh")
    assert code == 1
    found = pair(document, "wrong_tanh")
    assert found["forward"] is None  # its forward is right
    backward = found["backward"]
    assert backward["what"] == "outgoing gradient 0"  # its incoming gradient agreed
    assert backward["reference"]["name"] == "TanhBackward0"
    assert backward["candidate"]["name"] == "WrongTanhBackward"
    assert backward["candidate"]["source"] == "h = WrongTanh.apply(x @ w)"
    assert backward["reference"]["source"] == "h = (x @ w).tanh()"
    assert backward["candidate"]["where"].endswith("pairs.py:35")
    assert backward["reference_shape"] == [4, 5] and backward["difference"]["size"] == 20
    assert {r["name"]: r["status"] for r in found["gradients"]} == {"x": "differ", "w": "differ"}
    assert found["output"]["status"] == "agree"


def test_a_forward_difference_is_named_where_it_starts():
    code, document = diff_json(f"{PAIRS}::scaled")
    assert code == 1
    forward = pair(document, "scaled")["forward"]
    assert forward["what"] == "output 0"
    assert forward["reference"]["name"] == forward["candidate"]["name"] == "MmBackward0"
    assert forward["candidate"]["source"] == "h = (x @ (w * 1.01)).tanh()"
    difference = forward["difference"]
    assert difference["size"] == 20 and len(difference["at"]) == 2
    assert difference["largest"] == pytest.approx(abs(difference["reference"] - difference["candidate"]))


def test_a_structural_difference_is_shown_side_by_side():
    code, document = diff_json(FILES / "structure.py")
    assert code == 1
    (found,) = document["pairs"]
    (gap,) = found["structure"]
    assert gap["reference"] == []
    assert [n["name"] for n in gap["candidate"]] == ["MulBackward0", "AddBackward0"]
    assert found["forward"]["reference"]["name"] == "SumBackward0"
    text = run_gradcli("diff", FILES / "structure.py").output
    assert "structure: ops on one side only" in text
    assert "-" in text.split("structure: ops on one side only")[1].splitlines()[1]


def test_modules_are_compared_with_the_same_parameter_values():
    code, document = diff_json(FILES / "modules.py")
    assert code == 0, document
    (found,) = document["pairs"]
    names = [r["name"] for r in found["gradients"]]
    assert names == [
        "x",
        "candidate.fc.weight",
        "candidate.fc.bias",
        "candidate.out.weight",
        "candidate.out.bias",
    ]
    # the fused silu is one op where the reference has two: aligned around them, shown
    assert [n["name"] for g in found["structure"] for n in g["reference"]] == [
        "SigmoidBackward0",
        "MulBackward0",
    ]
    assert [n["name"] for g in found["structure"] for n in g["candidate"]] == ["SiluBackward0"]


def test_text_report_fits_80_columns_and_names_both_sides():
    result = run_gradcli("diff", PAIRS, terminal_width=80)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert all(len(line) <= 80 for line in lines if not line.startswith(str(PAIRS))), result.output
    assert "WrongTanhBackward" in result.output and "TanhBackward0" in result.output
    assert lines[-1].startswith("1 agree, 3 differ in ")


def test_k_and_node_ids_select_pairs():
    code, document = diff_json(PAIRS, "-k", "tanh or same")
    assert [p["name"] for p in document["pairs"]] == ["same", "wrong_tanh"]
    assert document["summary"]["deselected"] == 2
    code, document = diff_json(f"{PAIRS}::nothing")
    assert code == 2
    assert "no pair named 'nothing'" in document["errors"][0]["message"]


def test_load_errors_exit_2(tmp_path):
    empty = tmp_path / "empty.py"
    empty.write_text("import engine\n")
    code, document = diff_json(empty)
    assert code == 2 and "no pairs found" in document["errors"][0]["message"]
    half = tmp_path / "half.py"
    half.write_text("def reference(x):\n    return x\n")
    code, document = diff_json(half)
    assert code == 2 and "`candidate`, `inputs` are not" in document["errors"][0]["message"]


def test_a_side_that_raises_is_an_error(tmp_path):
    raising = tmp_path / "raising.py"
    raising.write_text(
        "import engine\n\ndef reference(x):\n    return x.sum()\n\ndef candidate(x):\n"
        "    raise ValueError('not yet')\n\ninputs = (engine.ones(2, requires_grad=True),)\n"
    )
    code, document = diff_json(raising)
    assert code == 2
    assert document["pairs"][0]["error"].startswith("candidate raised ValueError: not yet")


def test_tolerances_from_the_command_line_and_from_the_project(tmp_path):
    code, _ = diff_json(f"{PAIRS}::shifted", "--atol", "1")
    assert code == 0
    (tmp_path / "pyproject.toml").write_text("[tool.gradcli]\natol = 1.0\n")
    (tmp_path / "pairs.py").write_text(PAIRS.read_text())
    code, document = diff_json(f"{tmp_path / 'pairs.py'}::shifted")
    assert code == 0 and document["pairs"][0]["atol"] == 1.0


def test_junit_holds_a_testcase_per_pair(tmp_path):
    report = tmp_path / "diff.xml"
    result = run_gradcli("diff", PAIRS, "--junitxml", report)
    assert result.exit_code == 1
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite.get("tests") == "4" and suite.get("failures") == "3"
    failed = {c.get("name"): c.find("failure") for c in suite.iter("testcase")}
    assert failed["same"] is None
    assert "WrongTanhBackward" in failed["wrong_tanh"].text


@pytest.mark.usefixtures("torch")
def test_torch_pairs_are_found_the_same_way():
    code, document = diff_json(FILES / "torch_pairs.py")
    assert code == 1
    backward = document["pairs"][0]["backward"]
    assert backward["candidate"]["name"] == "WrongSquareBackward"
    assert backward["what"] == "outgoing gradient 0"
