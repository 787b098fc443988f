"""Issue 14's engine.nn: activations, distances, losses, norms, pooling, padding, convolutions,
upsampling, attention, their modules, nn.utils and module backward hooks.

Each op is checked by tests/opcheck.py: finite differences (first and second order) and, with
torch installed, torch's values, dtypes, shapes, node names and gradients; errors are torch's
exception and message, `torch` read as `engine`.
"""

import numpy as np
import pytest
from opcheck import check_error, check_op, compare_with_torch, make_arrays

import engine

try:
    import torch
except ImportError:
    torch = None


def F(lib):
    return lib.nn.functional


def off_integers(rng, n):
    """Values in (-4, 4), at least 0.1 from every integer: the kinks of hardtanh, hardsigmoid, relu6, elu."""
    return rng.integers(-4, 4, n) + rng.uniform(0.1, 0.9, n)


# ----------------------------------------------------------------------------------- activations

ACTIVATIONS = {
    "silu": (lambda lib, x: F(lib).silu(x), "SiluBackward0"),
    "mish": (lambda lib, x: F(lib).mish(x), "MishBackward0"),
    "hardsigmoid": (lambda lib, x: F(lib).hardsigmoid(x), "HardsigmoidBackward0"),
    "hardswish": (lambda lib, x: F(lib).hardswish(x), "HardswishBackward0"),
    "hardtanh": (lambda lib, x: F(lib).hardtanh(x), "HardtanhBackward0"),
    "hardtanh_bounds": (lambda lib, x: F(lib).hardtanh(x, min_val=-2.0, max_val=3), "HardtanhBackward0"),
    "relu6": (lambda lib, x: F(lib).relu6(x * 2), "HardtanhBackward0"),
    "elu": (lambda lib, x: F(lib).elu(x), "EluBackward0"),
    "elu_alpha": (lambda lib, x: F(lib).elu(x, alpha=0.5), "EluBackward0"),
    "selu": (lambda lib, x: F(lib).selu(x), "EluBackward0"),
    "celu": (lambda lib, x: F(lib).celu(x, alpha=0.7), "CeluBackward0"),
    "logsigmoid": (lambda lib, x: F(lib).logsigmoid(x), "LogSigmoidBackward0"),
    "softplus": (lambda lib, x: F(lib).softplus(x), "SoftplusBackward0"),
    "softplus_beta_threshold": (
        lambda lib, x: F(lib).softplus(x, beta=2, threshold=3.5),
        "SoftplusBackward0",
    ),
    "softsign": (lambda lib, x: F(lib).softsign(x), "DivBackward0"),
    "tanhshrink": (lambda lib, x: F(lib).tanhshrink(x), "SubBackward0"),
    "gelu_tanh": (lambda lib, x: F(lib).gelu(x, approximate="tanh"), "GeluBackward0"),
    "softmin": (lambda lib, x: F(lib).softmin(x, dim=-1), "SoftmaxBackward0"),
    "softmin_dtype": (lambda lib, x: F(lib).softmin(x, 0, dtype=lib.float64), "SoftmaxBackward0"),
    "elu_inplace": (lambda lib, x: F(lib).elu(x * 1, inplace=True), "EluBackward1"),
    "elu_": (lambda lib, x: F(lib).elu_(x * 1, 0.3), "EluBackward1"),
    "selu_inplace": (lambda lib, x: F(lib).selu(x * 1, inplace=True), "EluBackward1"),
    "celu_inplace": (lambda lib, x: F(lib).celu(x * 1, 1.5, True), "CeluBackward1"),
    "silu_inplace": (lambda lib, x: F(lib).silu(x * 1, inplace=True), "SiluBackward0"),
    "mish_inplace": (lambda lib, x: F(lib).mish(x * 1, inplace=True), "MishBackward0"),
    "hardtanh_": (lambda lib, x: F(lib).hardtanh_(x * 1, -2, 2), "HardtanhBackward0"),
    "relu6_inplace": (lambda lib, x: F(lib).relu6(x * 2, inplace=True), "HardtanhBackward0"),
    "hardswish_inplace": (lambda lib, x: F(lib).hardswish(x * 1, inplace=True), "HardswishBackward0"),
    "hardsigmoid_inplace": (lambda lib, x: F(lib).hardsigmoid(x * 1, True), "HardsigmoidBackward0"),
}


# (softmax over dim -1 of a 0-dim tensor, under create_graph, is the reductions' part of the issue)
@pytest.mark.parametrize(
    "name, shape",
    [
        (name, shape)
        for name in sorted(ACTIVATIONS)
        for shape in ((3, 4), (), (2, 1, 3))
        if not (name.startswith("softmin") and shape == ())
    ],  # fmt: skip
)
def test_activation(name, shape):
    fn, node = ACTIVATIONS[name]
    check_op(fn, [(off_integers, shape)], node=node)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: F(lib).glu(x),
        lambda lib, x: F(lib).glu(x, dim=0),
        lambda lib, x: F(lib).glu(x, -2),
    ],
    ids=["last", "first", "negative"],
)
def test_glu(fn):
    check_op(fn, [("r", (4, 6))], node="GluBackward0")


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(
    "name", ["silu", "mish", "hardswish", "elu", "selu", "celu", "logsigmoid", "softplus"]
)
def test_activation_keeps_the_float_dtype(name, dtype):
    fn = ACTIVATIONS[name][0]
    rtol = 1e-5 if dtype == "float32" else 2e-3
    compare_with_torch(
        lambda lib, x: fn(lib, x.to(getattr(lib, dtype))),
        make_arrays([(off_integers, (3, 4))]),
        rtol=rtol,
        atol=rtol,
    )


@pytest.mark.parametrize(
    "name, kernel",
    [
        ("silu", "silu"),
        ("mish", "mish"),
        ("hardsigmoid", "hardsigmoid"),
        ("hardswish", "hardswish"),
        ("elu", "elu"),
        ("selu", "elu"),
        ("celu", "elu"),
        ("logsigmoid", "log_sigmoid"),
        ("softplus", "softplus"),
        ("glu", "glu"),
    ],  # fmt: skip
)
@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_float_activation_refuses_integers(name, kernel, dtype):
    message = f"\"{kernel}_cpu\" not implemented for '{'Long' if dtype == 'int64' else 'Bool'}'"
    check_error(
        lambda lib: getattr(F(lib), name)(lib.tensor([[1, 0], [0, 1]]).to(getattr(lib, dtype))),
        message,
        NotImplementedError,
    )


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: F(lib).hardtanh(x, -2, 2),
        lambda lib, x: F(lib).relu6(x * 3),
        lambda lib, x: F(lib).softsign(x),
    ],
    ids=["hardtanh", "relu6", "softsign"],
)
def test_activation_of_integers(fn):
    compare_with_torch(fn, [np.array([[-3, 1], [0, 7]])], grad=False)


@pytest.mark.parametrize(
    "fn, message, exception",
    [
        (lambda lib: F(lib).glu(lib.ones(3, 5)), "Halving dimension must be even", RuntimeError),
        (lambda lib: F(lib).glu(lib.ones(3, 4), 0), "but dimension 0 is size 3", RuntimeError),
        (lambda lib: F(lib).glu(lib.tensor(1.0)), "glu does not support scalars", RuntimeError),
        (lambda lib: F(lib).glu(lib.ones(3, 4), 2), "Dimension out of range", IndexError),
        (lambda lib: F(lib).celu(lib.ones(3), alpha=0.0), "alpha cannot be 0 for CELU", RuntimeError),
        (
            lambda lib: F(lib).hardtanh(lib.ones(3), 2, 1),
            "min_val cannot be greater than max_val",
            ValueError,
        ),
        (lambda lib: F(lib).hardtanh(lib.ones(3, dtype=lib.bool)), "Bool inputs not supported", RuntimeError),
        (
            lambda lib: F(lib).softsign(lib.ones(3, dtype=lib.bool)),
            "not implemented for 'Bool'",
            NotImplementedError,
        ),
        (
            lambda lib: F(lib).elu_(lib.ones(3, requires_grad=True) * 1, alpha=-1.0).sum().backward(),
            "In-place elu backward calculation is triggered with a negative slope",
            RuntimeError,
        ),
    ],
    ids=[
        "glu-odd",
        "glu-dim",
        "glu-scalar",
        "glu-dim-range",
        "celu-alpha",
        "hardtanh-bounds",
        "hardtanh-bool",
        "softsign-bool",
        "elu-inplace-negative",
    ],  # fmt: skip
)
def test_activation_errors(fn, message, exception):
    check_error(fn, message, exception)


def test_softmin_without_dim_warns_as_torch():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin has been deprecated"):
        out = engine.nn.functional.softmin(engine.ones(2, 3))
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 1 / 3))


def test_in_place_activation_writes_into_its_input():
    x = engine.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = x * 1
    out = engine.nn.functional.selu(y, inplace=True)
    assert out is y and y._version == 1
    assert y.grad_fn.name() == "EluBackward1"
    y.sum().backward()
    scale, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
    np.testing.assert_allclose(x.grad.numpy(), [scale * alpha * np.exp(-1.0), scale, scale])
