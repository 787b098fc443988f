"""Kinks (engine/autograd/gradcheck/kinks.py): mismatches that the function's
non-differentiability explains are KINK in check_gradients, never failures; a wrong
gradient at a kink still fails; gradcheck (torch's behaviour) is unchanged."""

from __future__ import annotations

import pytest

import engine
from engine.autograd import check_gradients, gradcheck

KINKED = [1e-7, -3e-7, 0.5, -0.5]  # abs and relu: 0 is within eps = 1e-6 of x[0] and x[1]


def abs_plus_relu(x):
    return x.abs() + x.relu()


def make_wrong_at_kink(T):
    """abs whose backward gives 7 within 1e-5 of 0, sign(x) elsewhere: wrong only at the kink."""

    class WrongAtKink(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.abs()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            near = (x.abs() < 1e-5).to(x.dtype)
            return g * (near * 7 + (1 - near) * x.sign())

    return WrongAtKink


def leaf(T, values):
    return T.tensor(values, dtype=T.float64, requires_grad=True)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_abs_plus_relu_at_zero_is_nondiff_and_passes(fast_mode):
    report = check_gradients(abs_plus_relu, (leaf(engine, KINKED),), fast_mode=fast_mode)
    (pair,) = report.pairs
    assert report.passed and pair.passed and not report.problems
    assert pair.mismatches == []
    assert [(k[0], k[1]) for k in pair.nondifferentiable] == [((0,), (0,)), ((1,), (1,))]
    out_index, in_index, numerical, analytical = pair.nondifferentiable[0]
    assert numerical == pytest.approx(0.65) and analytical == 2.0
    # the headline is the smooth entries': the kinks' errors (1.35, 0.35) are not in it
    assert pair.mismatch_count == 0 and pair.max_abs_err < 1e-6
    assert pair.worst_input_index not in {(0,), (1,)}


def test_gradcheck_itself_still_fails_at_the_kink():
    assert gradcheck(abs_plus_relu, (leaf(engine, KINKED),), raise_exception=False) is False


def test_the_wrong_at_kink_function_is_right_away_from_zero():
    """So the failure below is the kink entry's alone."""
    wrong = make_wrong_at_kink(engine)
    assert check_gradients(wrong.apply, (leaf(engine, [0.3, -2.0, 0.5]),)).passed


def test_wrong_gradient_at_a_kink_still_fails():
    wrong = make_wrong_at_kink(engine)
    report = check_gradients(wrong.apply, (leaf(engine, [1e-7, 0.5, -0.5]),))
    (pair,) = report.pairs
    assert not report.passed and not pair.passed
    assert pair.nondifferentiable == []
    assert [(m[0], m[1]) for m in pair.mismatches] == [((0,), (0,))]


def test_only_kinks_are_set_apart_from_real_mismatches():
    """x[0] is a kink; x[2] (smooth, 0.5) gets a wrong gradient: the pair fails on x[2] alone."""

    def f(x):  # the x^2 term at x[2] only, its gradient halved by a detach: x instead of 2x
        mask = engine.tensor([0.0, 0.0, 1.0, 0.0], dtype=engine.float64)
        return x.abs() + x.relu() + x * x.detach() * mask

    report = check_gradients(f, (leaf(engine, KINKED),))
    (pair,) = report.pairs
    assert not pair.passed
    assert [(m[0], m[1]) for m in pair.mismatches] == [((2,), (2,))]
    assert [(k[0], k[1]) for k in pair.nondifferentiable] == [((0,), (0,)), ((1,), (1,))]
    # the headline is x[2]'s error (3 - 2.5), not the kink's larger one at x[0] (2 - 0.65)
    assert pair.mismatch_count == 1
    assert pair.max_abs_err == pytest.approx(0.5) and pair.worst_input_index == (2,)
    assert pair.max_rel_err == pytest.approx(0.5 / 3)


def test_torch_kinks_are_nondiff_through_the_torch_adapter(torch):
    from gradcli.libraries.torch_tensors import TorchTensors

    report = check_gradients(abs_plus_relu, (leaf(torch, KINKED),), tensors=TorchTensors())
    assert report.passed
    assert [(k[0], k[1]) for k in report.pairs[0].nondifferentiable] == [((0,), (0,)), ((1,), (1,))]
    wrong = make_wrong_at_kink(torch)
    report = check_gradients(wrong.apply, (leaf(torch, [1e-7, 0.5, -0.5]),), tensors=TorchTensors())
    assert not report.passed and report.pairs[0].nondifferentiable == []


def test_progress_is_called_once_per_perturbed_input_element():
    calls = []
    x, w = leaf(engine, [0.1, 0.2, 0.3, 0.4]), leaf(engine, [[1.0, 2.0, 3.0]] * 4)
    check_gradients(lambda x, w: x @ w, (x, w), progress=lambda done, total: calls.append((done, total)))
    assert calls == [(k, 16) for k in range(1, 17)]  # 4 elements of x, then 12 of w
    calls.clear()
    check_gradients(lambda x, w: x @ w, (x, w), fast_mode=True, progress=lambda *a: calls.append(a))
    assert calls == []  # fast mode, passing: no Jacobian is computed column by column
