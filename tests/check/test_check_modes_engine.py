"""Forward mode on engine files: a duck-typed model's parameters get tangents through its
attributes, a parameter no attribute holds and a Function without `jvp` are notes (said once,
naming the Function and its line), and a wrong `jvp` fails on the parameter it is wrong for."""

from __future__ import annotations

import pytest
from cli_runner import run_gradcli_json

MODELS = """\
import engine


class Scale(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        ctx.save_for_forward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w, g * x

    @staticmethod
    def jvp(ctx, x_t, w_t):
        x, w = ctx.saved_tensors
        return x_t * w + w_t * WRONG


class Model:
    def __init__(self):
        self.w = engine.randn(3, dtype=engine.float64, requires_grad=True)

    def named_parameters(self):
        return [("w", self.w)]

    def parameters(self):
        return [self.w]

    def __call__(self, x):
        return Scale.apply(x, self.w)


model = Model()
inputs = (engine.randn(3, dtype=engine.float64, requires_grad=True),)
"""

LISTED = """\
import engine


class Model:
    def __init__(self):
        self.ws = [engine.randn(3, dtype=engine.float64, requires_grad=True)]

    def named_parameters(self):
        return [("w0", self.ws[0])]

    def parameters(self):
        return self.ws

    def __call__(self, x):
        return (x * self.ws[0]).sin()


model = Model()
inputs = (engine.randn(3, dtype=engine.float64, requires_grad=True),)
"""

NO_JVP = """\
import engine
import gradcli


class Twice(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


@gradcli.case(lambda: (engine.randn(3, dtype=engine.float64, requires_grad=True),), order=2)
def twice(x):
    return Twice.apply(x).sin()
"""


def check(tmp_path, source: str) -> tuple[int, dict]:
    path = tmp_path / "case.py"
    path.write_text(source)
    code, document = run_gradcli_json("check", path, "--json")
    (case,) = document["cases"]
    return code, case


@pytest.mark.parametrize(("wrong", "failing"), [("x", []), ("2 * x", ["w"])])
def test_a_duck_typed_models_parameters_get_tangents(tmp_path, wrong, failing):
    code, case = check(tmp_path, MODELS.replace("WRONG", wrong))
    assert [(p["comparison"], p["input"]) for p in case["pairs"]] == [
        ("VJP", "x"), ("VJP", "model.w"), ("JVP", "x"), ("JVP", "model.w"),
    ]  # fmt: skip
    assert [p["input"] for p in case["pairs"] if not p["passed"]] == [f"model.{n}" for n in failing]
    assert [p["comparison"] for p in case["pairs"] if not p["passed"]] == ["JVP"] * len(failing)
    assert code == (1 if failing else 0) and case["notes"] == []


def test_a_parameter_no_attribute_holds_is_a_note_without_a_location(tmp_path):
    code, case = check(tmp_path, LISTED)
    assert code == 0 and [p["comparison"] for p in case["pairs"]] == ["VJP", "VJP"]
    assert case["notes"] == [
        "forward mode not checked: model.w0 cannot be given a tangent: no module attribute holds it"
    ]


def test_a_function_without_jvp_is_named_once_at_both_orders(tmp_path):
    code, case = check(tmp_path, NO_JVP)
    assert code == 0 and {p["comparison"] for p in case["pairs"]} == {"VJP", "VJP of VJP"}
    assert case["notes"] == [
        f"forward mode not checked: Twice has no jvp, which forward-mode AD needs (at {tmp_path / 'case.py'}:5)"
    ]
