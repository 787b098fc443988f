"""`gradcli anomaly --graph FILE`: the graph at the point of failure, with what the findings name
marked (the node whose backward failed, the saved tensor modified in place with its versions, the
node that made the first NaN/Inf), on engine and torch scripts; html in headless Chromium."""

import json
import re
import shutil

import pytest
from cli_runner import run_gradcli
from graph.test_cli_graph import documented_schema, validate
from headless import clicking, needs_chromium, page_result
from json_contract import validated
from paths import TESTS

SCRIPTS = TESTS / "anomaly_scripts"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")

# script: (the marked node, the mark's kind), the failed backward's line
FAILURES = {
    "inplace_saved": (("ExpBackward0", "modified-saved"), 10),
    "nan_backward": (("SqrtBackward0", "nonfinite"), 8),
    "backward_twice": (("MulBackward0", "failed"), 8),
    "torch_inplace_saved": (("SigmoidBackward0", "modified-saved"), 9),
    "torch_nan_backward": (("LogBackward0", "nonfinite"), 8),
}


def failing(name: str):
    return pytest.param(name, marks=pytest.mark.torch_parity) if name.startswith("torch") else name


def graph_document(tmp_path, script: str, *options: str, code: int = 1) -> dict:
    target = tmp_path / "graph.json"
    result = run_gradcli("anomaly", SCRIPTS / f"{script}.py", *options, "--graph", target, traceback=True)
    assert result.exit_code == code, result.output
    assert f"wrote {target}" in result.stderr
    document = validated(target.read_text())
    validate(document, documented_schema())
    return document


@pytest.mark.parametrize("script", [failing(name) for name in FAILURES])
def test_the_graph_of_the_failed_backward_marks_the_node_the_finding_names(tmp_path, script):
    if script.startswith("torch"):
        pytest.importorskip("torch")
    (node, kind), line = FAILURES[script]
    document = graph_document(tmp_path, script)
    assert document["targets_from"] == "backward"
    raised = document["raised"]
    assert (raised["line"], raised["in_backward"]) == (line, True)
    (mark,) = document["marks"]
    assert (document["nodes"][mark["node"]]["name"], mark["kind"]) == (node, kind)
    assert mark["text"].startswith(
        ("inplace-modified-saved: ", "nan-in-backward: ", "nan-in-where-branch: ", "backward-twice: ")
    )


@pytest.mark.parametrize("script", ["inplace_saved", failing("torch_inplace_saved")])
def test_the_modified_saved_tensor_is_drawn_red_with_its_versions(tmp_path, script):
    if script.startswith("torch"):
        pytest.importorskip("torch")
    document = graph_document(tmp_path, script)
    (mark,) = document["marks"]
    (stale,) = [s for s in document["nodes"][mark["node"]]["saved"] if s["stale"]]
    assert (stale["saved_version"], stale["current_version"]) == (0, 1)
    name = "z" if script == "inplace_saved" else "y"
    assert mark["text"] == f"inplace-modified-saved: {name} saved at version 0, modified in place (now 1)"
    dot = tmp_path / "graph.dot"
    assert run_gradcli("anomaly", SCRIPTS / f"{script}.py", "--graph", dot).exit_code == 1
    source = dot.read_text()
    node = re.search(rf'\tn{mark["node"]} \[label="([^"]*)" fillcolor=red fontcolor=white penwidth=3', source)
    assert node and mark["text"] in node.group(1)
    assert re.search(
        rf'\ts{mark["node"]}_\d+ \[label="_saved_result\\n\(\d+,\) float32 cpu\\nversion 0, now 1" fillcolor=red\]',
        source,
    )
    assert "labelloc=t fontcolor=red" in source


def test_nan_in_forward_draws_what_led_to_the_op(tmp_path):
    document = graph_document(tmp_path, "nan_forward", "--check-forward")
    assert (document["targets_from"], [r["name"] for r in document["roots"]]) == ("raised", ["y"])
    raised = document["raised"]
    assert (raised["line"], raised["in_backward"]) == (7, False)
    assert "'LogBackward0' produced nan values in its forward output" in raised["exception"]


def test_a_clean_run_draws_the_last_backward_unmarked(tmp_path):
    document = graph_document(tmp_path, "clean_training", code=0)
    assert (document["targets_from"], document["raised"], document["marks"]) == ("backward", None, [])


def test_a_script_without_backward_writes_no_graph(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text("import engine\nx = engine.ones(2) * 2\n")
    target = tmp_path / "graph.json"
    result = run_gradcli("anomaly", script, "--graph", target)
    assert result.exit_code == 0 and not target.exists()
    assert f"--graph {target}: no graph to draw: the script called no backward()" in result.stderr


def test_graph_format_is_the_files_extension(tmp_path):
    result = run_gradcli("anomaly", SCRIPTS / "inplace_saved.py", "--graph", tmp_path / "graph.txt")
    assert result.exit_code == 2
    assert "--graph" in result.stderr and "the extension names the format: .html, .svg" in result.stderr


@needs_dot
def test_svg_has_the_red_node(tmp_path):
    target = tmp_path / "graph.svg"
    assert run_gradcli("anomaly", SCRIPTS / "inplace_saved.py", "--graph", target).exit_code == 1
    svg = target.read_text()
    assert (
        svg.startswith("<?xml") and 'fill="red"' in svg and "inplace&#45;modified&#45;saved: z saved" in svg
    )


CLICK_RED = clicking("g.querySelector(\"polygon[fill='red']\")")


@needs_dot
@needs_chromium
@pytest.mark.parametrize("script", ["inplace_saved", failing("torch_inplace_saved")])
def test_html_in_a_headless_browser_shows_the_red_node(tmp_path, script):
    if script.startswith("torch"):
        pytest.importorskip("torch")
    target = tmp_path / "graph.html"
    assert run_gradcli("anomaly", SCRIPTS / f"{script}.py", "--graph", target).exit_code == 1
    page = target.read_text()
    data = json.loads(re.search(r'id="graph-data">(.*?)</script>', page, re.S).group(1))
    (mark,) = data["marks"]
    result = page_result(page, tmp_path, CLICK_RED)
    assert result["errors"] == [] and result["ready"] == "true"
    assert result["title"] == f"n{mark['node']}"
    shown = [text.strip() for text in result["details"].split("\n") if text.strip()]
    assert shown[:2] == [f"{data['nodes'][mark['node']]['name']} #{mark['node']}", mark["text"]]
