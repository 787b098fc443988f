"""The fixes `gradcli anomaly` suggests are code that runs, and name what the script wrote.

Each script in tests/anomaly_scripts/torch_*.py is run as written (torch) and with `torch` read
as `engine`, whose API mirrors it: the same finding, the same fix, on both libraries.
"""

from __future__ import annotations

import importlib

from .twins import at, line_of, only_finding, where


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


def test_a_gan_step_without_detach_is_told_to_detach_the_generators_output(script):
    path = script("torch_gan_no_detach.py")
    finding = only_finding(path, "backward-twice")
    assert where(finding["location"]) == at(path, "second")
    assert finding["message"].startswith(
        "this backward goes through fake, the output of G, whose graph an earlier backward already freed: "
        "fake fed both losses"
    )
    assert finding["hint"].startswith(
        "detach it where the first loss uses it: `fake.detach()` in the loss of"
    )
    assert "retain_graph=True would let this run" in finding["hint"]
    assert (finding["details"]["detach"], finding["details"]["module"]) == ("fake", "G")
    assert {r["role"]: where(r) for r in finding["related"]}["fake: the output of G"] == at(path, "fake")

    # the same loss backwarded twice fed nothing twice: retain_graph stays the fix
    path = script("torch_backward_twice_model.py")
    finding = only_finding(path, "backward-twice")
    assert where(finding["location"]) == at(path, "culprit")
    assert finding["hint"].startswith("pass retain_graph=True to the first backward")
    assert "detach" not in finding["details"]
