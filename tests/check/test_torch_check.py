"""`gradcli check` on torch files: the engine's checker run through `TorchTensors`.

Verdicts are compared with torch.autograd.gradcheck / gradgradcheck on right and wrong
functions; the CLI runs on examples/torch/ and on small files written here.
"""

import textwrap
from pathlib import Path

import pytest
from paths import ROOT

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch_parity

from json_contract import validated  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from engine.autograd import check_gradients  # noqa: E402
from gradcli.check.collection import Target, collect  # noqa: E402
from gradcli.check.results import Settings  # noqa: E402
from gradcli.check.run_case import run_case  # noqa: E402
from gradcli.check.selection import compile_expression  # noqa: E402
from gradcli.cli.app import app  # noqa: E402
from gradcli.libraries.torch_tensors import TorchTensors  # noqa: E402

EXAMPLES = ROOT / "examples" / "torch"


# ------------------------------------------------------------------ functions to check


class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return g * s * (1 + x * (1 - s))


class WrongFormula(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x


class TransposedLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w.t()

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w, x.t() @ g  # should be g.t() @ x


class Nondeterministic(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * (2 + torch.rand_like(g) * 1e-9)


class IgnoresGradOutput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.exp()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return x.exp()


class LowerPrecision(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return (g * x.cos()).half()


class WrongShape(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return (g * 2).sum(0)


class NoneUnsafe(torch.autograd.Function):
    """Does not materialise grads, then uses an undefined (None) gradient as a tensor."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class NotTwiceDifferentiable(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos().detach()


def x64(*shape):
    return torch.randn(*shape, dtype=torch.float64, requires_grad=True)


def cases():
    torch.manual_seed(0)
    right = {
        "sin": (torch.sin, (x64(3, 4),)),
        "matmul": (torch.matmul, (x64(2, 3), x64(3, 2))),
        "two_outputs": (lambda x: (x.sin(), 2 * x.cos()), (x64(5),)),
        "int_argument": (lambda x, n: x**n, (x64(4), 3)),
        "softmax": (lambda x: torch.softmax(x, dim=1), (x64(2, 5),)),
        "swish": (Swish.apply, (x64(3, 3),)),
        "conv1d": (torch.nn.functional.conv1d, (x64(1, 2, 6), x64(3, 2, 3))),
        "nondet_tolerated": (Nondeterministic.apply, (x64(4),), {"nondet_tol": 1e-6}),
        "lower_precision_grad": (LowerPrecision.apply, (x64(3),)),
    }
    wrong = {
        "wrong_formula": (WrongFormula.apply, (x64(2, 3),)),
        "transposed": (TransposedLinear.apply, (x64(3, 3), x64(3, 3))),
        "nondeterministic": (Nondeterministic.apply, (x64(4),)),
        "ignores_grad_output": (IgnoresGradOutput.apply, (x64(3),)),
        "wrong_shape": (WrongShape.apply, (x64(2, 3),)),
        "undefined_grad": (NoneUnsafe.apply, (x64(3),)),
    }
    return right, wrong


RIGHT, WRONG = cases()
ALL = {**RIGHT, **WRONG}


def torch_verdict(check, func, inputs, **options) -> bool:
    try:
        return check(func, inputs, raise_exception=False, **options)
    except Exception:  # torch lets some failures through as errors of their own
        return False


def unpack(name):
    func, inputs, *rest = ALL[name]
    return func, inputs, (rest[0] if rest else {})


@pytest.mark.parametrize("fast", [False, True], ids=["full", "fast"])
@pytest.mark.parametrize("name", list(ALL))
def test_verdict_agrees_with_torch_gradcheck(name, fast):
    func, inputs, options = unpack(name)
    expected = torch_verdict(torch.autograd.gradcheck, func, inputs, fast_mode=fast, **options)
    assert expected == (name in RIGHT)  # the corpus is what it claims to be
    report = check_gradients(func, inputs, fast_mode=fast, tensors=TorchTensors(), **options)
    assert report.passed == expected, report.problems or report.message()


@pytest.mark.parametrize(
    "name, func",
    [
        ("swish", Swish.apply),
        ("tanh_mul", lambda x: x.tanh() * x),
        ("not_twice", NotTwiceDifferentiable.apply),
    ],
)
def test_second_order_verdict_agrees_with_gradgradcheck(name, func):
    inputs = (x64(2, 3),)
    expected = torch_verdict(torch.autograd.gradgradcheck, func, inputs)
    assert expected == (name != "not_twice")
    report = check_gradients(func, inputs, order=2, tensors=TorchTensors())
    assert report.passed == expected
    assert {p.order for p in report.pairs} == {1, 2}
    assert all(p.passed for p in report.pairs if p.order == 1)


def test_failure_message_is_torch_text():
    func, inputs, _ = unpack("wrong_formula")
    with pytest.raises(RuntimeError) as raised:  # torch's GradcheckError
        torch.autograd.gradcheck(func, inputs)
    report = check_gradients(func, inputs, tensors=TorchTensors())
    assert report.message() == str(raised.value)


@pytest.mark.parametrize("fast", [False, True], ids=["full", "fast"])
@pytest.mark.parametrize("name", ["transposed", "conv1d", "wrong_formula"])
def test_torch_based_perturbation_matches_numpy_views(name, fast):
    """TorchArray (the path of a CUDA device without CuPy) gives the numpy views' numbers."""
    func, inputs, _ = unpack(name)
    by_numpy = check_gradients(func, inputs, fast_mode=fast, tensors=TorchTensors())
    by_torch = check_gradients(func, inputs, fast_mode=fast, tensors=TorchTensors(storage="torch"))
    assert by_numpy.passed == by_torch.passed
    assert [(p.max_abs_err, p.worst_input_index) for p in by_numpy.pairs] == [
        (p.max_abs_err, p.worst_input_index) for p in by_torch.pairs
    ]


def test_inputs_are_left_as_they_were():
    x = x64(3, 3)
    before, version = x.detach().clone(), x._version
    check_gradients(WrongFormula.apply, (x,), tensors=TorchTensors())
    assert torch.equal(x, before) and x._version == version and x.grad is None


def test_float32_inputs_are_checked_as_float64_copies():
    x = torch.randn(4, requires_grad=True)
    report = check_gradients(Swish.apply, (x,), tensors=TorchTensors())
    assert report.passed and report.upcast and report.dtype == "float64"
    assert x.dtype == torch.float32


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_inputs():
    x = torch.randn(3, 3, dtype=torch.float64, device="cuda", requires_grad=True)
    for storage in ("auto", "torch"):
        assert check_gradients(Swish.apply, (x,), tensors=TorchTensors(storage=storage)).passed
        report = check_gradients(WrongFormula.apply, (x,), tensors=TorchTensors(storage=storage))
        assert not report.passed and report.device == "cuda:0"


# ------------------------------------------------------------------ the CLI


def run(*args):
    result = CliRunner().invoke(app, ["check", *map(str, args)])
    assert "Traceback" not in result.output, result.output
    return result


def run_json(*args):
    result = run(*args, "--json")
    return result, validated(result.stdout)


def write(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "check_me.py"
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def test_cli_function_example_text():
    result = run(EXAMPLES / "check_function.py")
    assert result.exit_code == 1
    out = result.output
    assert "FAILED" in out and "check_function.py::cube BUG (order 1, full mode, float64, cpu)" in out
    assert "backward of Cube: " in out
    assert "return 3 * grad_output * x  # BUG" in out
    assert "1 passed, 1 failed" in out
    swish_rows = [line for line in out.splitlines() if "grad(x)" in line]
    assert swish_rows and all("PASS" in line for line in swish_rows)


def test_cli_function_example_json():
    result, doc = run_json(EXAMPLES / "check_function.py")
    assert result.exit_code == 1
    cases = {c["name"]: c for c in doc["cases"]}
    swish, cube = cases["swish"], cases["cube"]
    assert swish["passed"] and swish["order"] == 2
    assert {(p["output"], p["input"], p["order"]) for p in swish["pairs"]} == {
        ("out", "x", 1),
        ("grad(x)", "x", 2),
        ("grad(x)", "grad_out", 2),
    }
    assert not cube["passed"] and cube["mode"] == "full" and cube["device"] == "cpu"
    (pair,) = cube["pairs"]
    assert pair["input"] == "x" and pair["input_shape"] == [2, 3] and not pair["passed"]
    # x**3 with a backward of 3 g x: the analytical entries are 3 x, the numerical ones 3 x**2
    worst = pair["mismatches"][0]
    assert worst["output_index"] == worst["input_index"]
    assert worst["numerical"] == pytest.approx(worst["analytical"] ** 2 / 3, rel=1e-6)
    (backward,) = cube["backwards"]
    assert backward["function"] == "Cube.backward" and backward["file"].endswith("check_function.py")
    assert backward["line"] == 40


def test_cli_fast_mode_localises_the_wrong_entries():
    result, doc = run_json(EXAMPLES / "check_function.py", "-k", "cube", "--fast")
    (case,) = doc["cases"]
    assert case["mode"] == "fast" and case["localized"] and not case["passed"]
    (pair,) = case["pairs"]
    assert len(pair["mismatches"]) == 6  # every diagonal entry of the (6, 6) Jacobian


def test_cli_model_example_names_parameters_and_restores_them():
    result, doc = run_json(EXAMPLES / "check_model.py")
    assert result.exit_code == 0, result.output
    (case,) = doc["cases"]
    assert case["passed"] and case["upcast"] and case["dtype"] == "float64"
    assert [p["input"] for p in case["pairs"] if p["mode"] == "rev"] == [
        "x",
        "model.fc1.weight",
        "model.fc1.bias",
        "model.fc2.weight",
        "model.fc2.bias",
    ]


def test_model_parameters_are_restored_exactly():
    collected = collect([Target(str(EXAMPLES / "check_model.py"))], compile_expression(None))
    assert not collected.errors
    prepared = collected.prepared
    (case,) = prepared
    assert case.library.name == "torch"
    params = [p for _, p in case.params]
    for p in params:
        p.grad = torch.ones_like(p)
    before = [(p.data, p.data.clone(), p.grad) for p in params]
    result = run_case(case, Settings())
    assert result.passed and result.upcast
    for p, (data, values, grad) in zip(params, before):
        assert p.data.data_ptr() == data.data_ptr() and p.dtype == torch.float32
        assert torch.equal(p.data, values) and p.grad is grad


def test_cli_shared_parameter_is_checked_once(tmp_path):
    path = write(
        tmp_path,
        """
        import torch
        from torch import nn

        class Tied(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(3, 3)
                self.b = self.a

            def forward(self, x):
                return self.b(torch.tanh(self.a(x)))

        model = Tied()
        inputs = (torch.randn(2, 3, dtype=torch.float64, requires_grad=True),)
        """,
    )
    result, doc = run_json(path)
    assert result.exit_code == 0, result.output
    assert [p["input"] for p in doc["cases"][0]["pairs"] if p["mode"] == "rev"] == [
        "x",
        "model.a.weight",
        "model.a.bias",
    ]


def test_cli_f_and_inputs_form_and_undefined_grad(tmp_path):
    path = write(
        tmp_path,
        """
        import torch

        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        def f(x):
            return Double.apply(x), x.sin()

        inputs = (torch.randn(3, dtype=torch.float64, requires_grad=True),)
        """,
    )
    result, doc = run_json(path)
    assert result.exit_code == 1
    (case,) = doc["cases"]
    assert all(p["passed"] for p in case["pairs"]) and {p["output"] for p in case["pairs"]} == {
        "out0",
        "out1",
    }
    (problem,) = case["problems"]
    assert problem["message"].startswith("Expected backward function to handle undefined output grads")
    assert "raised TypeError" in problem["message"] and problem["line"] == 11


def test_cli_nondeterminism_and_its_tolerance(tmp_path):
    path = write(
        tmp_path,
        """
        import torch
        import gradcli

        class Noisy(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * (2 + torch.rand_like(g) * 1e-9)

        @gradcli.case(torch.randn(4, dtype=torch.float64, requires_grad=True))
        def noisy(x):
            return Noisy.apply(x)
        """,
    )
    result, doc = run_json(path)
    assert result.exit_code == 1
    assert any("not reentrant" in p["message"] for p in doc["cases"][0]["problems"])
    assert run(path, "--nondet-tol", "1e-6").exit_code == 0


def test_cli_mixed_tensors_is_a_loading_error(tmp_path):
    path = write(
        tmp_path,
        """
        import engine
        import torch

        def f(x, w):
            return x * w

        inputs = (torch.randn(3, dtype=torch.float64, requires_grad=True), engine.randn(3))
        """,
    )
    result = run(path)
    assert result.exit_code == 2
    assert "check_me.py:7: case 'f' mixes engine and torch tensors" in result.output
    assert "w is an engine.Tensor; x is a torch.Tensor" in result.output


def test_cli_hint_names_torch(tmp_path):
    path = write(
        tmp_path,
        """
        import torch

        def f(x):
            return x.sin()

        inputs = (torch.randn(3),)
        """,
    )
    result = run(path)
    assert result.exit_code == 2
    assert "x: float32 tensor without requires_grad" in result.output
    assert "torch.randn(3, dtype=torch.float64, requires_grad=True)" in result.output


def test_cli_inputs_factory_is_seeded_with_torch(tmp_path):
    path = write(
        tmp_path,
        """
        import torch
        import gradcli

        @gradcli.case(lambda: (torch.rand(3, dtype=torch.float64, requires_grad=True),))
        def first(x):
            print("VALUES", x.tolist())
            return x.sin()
        """,
    )
    first = run(path, "--seed", "3").output
    again = run(path, "--seed", "3").output
    values = [line for line in first.splitlines() if line.startswith("VALUES")]
    assert values and values[0] == next(line for line in again.splitlines() if line.startswith("VALUES"))
    torch.manual_seed(3)
    assert values[0] == f"VALUES {torch.rand(3, dtype=torch.float64).tolist()}"
