"""The float64 check widens every floating tensor and module a case function reaches, not only
its inputs and named modules, and puts each back exactly; what it cannot reach fails as a DTYPE
problem naming the operand, the line and the fix. Each test runs on engine and torch files.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy
import pytest
from cli_runner import run_gradcli_json
from typer.testing import CliRunner

from gradcli.check.collection import Target, collect
from gradcli.check.results import Settings
from gradcli.check.run_case import run_case
from gradcli.check.selection import compile_expression
from gradcli.cli.app import app

HELPERS = """
import {lib} as torch

W_OTHER = torch.randn(3, 2)
LIN_OTHER = torch.nn.Linear(3, 2)


def helper_other(x):
    return x @ W_OTHER
"""

REACH = """
import functools

import {lib} as torch
import gradcli

import helpers_{lib}
from helpers_{lib} import LIN_OTHER, W_OTHER, helper_other

W = torch.randn(3, 2)  # float32, as tensors are made
LIN = torch.nn.Linear(3, 2)
B = torch.randn(2, requires_grad=True)
B_EXP = B.exp()  # not a leaf
WEIGHTS = [torch.randn(3, 2)]
TABLE = {{"w": torch.randn(3, 2)}}


class Holder:
    def __init__(self):
        self.w = torch.randn(3, 2)
        self.inner = torch.nn.Module()
        self.inner.register_buffer("scale", torch.ones(2))

    def apply(self, x):
        return (x @ self.w) * self.inner.scale


class Plain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)
        self.offset = torch.ones(2)  # an attribute, neither a parameter nor a buffer

    def forward(self, x):
        return self.lin(x) + self.offset + x @ W


H = Holder()
PLAIN = Plain()


def x():
    return (torch.randn(4, 3, requires_grad=True),)


@gradcli.case(x)
def global_tensor(x):
    return x @ W


@gradcli.case(x)
def global_linear(x):
    return LIN(x)


def make(w, lin):
    @gradcli.case(x, name="closure")
    def closure(x):
        return lin(x) + x @ w


make(torch.randn(3, 2), torch.nn.Linear(3, 2))


@gradcli.case(x)
def default_argument(x, w=W):
    return x @ w


@gradcli.case(x)
def attribute(x):
    return (x @ H.w) * H.inner.scale


@gradcli.case(x)
def method(x):
    return H.apply(x)


@gradcli.case(x)
def module_attribute_and_global_in_forward(x):
    return PLAIN(x)


@gradcli.case(x)
def other_file(x):
    return LIN_OTHER(x) + x @ W_OTHER


@gradcli.case(x)
def other_file_module_attribute(x):
    return x @ helpers_{lib}.W_OTHER


def helper(x):
    return x @ W


@gradcli.case(x)
def same_file_helper(x):
    return helper(x)


@gradcli.case(x)
def other_file_helper(x):
    return helper_other(x)


@gradcli.case(x)
def partial_helper(x):
    return functools.partial(helper_other)(x)


@gradcli.case(x)
def not_a_leaf(x):
    return (x @ W) * B_EXP


@gradcli.case(x)
def containers(x):
    return x @ WEIGHTS[0] + x @ TABLE["w"]
"""

CASES = [
    "global_tensor",
    "global_linear",
    "closure",
    "default_argument",
    "attribute",
    "method",
    "module_attribute_and_global_in_forward",
    "other_file",
    "other_file_module_attribute",
    "same_file_helper",
    "other_file_helper",
    "partial_helper",
    "not_a_leaf",
    "containers",
]


def write(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def check_json(path: Path, *flags: str) -> tuple[int, dict]:
    return run_gradcli_json("check", path, "--json", *flags)


@pytest.fixture
def reach_file(tmp_path, lib, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))  # the helpers module, as the check file's folder is
    write(tmp_path, HELPERS.format(lib=lib.__name__), f"helpers_{lib.__name__}.py")
    return write(tmp_path, REACH.format(lib=lib.__name__), f"check_reach_{lib.__name__}.py")


def test_every_form_of_reach_is_checked_in_float64(reach_file):
    code, doc = check_json(reach_file)
    problems = {c["name"]: [p["message"] for p in c["problems"]] for c in doc["cases"]}
    assert code == 0, problems
    assert [c["name"] for c in doc["cases"]] == CASES
    assert all(c["upcast"] and c["dtype"] == "float64" and c["reference"] == "float64" for c in doc["cases"])


def test_without_the_reach_the_same_file_fails_on_dtypes(reach_file, monkeypatch):
    """Guards the test above: every case there needs what reach.py finds."""
    import gradcli.check.dtype_plan as check_dtype
    from gradcli.check.reach import Reached

    monkeypatch.setattr(check_dtype, "reached", lambda func, roots: Reached())
    code, doc = check_json(reach_file)
    assert code == 1
    assert {c["name"] for c in doc["cases"] if not c["passed"]} == set(CASES)
    assert all(c["problems"][0]["kind"] == "DTYPE" for c in doc["cases"])


def _state(t, lib) -> tuple:
    """Everything a check must leave as it found it: storage, values, dtype, grad, version, history."""
    if lib.__name__ == "torch":
        return (
            t.data_ptr(),
            t.detach().clone(),
            t.dtype,
            t.grad if t.is_leaf else None,
            t._version,
            t.grad_fn,
        )
    return (t._data, t._data.copy(), t.dtype, t._grad, t._version, t.grad_fn)


def test_reached_tensors_are_restored_exactly(reach_file, lib):
    collected = collect([Target(str(reach_file))], compile_expression(None))
    assert not collected.errors
    module = collected.prepared[0].file.module
    H, PLAIN = module.H, module.PLAIN
    tensors = [
        module.W,
        module.B,
        module.B_EXP,
        module.WEIGHTS[0],
        module.TABLE["w"],
        H.w,
        H.inner.scale,
        PLAIN.offset,
        *PLAIN.parameters(),
        *module.LIN.parameters(),
        module.W_OTHER,
    ]
    module.B.grad = lib.ones(2)
    module.W.requires_grad_(True)
    module.W.grad = lib.full((3, 2), 7.0)
    before = [_state(t, lib) for t in tensors]
    for case in collected.prepared:
        assert run_case(case, Settings()).passed, case.case.name
    for t, (storage, values, dtype, grad, version, grad_fn) in zip(tensors, before):
        after = _state(t, lib)
        assert (after[0] is storage or after[0] == storage) and after[2] == dtype == lib.float32
        assert after[3] is grad and after[4] == version and after[5] is grad_fn
        numpy.testing.assert_array_equal(numpy.asarray(after[1].tolist()), numpy.asarray(values.tolist()))
    assert module.W.grad is before[0][3] and module.B_EXP.grad_fn is before[2][5]


# ------------------------------------------------------------------ what the check cannot reach

UNREACHABLE = """
import {lib} as torch
import gradcli


class Level:
    pass


DEEP = Level()
node = DEEP
for name in "abcdefghij":
    setattr(node, name, Level())
    node = getattr(node, name)
node.w = torch.randn(3, 2)


def x():
    return (torch.randn(4, 3, requires_grad=True),)


@gradcli.case(x)
def too_deep(x):
    return x @ DEEP.a.b.c.d.e.f.g.h.i.j.w


@gradcli.case(x)
def made_inside(x):
    w = torch.ones(3, 2)
    return x @ w


@gradcli.case(x)
def made_on_the_line(x):
    return x @ torch.ones(3, 2, dtype=torch.float32)
"""


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_a_dtype_error_names_the_operand_the_line_and_the_fix(tmp_path, lib):
    path = write(tmp_path, UNREACHABLE.format(lib=lib.__name__), "check_unreachable.py")
    deep_line, inside_line = line_of(path, "DEEP.a.b"), line_of(path, "return x @ w")
    code, doc = check_json(path)
    assert code == 1
    problems = {c["name"]: c["problems"] for c in doc["cases"]}
    (deep,) = problems["too_deep"]
    assert deep["kind"] == "DTYPE" and (deep["file"], deep["line"]) == (str(path), deep_line)
    assert deep["message"].startswith(
        "forward raised RuntimeError: expected m1 and m2 to have the same dtype"
    )
    assert deep["message"].endswith(
        f"(at {path}:{deep_line}); `DEEP.a.b.c.d.e.f.g.h.i.j.w` is a float32 tensor, not reached by gradcli, so not widened "
        "to float64 with the inputs. Fix: make it float64 (`.double()`, or `.to(x.dtype)` of an input x), or check "
        "in the case's own dtype with --dtype native"
    )
    (inside,) = problems["made_inside"]
    assert inside["kind"] == "DTYPE" and inside["line"] == inside_line
    assert "`w` is a float32 tensor, made in the function, so gradcli cannot widen it." in inside["message"]
    (on_line,) = problems["made_on_the_line"]
    assert on_line["kind"] == "DTYPE" and on_line["line"] == line_of(path, "dtype=torch.float32")
    assert (
        "a tensor of another dtype, made on this line or read where gradcli does not look"
        in on_line["message"]
    )


def test_the_text_report_shows_the_dtype_problem_under_its_line(tmp_path, lib):
    path = write(tmp_path, UNREACHABLE.format(lib=lib.__name__), "check_unreachable.py")
    result = CliRunner().invoke(app, ["check", str(path), "-k", "made_inside"])
    text = " ".join(result.stdout.split())
    assert result.exit_code == 1
    assert "`w` is a float32 tensor, made in the function" in text
    assert f"{line_of(path, 'return x @ w')} | return x @ w" in text


def test_other_errors_are_not_dtype_problems(tmp_path, lib):
    path = write(
        tmp_path,
        f"""
        import {lib.__name__} as torch
        import gradcli

        @gradcli.case(lambda: (torch.randn(4, 3, requires_grad=True),))
        def shapes(x):
            return x @ torch.ones(4, 2)
        """,
        "check_shapes.py",
    )
    code, doc = check_json(path)
    (problem,) = doc["cases"][0]["problems"]
    assert code == 1 and problem["kind"] == "ERROR" and "--dtype native" not in problem["message"]


def test_the_walk_is_bounded_and_skips_objects_it_should_not_look_into(tmp_path, lib):
    """A huge list and an object whose attribute access raises: the check still runs, and passes."""
    path = write(
        tmp_path,
        f"""
        import {lib.__name__} as torch
        import gradcli

        BIG = [torch.zeros(1) for _ in range(5000)]
        W = torch.randn(3, 2)

        class Hostile:
            def __getattribute__(self, name):
                raise RuntimeError("no " + name)

        HOSTILE = Hostile()

        @gradcli.case(lambda: (torch.randn(4, 3, requires_grad=True),))
        def f(x):
            HOSTILE, BIG
            return x @ W
        """,
        "check_bounded.py",
    )
    code, doc = check_json(path)
    assert code == 0, json.dumps(doc["cases"][0]["problems"])
