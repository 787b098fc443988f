"""A torch file where torch is not installed: exit 2 with the install hint, for every command;
a directory's torch files skipped by `check`, with the hint, and its other files checked.

torch is hidden from a fresh interpreter (`sys.modules["torch"] = None`: importing it then raises
ModuleNotFoundError, as on a machine without torch), so these run whether or not torch is
installed here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from json_contract import validated
from paths import ROOT

HINT = "this file imports torch, which is not installed: pip install 'gradcli[torch]'"

WITHOUT_TORCH = """
import sys

sys.modules["torch"] = None
from gradcli.cli import main
sys.argv = ["gradcli", *sys.argv[1:]]
main()
"""


def gradcli_without_torch(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_TORCH, *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


@pytest.mark.parametrize(
    "command, example, line",
    [
        ("check", "examples/torch/check_model.py", "import torch"),
        ("graph", "examples/torch/expr.py", "import torch"),
    ],
)
def test_check_and_graph_say_torch_is_missing(command: str, example: str, line: str) -> None:
    done = gradcli_without_torch(command, example)
    assert done.returncode == 2, done.stderr
    assert HINT in done.stderr
    assert f"{example}:" in done.stderr and line in done.stderr
    assert "Traceback" not in done.stderr


def test_anomaly_says_torch_is_missing() -> None:
    done = gradcli_without_torch("anomaly", "examples/torch/script_nan.py", "--json")
    assert done.returncode == 2, done.stderr
    failure = validated(done.stdout)["failure"]
    assert failure["reason"] == "missing-torch"
    assert failure["message"] == HINT
    assert failure["location"]["source"].strip() == "import torch"


def test_an_engine_file_runs_without_torch() -> None:
    done = gradcli_without_torch("check", "examples/model.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_directory_check_skips_its_torch_files_and_checks_the_rest(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    done = gradcli_without_torch("check", "examples/", "--junitxml", str(junit))
    assert done.returncode == 0, done.stdout + done.stderr
    skipped = [line for line in done.stderr.splitlines() if line.startswith("skipped: ")]
    assert skipped == [
        f"skipped: examples/torch/{name}.py:7: {HINT}" for name in ("check_function", "check_model")
    ]
    assert "examples/check_models.py" in done.stdout and "2 skipped" in done.stdout.splitlines()[-1]
    xml = junit.read_text()
    assert 'skipped="2"' in xml and '<skipped message="examples/torch/check_model.py:7: ' in xml


def test_a_directory_check_says_which_files_it_skipped_in_the_json() -> None:
    doc = validated(gradcli_without_torch("check", "examples/", "--json").stdout)
    assert doc["exit_code"] == 0 and doc["summary"]["skipped"] == 2 and doc["errors"] == []
    assert [(s["file"], s["message"]) for s in doc["skipped"]] == [
        ("examples/torch/check_function.py", HINT),
        ("examples/torch/check_model.py", HINT),
    ]


def test_a_torch_file_named_beside_its_directory_is_still_an_error() -> None:
    done = gradcli_without_torch("check", "examples/torch/check_model.py", "examples/torch/")
    assert done.returncode == 2
    assert f"error: examples/torch/check_model.py:7: {HINT}" in done.stderr
    assert f"skipped: examples/torch/check_function.py:7: {HINT}" in done.stderr


def test_a_directory_of_torch_files_only_collects_nothing() -> None:
    done = gradcli_without_torch("check", "examples/torch/")
    assert done.returncode == 5, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("2 skipped in ")
