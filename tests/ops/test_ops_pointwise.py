"""Elementwise ops (engine/ops/pointwise.py) against PyTorch and finite differences, beyond the registry.

Each differentiable form's derivatives, node name and torch's values and gradients are the
registry's (tests/ops/pointwise.py); `check_op` (tests/opcheck.py) checks the few forms here the
same way. `match_torch` runs one call on both libraries across dtypes, Python numbers and special values:
the same result (values, dtype, shape, node name) or the same exception with the same message.
Tests with written-out expectations pin what must hold without torch too.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from opcheck import check_error, check_op, match_torch

import engine
from ops.pointwise import UNARY

try:
    import torch
except ImportError:
    torch = None

nan, inf = math.nan, math.inf


# -------------------------------------------------------------------------------------- unary

FORWARD_ONLY = ["isnan", "isinf", "isfinite", "logical_not", "bitwise_not"]
OTHER_UNARY = ["exp", "log", "log1p", "sqrt", "sin", "cos", "tanh", "sigmoid", "abs", "reciprocal"]


@pytest.mark.torch_parity
@pytest.mark.parametrize("name", [u[0] for u in UNARY] + FORWARD_ONLY + OTHER_UNARY)
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"])
def test_unary_dtypes_and_special_values_match_torch(name, dtype):
    """sin(int) is float32, floor(int) stays int, floor(bool) and frac(int) are refused; NaN, inf, -0."""
    values = [-2.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.5, nan, inf, -inf, 1e-3, 0.999]
    if not dtype.startswith("float"):
        values = [-3, -1, 0, 1, 2, 3, 7]
    match_torch(lambda lib: getattr(lib, name)(lib.tensor(np.array(values).astype(dtype))))


@pytest.mark.parametrize("decimals", [0, 1, 2, -1, -2])
def test_round_decimals(decimals):
    big = (lambda rng, n: rng.uniform(-300, 300, n), (3, 4))
    check_op(lambda lib, x: lib.round(x, decimals=decimals), [big], node="RoundBackward1")
    check_op(lambda lib, x: x.round(decimals=decimals), [("d", ())], node="RoundBackward1")
    for dtype in ("float16", "float32", "float64"):
        data = np.array([0.125, 0.135, 1.005, -2.5, 25.0, 15.0, 1234.5678, -0.05]).astype(dtype)
        match_torch(lambda lib, data=data: lib.round(lib.tensor(data), decimals=decimals))


def test_round_is_half_to_even_and_keeps_integers():
    x = engine.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 0.49999997])
    assert engine.round(x).tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 0.0]
    assert engine.round(engine.tensor([5, -5])).tolist() == [5, -5]
    assert engine.round(engine.tensor([1234.5678]), decimals=-2).tolist() == [1200.0]
    assert engine.round(engine.tensor([0.125], dtype=engine.float64), decimals=2).tolist() == [0.12]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda lib: lib.floor(lib.tensor([True])), "\"floor_vml_cpu\" not implemented for 'Bool'"),
        (lambda lib: lib.tensor([True]).ceil_(), "\"ceil_vml_cpu\" not implemented for 'Bool'"),
        (lambda lib: lib.frac(lib.tensor([1, 2])), "\"frac_cpu\" not implemented for 'Long'"),
        (lambda lib: lib.round(lib.tensor([1]), decimals=1), "\"round_cpu\" not implemented for 'Long'"),
        (lambda lib: lib.round(lib.tensor([1]), decimals=0), "\"round_vml_cpu\" not implemented for 'Long'"),
    ],
)
def test_unary_refuses_dtypes_without_a_kernel(call, message):
    check_error(call, message, NotImplementedError)


@pytest.mark.parametrize(
    "name", ["floor", "tan", "erfinv", "round", "square", "nan_to_num", "isnan", "logical_not"]
)
def test_unary_functions_refuse_numbers(name):
    check_error(
        lambda lib: getattr(lib, name)(2.5),
        f"{name}(): argument 'input' (position 1) must be Tensor, not float",
        TypeError,
    )


def test_integer_inputs_compute_in_the_default_dtype():
    ints = engine.tensor([1, 2])
    assert engine.sin(ints).dtype is engine.float32 and engine.exp2(ints).tolist() == [2.0, 4.0]
    assert engine.sigmoid(engine.tensor([True])).dtype is engine.float32
    assert (
        engine.floor(ints).dtype is engine.int64 and engine.sign(engine.tensor([True])).dtype is engine.bool
    )
    assert engine.square(engine.tensor([True, False])).tolist() == [1, 0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        ints.clone().sin_()


def test_special_values_of_the_erf_family():
    x = engine.tensor([-1.0, 1.0, 0.0, 2.0, nan], dtype=engine.float64)
    assert engine.erfinv(x).tolist()[:3] == [-inf, inf, 0.0]
    assert all(math.isnan(v) for v in engine.erfinv(x).tolist()[3:])
    y = engine.erfinv(engine.tensor([0.5, 1 - 1e-12, -0.999999], dtype=engine.float64))
    assert np.allclose(engine.erf(y).tolist(), [0.5, 1 - 1e-12, -0.999999], rtol=0, atol=1e-15)
    big = engine.erfc(engine.tensor([5.0, 10.0, 27.0, -30.0], dtype=engine.float64)).tolist()
    np.testing.assert_allclose(
        big, [1.5374597944280349e-12, 2.088487583762545e-45, 5.2370464393526e-319, 2.0]
    )
    assert engine.sign(engine.tensor([nan, -0.0, -3.0])).tolist() == [0.0, 0.0, -1.0]


def _erf_grid(dtype):
    """Dense over [-6, 6], log-spaced down to the smallest normals, and the special values."""
    tiny = np.finfo(dtype).tiny
    ramp = np.geomspace(tiny, 6.0, 200_000)
    grid = np.concatenate([np.linspace(-6.0, 6.0, 400_001), ramp, -ramp, [0.0, -0.0, np.inf, -np.inf, 1e30]])
    return grid.astype(dtype)


@pytest.mark.parametrize(
    ("dtype", "bound"), [(engine.float32, 1e-7), (engine.float64, 4 * np.finfo(np.float64).eps)]
)
def test_erf_is_accurate_against_math_erf_over_a_dense_grid_with_tails(dtype, bound):
    grid = _erf_grid(dtype.np)
    exact = np.array([math.erf(v) for v in grid.tolist()])
    got = engine.erf(engine.tensor(grid)).numpy().astype(np.float64)
    assert engine.erf(engine.tensor(grid)).dtype is dtype
    relative = np.abs(got - exact) / np.maximum(np.abs(exact), np.finfo(dtype.np).tiny)
    assert relative.max() <= bound, grid[relative.argmax()]
    assert math.isnan(engine.erf(engine.tensor([nan], dtype=dtype)).item())


@pytest.mark.torch_parity
def test_nan_to_num_values_and_gradient():
    def fn(lib):
        x = lib.tensor([nan, inf, -inf, 1.5], dtype=lib.float64, requires_grad=True)
        out = lib.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0)
        (g,) = lib.autograd.grad(out.sum(), x)
        return out, g, lib.nan_to_num(lib.tensor([nan, inf, -inf])), x.detach().clone().nan_to_num_()

    out, g, default, in_place = fn(engine)
    assert out.tolist() == [1.0, 2.0, -3.0, 1.5] and g.tolist() == [0.0, 0.0, 0.0, 1.0]
    assert default.tolist() == [0.0, float(np.finfo(np.float32).max), float(np.finfo(np.float32).min)]
    assert in_place.tolist() == [0.0, np.finfo(np.float64).max, np.finfo(np.float64).min, 1.5]
    match_torch(fn)


# ----------------------------------------------------------------------- binary, differentiable

# --------------------------------------------------------- dtypes, numbers and errors, all at once

_INTS = [-7, -2, 0, 3, 5, 1]
_FLOATS = [-7.5, -2.25, 0.0, 3.0, 5.5, nan]
_DIVISORS = [2, -3, 4, 1, -1, 2]


def _operand(spec, lib, divisor=False):
    """A tensor of dtype `spec`, or the Python number `spec` itself."""
    if not isinstance(spec, str):
        return spec
    values = _DIVISORS if divisor else (_INTS if not spec.startswith("float") else _FLOATS)
    return lib.tensor(np.array(values).astype(spec))


OPERANDS = ["bool", "uint8", "int32", "int64", "float32", "float64", 2, -3, 2.5, True]

BINARY_CALLS = {
    "atan2": lambda lib, a, b: lib.atan2(a, b),
    "copysign": lambda lib, a, b: lib.copysign(a, b),
    "fmod": lambda lib, a, b: lib.fmod(a, b),
    "remainder": lambda lib, a, b: lib.remainder(a, b),
    "%": lambda lib, a, b: a % b,
    "hypot": lambda lib, a, b: lib.hypot(a, b),
    "logaddexp": lambda lib, a, b: lib.logaddexp(a, b),
    "logaddexp2": lambda lib, a, b: lib.logaddexp2(a, b),
    "xlogy": lambda lib, a, b: lib.xlogy(a, b),
    "float_power": lambda lib, a, b: lib.float_power(a, b),
    "pow": lambda lib, a, b: lib.pow(a, b),
    "**": lambda lib, a, b: a**b,
    "div": lambda lib, a, b: lib.div(a, b),
    "div_none": lambda lib, a, b: lib.div(a, b, rounding_mode=None),
    "div_floor": lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
    "floor_divide": lambda lib, a, b: lib.floor_divide(a, b),
    "//": lambda lib, a, b: a // b,
    "lerp": lambda lib, a, b: lib.lerp(a, b, 0.25),
    "bitwise_and": lambda lib, a, b: lib.bitwise_and(a, b),
    "|": lambda lib, a, b: a | b,
    "^": lambda lib, a, b: a ^ b,
    "<<": lambda lib, a, b: a << b,
    "bitwise_right_shift": lambda lib, a, b: lib.bitwise_right_shift(a, b),
    "logical_and": lambda lib, a, b: lib.logical_and(a, b),
    "logical_or": lambda lib, a, b: lib.logical_or(a, b),
    "logical_xor": lambda lib, a, b: a.logical_xor(b),
    "isclose": lambda lib, a, b: lib.isclose(a, b, rtol=0.1, atol=1.0),
    "allclose": lambda lib, a, b: lib.allclose(a, b),
}


@pytest.mark.torch_parity
@pytest.mark.parametrize("op", list(BINARY_CALLS))
@pytest.mark.parametrize(
    "a, b",
    [(a, b) for a, b in itertools.product(OPERANDS, OPERANDS) if isinstance(a, str) or isinstance(b, str)],
)
def test_binary_dtypes_numbers_and_errors_match_torch(op, a, b):
    """Every pair of dtypes and Python numbers: torch's result dtype and values, or torch's error."""
    match_torch(lambda lib: BINARY_CALLS[op](lib, _operand(a, lib), _operand(b, lib, divisor=True)))


@pytest.mark.torch_parity
@pytest.mark.parametrize("compare", ["eq", "ne", "lt", "le", "gt", "ge"])
@pytest.mark.parametrize("shapes", [((2,), (3,)), ((4, 2), (3, 1)), ((2, 3), (5,))])
def test_comparisons_of_shapes_that_do_not_broadcast_raise_torchs_error(compare, shapes):
    check_error(
        lambda lib: getattr(lib, compare)(lib.ones(shapes[0]), lib.ones(shapes[1])), "The size of tensor a"
    )
    check_error(lambda lib: getattr(lib.ones(shapes[0]), f"__{compare}__")(lib.ones(shapes[1])), "must match")


@pytest.mark.parametrize("op", ["fmod", "remainder", "div_floor", "div_trunc", "floor_divide"])
def test_integer_division_by_zero_raises(op):
    check_error(
        lambda lib: BINARY_CALLS[op](lib, lib.tensor([5, -5]), lib.tensor([1, 0])), "ZeroDivisionError"
    )
    check_error(lambda lib: BINARY_CALLS[op](lib, lib.tensor([5, -5]), 0), "ZeroDivisionError")


def test_division_modes_and_remainders_exactly():
    a = engine.tensor([-7.0, 7.0, -7.0, 7.0, -4.0, 0.5])
    b = engine.tensor([2.0, -2.0, -2.0, 2.0, 2.0, inf])
    assert engine.div(a, b, rounding_mode="floor").tolist() == [-4.0, -4.0, 3.0, 3.0, -2.0, 0.0]
    assert engine.div(a, b, rounding_mode="trunc").tolist() == [-3.0, -3.0, 3.0, 3.0, -2.0, 0.0]
    assert engine.remainder(a, b).tolist()[:5] == [1.0, -1.0, -1.0, 1.0, 0.0]
    assert np.signbit(engine.remainder(a, b).numpy()[4])  # fmod's -0.0, kept as torch keeps it
    assert engine.fmod(a, b).tolist() == [-1.0, 1.0, -1.0, 1.0, -0.0, 0.5]
    ints = engine.tensor([-7, 7, -7, 7])
    assert engine.div(ints, 2, rounding_mode="trunc").tolist() == [-3, 3, -3, 3]
    assert (ints // engine.tensor([2, -2, -2, 2])).tolist() == [-4, -4, 3, 3]
    assert (ints % -2).tolist() == [-1, -1, -1, -1] and (7 % ints).tolist() == [-0, 0, -0, 0]
    assert engine.div(7, 2, rounding_mode="floor").tolist() == 3 and engine.div(7, 2).dtype is engine.float32
    assert engine.div(ints, 2).dtype is engine.float32


def test_shifts_and_bitwise_ops():
    x = engine.tensor([5, -5, 7])
    assert (x << 2).tolist() == [20, -20, 28] and (x << 64).tolist() == [0, 0, 0]
    assert (x >> 64).tolist() == [0, -1, 0] and (x >> -1).tolist() == [0, -1, 0]
    assert (1 << engine.tensor([0, 3])).tolist() == [1, 8]
    small = engine.tensor([5, 200], dtype=engine.uint8)
    assert (
        (small << 1).tolist() == [10, 144]
        and (small << 9).tolist() == [0, 0]
        and (small & 300).tolist() == [4, 8]
    )
    flags = engine.tensor([True, False])
    assert (
        (flags & True).dtype is engine.bool
        and (flags & 3).dtype is engine.int64
        and (~flags).tolist() == [False, True]
    )
    assert (~x).tolist() == [-6, 4, -8] and (3 ^ x).tolist() == [6, -8, 4]


@pytest.mark.parametrize(
    "call, message, exception",
    [
        (
            lambda lib: lib.div(lib.ones(2), 2, rounding_mode="typo"),
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'typo'",
            RuntimeError,
        ),
        (lambda lib: lib.ones(2).div(lib.ones(2), rounding_mode="typo"), "but found 'typo'", RuntimeError),
        (lambda lib: lib.ones(2).div_(2, rounding_mode="floo"), "but found 'floo'", RuntimeError),
        (
            lambda lib: lib.div(lib.ones(2), 2, rounding_mode=3),
            "div() received an invalid combination",
            TypeError,
        ),
        (
            lambda lib: lib.atan2(lib.ones(2), 2),
            "atan2(): argument 'other' (position 2) must be Tensor, not int",
            TypeError,
        ),
        (
            lambda lib: lib.ones(2).atan2(2.0),
            "atan2(): argument 'other' (position 1) must be Tensor, not float",
            TypeError,
        ),
        (lambda lib: lib.ones(2).hypot_(2.0), "hypot_(): argument 'other' (position 1)", TypeError),
        (lambda lib: lib.logaddexp(1, lib.ones(2)), "logaddexp(): argument 'input' (position 1)", TypeError),
        (
            lambda lib: lib.logical_and(lib.ones(2), 1),
            "logical_and(): argument 'other' (position 2)",
            TypeError,
        ),
        (lambda lib: lib.isclose(lib.ones(2), 1.0), "isclose(): argument 'other' (position 2)", TypeError),
        (lambda lib: lib.ones(2).isclose(1.0), "isclose(): argument 'other' (position 1)", TypeError),
        (lambda lib: lib.remainder(2, 3), "remainder() received an invalid combination", TypeError),
        (
            lambda lib: lib.bitwise_left_shift(3, 1),
            "bitwise_left_shift() received an invalid combination",
            TypeError,
        ),
        (lambda lib: lib.fmod(2, lib.ones(2)), "fmod() received an invalid combination", TypeError),
        (lambda lib: lib.copysign(2, lib.ones(2)), "copysign() received an invalid combination", TypeError),
        (lambda lib: lib.xlogy(2.0, 3.0), "xlogy() received an invalid combination", TypeError),
        (lambda lib: lib.pow(2, 2), "pow() received an invalid combination", TypeError),
        (lambda lib: lib.float_power(2, 2), "float_power() received an invalid combination", TypeError),
        (lambda lib: lib.lerp(1.0, lib.ones(2), 0.5), "lerp() received an invalid combination", TypeError),
        (lambda lib: lib.ones(2).lerp(2.0, 0.5), "lerp() received an invalid combination", TypeError),
        (
            lambda lib: lib.ones(2).lerp_(2.0, lib.ones(2)),
            "lerp_() received an invalid combination",
            TypeError,
        ),
        (
            lambda lib: lib.lerp(lib.ones(2), lib.ones(2, dtype=lib.float64), 0.5),
            "expected dtype float for `end` but got dtype double",
            RuntimeError,
        ),
        (
            lambda lib: lib.lerp(lib.ones(2), lib.ones(2), lib.ones(2, dtype=lib.int64)),
            "expected dtype float for `weight` but got dtype long int",
            RuntimeError,
        ),
        (
            lambda lib: lib.lerp(lib.tensor([1]), lib.tensor([2]), 0.5),
            '"lerp_kernel_scalar" not implemented for',
            NotImplementedError,
        ),
        (
            lambda lib: lib.zeros(1).lerp_(lib.zeros(3), 0.5),
            "output with shape [1] doesn't match the broadcast shape [3]",
            RuntimeError,
        ),
        (
            lambda lib: lib.ones(2).float_power_(2),
            "the base given to float_power_ has dtype Float but the operation's result requires dtype Double",
            RuntimeError,
        ),
        (
            lambda lib: lib.tensor([1, 2]).atan2_(lib.tensor([1, 2])),
            "result type Float can't be cast to the desired output type Long",
            RuntimeError,
        ),
        (
            lambda lib: lib.tensor([1, 2]).fmod_(2.5),
            "result type Float can't be cast to the desired output type Long",
            RuntimeError,
        ),
        (
            lambda lib: lib.tensor([True]).bitwise_and_(lib.tensor([3])),
            "result type Long can't be cast to the desired output type Bool",
            RuntimeError,
        ),
        (
            lambda lib: lib.tensor([2]) ** -1,
            "Integers to negative integer powers are not allowed.",
            RuntimeError,
        ),
        (
            lambda lib: lib.tensor([2]).pow_(-2),
            "Integers to negative integer powers are not allowed.",
            RuntimeError,
        ),
        (
            lambda lib: lib.tensor([True]) ** lib.tensor([True]),
            "\"pow\" not implemented for 'Bool'",
            NotImplementedError,
        ),
        (
            lambda lib: ~lib.ones(2),
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors",
            TypeError,
        ),
        (
            lambda lib: lib.bitwise_not(lib.ones(2)),
            "\"bitwise_not_cpu\" not implemented for 'Float'",
            NotImplementedError,
        ),
        (lambda lib: lib.ones(2) & 1, "\"bitwise_and_cpu\" not implemented for 'Float'", NotImplementedError),
        (
            lambda lib: lib.tensor([True]) << lib.tensor([True]),
            "\"lshift_cpu\" not implemented for 'Bool'",
            NotImplementedError,
        ),
        (
            lambda lib: lib.isclose(lib.ones(2), lib.ones(2, dtype=lib.float64)),
            "Float did not match Double",
            RuntimeError,
        ),
        (
            lambda lib: lib.isclose(lib.ones(2), lib.ones(2), rtol=-0.5),
            "rtol must be greater than or equal to zero, but got -0.5",
            RuntimeError,
        ),
        (
            lambda lib: lib.allclose(lib.ones(2), lib.ones(2), atol=-1e-10),
            "atol must be greater than or equal to zero, but got -1e-10",
            RuntimeError,
        ),
        (
            lambda lib: lib.allclose(lib.ones(3), lib.ones(2)),
            "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0",
            RuntimeError,
        ),
        (
            lambda lib: lib.atan2(lib.ones(3), lib.ones(2)),
            "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0",
            RuntimeError,
        ),
        (
            lambda lib: lib.logical_or(lib.ones(3), lib.ones(2)),
            "The size of tensor a (3) must match",
            RuntimeError,
        ),
    ],
)
def test_errors_match_torch(call, message, exception):
    check_error(call, message, exception)


# ------------------------------------------------------------ gradients where torch gives 0 or NaN


@pytest.mark.torch_parity
def test_pow_gradient_is_zero_at_zero_to_the_zero():
    def fn(lib):
        base = lib.tensor([0.0, 0.0, 2.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        exponent = lib.tensor([0.0, 1.0, 0.0, 1.5, 2.0], dtype=lib.float64, requires_grad=True)
        return lib.autograd.grad((base**exponent).sum(), [base, exponent])

    gb, ge = fn(engine)
    assert gb.tolist()[:3] == [0.0, 1.0, 0.0] and math.isnan(gb.tolist()[3]) and gb.tolist()[4] == 6.0
    assert ge.tolist()[:3] == [0.0, 0.0, math.log(2.0)] and math.isnan(ge.tolist()[3])
    match_torch(fn)


@pytest.mark.torch_parity
@pytest.mark.parametrize("base", [2, 2.5, 0, 0.0, -2, -2.0, 1])
def test_number_base_to_a_tensor_power_has_no_domain_error(base):
    def fn(lib):
        exponent = lib.tensor([0.0, -1.0, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
        out = base**exponent
        return [out, *lib.autograd.grad(out.sum(), exponent)]

    out, grad = fn(engine)
    if base == 0:
        assert grad.tolist() == [0.0, -inf, 0.0, 0.0]
    elif base < 0:
        assert all(math.isnan(v) for v in grad.tolist())
    match_torch(fn)


@pytest.mark.torch_parity
def test_stable_numerics_far_from_zero():
    """logaddexp / logaddexp2 do not overflow, and their gradients are sigmoids (0 and 1, not NaN)."""

    def fn(lib):
        a = lib.tensor([1000.0, -1000.0, 0.0, -inf, inf], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([999.0, -1001.0, 800.0, -inf, 3.0], dtype=lib.float64, requires_grad=True)
        out = [
            lib.logaddexp(a, b),
            lib.logaddexp2(a, b),
            lib.xlogy(lib.tensor([0.0, 0.0, 1.0]), lib.tensor([0.0, nan, 0.0])),
        ]
        grads = lib.autograd.grad(out[0][:3].sum() + out[1][:3].sum(), [a, b])
        return out + list(grads)

    out = fn(engine)
    assert out[0].tolist()[:3] == pytest.approx(
        [1000 + math.log1p(math.exp(-1)), -1000 + math.log1p(math.exp(-1)), 800.0]
    )
    assert out[0].tolist()[3:] == [-inf, inf]
    assert out[2].tolist()[0] == 0.0 and math.isnan(out[2].tolist()[1]) and out[2].tolist()[2] == -inf
    assert np.isfinite(out[3].numpy()[:3]).all() and np.isfinite(out[4].numpy()[:3]).all()
    match_torch(fn)


@pytest.mark.torch_parity
def test_copysign_gradient_at_zero_and_infinity():
    def fn(lib):
        x = lib.tensor([1.5, -2.5, 0.0, -0.0, inf], dtype=lib.float64, requires_grad=True)
        return lib.autograd.grad(lib.copysign(x, -1.0).sum(), x)

    (g,) = fn(engine)
    assert g.tolist()[:4] == [-1.0, 1.0, 0.0, 0.0] and math.isnan(g.tolist()[4])
    match_torch(fn)


@pytest.mark.parametrize(
    "call, aten",
    [
        (lambda lib, x, y: x // y, "floor_divide"),
        (lambda lib, x, y: lib.floor_divide(x, 2), "floor_divide"),
        (lambda lib, x, y: 7.5 // x, "floor_divide"),
        (lambda lib, x, y: 2 % x, "remainder"),
        (lambda lib, x, y: lib.remainder(2.5, x), "remainder"),
    ],
)
def test_ops_torch_does_not_differentiate_record_not_implemented(call, aten):
    def fn(lib):
        x = lib.tensor([1.5, -2.5], requires_grad=True)
        out = call(lib, x, lib.tensor([2.0, 3.0], requires_grad=True))
        assert out.grad_fn.name() == f"{lib.__name__}::autograd::NotImplemented"
        assert out.requires_grad
        out.sum().backward()

    check_error(fn, f"derivative for aten::{aten} is not implemented")


# ------------------------------------------------------------------------------- in place

IN_PLACE = [  # (method, args builder)
    ("floor_", lambda lib: ()),
    ("round_", lambda lib: ()),
    ("fix_", lambda lib: ()),
    ("sgn_", lambda lib: ()),
    ("arcsin_", lambda lib: ()),
    ("absolute_", lambda lib: ()),
    ("negative_", lambda lib: ()),
    ("clip_", lambda lib: (0.8, 2.0)),
    ("square_", lambda lib: ()),
    ("nan_to_num_", lambda lib: ()),
    ("atan2_", lambda lib: (lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True),)),
    ("arctan2_", lambda lib: (lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64),)),
    ("hypot_", lambda lib: (lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True),)),
    ("copysign_", lambda lib: (-1.0,)),
    ("copysign_", lambda lib: (lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True),)),
    ("fmod_", lambda lib: (0.7,)),
    ("remainder_", lambda lib: (lib.tensor([0.7, 0.9, -0.8], dtype=lib.float64, requires_grad=True),)),
    ("xlogy_", lambda lib: (2.0,)),
    ("xlogy_", lambda lib: (lib.tensor([0.5, 1.5, 2.0], dtype=lib.float64, requires_grad=True),)),
    ("lerp_", lambda lib: (lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True), 0.3)),
    (
        "lerp_",
        lambda lib: (lib.zeros(3, dtype=lib.float64), lib.tensor(0.8, dtype=lib.float64, requires_grad=True)),
    ),
    ("float_power_", lambda lib: (2,)),
    ("div_", lambda lib: (lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True),)),
    ("div_", lambda lib: (0.5,)),
    ("true_divide_", lambda lib: (4.0,)),
    ("pow_", lambda lib: (lib.tensor([0.5, 1.5, 2.0], dtype=lib.float64, requires_grad=True),)),
]


@pytest.mark.torch_parity
@pytest.mark.parametrize("method, args", IN_PLACE, ids=[c[0] for c in IN_PLACE])
def test_in_place_forms(method, args):
    """y.<op>_(...) on a non-leaf: its values, node name and gradients (the inputs' and the args')."""

    def fn(lib):
        x = lib.tensor([1.25, 2.5, 0.75], dtype=lib.float64, requires_grad=True)
        extra = args(lib)
        y = x * 1
        version = y._version
        assert getattr(y, method)(*extra) is y and y._version == version + 1
        leaves = [x] + [a for a in extra if isinstance(a, lib.Tensor) and a.requires_grad]
        return [y, *lib.autograd.grad((y * lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64)).sum(), leaves)]

    fn(engine)
    match_torch(fn)


@pytest.mark.parametrize("name", ["asinh_", "arcsinh_", "acosh_", "arccosh_", "atanh_", "arctanh_"])
def test_inverse_hyperbolic_in_place_is_not_differentiated(name):
    """As in torch: applied in place, with a node (AsinhBackward1) whose backward refuses."""
    base = name.replace("arc", "a").rstrip("_")
    value = 1.5 if base == "acosh" else 0.5  # inside the domain

    def fn(lib):
        x = lib.tensor([value, value], dtype=lib.float64, requires_grad=True)
        y = x * 1
        getattr(y, name)()
        assert y.grad_fn.name() == f"{base.capitalize()}Backward1"
        assert y.detach().tolist() == getattr(lib, base)(x).detach().tolist()
        y.sum().backward()

    check_error(
        fn, f"the derivative for 'inplace version of {base}' is not implemented.", NotImplementedError
    )
    assert (
        getattr(engine.tensor([value]), name)().tolist()
        == getattr(engine, base)(engine.tensor([value])).tolist()
    )


FUNCTION_FORMS = (
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ atanh_ ceil_ "
    "cos_ cosh_ erf_ erfc_ exp2_ exp_ expm1_ fix_ floor_ frac_ log10_ log1p_ log2_ log_ nan_to_num_ neg_ "
    "negative_ round_ rsqrt_ sigmoid_ sin_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_"
).split()


@pytest.mark.parametrize("name", FUNCTION_FORMS)
def test_in_place_forms_as_functions(name):
    """torch.floor_(y) is y.floor_(): the same values, node and version; a number is refused."""
    args = (2.0,) if name == "xlogy_" else ()
    value = 1.5 if "cosh" in name else 0.25

    def fn(lib):
        y = lib.tensor([value, value + 0.5], dtype=lib.float64, requires_grad=True) * 1
        assert getattr(lib, name)(y, *args) is y and y._version == 1
        return y

    y = fn(engine)
    expected = getattr(engine.tensor([value, value + 0.5], dtype=engine.float64), name)(*args)
    assert y.tolist() == expected.tolist()
    match_torch(fn)
    check_error(lambda lib: getattr(lib, name)(2.0, *args), f"{name}()", TypeError)


@pytest.mark.torch_parity
def test_division_in_place_modes_and_operators():
    def fn(lib):
        a = lib.tensor([-7.5, 7.5, 3.0])
        ints = lib.tensor([-7, 7, 3])
        out = [a.clone().div_(2, rounding_mode="floor"), ints.clone().div_(2, rounding_mode="trunc")]
        b = a.clone()
        b //= 2
        c = ints.clone()
        c %= 4
        d = ints.clone()
        d <<= 2
        d |= 1
        d ^= 3
        d &= 14
        d >>= 1
        e = a.clone()
        e /= 4
        f = ints.clone()
        f **= 2
        return out + [b, c, d, e, f]

    out = fn(engine)
    assert (
        out[0].tolist() == [-4.0, 3.0, 1.0] and out[1].tolist() == [-3, 3, 1] and out[3].tolist() == [1, 3, 3]
    )
    match_torch(fn)


@pytest.mark.torch_parity
@pytest.mark.parametrize(
    "name", ["logical_and_", "logical_or_", "logical_xor_", "bitwise_and_", "bitwise_xor_"]
)
def test_forward_only_in_place_keeps_the_history(name):
    """As torch: values and version change, grad_fn stays (these ops are not differentiated)."""

    def fn(lib):
        x = lib.tensor([1.5, 0.0, -2.0], requires_grad=True)
        y = x * 1
        other = lib.tensor([1.0, 1.0, 0.0])
        if name.startswith("bitwise"):
            y, other = lib.tensor([5, 0, -2]), lib.tensor([3, 1, 6])
        getattr(y, name)(other)
        return y

    y = fn(engine)
    assert y._version == 1
    match_torch(fn)


@pytest.mark.torch_parity
def test_logical_not_and_bitwise_not_in_place():
    def fn(lib):
        return (
            lib.tensor([5, 0, -2]).logical_not_(),
            lib.tensor([5, 0, -2]).bitwise_not_(),
            lib.tensor([1.5, 0.0]).logical_not_(),
        )

    match_torch(fn)
    assert [t.tolist() for t in fn(engine)] == [[0, 1, 0], [-6, -1, 1], [0.0, 1.0]]


# ------------------------------------------------------------------------------ closeness


@pytest.mark.torch_parity
@pytest.mark.parametrize("equal_nan", [False, True])
@pytest.mark.parametrize("rtol, atol", [(1e-05, 1e-08), (0.0, 0.0), (0.1, 0.0), (0.0, 0.5)])
@pytest.mark.parametrize("dtype", ["bool", "int64", "float32", "float64"])
def test_isclose_and_allclose(equal_nan, rtol, atol, dtype):
    a = np.array([1.0, 1.0 + 1e-6, 100.0, nan, inf, inf, 0.0, 3.0]).astype(
        dtype if dtype != "int64" else "float64"
    )
    b = np.array([1.0, 1.0, 109.0, nan, inf, -inf, 0.4, -3.0]).astype(
        dtype if dtype != "int64" else "float64"
    )
    if dtype == "int64":
        a, b = np.array([10, 11, 100, 0, 5, -5]), np.array([11, 10, 109, 0, 5, 5])

    def fn(lib):
        x, y = lib.tensor(a), lib.tensor(b)
        return (
            lib.isclose(x, y, rtol, atol, equal_nan),
            x.isclose(y, rtol=rtol, atol=atol, equal_nan=equal_nan),
            lib.allclose(x, y, rtol, atol, equal_nan),
            x[:1].allclose(y[:1]),
        )

    match_torch(fn)


def test_isclose_values():
    x = engine.tensor([1.0, nan, inf, inf, 1.0])
    y = engine.tensor([1.0 + 1e-6, nan, inf, -inf, 1.1])
    assert engine.isclose(x, y).tolist() == [True, False, True, False, False]
    assert engine.isclose(x, y, equal_nan=True).tolist()[1] is True
    assert engine.allclose(x[:1], y[:1]) is True and engine.isclose(
        engine.tensor([10]), engine.tensor([11]), rtol=0.1
    ).tolist() == [True]


# --------------------------------------------------------------------------- on a GPU device


def test_elementwise_ops_stay_on_the_device(fake_cuda):
    """Every forward and backward goes through the array module of its inputs (no numpy-only path)."""
    host = engine.tensor([[0.3, -0.6, 0.9], [1.2, -1.4, 0.2]], dtype=engine.float64)
    ints = engine.tensor([5, -7, 3])
    cases = [
        lambda x, i: [engine.floor(x), x.round(decimals=1), engine.frac(x), engine.sgn(x), engine.tan(x)],
        lambda x, i: [
            engine.erfc(x),
            engine.erfinv(x * 0.5),
            engine.nan_to_num(x / 0),
            engine.rsqrt(x.abs()),
        ],
        lambda x, i: [engine.atan2(x, x + 2), engine.copysign(x, -1.0), engine.fmod(x, 0.7), x % 0.7],
        lambda x, i: [engine.hypot(x, x), engine.logaddexp2(x, x * 3), engine.xlogy(x, x.abs() + 1)],
        lambda x, i: [engine.lerp(x, x * 2, x.abs()), engine.float_power(x.abs(), x), 2.0**x, 0**x],
        lambda x, i: [
            engine.div(x, 0.7, rounding_mode="floor"),
            engine.div(i, 2, rounding_mode="trunc"),
            i // 2,
        ],
        lambda x, i: [
            i & 3,
            1 << i.abs(),
            i >> 1,
            ~i,
            engine.logical_xor(i, i > 0),
            engine.isclose(x, x * 1.001),
        ],
        lambda x, i: [engine.sin(i), engine.exp2(i), i**2, engine.remainder(7, i), engine.sign(i)],
    ]
    for case in cases:
        on_host = case(host, ints)
        x = host.to("cuda").requires_grad_()
        on_device = case(x, ints.to("cuda"))
        for h, d in zip(on_host, on_device):
            assert d.device.type == "cuda"
            np.testing.assert_allclose(engine.backend.to_numpy(d._data), h.numpy(), equal_nan=True)
        floats = [d for d in on_device if d.requires_grad]
        if floats:
            (g,) = engine.autograd.grad(sum(d.sum() for d in floats), x, create_graph=True)
            assert g.device.type == "cuda"
            if g.requires_grad:
                (gg,) = engine.autograd.grad(g.sum(), x, allow_unused=True)
                assert gg is None or gg.device.type == "cuda"
