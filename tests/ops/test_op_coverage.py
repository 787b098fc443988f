"""scripts/op_coverage.py: the count of PyTorch's public names the engine has (torch is the reference)."""

import json
import os
import subprocess
import sys

import pytest
from paths import ROOT

SCRIPT = os.path.join(str(ROOT), "scripts", "op_coverage.py")


@pytest.mark.torch_parity
def test_report_counts_what_the_engine_has():
    out = subprocess.run(
        [sys.executable, SCRIPT, "--json"], capture_output=True, text=True, check=True
    ).stdout
    report = json.loads(out)["namespaces"]
    torch_ns = report["torch"]
    assert "exp" in torch_ns["present"] and "float64" in torch_ns["present"]
    assert "exp" not in torch_ns["missing"]
    for entry in report.values():
        assert len(entry["present"]) + len(entry["missing"]) == entry["total"]
        assert not set(entry["present"]) & set(entry["missing"])
    assert "mse_loss" in report["torch.nn.functional"]["present"]


def test_without_torch_it_says_so():
    env = dict(os.environ, PYTHONPATH="")
    code = (
        "import sys, runpy; sys.modules['torch'] = None; path = sys.argv[1]; sys.argv = [path]; "
        "runpy.run_path(path, run_name='__main__')"
    )
    result = subprocess.run([sys.executable, "-c", code, SCRIPT], capture_output=True, text=True, env=env)
    assert result.returncode == 2
    assert "torch is not installed" in result.stderr
