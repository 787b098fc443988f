"""`gradcli graph --group-modules`: a cluster per nn.Module, made from forward hooks, so modules
without parameters (ReLU, Softmax, Dropout) are boxed too and nested modules nest; engine and torch."""

import re
import textwrap

from typer.testing import CliRunner

import engine.nn.module
from gradcli.cli.app import app

ENGINE_SCRIPT = """
import engine
from engine import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.act = nn.Softmax(dim=1)

    def forward(self, x):
        return self.act(self.fc(x)) * 2.0


model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), Block(), nn.Dropout(0.5))
x = engine.randn(5, 3)
print("global hooks while the file runs:", len(engine.nn.module._global_forward_hooks))
loss = model(x).sum()
"""
TORCH_SCRIPT = (
    ENGINE_SCRIPT.replace("import engine\nfrom engine", "import torch\nfrom torch")
    .replace("engine.randn", "torch.randn")
    .replace(
        "len(engine.nn.module._global_forward_hooks)", "len(torch.nn.modules.module._global_forward_hooks)"
    )
)


def dot(tmp_path, source: str, *args: str):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(source))
    result = CliRunner().invoke(app, ["graph", str(path), "--format", "dot", *args])
    assert result.exit_code == 0, result.output
    return result


def clusters(text: str) -> dict[str, tuple[list[str], str | None]]:
    """Cluster label -> (the first label line of each node in it, the enclosing cluster's label)."""
    labels = dict(re.findall(r'\t(n\d+) \[label="([^"\\]*)', text))
    found: dict[str, tuple[list[str], str | None]] = {}
    open_ = []
    for line in text.splitlines():
        head = re.match(r'(\t+)subgraph cluster_\d+ \{ label="([^"]+)".*?((?: n\d+)+)( \})?$', line)
        if head:
            depth, label, members, closed = head.groups()
            del open_[len(depth) - 1 :]
            found[label] = (sorted(labels[n] for n in members.split()), open_[-1] if open_ else None)
            if not closed:
                open_.append(label)
    return found


EXPECTED = {
    "model.0": (["AddmmBackward0", "TBackward0", "model.0.bias", "model.0.weight"], None),
    "model.1": (["ReluBackward0"], None),
    "model.2": (["MulBackward0"], None),  # the block's own `* 2.0`
    "model.2.act": (["SoftmaxBackward0"], "model.2"),
    "model.2.fc": (["AddmmBackward0", "TBackward0", "model.2.fc.bias", "model.2.fc.weight"], "model.2"),
}


def test_engine_modules_without_parameters_get_a_cluster_and_nested_modules_nest(tmp_path):
    result = dot(tmp_path, ENGINE_SCRIPT, "--group-modules")
    found = clusters(result.stdout)
    assert {k: v for k, v in found.items() if k != "model.3"} == EXPECTED
    assert found["model.3"][1] is None and "MulBackward0" in found["model.3"][0]  # dropout's mask
    assert "global hooks while the file runs: 1" in result.output
    assert engine.nn.module._global_forward_hooks == {}  # removed when the file has run


def test_torch_modules_without_parameters_get_a_cluster_and_nested_modules_nest(torch, tmp_path):
    result = dot(tmp_path, TORCH_SCRIPT, "--group-modules")
    found = clusters(result.stdout)
    assert {k: v for k, v in found.items() if k != "model.3"} == EXPECTED
    assert found["model.3"][1] is None and len(found["model.3"][0]) == 1  # dropout's one node
    assert "global hooks while the file runs: 1" in result.output
    assert torch.nn.modules.module._global_forward_hooks == {}


def test_without_group_modules_no_hook_is_installed(tmp_path):
    result = dot(tmp_path, ENGINE_SCRIPT)
    assert "global hooks while the file runs: 0" in result.output and "subgraph" not in result.stdout


def test_a_module_defined_inside_a_case_is_named_from_its_class(tmp_path):
    source = """
    import engine
    from engine import nn

    def f(x):
        net = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
        return net(x).sum()

    inputs = (engine.randn(4, 3, requires_grad=True),)
    """
    found = clusters(dot(tmp_path, source, "--group-modules").stdout)
    assert found["Sequential.1"] == (["TanhBackward0"], None)
    assert found["Sequential.0"][0][0] == "AddmmBackward0"
