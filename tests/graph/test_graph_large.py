"""`gradcli graph` on a long chain: the tree records only what it can draw; json records all.

Work is counted, not timed: the node records the walker builds (`Reader.node_record` calls).
"""

import dataclasses
import json
from pathlib import Path

import pytest
from json_contract import validated
from typer.testing import CliRunner

from gradcli.cli.app import app
from gradcli.graph import load_graph, walker

CHAIN = """
import engine

x = engine.ones(3, requires_grad=True)
w = engine.ones(3, requires_grad=True)
y = x
for i in range({n}):
    y = y * 1.0001 if i % 2 else (y * w).tanh()
if {stale}:
    with engine.no_grad():
        w.add_(1)  # every MulBackward0 saved w: stale
"""


@pytest.fixture
def records(monkeypatch) -> list[int]:
    """Levels of the node records built, through a counting engine reader."""
    built: list[int] = []

    def node_record(i, node, level, *args):
        built.append(level)
        return record(i, node, level, *args)

    record = walker.ENGINE.node_record
    monkeypatch.setattr(walker, "ENGINE", dataclasses.replace(walker.ENGINE, node_record=node_record))
    return built


def chain(tmp_path: Path, n: int, stale: bool = False) -> Path:
    path = tmp_path / f"chain{n}.py"
    path.write_text(CHAIN.format(n=n, stale=stale))
    return path


def graph(*args: str) -> str:
    result = CliRunner().invoke(app, ["graph", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_default_tree_records_only_the_levels_it_draws(tmp_path, records):
    out = graph(str(chain(tmp_path, 10_000)))
    assert len(records) <= 50 + 1 and max(records) == 49, (len(records), max(records))  # + the leaf w
    assert "15,002 nodes (2 leaves)" in out and "depth 15,001" in out
    assert "levels deep of 15,001" in out  # as many as fit the width, at most 50


def test_depth_sets_the_levels_recorded(tmp_path, records):
    graph(str(chain(tmp_path, 1_000)), "--depth", "7")
    assert max(records) == 6 and len(records) <= 8


@pytest.mark.parametrize("stale", [False, True])
def test_totals_of_nodes_not_recorded_match_their_records(tmp_path, stale):
    path = str(chain(tmp_path, 300, stale))
    drawn, full = load_graph(path, levels=5), load_graph(path)
    assert drawn.summary == full.summary
    assert (full.summary.stale_saved > 0) == stale
    assert sum(node is not None for node in drawn.nodes) < 10 < len(full.nodes)


def test_json_of_a_long_chain_has_every_node(tmp_path, records):
    doc = json.loads(graph(str(chain(tmp_path, 10_000)), "--format", "json"))
    validated({**doc, "nodes": doc["nodes"][:50], "edges": doc["edges"][:50]})  # all: a minute of jsonschema
    assert len(doc["nodes"]) == len(records) == doc["summary"]["nodes"] == 15_002
    assert not doc["truncated"]


@pytest.mark.parametrize("depth", [None, 900])
def test_json_of_a_big_graph_is_streamed_as_its_whole_document(tmp_path, depth):
    """Written a node at a time, the document is the one graph_dict gives, compact."""
    from gradcli.graph.render import drawing as draw

    full = load_graph(str(chain(tmp_path, 1_500, stale=True)))
    streamed = draw.json_document(full, depth=depth)
    assert streamed == json.dumps(draw.graph_dict(full, depth=depth), separators=(",", ":"))
    assert json.loads(streamed)["truncated"] == (depth is not None)
