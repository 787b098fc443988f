"""Why a NaN or Inf appeared, not just where: each cause decided from the values the op saw.

Each script runs on torch and as its engine twin (conftest's `script`); the finding names the cause
(`details["cause"]`, schema gradcli.anomaly/1), its lines and its fix.
"""

from __future__ import annotations

import importlib

import numpy
import pytest

from gradcli.anomaly.causes import CAUSES, backward_cause
from gradcli.schemas import schema

from .twins import at, only_finding, where


def test_the_untaken_branch_of_where_is_its_own_kind_with_the_double_where_fix(library, script):
    path = script("torch_where_log.py")
    finding = only_finding(path, "nan-in-where-branch")
    assert where(finding["location"]) == at(path, "where")
    assert finding["location"]["role"] == "where()"
    assert {r["role"]: where(r) for r in finding["related"]} == {
        "log: the branch not taken (LogBackward0)": at(path, "where"),
        "backward": at(path, "backward"),
    }
    assert finding["details"] == {
        "node": "LogBackward0",
        "output": 0,
        "cause": "log-at-zero",
        "op": "log",
        "where": "WhereBackward0",
    }
    assert "gets 0 from where() there and its derivative is infinite" in finding["message"]
    assert f"`{library}.where(x > 0, {library}.log({library}.where(x > 0, x, 1)), 0)`" in finding["hint"]
    lib = importlib.import_module(library)
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    eval(finding["hint"].split("`")[1], {library: lib, "x": x}).sum().backward()  # the fix works
    assert x.grad.tolist() == [0.0, 1.0]


def test_a_masked_division_names_the_where_line_and_the_division_line(script):
    path = script("torch_where_division.py")
    finding = only_finding(path, "nan-in-where-branch")
    assert where(finding["location"]) == at(path, "where")
    assert {r["role"]: where(r) for r in finding["related"]} == {
        "div: the branch not taken (DivBackward0)": at(path, "divide"),
        "backward": at(path, "backward"),
    }
    assert (finding["details"]["cause"], finding["details"]["op"]) == ("division-by-zero", "div")
    assert "a / " in finding["hint"] and ".where(b != 0, b, 1)" in finding["hint"]


def test_log_of_a_softmax_that_rounded_to_zero_suggests_log_softmax(script):
    path = script("torch_log_softmax.py")
    finding = only_finding(path, "inf-in-backward")
    assert where(finding["location"]) == at(path, "log")
    assert finding["details"] == {"node": "LogBackward0", "output": 0, "cause": "log-of-softmax"}
    assert "log's input is a softmax that rounded to 0" in finding["message"]
    assert finding["hint"].startswith("take log_softmax(logits, dim) instead of log(softmax(logits, dim))")


@pytest.mark.parametrize(
    ("name", "marker", "cause", "said"),
    [
        ("torch_pairwise_sqrt.py", "sqrt", "sqrt-at-zero", "d/dx sqrt(x) = 1/(2 sqrt(x)) is infinite at 0"),
        ("torch_norm_pow.py", "pow", "pow-at-zero", "the exponent 0.5 is below 1"),
    ],
)
def test_a_derivative_infinite_at_zero(script, name, marker, cause, said):
    path = script(name)
    finding = only_finding(path, "inf-in-backward")
    assert where(finding["location"]) == at(path, marker)
    assert finding["details"]["cause"] == cause and said in finding["message"]
    assert "add an eps" in finding["hint"] and "mask the zeros" in finding["hint"]


def test_a_log_whose_input_the_forward_made_nan_names_the_exp_that_overflowed(script):
    path = script("torch_exp_overflow.py")
    finding = only_finding(path, "nan-in-backward")
    assert where(finding["location"]) == at(path, "log")  # the node whose gradient is NaN ...
    assert finding["details"] == {
        "node": "LogBackward0",
        "output": 0,
        "cause": "exp-overflow",  # ... but the log is not at 0: its input was NaN from the exp
        "origin": "ExpBackward0",
    }
    assert {r["role"]: where(r) for r in finding["related"]} == {
        "made the NaN/Inf in forward (ExpBackward0)": at(path, "exp"),
        "backward": at(path, "backward"),
    }
    assert finding["hint"].startswith("subtract the maximum first")


@pytest.mark.parametrize("library", ["engine"], indirect=True)
def test_check_forward_names_the_cause_from_the_ops_inputs(script):
    path = script("torch_exp_overflow.py")
    finding = only_finding(path, "inf-in-forward", "--check-forward")
    assert where(finding["location"]) == at(path, "exp")
    assert finding["details"]["cause"] == "exp-overflow"
    path = script("torch_where_log.py")
    finding = only_finding(path, "inf-in-forward", "--check-forward")
    assert finding["details"]["cause"] == "log-at-zero" and "log's input is 0 there" in finding["message"]


def test_an_op_is_never_blamed_for_values_that_were_fine():
    grad = numpy.array([numpy.nan, 1.0])
    fine = numpy.array([2.0, 3.0])
    assert backward_cause("log", {"self": fine}, grad, [None]) is None
    assert backward_cause("sqrt", {"result": fine}, grad, [None]) is None
    assert backward_cause("div", {"self": fine, "other": fine}, grad, [None, None]) is None
    assert backward_cause("exp", {"result": fine}, grad, [None]) is None
    assert backward_cause("pow", {"self": numpy.zeros(2), "exponent": 2.0}, grad, [None]) is None


def test_the_schema_lists_every_cause():
    details = schema("anomaly")["$defs"]["finding"]["properties"]["details"]
    assert tuple(details["properties"]["cause"]["enum"]) == CAUSES
