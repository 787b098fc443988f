"""Valid torch code runs under `gradcli anomaly` as under python: where torch refuses a hook
(torch.func's grad, vjp and jacrev disable saved-tensor hooks, as `disable_saved_tensors_hooks`
does; vmap's batched gradients cannot be read), the instrument steps aside there and a note says
what was not watched, and from which line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from cli_runner import run_gradcli
from json_contract import validated
from paths import ROOT, TESTS

pytest.importorskip("torch")
pytestmark = pytest.mark.torch_parity

SCRIPTS = TESTS / "anomaly_scripts"

SAVED = (
    "tensors saved for backward were not checked for in-place changes: saved-tensor hooks are disabled there"
)
BATCHED = "gradients batched by vmap were not checked for NaN/Inf"

# script, what its notes say was not watched
CASES = [
    ("torch_func_grad.py", [SAVED]),
    ("torch_jacrev_vmap.py", [SAVED, BATCHED]),
    ("torch_jacobian_vectorize.py", [BATCHED]),
    ("torch_disable_saved_hooks.py", [SAVED]),
]


def line_of(name: str, marker: str) -> int:
    lines = (SCRIPTS / name).read_text().splitlines()
    return next(n for n, text in enumerate(lines, 1) if text.rstrip().endswith(f"# mark: {marker}"))


def under_python(name: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(SCRIPTS / name)], capture_output=True, text=True, cwd=ROOT, env=environment
    )


@pytest.mark.parametrize(("name", "unwatched"), CASES)
def test_the_script_runs_as_under_python_and_a_note_says_what_was_not_watched(name, unwatched):
    python = under_python(name)
    assert python.returncode == 0, python.stderr
    result = run_gradcli("anomaly", "--json", SCRIPTS / name)
    document = validated(result.stdout)
    assert result.exit_code == python.returncode, result.output
    assert document["findings"] == [] and document["failure"] is None and document["completed"]
    assert result.stderr == python.stdout  # with --json, what the script prints goes to stderr
    notes = document["notes"]
    for what in unwatched:
        assert any(what in note for note in notes), notes
    unwatched_at = f"not watched at {SCRIPTS / name}:{line_of(name, 'unwatched')}"
    assert all(note.startswith(unwatched_at) for note in notes), notes


def test_the_text_report_shows_the_notes():
    name = "torch_disable_saved_hooks.py"
    result = run_gradcli("anomaly", SCRIPTS / name)
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert f"note: not watched at {SCRIPTS / name}:{line_of(name, 'unwatched')}" in text
    assert 'saved-tensor hooks are disabled there ("this model\'s activations are not to be hooked")' in text
