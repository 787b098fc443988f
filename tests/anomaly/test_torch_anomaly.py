"""`gradcli anomaly` on torch scripts: the same findings as on engine scripts, from torch's hooks.

Each script in tests/anomaly_scripts/torch_*.py marks its lines (`# mark: saved`, ...); the tests
run the real CLI (typer's CliRunner, one subprocess) and assert that the findings name them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT, TESTS

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch_parity

from json_contract import validated  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from gradcli.cli.app import app  # noqa: E402

SCRIPTS = TESTS / "anomaly_scripts"


def line_of(path: Path, marker: str) -> int:
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# mark: {marker}"):
            return number
    raise AssertionError(f"{path.name} has no marker {marker!r}")


def run(*args: str):
    result = CliRunner().invoke(app, ["anomaly", *map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "internal error" not in result.output, result.output
    return result


def run_json(script: Path):
    result = run("--json", script)
    return result, validated(result.stdout)


def where(location: dict) -> tuple[str, int]:
    return location["file"], location["line"]


def roles(finding: dict) -> dict[str, tuple[str, int]]:
    return {r["role"]: where(r) for r in finding["related"]}


def only_finding(script: Path, kind: str, code: int) -> dict:
    result, doc = run_json(script)
    assert result.exit_code == code == doc["exit_code"], result.output
    assert [f["kind"] for f in doc["findings"]] == [kind], doc["findings"]
    return doc["findings"][0]


def test_inplace_modified_saved_names_the_saving_and_the_modifying_lines():
    script = SCRIPTS / "torch_inplace_saved.py"
    finding = only_finding(script, "inplace-modified-saved", 1)
    assert where(finding["location"]) == (str(script), line_of(script, "modified"))
    assert roles(finding) == {
        "saved by SigmoidBackward0 (version 0)": (str(script), line_of(script, "saved")),
        "backward": (str(script), line_of(script, "backward")),
    }
    details = finding["details"]
    assert (details["tensor"], details["type"], details["shape"]) == ("y", "torch.FloatTensor", [3])
    assert (details["saved_by"], details["saved_version"], details["current_version"]) == (
        "SigmoidBackward0",
        0,
        1,
    )
    # torch's own words (it skips the check for hooked saved tensors; the instrument makes it)
    assert details["error"].startswith(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[torch.FloatTensor [3]], which is output 0 of Sigmoid, is at version 1; expected version 0 instead."
    )


def test_torchs_message_is_the_one_torch_gives_without_gradcli():
    script = SCRIPTS / "torch_inplace_saved.py"
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT)
    torch_error = plain.stderr.strip().splitlines()[-1].removeprefix("RuntimeError: ")
    _, doc = run_json(script)
    assert doc["findings"][0]["details"]["error"] == torch_error


def test_modifications_through_a_view_are_matched_to_the_saved_tensor():
    script = SCRIPTS / "torch_inplace_view.py"
    finding = only_finding(script, "inplace-modified-saved", 1)
    assert where(finding["location"]) == (str(script), line_of(script, "modified"))
    assert roles(finding) == {
        "saved by ExpBackward0 (version 0)": (str(script), line_of(script, "saved")),
        "modified in place (version 1 -> 2)": (str(script), line_of(script, "modified again")),
        "backward": (str(script), line_of(script, "backward")),
    }
    assert finding["details"]["modified_at"] == [
        f"{script}:{line_of(script, 'modified')}",
        f"{script}:{line_of(script, 'modified again')}",
    ]


def test_text_output_shows_both_lines():
    result = run(SCRIPTS / "torch_inplace_saved.py")
    assert result.exit_code == 1
    assert "<- saved by SigmoidBackward0 (version 0)" in result.output
    assert "<- modified in place (version 0 -> 1)" in result.output
    assert "1 error in " in result.output


def test_nan_in_backward_names_the_node_its_forward_line_and_gradient_statistics():
    script = SCRIPTS / "torch_nan_backward.py"
    finding = only_finding(script, "nan-in-where-branch", 1)
    assert (finding["details"]["node"], finding["details"]["output"]) == ("LogBackward0", 0)
    assert where(finding["location"]) == (str(script), line_of(script, "culprit"))
    assert roles(finding) == {
        "log: the branch not taken (LogBackward0)": (str(script), line_of(script, "culprit")),
        "backward": (str(script), line_of(script, "backward")),
    }
    stats = {s["name"]: s for s in finding["stats"]}
    into = stats["grad_output[0] (into LogBackward0)"]
    assert (into["nan"], into["min"], into["max"], into["dtype"]) == (0, 0.0, 1.0, "float32")
    saved = stats["saved self"]
    assert (saved["min"], saved["max"], saved["dtype"]) == (0.0, 4.0, "float32")
    out = stats["grad_input[0]"]
    assert (out["nan"], out["posinf"], out["numel"], out["min"], out["max"]) == (1, 0, 2, 0.25, 0.25)


def test_leaf_inplace_names_the_line_and_the_fix_in_torchs_terms():
    script = SCRIPTS / "torch_leaf_inplace.py"
    finding = only_finding(script, "leaf-inplace", 1)
    assert where(finding["location"]) == (str(script), line_of(script, "culprit"))
    assert roles(finding) == {"w defined": (str(script), line_of(script, "defined"))}
    assert finding["details"] == {"tensor": "w", "shape": [3], "through_view": False}
    assert "torch.no_grad()" in finding["hint"]


def test_grad_accumulation_without_zero_grad():
    script = SCRIPTS / "torch_grad_accumulation.py"
    finding = only_finding(script, "grad-accumulation", 0)
    assert where(finding["location"]) == (str(script), line_of(script, "culprit"))
    assert finding["details"] == {"tensors": ["model.weight", "model.bias"], "backward_calls": 4}
    assert roles(finding) == {"model defined": (str(script), line_of(script, "defined"))}
    assert run("--strict", script).exit_code == 1


def test_unused_parameters_of_a_module():
    script = SCRIPTS / "torch_unused_param.py"
    finding = only_finding(script, "unused-parameter", 0)
    assert where(finding["location"]) == (str(script), line_of(script, "culprit"))
    assert finding["details"]["tensors"] == ["model.skipped.bias", "model.skipped.weight"]
    assert roles(finding) == {"model defined": (str(script), line_of(script, "defined"))}


def test_a_clean_training_loop_has_no_findings_and_the_instrument_is_removed_after():
    result, doc = run_json(SCRIPTS / "torch_clean.py")
    assert result.exit_code == 0 and doc["findings"] == [] and doc["completed"] is True
    assert result.stderr.count("loss ") == 5
    # gone after the run: no mode left, torch's own version check back (hooks would disable it)
    assert torch._C._len_torch_function_stack() == 0
    y = torch.ones(2, requires_grad=True).exp()
    total = y.sum()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        total.backward()


def test_a_line_mixing_engine_and_torch_tensors_names_both():
    script = SCRIPTS / "torch_mixed.py"
    result, doc = run_json(script)
    assert result.exit_code == 2
    failure = doc["failure"]
    assert where(failure["location"]) == (str(script), line_of(script, "culprit"))
    assert failure["message"].startswith(
        "this line mixes engine and torch tensors (a is an engine.Tensor; b is a torch.Tensor)"
    )


def test_engine_scripts_never_import_torch_and_the_examples_run_as_documented():
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from gradcli.cli import app\n"
        "r = CliRunner().invoke(app, ['anomaly', 'examples/script.py'])\n"
        "assert r.exit_code == 1, r.output\n"
        "assert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    for name, kind in [
        ("script_inplace.py", "inplace-modified-saved"),
        ("script_nan.py", "nan-in-where-branch"),
    ]:
        done = subprocess.run(
            [sys.executable, "-m", "gradcli", "anomaly", "--json", f"examples/torch/{name}"],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert done.returncode == 1, done.stderr
        assert [f["kind"] for f in validated(done.stdout)["findings"]] == [kind]


@pytest.mark.parametrize(
    ("source", "kind", "code", "related"),
    [
        (
            "y = (x * x).sum()\ny.backward()\ny.backward()  # mark: culprit\n",
            "backward-twice",
            1,
            {},
        ),
        (
            "y = x.exp()  # mark: created\ny.backward()  # mark: culprit\n",
            "implicit-grad-nonscalar",
            1,
            {"y created": "created"},
        ),
        (
            "y = x.exp()  # mark: created\ny.sum().backward()\nprint(y.grad)  # mark: culprit\n",
            "nonleaf-grad-read",
            0,
            {"the non-leaf tensor created": "created"},
        ),
    ],
)
def test_torchs_other_autograd_errors_are_findings(tmp_path, source, kind, code, related):
    script = tmp_path / "script.py"
    script.write_text("import torch\n\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n" + source)
    finding = only_finding(script, kind, code)
    assert where(finding["location"]) == (str(script), line_of(script, "culprit"))
    assert roles(finding) == {
        role: (str(script), line_of(script, marker)) for role, marker in related.items()
    }


def test_inplace_relu_inside_sequential_names_the_module_its_forward_line_and_its_fix():
    script = SCRIPTS / "torch_module_inplace.py"
    finding = only_finding(script, "inplace-modified-saved", 1)
    assert where(finding["location"]) == (str(script), line_of(script, "model"))
    assert (finding["details"]["module"], finding["details"]["module_class"]) == (
        "model.2",
        "ReLU(inplace=True)",
    )
    assert "modified in place by model.2 (ReLU(inplace=True))" in finding["message"]
    assert finding["hint"].startswith("construct model.2 with inplace=False (`ReLU(inplace=False)`)")
    (forward,) = [r for r in finding["related"] if r["role"] == "ReLU.forward (model.2)"]
    assert forward["file"].endswith("torch/nn/modules/activation.py")
    assert forward["function"] == "forward" and "F.relu(input, inplace=self.inplace)" in forward["source"]


def test_a_module_that_does_not_change_in_place_keeps_the_generic_fix():
    script = SCRIPTS / "torch_inplace_saved.py"  # F.relu(inplace=True) at top level: no module
    finding = only_finding(script, "inplace-modified-saved", 1)
    assert "module" not in finding["details"]
    assert finding["hint"].startswith("compute out of place")
