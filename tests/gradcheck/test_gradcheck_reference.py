"""check_gradients with a `Reference`: the analytical Jacobian of a float32 function against the
numerical Jacobian of its float64 twin (what `gradcli check --dtype native` runs)."""

from __future__ import annotations

import warnings

import numpy
import pytest

import engine
from engine.autograd.gradcheck import Reference, check_gradients


class Cube(engine.autograd.Function):
    """x**3 with a backward that is right, or off by 1% (`wrong`)."""

    wrong = False

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x**2 * (1.01 if Cube.wrong else 1.0)


@pytest.fixture(autouse=True)
def right_backward():
    Cube.wrong = False
    yield
    Cube.wrong = False


def pair(fast: bool = False):
    x32 = engine.tensor([0.7, -1.3, 0.2, 2.1], dtype=engine.float32, requires_grad=True)
    x64 = engine.tensor(x32.detach().numpy().astype("float64"), requires_grad=True)
    return x32, x64


def cube(x):
    return Cube.apply(x) * 2.0


@pytest.mark.parametrize("fast", [False, True], ids=["full", "fast"])
def test_a_float32_backward_passes_against_a_float64_reference(fast):
    x32, x64 = pair()
    report = check_gradients(
        cube, (x32,), fast_mode=fast, eps=1e-6, atol=1e-5, rtol=1e-3, reference=Reference(cube, (x64,))
    )
    assert report.passed and report.dtype == "float32" and not report.upcast, report.problems


def test_the_same_check_in_float32_alone_is_rounding_noise():
    """eps=1e-6 in float32 is below its rounding: without the reference the numbers at eps are
    noise, and only a larger step agrees (noise.py); with it they agree at eps."""
    x32, x64 = pair()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = check_gradients(cube, (x32,), eps=1e-6, atol=1e-5, rtol=1e-3, upcast=False)
    assert report.passed and report.pairs[0].noise
    assert {entry[5] for entry in report.pairs[0].noise} <= {"eps=1e-05", "eps=0.0001", "eps=0.001"}
    referenced = check_gradients(
        cube, (x32,), eps=1e-6, atol=1e-5, rtol=1e-3, upcast=False, reference=Reference(cube, (x64,))
    )
    assert referenced.passed and not referenced.pairs[0].noise


@pytest.mark.parametrize("fast", [False, True], ids=["full", "fast"])
def test_a_wrong_float32_backward_fails_against_the_reference(fast):
    Cube.wrong = True
    x32, x64 = pair()
    report = check_gradients(
        cube, (x32,), fast_mode=fast, eps=1e-6, atol=1e-5, rtol=1e-3, reference=Reference(cube, (x64,))
    )
    assert not report.passed
    (failing,) = [p for p in report.pairs if not p.passed]
    assert failing.analytical == pytest.approx(failing.numerical * 1.01, rel=1e-5)


def test_only_the_reference_inputs_are_perturbed_and_both_are_restored():
    x32, x64 = pair()
    seen = []

    def watched(x):
        seen.append(x.dtype)
        return cube(x)

    before32, before64 = x32.detach().numpy().copy(), x64.detach().numpy().copy()
    report = check_gradients(cube, (x32,), eps=1e-6, reference=Reference(watched, (x64,)))
    assert report.passed
    assert set(seen) == {engine.float64} and len(seen) > 2 * 4  # every perturbation ran the twin
    numpy.testing.assert_array_equal(x32.detach().numpy(), before32)
    numpy.testing.assert_array_equal(x64.detach().numpy(), before64)


def test_without_a_reference_non_double_inputs_still_warn():
    x32, _ = pair()
    with pytest.warns(UserWarning, match="is not a double precision"):
        check_gradients(cube, (x32,), eps=1e-3, atol=1e-2, rtol=1e-2, upcast=False)


def test_a_wrong_backward_is_not_mistaken_for_a_kink_of_the_float32_outputs():
    """Kinks are told from the reference's own values at x, not from the float32 forward's, whose
    rounding (about 1e-7 |f|) over eps=1e-6 would look like one-sided slopes that disagree."""
    Cube.wrong = True
    x32 = engine.linspace(0.5, 3.0, 16, dtype=engine.float32).requires_grad_()
    x64 = engine.tensor(x32.detach().numpy().astype("float64"), requires_grad=True)

    def big(x):
        return Cube.apply(x) * 100.0

    report = check_gradients(big, (x32,), eps=1e-6, atol=1e-5, rtol=1e-3, reference=Reference(big, (x64,)))
    (pair,) = report.pairs
    assert not pair.passed and pair.nondifferentiable == [] and pair.mismatch_count == 16
