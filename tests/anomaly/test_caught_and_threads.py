"""Errors the script does not let end it, on engine and torch alike (the `script` fixture): a NaN in
backward caught by a training loop, and one that ends a worker thread. Each is a finding (exit 1)
reported as an error ending the script would be (the user's lines, no raw traceback), and the
parameter whose backward the error cut short is not "unused"."""

from __future__ import annotations

from pathlib import Path

from cli_runner import run_gradcli
from json_contract import validated


def line_of(path: Path, marker: str) -> int:
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# mark: {marker}"):
            return number
    raise AssertionError(f"{path.name} has no marker {marker!r}")


def nan_found_and_went_on(path: Path):
    """gradcli anomaly --json on `path`: exit 1 with the one finding, the NaN at the script's culprit
    line, its backward related, said to have been caught or to have ended a thread."""
    result = run_gradcli("anomaly", "--json", path)
    document = validated(result.stdout)
    assert result.exit_code == document["exit_code"] == 1, result.output
    assert [f["kind"] for f in document["findings"]] == ["nan-in-backward"], document["findings"]
    finding = document["findings"][0]
    assert finding["location"]["line"] == line_of(path, "culprit")
    assert {r["role"]: r["line"] for r in finding["related"]} == {"backward": line_of(path, "backward")}
    assert "went on after this error" in finding["hint"]
    return result


def test_a_nan_the_training_loop_catches_is_found_and_its_parameter_is_not_unused(script):
    result = nan_found_and_went_on(script("torch_caught_nan_training.py"))
    assert "skipped 2 of 2 steps" in result.stderr  # the script ran on, catching each one


def test_a_nan_that_ends_a_worker_thread_is_a_finding_not_a_raw_traceback(script):
    result = nan_found_and_went_on(script("torch_thread_nan_worker.py"))
    assert "main thread done" in result.stderr
    assert "Exception in thread" not in result.stderr and "Traceback" not in result.stderr
