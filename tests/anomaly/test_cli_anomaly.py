"""`gradcli anomaly`: one small script per finding kind, exit codes, output formats.

Each script in tests/anomaly_scripts/ marks its lines (`# mark: culprit`, `# mark: saved`, ...);
the tests assert that the finding names exactly those lines. In-process through click's
CliRunner; one subprocess smoke test runs the real entry point.
"""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import typer
from cli_runner import run_gradcli
from json_contract import validated
from paths import ROOT, TESTS

import engine
import gradcli
from engine.autograd import anomaly as engine_anomaly

SCRIPTS = TESTS / "anomaly_scripts"
EXAMPLE = ROOT / "examples" / "script.py"


def line_of_text(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(text))


def line_of(path: Path, marker: str) -> int:
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# mark: {marker}"):
            return number
    raise AssertionError(f"{path.name} has no marker {marker!r}")


def run(*args: str):
    return run_gradcli("anomaly", *args, traceback=True)  # a script's own traceback is its output


def run_json(script: Path | str, *args: str):
    result = run("--json", script, *args)
    return result, validated(result.stdout)


def where(location: dict) -> tuple[str, int]:
    return location["file"], location["line"]


def write(tmp_path: Path, source: str, name: str = "script.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source).lstrip())
    return path


# ---------------------------------------------------------------- one script per kind

# script, extra options, kind, severity, exit code, {role prefix of a related line: its marker}
CASES = [
    (
        "inplace_saved.py",
        (),
        "inplace-modified-saved",
        "error",
        1,
        {"saved by ExpBackward0 (version 0)": "saved", "backward": "backward"},
    ),
    ("leaf_inplace.py", (), "leaf-inplace", "error", 1, {"w defined": "defined"}),
    ("no_grad_view_inplace.py", (), "no-grad-view-inplace", "error", 1, {"head made": "made"}),
    ("nan_backward.py", (), "nan-in-backward", "error", 1, {"backward": "backward"}),
    ("inf_backward.py", (), "inf-in-backward", "error", 1, {"backward": "backward"}),
    ("nan_forward.py", ("--check-forward",), "nan-in-forward", "error", 1, {}),
    (
        "backward_twice.py",
        (),
        "backward-twice",
        "error",
        1,
        {"first backward": "first", "MulBackward0 created": "forward"},
    ),
    ("implicit_nonscalar.py", (), "implicit-grad-nonscalar", "error", 1, {"y created": "created"}),
    ("autograd_error.py", (), "autograd-error", "error", 1, {}),
    ("grad_accumulation.py", (), "grad-accumulation", "warning", 0, {"w defined": "defined"}),
    ("nonleaf_grad.py", (), "nonleaf-grad-read", "warning", 0, {"the non-leaf tensor created": "created"}),
    ("unused_param.py", (), "unused-parameter", "warning", 0, {"w2 defined": "defined"}),
]


@pytest.mark.parametrize(("name", "options", "kind", "severity", "code", "related"), CASES)
def test_each_kind_names_the_culprit_and_related_lines(name, options, kind, severity, code, related):
    script = SCRIPTS / name
    result, doc = run_json(script, *options)
    assert result.exit_code == code == doc["exit_code"], result.output
    assert len(doc["findings"]) == 1, doc["findings"]
    finding = doc["findings"][0]
    assert (finding["kind"], finding["severity"]) == (kind, severity)
    culprit = "modified" if kind == "inplace-modified-saved" else "culprit"
    assert where(finding["location"]) == (str(script), line_of(script, culprit))
    assert (
        finding["location"]["source"]
        == script.read_text().splitlines()[finding["location"]["line"] - 1].strip()
    )
    found = {r["role"]: where(r) for r in finding["related"]}
    for role, marker in related.items():
        matches = [w for r, w in found.items() if r.startswith(role)]
        assert matches == [(str(script), line_of(script, marker))], (role, found)
    assert finding["hint"] or kind == "autograd-error"


def test_inplace_modified_saved_details_and_the_engines_own_message():
    script = SCRIPTS / "inplace_saved.py"
    _, doc = run_json(script)
    details = doc["findings"][0]["details"]
    assert details["tensor"] == "z" and details["shape"] == [2] and details["type"] == "engine.FloatTensor"
    assert (details["saved_by"], details["saved_version"], details["current_version"]) == (
        "ExpBackward0",
        0,
        1,
    )
    assert details["modified_at"] == [f"{script}:{line_of(script, 'modified')}"]
    # The engine's message: torch's words, then (anomaly mode) the two lines.
    assert details["error"].startswith(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[engine.FloatTensor [2]], which is output 0 of Exp, is at version 1; expected version 0 instead. "
    )
    assert f"line {line_of(script, 'saved')}, in <module>\n    z = y.exp()" in details["error"]
    assert f"line {line_of(script, 'modified')}, in <module>\n    z.add_(1)" in details["error"]


def test_nan_and_inf_in_backward_carry_statistics_of_the_nodes_tensors():
    _, doc = run_json(SCRIPTS / "nan_backward.py")
    finding = doc["findings"][0]
    assert finding["details"] == {"node": "SqrtBackward0", "output": 0, "cause": "sqrt-at-zero"}
    stats = {s["name"]: s for s in finding["stats"]}
    assert stats["grad_output[0] (into SqrtBackward0)"]["nan"] == 0
    assert stats["saved result"]["min"] == 0.0 and stats["saved result"]["max"] == 2.0
    grad = stats["grad_input[0] (to AccumulateGrad)"]
    assert (grad["nan"], grad["posinf"], grad["numel"], grad["shape"]) == (1, 0, 2, [2])

    _, doc = run_json(SCRIPTS / "inf_backward.py")
    finding = doc["findings"][0]
    assert finding["message"].startswith("SqrtBackward0 returned inf values in its 0th output")
    grad = {s["name"]: s for s in finding["stats"]}["grad_input[0] (to AccumulateGrad)"]
    assert (grad["nan"], grad["posinf"], grad["min"], grad["max"]) == (0, 1, 0.25, 0.25)


def test_check_forward_is_opt_in_and_reports_the_first_op_with_its_inputs():
    result, doc = run_json(SCRIPTS / "nan_forward.py")
    assert result.exit_code == 0 and doc["findings"] == []  # log(-3) is nan, but its gradient is finite
    _, doc = run_json(SCRIPTS / "nan_forward.py", "--check-forward")
    finding = doc["findings"][0]
    assert finding["details"]["node"] == "LogBackward0" and "from finite inputs" in finding["message"]
    assert [(s["name"], s["nan"]) for s in finding["stats"]] == [("output", 1), ("input 0", 0)]


def test_warnings_are_collected_and_strict_makes_them_count():
    script = SCRIPTS / "grad_accumulation.py"
    result, doc = run_json(script)
    finding = doc["findings"][0]
    assert finding["count"] == 4 and finding["details"] == {"tensors": ["w"], "backward_calls": 4}
    assert "tensor([20.])" in result.stderr  # the script's prints go to stderr under --json
    result, doc = run_json(script, "--strict")
    assert result.exit_code == 1 and doc["strict"] is True


def test_the_seeds_tip1_with_zeroing_is_clean(tmp_path):
    """Seed 001's loop zeroes w.grad; x.grad accumulates but is never used, so it is not flagged."""
    source = """
        import engine as torch

        w = torch.tensor([1.], requires_grad=True)
        x = torch.tensor([2.], requires_grad=True)

        for _ in range(4):
            a = torch.add(w, x)
            b = torch.add(w, 1)
            y = torch.mul(a, b)

            y.backward()
            print(w.grad)
            w.grad.zero_()
    """
    script = write(tmp_path, source)
    result, doc = run_json(script)
    assert result.exit_code == 0 and doc["findings"] == []
    assert result.stderr.count("tensor([5.])") == 4


def test_grad_accumulation_through_an_optimizer_without_zero_grad(tmp_path):
    if not hasattr(engine, "optim") or not hasattr(engine, "nn"):
        pytest.skip("engine.nn / engine.optim not available")
    source = """
        import engine
        engine.manual_seed(0)
        model = engine.nn.Linear(3, 1)
        opt = engine.optim.SGD(model.parameters(), lr=0.01)
        x, y = engine.randn(8, 3), engine.randn(8, 1)
        for _ in range(5):
            {zero}
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()  # mark: culprit
            opt.step()
    """
    bad = write(tmp_path, source.replace("{zero}", "pass"), "bad.py")
    _, doc = run_json(bad)
    assert [f["kind"] for f in doc["findings"]] == ["grad-accumulation"]
    assert doc["findings"][0]["details"]["tensors"] == ["model.weight", "model.bias"]
    assert doc["findings"][0]["location"]["line"] == line_of(bad, "culprit")
    good = write(tmp_path, source.replace("{zero}", "opt.zero_grad()"), "good.py")
    result, doc = run_json(good)
    assert result.exit_code == 0 and doc["findings"] == []


def test_a_clean_training_loop_has_no_findings():
    result, doc = run_json(SCRIPTS / "clean_training.py", "5")
    assert result.exit_code == 0, result.output
    assert doc["findings"] == [] and doc["failure"] is None and doc["completed"] is True
    assert doc["argv"] == [str(SCRIPTS / "clean_training.py"), "5"]
    result = run(SCRIPTS / "clean_training.py")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1].startswith(f"no anomalies in {SCRIPTS / 'clean_training.py'}")


# ----------------------------------------------------------------- running the script


def test_the_script_runs_as_main_with_its_arguments_and_the_device():
    script = SCRIPTS / "argv_main.py"
    result = run(script, "a", "--", "--b", "--json")
    assert result.exit_code == 0
    assert "ARGV ['a', '--b', '--json']" in result.stdout
    assert "DEVICE cpu" in result.stdout
    result = run(script, "x", "--strict")  # gradcli's own options are taken wherever they are
    assert "ARGV ['x']" in result.stdout


def test_engine_state_and_the_interpreter_are_restored_after_a_run():
    main, argv = sys.modules["__main__"], list(sys.argv)
    run(SCRIPTS / "inplace_saved.py")
    assert not engine.autograd.is_anomaly_enabled() and engine_anomaly.observer is None
    assert sys.modules["__main__"] is main and sys.argv == argv


def test_an_error_unrelated_to_autograd_exits_2_with_the_users_frames_only():
    script = SCRIPTS / "unrelated_error.py"
    result, doc = run_json(script)
    assert result.exit_code == 2 and doc["findings"] == []
    failure = doc["failure"]
    assert failure["reason"] == "exception" and failure["message"] == "ZeroDivisionError: division by zero"
    assert where(failure["location"]) == (str(script), line_of(script, "culprit"))
    frames = [where(f) for f in failure["traceback"]]
    assert frames[0] == (str(script), line_of(script, "caller"))
    assert {f for f, _ in frames} == {str(script)}  # no gradcli, typer or runpy frames
    text = run(script).stdout
    assert "SCRIPT FAILED exception" in text
    # by the modules' own folders: the checkout's path may well contain "gradcli/" or "typer"
    for internal in (os.path.dirname(gradcli.__file__), os.path.dirname(typer.__file__), runpy.__file__):
        assert internal not in text


@pytest.mark.parametrize(
    ("source", "reason", "code"),
    [
        ("x = (\n", "syntax-error", 2),
        ("import sys\nsys.exit(3)\n", "exit-status", 2),
        ("import sys\nsys.exit(0)\n", None, 0),
        ("raise KeyError('k')\n", "exception", 2),
    ],
)
def test_scripts_that_cannot_run_or_exit(tmp_path, source, reason, code):
    script = tmp_path / "s.py"
    script.write_text(source)
    result, doc = run_json(script)
    assert result.exit_code == code
    assert (doc["failure"] or {}).get("reason") == reason
    if reason == "syntax-error":
        assert doc["failure"]["location"]["line"] == 1


def test_a_missing_script_and_an_unavailable_device():
    result, doc = run_json(SCRIPTS / "missing.py")
    assert result.exit_code == 2 and doc["failure"]["reason"] == "not-found"
    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy is installed: --device cuda may work here")
    except ImportError:
        pass
    result, doc = run_json("--device", "cuda", SCRIPTS / "clean_training.py")
    assert result.exit_code == 2 and doc["failure"]["reason"] == "device"


# --------------------------------------------------------------------------- output


def test_the_example_panel_highlights_the_lines(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = run("examples/script.py")
    assert result.exit_code == 1
    text = result.stdout
    assert "ERROR inplace-modified-saved" in text
    assert (
        f"examples/script.py:{line_of_text(EXAMPLE, 'b[0] = 1000.0')}  b [engine.FloatTensor [2]] was saved"
        in text
    )
    assert re.search(r"> 11 \|\s+b\[0\] = 1000\.0 .*<- modified in place \(version 0 -> 1\)", text)
    assert re.search(r"  10 \|\s+loss = \(b \* b\)\.mean\(\) .*<- saved by MulBackward0 \(version 0\)", text)
    assert re.search(r"  12 \|\s+loss\.backward\(\) .*<- backward", text)
    assert "Error detected in" not in result.output  # the engine's warning became the finding
    assert text.splitlines()[-1].startswith("1 error in examples/script.py")


def test_readme_shows_the_real_output_of_the_example(monkeypatch):
    monkeypatch.chdir(ROOT)
    real = run("examples/script.py").stdout
    readme = (ROOT / "README.md").read_text()
    block = readme.split("$ gradcli anomaly examples/script.py\n", 1)[1].split("```", 1)[0]
    timing = re.compile(r"\(\d+\.\d+s\)")
    assert timing.sub("(T)", block) == timing.sub("(T)", real)


def test_the_real_entry_point():
    done = subprocess.run(
        [sys.executable, "-m", "gradcli", "anomaly", "--json", "examples/script.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    doc = validated(done.stdout)
    assert doc["schema"] == "gradcli.anomaly/1"
    assert [(f["kind"], f["location"]["line"]) for f in doc["findings"]] == [("inplace-modified-saved", 11)]
