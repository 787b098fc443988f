"""The tree infers shapes only for the nodes it draws and those their shapes depend on
(`graphing.meta`, `wanted`): the same records as a whole-graph inference, with work counted.
"""

from pathlib import Path

import pytest

from gradcli.graph import load_graph, meta

GRAPHS = {
    "broadcasts": """
import engine
a = engine.randn(2, 3, requires_grad=True)
b = engine.randn(3, requires_grad=True)
c = engine.randn(2, 1)
h = (a * b + c).float()
for _ in range(6):
    h = (h * c).exp() - b
parts = h.split(1, dim=0)
v = (parts[0] * 2 + parts[1].sum()).clone()
v.retain_grad()
v[:, :1] *= b[0]  # CopySlices
u, s, vh = engine.linalg.svd(a @ a.T + engine.eye(2))

class Sq(engine.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t * t

    @staticmethod
    def backward(ctx, g):
        (t,) = ctx.saved_tensors
        return 2 * t * g

total = (v.sum() + s.sum() + u.mean()) * b.sum() + Sq.apply(a.sum(0) + b).mean()
""",
    "dag": """
import engine
x = engine.randn(4, requires_grad=True)
w = engine.randn(4, 4, requires_grad=True)
h = x
hs = []
for i in range(12):
    h = (w @ h).tanh() + h * 0.5
    hs.append(h)
loss = sum(t.sum() for t in hs)
""",
    "unsaved_chain": """
import engine
x = engine.ones(2, 3, dtype=engine.float64, requires_grad=True)


def f(y):
    for i in range(60):
        y = y + 0.5  # saves nothing, records nothing: the shape comes from x, 60 levels down
    return y.tanh()  # tells its input's device only


z = f(x)
""",
}


def write(tmp_path: Path, name: str, source: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return str(path)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_drawn_nodes_get_the_whole_graph_inference(tmp_path, name):
    path = write(tmp_path, name, GRAPHS[name])
    full = load_graph(path)
    for levels in (1, 2, 3, 5, 8):
        drawn = load_graph(path, levels=levels)
        recorded = [node for node in drawn.nodes if node is not None]
        assert recorded and len(recorded) < len(full.nodes)
        for node in recorded:
            assert node == full.nodes[node.id], (levels, node.id)


def test_a_shape_from_far_below_is_still_known(tmp_path):
    graph = load_graph(write(tmp_path, "unsaved_chain", GRAPHS["unsaved_chain"]), levels=3)
    add = graph.nodes[1].outputs[0]
    assert graph.nodes[1].name == "AddBackward0" and not add.names
    assert (add.meta.shape, add.meta.dtype) == ((2, 3), "float64")


@pytest.fixture
def started(monkeypatch) -> list[int]:
    """Positions whose metadata inference started (read what is known about them)."""
    positions: list[int] = []
    start = meta._Inference.start

    def counting(self, i, constants):
        positions.append(i)
        return start(self, i, constants)

    monkeypatch.setattr(meta._Inference, "start", counting)
    return positions


def test_the_tree_of_a_long_chain_infers_only_near_what_it_draws(tmp_path, started):
    source = """
import engine
x = engine.ones(3, requires_grad=True)
y = x
for i in range(10_000):
    y = y * 1.0001 if i % 2 else (y + 0.5).tanh()
"""
    path = write(tmp_path, "chain", source)
    graph = load_graph(path, levels=50)
    assert len(started) <= 50 + 2, len(started)  # tanh saves its result: known, nothing below needed
    assert all(node.outputs[0].meta.shape == (3,) for node in graph.nodes if node is not None)
    started.clear()
    load_graph(path)
    assert len(started) == len(set(started)) == len(graph.nodes) == 15_001  # every node, once
