"""Each node's forward line (the user's line whose forward call made it): `gradcli graph` JSON,
the --verbose tree, and the engine's `record_sites` that records it cheaply."""

import textwrap
import warnings
from pathlib import Path

import pytest
from json_contract import validated
from typer.testing import CliRunner

import engine
from engine.autograd import anomaly
from gradcli.cli.app import app

ENGINE_SCRIPT = """
import engine


def scaled(t):
    return t * 3.0


x = engine.ones(3, requires_grad=True)
h = scaled(x).exp()
loss = h.sum()
"""


def write(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def graph(*args: str):
    result = CliRunner().invoke(app, ["graph", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result


def lines_by_node(path: Path) -> list[tuple[str, tuple | None]]:
    document = validated(graph(path, "--format", "json").stdout)
    return [
        (
            node["name"],
            None if (line := node["forward_line"]) is None else (line["file"], line["line"], line["code"]),
        )
        for node in document["nodes"]
    ]


def test_engine_nodes_carry_the_innermost_user_line_that_made_them(tmp_path):
    path = write(tmp_path, ENGINE_SCRIPT)
    where = str(path)
    assert lines_by_node(path) == [
        ("SumBackward0", (where, 10, "loss = h.sum()")),
        ("ExpBackward0", (where, 9, "h = scaled(x).exp()")),
        ("MulBackward0", (where, 5, "return t * 3.0")),  # inside the helper: the innermost user frame
        ("AccumulateGrad", None),  # a leaf is the user's, made by no forward call
    ]


def test_the_verbose_tree_prints_the_line_under_each_node_and_the_default_tree_does_not(tmp_path):
    path = write(tmp_path, ENGINE_SCRIPT)
    verbose = graph(path, "--verbose").stdout.splitlines()
    exp = next(k for k, text in enumerate(verbose) if "ExpBackward0" in text)
    assert verbose[exp + 1].split("at ", 1)[1] == f"{path}:9  h = scaled(x).exp()"
    assert "h = scaled(x).exp()" not in graph(path).stdout


@pytest.mark.torch_parity
def test_torch_nodes_made_inside_a_module_carry_the_users_line(tmp_path):
    path = write(
        tmp_path,
        """
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(3, 2)

            def forward(self, x):
                return self.fc(x).tanh()

        x = torch.ones(4, 3, requires_grad=True)
        loss = Net()(x).sum()
        """,
    )
    where = str(path)
    assert lines_by_node(path) == [
        ("SumBackward0", (where, 12, "loss = Net()(x).sum()")),
        ("TanhBackward0", (where, 9, "return self.fc(x).tanh()")),
        # F.linear made both nodes: the one behind its output gets the line too
        ("AddmmBackward0", (where, 9, "return self.fc(x).tanh()")),
        ("AccumulateGrad", None),
        ("AccumulateGrad", None),
        ("TBackward0", (where, 9, "return self.fc(x).tanh()")),
        ("AccumulateGrad", None),
    ]


def nan_sum(x):
    return (x / x).sum()  # at 0, 0/0: a NaN gradient, which anomaly mode raises on


def test_record_sites_keeps_one_frame_per_node_and_changes_no_behaviour():
    x = engine.zeros(2, requires_grad=True)
    with anomaly.record_sites():
        assert not anomaly.is_anomaly_enabled()
        y = nan_sum(x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y.backward()
    assert [code.co_name for code, _ in y.grad_fn._trace] == ["nan_sum"]  # not the test's frame too
    assert anomaly.state == [False, True, False]


def test_anomaly_mode_inside_record_sites_is_full_anomaly_mode():
    x = engine.zeros(2, requires_grad=True)
    with anomaly.record_sites(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with engine.autograd.detect_anomaly():
            assert anomaly.is_anomaly_enabled()
            y = nan_sum(x)
            assert [code.co_name for code, _ in y.grad_fn._trace] == [
                "nan_sum",
                "test_anomaly_mode_inside_record_sites_is_full_anomaly_mode",
            ]
            with pytest.raises(RuntimeError, match="returned nan values"):
                y.backward()
        assert not anomaly.is_anomaly_enabled()
        assert len(nan_sum(x).grad_fn._trace) == 1
