"""The fixes `gradcli anomaly` suggests are code that runs, and name what the script wrote.

Each script in tests/anomaly_scripts/torch_*.py is run as written (torch) and with `torch` read
as `engine`, whose API mirrors it: the same finding, the same fix, on both libraries.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from cli_runner import run_gradcli
from json_contract import validated
from paths import TESTS

SCRIPTS = TESTS / "anomaly_scripts"


@pytest.fixture(params=["torch", "engine"])
def library(request) -> str:
    if request.param == "torch":
        pytest.importorskip("torch")
    return request.param


@pytest.fixture
def script(library, tmp_path):
    """`script(name)`: the torch script, or its engine twin written beside the test."""

    def make(name: str) -> Path:
        path = SCRIPTS / name
        if library == "torch":
            return path
        twin = tmp_path / name.removeprefix("torch_")
        twin.write_text(path.read_text().replace("torch", "engine"))
        return twin

    return make


def line_of(path: Path, marker: str) -> int:
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# mark: {marker}"):
            return number
    raise AssertionError(f"{path.name} has no marker {marker!r}")


def only_finding(path: Path, kind: str) -> dict:
    result = run_gradcli("anomaly", "--json", path, traceback=True)
    doc = validated(result.stdout)
    assert [f["kind"] for f in doc["findings"]] == [kind], doc["findings"]
    assert result.exit_code == 1 == doc["exit_code"]
    return doc["findings"][0]


def test_a_block_with_submodules_is_named_by_its_class_not_its_repr(script):
    path = script("torch_nested_blocks.py")
    finding = only_finding(path, "inplace-modified-saved")
    assert (finding["location"]["file"], finding["location"]["line"]) == (
        str(path),
        line_of(path, "modified"),
    )
    assert (finding["details"]["module"], finding["details"]["module_class"]) == (
        "model.blocks.1",
        "ResBlock",
    )
    assert "then modified in place by model.blocks.1 (ResBlock) (now version 1)" in finding["message"]
    assert {r["role"] for r in finding["related"]} >= {"ResBlock.forward (model.blocks.1)"}


def test_the_leaf_fix_for_a_layers_weight_is_python_that_runs(library, script):
    path = script("torch_manual_sgd.py")
    finding = only_finding(path, "leaf-inplace")
    assert (finding["location"]["line"], finding["details"]["tensor"]) == (
        line_of(path, "culprit"),
        "model.0.weight",
    )
    assert finding["hint"] == (
        f"if this updates the parameter (an optimizer step), do it under `with {library}.no_grad():`; "
        "if the new value should be part of the graph, work on a copy: `weight = model[0].weight.clone()` first"
    )
    copy = finding["hint"].rsplit("`", 2)[1]
    nn = importlib.import_module(f"{library}.nn")
    scope = {"model": nn.Sequential(nn.Linear(3, 8), nn.Tanh())}
    exec(copy, scope)  # the suggested line runs: `model.0.weight = ...` would not even parse
    assert scope["weight"].grad_fn is not None
