"""Graph cuts and backward attribution on torch files (the engine's in test_cli_check_graph_cuts.py)."""

import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch_parity

from json_contract import validated  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from gradcli.cli.app import app  # noqa: E402

HEADER = """
import torch
import gradcli


class WrongCount(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


def x3():
    return (torch.randn(3, dtype=torch.float64, requires_grad=True),)
"""


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def cases(tmp_path: Path, body: str) -> tuple[Path, dict]:
    path = tmp_path / "check_cut.py"
    path.write_text(textwrap.dedent(HEADER).lstrip() + textwrap.dedent(body))
    result = CliRunner().invoke(app, ["check", str(path), "--json"])
    assert "Traceback" not in result.output, result.output
    return path, {case["name"]: case for case in validated(result.stdout)["cases"]}


def line_of(path: Path, text: str) -> int:
    (number,) = [k for k, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    return number


def cuts(case: dict) -> list[tuple]:
    return [(c["input"], c["how"], c["line"]) for c in case["graph_cuts"]]


@pytest.mark.parametrize(
    "body, how, marker",
    [
        ("return x.sin() + x.detach() ** 2", ".detach()", "x.detach()"),
        ("return x.sin() + torch.tensor(x.detach().numpy() ** 2)", ".detach().numpy()", "numpy()"),
        ("return x * x.sum().item()", ".item()", ".item()"),
        (
            "with torch.no_grad():\n        y = torch.nn.functional.softplus(x)\n    return x.sin() + y",
            "no_grad",
            "softplus",
        ),
        ("return x.sin() + x.data ** 2", ".data", "x.data"),
    ],
    ids=["detach", "numpy", "item", "no_grad", "data"],
)
def test_cuts_are_reported_at_their_line(tmp_path, body, how, marker):
    path, found = cases(tmp_path, f"\n@gradcli.case(x3)\ndef f(x):\n    {body}\n")
    case = found["f"]
    assert not case["passed"] and case["backwards"] == []
    assert cuts(case) == [("x", how, line_of(path, marker))]


def test_only_functions_in_the_graph_are_named_and_their_own_detaches_are_not_cuts(tmp_path):
    _, found = cases(
        tmp_path,
        """
        class Cube(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.detach() ** 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 3 * x

        @gradcli.case(x3)
        def cube(x):
            print(x.detach())
            return Cube.apply(x)
        """,
    )
    case = found["cube"]
    assert [b["function"] for b in case["backwards"]] == ["Cube.backward"]
    assert case["graph_cuts"] == []


def test_a_module_run_under_no_grad_cuts_its_parameters_too(tmp_path):
    path, found = cases(
        tmp_path,
        """
        lin = torch.nn.Linear(3, 2).double()

        @gradcli.case(lambda: (torch.randn(2, 3, dtype=torch.float64, requires_grad=True),), modules=[lin])
        def frozen(x):
            with torch.no_grad():
                h = lin(x)
            return h + x.sum()
        """,
    )
    case, line = found["frozen"], line_of(path, "h = lin(x)")
    assert cuts(case) == [
        ("x", "no_grad", line),
        ("lin.weight", "no_grad", line),
        ("lin.bias", "no_grad", line),
    ]
    assert case["no_gradient"] == ["lin.weight", "lin.bias"]
