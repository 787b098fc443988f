"""A failure names only the backward code in the case's graph, and says where a gradient was cut.

Engine files here; torch's in test_torch_graph_cuts.py. Each cut kind is checked through the
JSON document (input, how, file, line) and the report's text; cuts whose value reaches no
output (logging, a mask, control flow) must not be named as the cause.
"""

import textwrap
from pathlib import Path
from xml.etree import ElementTree

import pytest
from cli_runner import run_gradcli
from json_contract import validated

HEADER = """
import numpy as np

import engine
import gradcli


class WrongCount(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


def x3():
    return (engine.randn(3, dtype=engine.float64, requires_grad=True),)
"""


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    """Run where the files are, so reports name them by their short relative paths."""
    monkeypatch.chdir(tmp_path)


def write(tmp_path: Path, body: str, name: str = "check_cut.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(HEADER).lstrip() + textwrap.dedent(body))
    return path


def line_of(path: Path, text: str) -> int:
    """The number of the one line of `path` holding `text`."""
    (number,) = [k for k, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    return number


def check(path: Path, *args: str):
    return run_gradcli("check", path, *args)


def cases(path: Path) -> dict:
    result = check(path, "--json")
    return {case["name"]: case for case in validated(result.stdout)["cases"]}


def cuts(case: dict) -> list[tuple]:
    return [(c["input"], c["how"], c["line"]) for c in case["graph_cuts"]]


def test_a_function_the_graph_never_touched_is_not_named(tmp_path):
    path = write(
        tmp_path,
        """
        @gradcli.case(x3)
        def lost(x):
            y = engine.tensor(x.detach().numpy() ** 2)
            return x.sin() + y
        """,
    )
    out = check(path).output
    assert "backward of WrongCount" not in out
    line = line_of(path, "x.detach().numpy()")
    assert f"x's gradient is cut at {path.name}:{line}: `.detach().numpy()`" in out
    assert f"{line} | y = engine.tensor(x.detach().numpy() ** 2)" in out
    case = cases(path)["lost"]
    assert case["backwards"] == [] and cuts(case) == [("x", ".detach().numpy()", line)]
    assert case["graph_cuts"][0]["file"] == path.name and case["no_gradient"] == []


def test_a_function_in_the_graph_is_still_named(tmp_path):
    path = write(
        tmp_path,
        """
        @gradcli.case(x3)
        def used(x):
            return WrongCount.apply(x).sin()
        """,
    )
    case = cases(path)["used"]
    assert [b["function"] for b in case["backwards"]] == ["WrongCount.backward"]
    assert case["graph_cuts"] == [] and case["no_gradient"] == []
    assert f"backward of WrongCount: {path.name}:" in check(path).output


def test_a_forward_cut_short_by_the_time_limit_names_no_backward(tmp_path):
    path = write(
        tmp_path,
        """
        import time

        @gradcli.case(x3)
        def slow(x):
            time.sleep(5)
            return x
        """,
    )
    case = validated(check(path, "--timeout", "0.2", "--json").stdout)["cases"][0]
    assert not case["passed"] and "timed out" in case["problems"][0]["message"]
    assert case["backwards"] == [] and case["graph_cuts"] == []


# body of `def f(x)`, the cut as the report shows it, the text on the cut's line
KINDS = {
    "detach": ("return x.sin() + x.detach() ** 2", ".detach()", "x.detach()"),
    "detach_": ("y = x * 2\n    y.detach_()\n    return x.sin() + y", ".detach_()", "y.detach_()"),
    "data": ("return x.sin() + x.data ** 2", ".data", "x.data"),
    "numpy": (
        "with engine.no_grad():\n        a = x.numpy()\n    return x.sin() + engine.tensor(a * a)",
        ".numpy()",
        "x.numpy()",
    ),
    "numpy chained": (
        "return x.sin() + engine.tensor(x.detach().numpy() ** 2)",
        ".detach().numpy()",
        "numpy()",
    ),
    "item": ("return x * x.sum().item()", ".item()", ".item()"),
    "tolist": (
        "return x.sin() + engine.tensor([v * v for v in x.tolist()], dtype=engine.float64)",
        ".tolist()",
        "tolist",
    ),
    "float": ("return x * float(x.sum())", "float()", "float("),
    "__array__": ("return x + engine.tensor(np.sin(x.detach().numpy()) + np.cos(x))", "__array__", "np.cos"),
    "tensor": ("return x.sin() + engine.tensor(x) * x", "engine.tensor()", "engine.tensor(x)"),
    "as_tensor": (
        "return x.sin() + engine.as_tensor(x, dtype=engine.float32).double() * x",
        "engine.as_tensor()",
        "as_tensor",
    ),
    "new_tensor": ("return x.sin() + x.new_tensor(x) * x", ".new_tensor()", "new_tensor"),
    "no_grad": ("with engine.no_grad():\n        y = x * 2\n    return x.sin() + y", "no_grad", "y = x * 2"),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_of_cut_is_reported_at_its_line(tmp_path, kind):
    body, how, marker = KINDS[kind]
    path = write(tmp_path, f"\n@gradcli.case(x3)\ndef f(x):\n    {body}\n")
    case = cases(path)["f"]
    assert not case["passed"]
    reported = cuts(case)
    if kind == "__array__":  # np.sin reads a detached copy: only np.cos(x) cuts
        reported = [c for c in reported if c[1] == "__array__"]
    assert reported == [("x", how, line_of(path, marker))]


def test_cuts_whose_value_reaches_no_output_are_not_the_cause(tmp_path):
    path = write(
        tmp_path,
        """
        @gradcli.case(x3)
        def quiet(x):
            print(x.detach(), float(x.sum()))       # logging
            if x.sum().item() > 100:                 # control flow
                return x
            mask = (x.detach() > -100).double()     # a mask: its derivative is zero anyway
            with engine.no_grad():
                unused = x * 2                       # computed, never used
            return WrongCount.apply(x) * mask
        """,
    )
    case = cases(path)["quiet"]
    assert not case["passed"] and case["graph_cuts"] == [] and case["no_gradient"] == []
    assert [b["function"] for b in case["backwards"]] == ["WrongCount.backward"]
    assert "gradient lost" not in check(path).output


def test_a_cut_that_feeds_only_a_passing_output_is_not_reported(tmp_path):
    path = write(
        tmp_path,
        """
        @gradcli.case(x3)
        def two(x):
            return WrongCount.apply(x), x.sin() * x.detach()
        """,
    )
    case = cases(path)["two"]
    failing = {(p["input"], p["output"]) for p in case["pairs"] if not p["passed"]}
    assert ("x", "out1") in failing  # the detach loses part of out1's gradient: reported
    assert cuts(case) == [("x", ".detach()", line_of(path, "x.detach()"))]
    path = write(
        tmp_path,
        """
        @gradcli.case(x3)
        def two(x):
            return WrongCount.apply(x), x.sin() + 0 * x.detach()
        """,
    )
    case = cases(path)["two"]
    assert [(p["input"], p["output"]) for p in case["pairs"] if not p["passed"]] == [("x", "out0")]
    assert case["graph_cuts"] == []  # out1 passes: the detach in it explains nothing


def test_random_draws_repeat_in_the_replays(tmp_path):
    path = write(
        tmp_path,
        """
        @gradcli.case(x3)
        def noisy(x):
            print(x.sum().item())
            return WrongCount.apply(x) * (1 + 1e-15 * engine.randn(3, dtype=engine.float64))
        """,
    )
    case = cases(path)["noisy"]
    assert not case["passed"] and case["graph_cuts"] == []


def test_an_input_that_gets_no_gradient_is_said_so(tmp_path):
    path = write(
        tmp_path,
        """
        @gradcli.case(x3)
        def none(x):
            return engine.tensor(x.detach().numpy() ** 2)

        @gradcli.case(lambda: x3() + x3())
        def half(x, w):
            return x * w.detach()
        """,
    )
    found = cases(path)
    assert found["none"]["no_gradient"] == ["x"]
    assert cuts(found["none"]) == [("x", ".detach().numpy()", line_of(path, "** 2)"))]
    assert found["half"]["no_gradient"] == ["w"]
    assert cuts(found["half"]) == [("w", ".detach()", line_of(path, "w.detach()"))]
    out = check(path).output
    assert "x gets no gradient at all" in out and "w gets no gradient at all" in out
    assert "x gets no gradient at all" not in out.split("half")[-1]


def test_no_grad_is_reported_at_the_line_in_the_block(tmp_path):
    path = write(
        tmp_path,
        """
        class Net(engine.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = engine.nn.Linear(3, 3).double()

            def forward(self, x):
                return self.fc(x).tanh()

        net = Net()
        lin = engine.nn.Linear(3, 2).double()

        @engine.no_grad()
        def helper(x):
            return x * 3

        @gradcli.case(x3)
        def user_module(x):
            with engine.no_grad():
                h = net(x)
            return h * x

        @gradcli.case(x3)
        def decorated(x):
            return helper(x) + x.sin()

        @gradcli.case(x3, modules=[lin])
        def frozen(x):
            with engine.no_grad():
                h = lin(x)
            return h + x.sum()
        """,
    )
    found = cases(path)
    assert cuts(found["user_module"]) == [("x", "no_grad", line_of(path, "h = net(x)"))]
    assert cuts(found["decorated"]) == [("x", "no_grad", line_of(path, "return helper(x)"))]
    line = line_of(path, "h = lin(x)")
    assert cuts(found["frozen"]) == [
        ("x", "no_grad", line),
        ("lin.weight", "no_grad", line),
        ("lin.bias", "no_grad", line),
    ]
    assert found["frozen"]["no_gradient"] == ["lin.weight", "lin.bias"]


def test_ops_inside_a_custom_forward_are_not_cuts(tmp_path):
    path = write(
        tmp_path,
        """
        class Cube(engine.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return engine.tensor(x.detach().numpy() ** 3)

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 3 * x

        @gradcli.case(x3)
        def cube(x):
            return Cube.apply(x)
        """,
    )
    case = cases(path)["cube"]
    assert not case["passed"] and case["graph_cuts"] == []
    assert [b["function"] for b in case["backwards"]] == ["Cube.backward"]


def test_the_junit_report_carries_the_cut(tmp_path):
    path = write(
        tmp_path,
        """
        @gradcli.case(x3)
        def lost(x):
            return x * x.sum().item()
        """,
    )
    report = tmp_path / "report.xml"
    check(path, "--junitxml", str(report))
    failure = ElementTree.parse(report).find(".//failure")
    assert f"x's gradient is cut at {path.name}:{line_of(path, '.item()')}: `.item()`" in failure.text


def test_second_order_failures_name_first_order_inputs_only(tmp_path):
    path = write(
        tmp_path,
        """
        @gradcli.case(x3, order=2)
        def both(x):
            return x**2 * x.detach()
        """,
    )
    case = cases(path)["both"]
    assert {p["input"] for p in case["pairs"] if not p["passed"]} == {"x"}
    assert cuts(case) == [("x", ".detach()", line_of(path, "x.detach()"))]
