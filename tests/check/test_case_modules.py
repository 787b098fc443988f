"""nn.Modules in decorated cases: `modules=` checks their parameters, every module a case uses is
checked in float64 (no false failure from float32 weights), tied parameters once, all restored.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy
import pytest
from cli_runner import run_gradcli_json
from paths import ROOT
from typer.testing import CliRunner

from gradcli.check.collection import Target, collect
from gradcli.check.results import Settings
from gradcli.check.run_case import run_case
from gradcli.check.selection import compile_expression
from gradcli.cli.app import app

TWO_MODELS = """
import engine, gradcli
from engine import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.norm = nn.BatchNorm1d(2)

    def forward(self, x):
        return self.norm(self.fc(x)).tanh()

m1 = Net()  # float32, as nn modules are made
m2 = Net()
shared = nn.Linear(2, 2)
m1.head = shared  # tied: the same parameters in both models
m2.head = shared

def x():
    return (engine.randn(4, 3, requires_grad=True),)

@gradcli.case(x, modules=(m1, m2))
def both(x):
    return m2.head(m1(x)) + m2(x)

def helper(x):
    return m1(x) * m2(x)

@gradcli.case(x)
def implicit(x):  # no modules=: m1 and m2, read through helper, run in float64 all the same
    return helper(x)

def make_case(model):
    @gradcli.case(x)
    def closure(x):
        return model(x)

make_case(nn.Sequential(nn.Linear(3, 3), nn.Tanh()))
"""


def write(tmp_path: Path, text: str, name: str = "check_models.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def check_json(path: Path, *flags: str) -> tuple[int, dict]:
    return run_gradcli_json("check", path, "--json", *flags)


def test_float32_models_in_decorated_cases_pass_and_modules_parameters_are_checked(tmp_path):
    code, doc = check_json(write(tmp_path, TWO_MODELS))
    assert code == 0, [p["message"] for c in doc["cases"] for p in c["problems"]]
    cases = {c["name"]: c for c in doc["cases"]}
    assert all(c["upcast"] and c["dtype"] == "float64" for c in cases.values())
    assert [p["input"] for p in cases["both"]["pairs"] if p["mode"] == "rev"] == [
        "x",
        "m1.fc.weight",
        "m1.fc.bias",
        "m1.norm.weight",
        "m1.norm.bias",
        "m1.head.weight",  # shared with m2: checked once, under its first name
        "m1.head.bias",
        "m2.fc.weight",
        "m2.fc.bias",
        "m2.norm.weight",
        "m2.norm.bias",
    ]
    assert [p["input"] for p in cases["implicit"]["pairs"] if p["mode"] == "rev"] == ["x"]
    assert [p["input"] for p in cases["closure"]["pairs"] if p["mode"] == "rev"] == ["x"]


def test_without_the_float64_copies_the_same_file_fails_as_the_issue_reports(tmp_path, monkeypatch):
    """The failure the float64 storage prevents (guards the test above against passing vacuously)."""
    import gradcli.check.dtype_plan as check_dtype
    from gradcli.check.reach import Reached

    monkeypatch.setattr(check_dtype, "reached", lambda func, roots: Reached())
    monkeypatch.setattr(check_dtype, "module_tensors", lambda modules: [])
    code, doc = check_json(write(tmp_path, TWO_MODELS), "-k", "implicit")
    assert code == 1
    (problem,) = doc["cases"][0]["problems"]
    assert "mat1 and mat2 must have the same dtype, but got Double and Float" in problem["message"]
    assert problem["kind"] == "DTYPE"


def test_modules_and_their_buffers_are_restored_exactly(tmp_path):
    path = write(tmp_path, TWO_MODELS)
    collected = collect([Target(str(path))], compile_expression(None))
    assert not collected.errors
    module = collected.prepared[0].file.module
    tensors = [*module.m1.parameters(), *module.m1.buffers(), *module.m2.parameters(), *module.m2.buffers()]
    for p in module.m1.parameters():
        p.grad = p.detach() * 0 + 7
    before = [(t._data, t._data.copy(), t._grad) for t in tensors]
    for case in collected.prepared:
        assert run_case(case, Settings()).passed
    for t, (data, values, grad) in zip(tensors, before):
        assert t._data is data and t._data.dtype == values.dtype and t._grad is grad
        numpy.testing.assert_array_equal(t._data, values)  # running statistics included
    assert int(module.m1.norm.num_batches_tracked) == 0


def test_a_wrong_parameter_gradient_is_found_through_modules(tmp_path):
    code, doc = check_json(
        write(
            tmp_path,
            """
            import engine, gradcli
            from engine import nn

            class Scale(engine.autograd.Function):
                @staticmethod
                def forward(ctx, x, w):
                    ctx.save_for_backward(x, w)
                    return x * w

                @staticmethod
                def backward(ctx, g):
                    x, w = ctx.saved_tensors
                    return g * w, (g * w).sum(0)  # BUG: should be (g * x).sum(0)

            class Layer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.w = nn.Parameter(engine.rand(3) + 0.5)

                def forward(self, x):
                    return Scale.apply(x, self.w)

            layer = Layer()

            @gradcli.case(lambda: (engine.randn(2, 3, requires_grad=True),), modules=layer)
            def scaled(x):
                return layer(x)
            """,
        )
    )
    assert code == 1
    verdicts = {p["input"]: p["passed"] for p in doc["cases"][0]["pairs"]}
    assert verdicts == {"x": True, "layer.w": False}
    assert doc["cases"][0]["backwards"][0]["function"] == "Scale.backward"


def test_an_unnamed_module_and_a_module_used_twice(tmp_path):
    code, doc = check_json(
        write(
            tmp_path,
            """
            import engine, gradcli
            from engine import nn

            lin = nn.Linear(2, 2)
            twice = nn.Module()
            twice.a = lin
            twice.b = lin

            @gradcli.case(lambda: (engine.randn(3, 2, requires_grad=True),), modules=(nn.Linear(2, 2), twice))
            def chain(x):
                return twice.b(twice.a(x))
            """,
        )
    )
    assert code == 0
    names = [p["input"] for p in doc["cases"][0]["pairs"] if p["mode"] == "rev"]
    assert names == ["x", "modules[0].weight", "modules[0].bias", "twice.a.weight", "twice.a.bias"]


@pytest.mark.parametrize(
    "modules, message",
    [
        (
            "(Net,)",
            "gradcli.case(modules=...) takes modules (objects with .parameters()), but item 0 is the class Net",
        ),
        ("3", "but item 0 is int"),
    ],
)
def test_modules_that_are_not_modules_are_loading_errors(tmp_path, modules, message):
    path = write(
        tmp_path,
        f"""
        import engine, gradcli
        from engine import nn

        class Net(nn.Module):
            pass

        @gradcli.case(engine.randn(2, dtype=engine.float64, requires_grad=True), modules={modules})
        def f(x):
            return x * 2
        """,
    )
    result = CliRunner().invoke(app, ["check", str(path)])
    assert result.exit_code == 2 and message in result.stderr and f"{path}:7" in result.stderr


def test_torch_modules_in_decorated_cases(torch, tmp_path):
    path = write(
        tmp_path,
        """
        import torch, gradcli

        m1 = torch.nn.Linear(3, 2)  # float32
        m2 = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))

        @gradcli.case(lambda: (torch.randn(4, 3, requires_grad=True),), modules=(m1, m2))
        def both(x):
            return m2(m1(x)).tanh()

        @gradcli.case(lambda: (torch.randn(4, 3, requires_grad=True),))
        def implicit(x):
            return m2(m1(x))
        """,
    )
    collected = collect([Target(str(path))], compile_expression(None))
    module = collected.prepared[0].file.module
    tensors = [*module.m1.parameters(), *module.m2.parameters(), *module.m2.buffers()]
    before = [(t.data, t.data.clone()) for t in tensors]
    results = {case.case.name: run_case(case, Settings()) for case in collected.prepared}
    assert all(r.passed and r.upcast for r in results.values()), results
    assert [p.input for p in results["both"].pairs if p.mode == "rev"] == [
        "x",
        "m1.weight",
        "m1.bias",
        "m2.0.weight",
        "m2.0.bias",
        "m2.1.weight",
        "m2.1.bias",
    ]
    for t, (data, values) in zip(tensors, before):
        assert t.dtype == data.dtype and torch.equal(t.data, values)


def test_the_models_example_through_the_installed_command():
    root = ROOT
    done = subprocess.run(
        [sys.executable, "-m", "gradcli", "check", "examples/", "-k", "models", "--json"],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    assert [(c["file"], c["name"], c["upcast"]) for c in doc["cases"]] == [
        ("examples/check_models.py", "autoencoder", True),
        ("examples/check_models.py", "roundtrip", True),
    ]
    assert [p["input"] for p in doc["cases"][0]["pairs"] if p["mode"] == "rev"] == [
        "x",
        "encoder.fc.weight",
        "encoder.fc.bias",
        "decoder.fc.weight",
        "decoder.fc.bias",
    ]
