"""The engine's and gradcli's layers hold: no module imports from a layer above it, not even
inside a function.

The layers are declared once, in pyproject.toml's [tool.importlinter]; import-linter checks
them (function-level imports included), and that the engine never imports gradcli.
"""

import subprocess
import sys

import pytest
from paths import ROOT

ROOT = str(ROOT)


def test_import_contracts_are_kept():
    pytest.importorskip("importlinter")
    result = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 3 kept, 0 broken." in result.stdout
