"""`gradcli graph` on deep chains: work linear in the depth, and no recursion limit.

Work is counted, not timed: every Python function call made while the graph is built and
rendered (sys.setprofile), for chains 10x apart in depth.
"""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from json_contract import validated
from paths import ROOT
from rich.console import Console

from gradcli.graph import load_graph
from gradcli.graph.render import drawing as draw

CHAIN = """
import engine

x = engine.randn(2, requires_grad=True)
y = x
for _ in range({depth}):
    y = y * 1.0001
loss = y.sum()
"""


def chain(tmp_path: Path, depth: int) -> Path:
    path = tmp_path / f"chain_{depth}.py"
    path.write_text(CHAIN.format(depth=depth))
    return path


def calls_to_build_and_render(path: Path, depth: int) -> tuple[int, int]:
    """(Python calls, characters written) to load the graph and render it as JSON data and a tree."""
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(count)
    try:
        graph = load_graph(str(path))
        document = draw.graph_dict(graph, depth=depth + 2)  # the JSON encoder is json's own business
        stream = io.StringIO()
        draw.print_tree(Console(file=stream, width=120), graph, depth=depth + 2)
    finally:
        sys.setprofile(None)
    return calls, len(json.dumps(document)) + len(stream.getvalue())


def test_work_grows_linearly_with_the_depth(tmp_path):
    calls_to_build_and_render(chain(tmp_path, 5), 5)  # imports and first-use caches, once
    small_calls, small_chars = calls_to_build_and_render(chain(tmp_path, 500), 500)
    big_calls, big_chars = calls_to_build_and_render(chain(tmp_path, 5000), 5000)
    assert 5 * small_calls < big_calls < 12 * small_calls, (small_calls, big_calls)  # quadratic: ~100x
    assert big_chars < 12 * small_chars, (small_chars, big_chars)


def test_a_chain_deeper_than_the_recursion_limit_as_json(tmp_path):
    depth = 100_000  # levels: the multiplications, the sum and the leaf
    path = chain(tmp_path, depth - 2)
    done = subprocess.run(
        [sys.executable, "-m", "gradcli", "graph", str(path), "--format", "json", "--depth", str(depth)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    validated({**doc, "nodes": doc["nodes"][:100], "edges": doc["edges"][:100]})  # all: minutes of jsonschema
    assert len(doc["nodes"]) == depth and doc["summary"]["depth"] == depth
    assert not doc["truncated"]
