"""A torch file where torch is not installed: exit 2 with the install hint, for every command.

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

ROOT = Path(__file__).resolve().parent.parent
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
