"""Full mode's batched numerical Jacobian: the same Jacobians and verdicts as one forward per perturbation.

Each function runs through the real checker twice, batched and with the plain loop forced (the
batched path monkeypatched away), and a spy counts the batched Jacobians actually used, so a
test cannot pass by quietly falling back.
"""

import importlib
import json

import numpy
import pytest
from json_contract import validated
from paths import ROOT
from typer.testing import CliRunner

import engine
import engine.nn.functional as F
from engine.autograd import Function
from engine.autograd.gradcheck.check import Check
from engine.autograd.gradcheck.report import empty_report
from engine.autograd.gradcheck.state import Options
from engine.autograd.gradcheck.tensors import ENGINE
from engine.autograd.gradcheck.util import as_tuple
from gradcli.cli.app import app

numerical = importlib.import_module("engine.autograd.gradcheck.numerical")
batched = importlib.import_module("engine.autograd.gradcheck.batched")


def f64(*shape, grad=True):
    return engine.randn(*shape, dtype=engine.float64, requires_grad=grad)


@pytest.fixture
def spy(monkeypatch):
    """Counts the Jacobians the batched path computed; `spy.plain()` forces the plain loop."""
    real = batched.batched_differences
    used = []

    def counting(*args):
        result = real(*args)
        used.append(result is not None)
        return result

    monkeypatch.setattr(numerical, "batched_differences", counting)
    counting.used = used
    counting.plain = lambda: monkeypatch.setattr(numerical, "batched_differences", lambda *a: None)
    return counting


def jacobians(f, inputs) -> list[list[numpy.ndarray]]:
    """Every numerical Jacobian of f at inputs, per input rank and output, as full mode computes them."""
    opts = Options(1e-6, 1e-5, 1e-3, 0.0, True, False)
    check = Check(f, inputs, opts, empty_report(ENGINE, inputs, False, upcast=False), order=1, strict=True)
    check.outputs = [(k, o) for k, o in enumerate(as_tuple(f(*inputs))) if o.requires_grad]
    return [numerical.numerical_jacobians(check, rank) for rank in range(len(check.diff_inputs))]


def assert_same_jacobians(spy, f, inputs, expect_batched=True):
    fast = jacobians(f, inputs)
    assert all(spy.used) == expect_batched and spy.used
    spy.plain()
    slow = jacobians(f, inputs)
    for a_list, b_list in zip(fast, slow):
        for a, b in zip(a_list, b_list):
            assert a.shape == b.shape
            scale = max(numpy.abs(b).max(), 1.0)
            assert numpy.abs(a - b).max() <= 1e-12 * scale, numpy.abs(a - b).max()


engine.manual_seed(0)
W, V, B = f64(6, 5, grad=False), f64(5, 3), f64(3)
FAMILIES = {
    "elementwise": (lambda x, y: (x.tanh() * y.exp() - x / (y * y + 1)).sigmoid() ** 2, (f64(4, 3), f64(3))),
    "unary": (
        lambda x: x.sin() + x.cos().abs() + x.relu() - F.leaky_relu(x, 0.1) + x.clamp(-0.5, 0.5),
        (f64(7),),
    ),
    "matmul": (lambda x, w: (x @ w).tanh().sum(), (f64(4, 6), f64(6, 5))),
    "linear": (lambda x, w, b: F.linear(x, w, b).relu().sum(), (f64(4, 6), f64(5, 6), f64(5))),
    "mlp": (lambda x: (F.linear(x @ W, V.t(), B).tanh() ** 2).mean(), (f64(2, 6),)),
    "bmm": (lambda a, b: engine.bmm(a, b), (f64(2, 3, 4), f64(2, 4, 2))),
    "reductions": (lambda x: (x.sum(1), x.mean((0, -1), keepdim=True), x.sum(-1).mean()), (f64(3, 4, 2),)),
    "views": (
        lambda x: (x.t().reshape(12)[2:9].unsqueeze(0).expand(2, 7).transpose(0, 1), x.permute(1, 0)[1]),
        (f64(3, 4),),
    ),
    "softmax": (lambda x: (x.softmax(-1) * x.log_softmax(0)).sum(0), (f64(3, 5),)),
    "broadcast_const": (lambda x: x * engine.ones(4, 1, dtype=engine.float64) + 2.5, (f64(3),)),
}


@pytest.mark.parametrize("name", FAMILIES)
def test_batched_jacobians_equal_the_plain_loop(spy, name):
    f, inputs = FAMILIES[name]
    assert_same_jacobians(spy, f, inputs)


def test_a_tiny_chunk_gives_the_same_jacobians(spy, monkeypatch):
    monkeypatch.setattr(batched, "CHUNK_ELEMENTS", 7)  # one perturbation pair per chunk
    f, inputs = FAMILIES["mlp"]
    assert_same_jacobians(spy, f, inputs)


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x**2


def near(*values):
    return engine.tensor(values, dtype=engine.float64, requires_grad=True)


FALLBACKS = {
    "custom Function": (lambda x: Cube.apply(x).sum() * 2, f64(5)),
    "op without a rule, its indices from values": (lambda x: engine.sort(x, 0).values.tanh(), f64(5)),
    "detach": (lambda x: x * x.detach(), f64(5)),
    "in-place": (lambda x: (x * 2).add_(1), f64(5)),
    # one element within eps of where the function changes: some perturbation crosses it
    "mask from values": (lambda x: engine.where(x > 0.1, x, x * 0), near(0.3, 0.1 + 4e-7, -1.0)),
    "value steers code": (
        lambda x: x * 2 if float(x.sum()) > 0 else x * 3,
        near(0.5, -0.5 + 3e-7, 0.2, -0.2),
    ),
}


@pytest.mark.parametrize("name", FALLBACKS)
def test_what_cannot_be_batched_falls_back_to_the_same_jacobians(spy, name):
    f, x = FALLBACKS[name]
    assert_same_jacobians(spy, f, (x,), expect_batched=False)


def test_a_row_without_a_rule_runs_per_perturbation_inside_the_batched_path(spy):
    """cummax has no batching rule and no attr worked out from values: its forward runs per element."""
    assert_same_jacobians(spy, lambda x: engine.cummax(x, 0).values.tanh(), (f64(5),))


def test_away_from_a_mask_edge_the_batched_path_runs(spy):
    assert_same_jacobians(spy, FALLBACKS["mask from values"][0], (near(0.3, 0.2, -1.0),))


def test_a_wrong_gradient_fails_alike(spy):
    """A wrong backward among batched ops: the same mismatch, same numbers, batched or not."""

    def wrong(x, w):
        return (x @ w).tanh().sum() + Cube.apply(w[0]).sum()

    reports = []
    for plain in (False, True):
        if plain:
            spy.plain()
        engine.manual_seed(1)
        inputs = (f64(3, 4), f64(4, 2))
        reports.append(engine.autograd.check_gradients(lambda x, w: (wrong(x, w), x.exp()), inputs))
    assert spy.used and spy.used[0]
    fast, slow = (
        [(p.output_index, p.input_index, p.passed, p.max_abs_err) for p in r.pairs] for r in reports
    )
    assert fast == slow


def check_json(*files) -> dict:
    result = CliRunner().invoke(app, ["check", "--json", *map(str, files)])
    doc = validated(json.loads(result.stdout))
    del doc["summary"]["elapsed"]
    for case in doc["cases"]:
        del case["elapsed"]
    return {"exit": result.exit_code, "doc": doc}


def test_verdicts_on_the_corpus_are_the_same(spy):
    files = [ROOT / "tests" / "corpus" / name for name in ("good.py", "bad.py", "model_form.py")]
    files.append(ROOT / "examples" / "model.py")
    fast = check_json(*files)
    assert any(spy.used)
    spy.plain()
    assert fast == check_json(*files)
