"""`gradcli graph` on the scripts people run: training code inside `main()` (the last backward's
tensor, `--target FUNC.NAME`), and scripts whose backward raises (drawn as they were then, exit 1),
on engine and torch scripts alike."""

import shutil
import textwrap

import pytest
from cli_runner import run_gradcli
from json_contract import validated

from graph.test_cli_graph import documented_schema, validate

LIBRARIES = ["engine", pytest.param("torch", marks=pytest.mark.torch_parity)]

TRAINING = """
import {lib}

def main():
    w = {lib}.ones(3, requires_grad=True)
    for step in range(3):
        h = w * 2
        loss = (h * h).sum()
        loss.backward()

if __name__ == "__main__":
    main()
"""

TWO_LOSSES = """
import {lib}

def step(w):
    loss = (w * 3).sum()
    loss.backward()

def main():
    w = {lib}.ones(3, requires_grad=True)
    loss = (w + 2).mean()
    step(w)

main()
"""

MODIFIED = """
import {lib}

def main():
    a = {lib}.ones(3, requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b[0] = 1000.0
    loss.backward()

main()
"""


@pytest.fixture(params=LIBRARIES)
def lib(request) -> str:
    if request.param == "torch":
        request.getfixturevalue("torch")
    return request.param


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the file is `train.py`, so lines stay short


def write(tmp_path, source: str, lib: str) -> str:
    (tmp_path / "train.py").write_text(textwrap.dedent(source).lstrip().format(lib=lib))
    return "train.py"


def document_of(path, *args: str, code: int = 0) -> dict:
    result = run_gradcli("graph", path, *args, "--format", "json")
    assert result.exit_code == code, result.output
    document = validated(result.stdout)
    validate(document, documented_schema())
    return document


def root_node(document: dict) -> dict:
    return document["nodes"][document["roots"][0]["node"]]


def test_training_inside_main_draws_the_tensor_of_the_last_backward(tmp_path, lib):
    path = write(tmp_path, TRAINING, lib)
    tree = run_gradcli("graph", path)
    assert tree.exit_code == 0, tree.output
    assert tree.stdout.startswith(f"{path}: backward graph of loss (in main)\nSumBackward0  loss  ()")
    document = document_of(path)
    assert (document["targets_from"], document["scope"], document["raised"]) == ("backward", "main", None)
    assert [r["name"] for r in document["roots"]] == ["loss"]
    names = {name for node in document["nodes"] for out in node["outputs"] for name in out["names"]}
    assert {"loss", "h", "w"} <= names  # main's variables name the nodes


def test_target_names_a_variable_of_a_function(tmp_path, lib):
    path = write(tmp_path, TRAINING, lib)
    for target in ("h", "main.h"):
        document = document_of(path, "--target", target)
        assert (document["targets_from"], document["scope"]) == ("target", "main")
        assert [r["name"] for r in document["roots"]] == ["h"] and root_node(document)[
            "name"
        ] == "MulBackward0"


def test_a_plain_target_is_the_innermost_functions_and_func_dot_name_picks_another(tmp_path, lib):
    path = write(tmp_path, TWO_LOSSES, lib)
    inner = document_of(path, "--target", "loss")
    assert (inner["scope"], root_node(inner)["name"]) == ("step", "SumBackward0")
    outer = document_of(path, "--target", "main.loss")
    assert (outer["scope"], root_node(outer)["name"]) == ("main", "MeanBackward0")
    assert run_gradcli("graph", path).stdout.startswith(f"{path}: backward graph of loss (in step)\n")


def test_a_target_in_no_function_met_is_a_usage_error(tmp_path):
    path = write(tmp_path, TRAINING, "engine")
    result = run_gradcli("graph", path, "--target", "train.loss")
    assert result.exit_code == 2
    assert "--target train.loss: no function `train` with a variable `loss`" in result.output
    assert "(functions met: main)" in result.output


def test_a_backward_that_raises_is_drawn_as_it_was_then(tmp_path, lib):
    path = write(tmp_path, MODIFIED, lib)
    tree = run_gradcli("graph", path)
    assert tree.exit_code == 1, tree.output
    lines = tree.stdout.splitlines()
    assert lines[:3] == [
        f"{path}: backward graph of loss (in main)",
        f"{path}:8: the backward of this graph raised; drawn as it was then",
        "    8 | loss.backward()",
    ]
    assert lines[3].startswith("RuntimeError: one of the variables needed for gradient computation has been")
    assert "saved at version 0, now version 1:" in tree.stdout
    document = document_of(path, code=1)
    raised = document["raised"]
    assert (raised["line"], raised["code"], raised["in_backward"]) == (8, "    loss.backward()", True)
    assert raised["exception"].startswith("RuntimeError: one of the variables needed")
    assert document["targets_from"] == "backward" and document["summary"]["stale_saved"] == 2


def test_a_file_that_raises_elsewhere_is_drawn_with_where_it_raised(tmp_path, lib):
    source = """
    import {lib}
    x = {lib}.ones(2, requires_grad=True)
    loss = (x * 2).sum()
    raise ValueError("bad batch")
    """
    path = write(tmp_path, source, lib)
    result = run_gradcli("graph", path, "--format", "dot")
    assert result.exit_code == 1, result.output
    assert f"{path}:4: the file raised; drawn as it was then" in result.stderr
    assert (
        f'label="{path}:4: the file raised; drawn as it was then\\n    4 | raise ValueError' in result.stdout
    )
    assert "ValueError: bad batch" in result.stdout
    raised = document_of(path, code=1)["raised"]
    assert (raised["exception"], raised["in_backward"]) == ("ValueError: bad batch", False)


def test_an_error_in_a_function_draws_its_results_so_far(tmp_path, lib):
    source = """
    import {lib}

    def main():
        w = {lib}.ones(3, requires_grad=True)
        h = w * 2
        total = h.sum()
        bad = {lib}.ones(2) @ {lib}.ones(3)

    main()
    """
    path = write(tmp_path, source, lib)
    document = document_of(path, code=1)
    assert (document["targets_from"], document["scope"]) == ("raised", "main")
    assert [r["name"] for r in document["roots"]] == ["total"]  # h is consumed by total's graph
    raised = document["raised"]
    assert (raised["line"], raised["in_backward"]) == (7, False)
    assert raised["exception"].startswith("RuntimeError")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_the_html_page_says_that_the_backward_raised(tmp_path, lib):
    path = write(tmp_path, MODIFIED, lib)
    page = tmp_path / "graph.html"
    result = run_gradcli("graph", path, "--format", "html", "-o", page)
    assert result.exit_code == 1, result.output
    text = page.read_text()
    assert "train.py:8: the backward of this graph raised; drawn as it was then" in text
    assert "RuntimeError: one of the variables needed for gradient computation" in text
