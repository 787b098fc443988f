"""gradcheck, gradgradcheck and check_gradients (engine/autograd/gradcheck/).

The functions under test are built by factories taking the tensor module, so the same
cases also run against real PyTorch where it is installed (`test_verdict_matches_torch`,
which skips cleanly without it): the engine's verdicts must be torch's.
"""

from __future__ import annotations

import dataclasses
import types
import warnings

import numpy as np
import pytest

import engine
from engine.autograd import (
    GradcheckError,
    GradcheckReport,
    PairReport,
    check_gradients,
    gradcheck,
    gradgradcheck,
)

NON_DOUBLE = (
    "Input #0 requires gradient and is not a double precision floating point or complex. This check "
    "will likely fail if all the inputs are not of double precision floating point or complex. "
)


def f64(T, values, requires_grad=True):
    return T.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def randn(T, *shape, seed=0, requires_grad=True):
    return f64(T, np.random.RandomState(seed).randn(*shape), requires_grad)


# ------------------------------------------------------------------ custom Functions


def make_functions(T):
    """Custom Functions, right and wrong, written against module T (engine or torch)."""
    Function = T.autograd.Function

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    class WrongConstant(Function):
        """d(x^2)/dx written as x instead of 2x."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x

    class MissingChainFactor(Function):
        """d sin(2x)/dx written as cos(2x): the inner derivative 2 is missing."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return T.sin(2 * x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * T.cos(2 * x)

    class MatMul(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g @ b.t(), a.t() @ g

    class TransposedMatMul(Function):
        """The gradient of `a` uses b where it needs b^T (same shape: b is square)."""

        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g @ b, a.t() @ g

    class LeakyWrongOnNegatives(Function):
        """Leaky ReLU (slope 0.1) whose backward uses slope 0.2 for x < 0 only."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return T.where(x > 0, x, 0.1 * x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return T.where(x > 0, g, 0.2 * g)

    class OnePercentOff(Function):
        """x^2 with a gradient 1% too large at flat positions 1 and 5."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            scale = np.ones(tuple(x.shape))
            scale.reshape(-1)[[1, 5]] = 1.01
            return g * 2 * x * T.tensor(scale)

    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.sum()

    class Raises(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("backward exploded")

    class Noisy(Function):
        """Correct up to 1e-9 of noise: backward differs from run to run."""

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            noise = np.random.default_rng().standard_normal(tuple(g.shape)) * 1e-9
            return g * (2 + T.tensor(noise))

    class CubeDetached(Function):
        """Right first derivative, but computed from x.detach(): second order is lost."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() ** 2

    class NotMultiplied(Function):
        """2x whose backward ignores the incoming gradient (right only for g = 1)."""

        @staticmethod
        def forward(ctx, x):
            return (x * 2).sum()

        @staticmethod
        def backward(ctx, g):
            return T.ones_like(g) * 2 * T.ones(3, dtype=T.float64)

    class NoMaterialize(Function):
        """Grads not materialised, and a backward that assumes its gradient is defined."""

        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class NoMaterializeRuntimeError(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            if g is None:
                raise RuntimeError("no gradient")
            return g * 2

    class TwoOutputsNoMaterialize(Function):
        """Two outputs, grads not materialised, and a backward that assumes both are defined."""

        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if isinstance(v, type)})


E = make_functions(engine)


# ----------------------------------------------------------------------- correct functions

CORRECT = {
    "elementwise": lambda T: (lambda x: T.tanh(x) * T.exp(x) + T.sigmoid(x) / (1 + x * x), (randn(T, 3, 4),)),
    "matmul": lambda T: (lambda a, b: a @ b, (randn(T, 3, 4), randn(T, 4, 2, seed=1))),
    "reductions": lambda T: (
        lambda x: (x.sum(1), x.mean(), x.norm(), T.softmax(x, 1), T.log_softmax(x, 0)),
        (randn(T, 3, 4),),
    ),
    "custom_square": lambda T: (make_functions(T).Square.apply, (randn(T, 5),)),
    "custom_matmul": lambda T: (make_functions(T).MatMul.apply, (randn(T, 3, 4), randn(T, 4, 2, seed=1))),
    "multi_in_out_with_constants": lambda T: (
        lambda a, k, b, c: (a * b * k + c, (T.sin(a) * c).sum(), T.argmax(a)),
        (randn(T, 3), 2.5, randn(T, 3, seed=1), randn(T, 3, seed=2, requires_grad=False)),
    ),
    "scalar_tanh_matmul": lambda T: (
        lambda x, w: T.tanh(x @ w).sum(),
        (randn(T, 4, 5), randn(T, 5, 3, seed=1)),
    ),
}


@pytest.mark.parametrize("fast_mode", [False, True], ids=["full", "fast"])
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_functions_pass(name, fast_mode):
    func, inputs = CORRECT[name](engine)
    assert gradcheck(func, inputs, fast_mode=fast_mode)
    report = check_gradients(func, inputs, fast_mode=fast_mode)
    assert report.passed, report.message()
    assert report.problems == [] and report.message() == ""
    assert report.mode == ("fast" if fast_mode else "full")
    assert report.pairs and all(p.passed for p in report.pairs)


def test_correct_functions_pass_second_order():
    for name in ("elementwise", "matmul", "reductions", "multi_in_out_with_constants"):
        func, inputs = CORRECT[name](engine)
        assert gradgradcheck(func, inputs), name
        report = check_gradients(func, inputs, order=2)
        assert report.passed and report.order == 2, (name, report.message())
        assert {p.order for p in report.pairs} == {1, 2}


def test_pairs_cover_differentiable_outputs_and_grad_inputs_only():
    func, inputs = CORRECT["multi_in_out_with_constants"](engine)
    report = check_gradients(func, inputs)
    # outputs 0 and 1 are differentiable (2 is argmax); inputs 0 and 2 require grad
    assert [(p.output_index, p.input_index) for p in report.pairs] == [(0, 0), (0, 2), (1, 0), (1, 2)]
    first = report.pairs[0]
    assert first.input_shape == (3,) and first.output_shape == (3,) and first.jacobian_shape == (3, 3)
    assert report.pairs[2].output_shape == () and report.pairs[2].jacobian_shape == (1, 3)


def test_non_contiguous_and_view_inputs():
    base = randn(engine, 4, 3, requires_grad=False)
    view = base.t()
    view.requires_grad_()
    assert not view.is_contiguous()
    assert gradcheck(lambda a: (a * a).sum(1), (view,))
    x = randn(engine, 4)
    assert gradcheck(lambda a: a, (x,))  # the output is the input itself
    assert gradcheck(lambda a: a[1:] * 3, (x,))


def test_function_that_needs_grad_mode_for_its_values():
    """The numerical forwards normally run under no_grad; this one calls autograd.grad."""

    def force(x):
        with engine.enable_grad():
            (g,) = engine.autograd.grad((x**3).sum(), [x], create_graph=True)
        return g

    assert gradcheck(force, (randn(engine, 4),))


# ---------------------------------------------------------------------- wrong gradients


def failing_pair(report: GradcheckReport) -> PairReport:
    failing = [p for p in report.pairs if not p.passed]
    assert len(failing) == 1, report.pairs
    return failing[0]


def test_wrong_constant():
    x = f64(engine, [0.5, -2.0, 1.0, 0.25])
    report = check_gradients(E.WrongConstant.apply, (x,))
    assert not report.passed
    pair = failing_pair(report)
    assert (pair.output_index, pair.input_index) == (0, 0)
    # the error |x| grows faster than the tolerance 1e-5 + 2e-3|x|: worst where |x| is largest
    assert pair.worst_input_index == (1,) and pair.worst_output_index == (1,)
    assert pair.numerical == pytest.approx(-4.0) and pair.analytical == pytest.approx(-2.0)
    assert pair.max_abs_err == pytest.approx(2.0) and pair.max_rel_err == pytest.approx(0.5)
    assert [m[:2] for m in pair.mismatches] == [((1,), (1,)), ((2,), (2,)), ((0,), (0,)), ((3,), (3,))]
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(E.WrongConstant.apply, (x,))


def test_missing_chain_rule_factor():
    x = randn(engine, 2, 3)
    pair = failing_pair(check_gradients(E.MissingChainFactor.apply, (x,)))
    assert pair.jacobian_shape == (6, 6)
    values = np.abs(np.cos(2 * x.detach().numpy()))
    worst = np.unravel_index(np.argmax(values), values.shape)
    assert pair.worst_input_index == worst and pair.worst_output_index == worst
    for out_idx, in_idx, num, ana in pair.mismatches:
        assert out_idx == in_idx and num == pytest.approx(2 * ana, rel=1e-6)


def test_transposed_matmul_gradient():
    a, b = randn(engine, 2, 3), randn(engine, 3, 3, seed=1)
    report = check_gradients(E.TransposedMatMul.apply, (a, b))
    pair = failing_pair(report)
    assert (pair.output_index, pair.input_index) == (0, 0)
    assert [p.passed for p in report.pairs if p.input_index == 1] == [True]
    assert pair.jacobian_shape == (6, 6)
    # d out[i, j] / d a[i, k] = b[k, j]; the wrong backward gives b[j, k]
    bn = b.detach().numpy()
    for (i, j), (i2, k), num, ana in pair.mismatches:
        assert i == i2 and num == pytest.approx(bn[k, j]) and ana == pytest.approx(bn[j, k])
    with pytest.raises(GradcheckError, match="for output 0 with respect to input 0,"):
        gradcheck(E.TransposedMatMul.apply, (a, b))


def test_bug_on_part_of_the_domain():
    x = f64(engine, [1.5, -0.5, 2.0, -3.0, 0.7, -1.0])
    pair = failing_pair(check_gradients(E.LeakyWrongOnNegatives.apply, (x,)))
    assert sorted(m[1] for m in pair.mismatches) == [(1,), (3,), (5,)]  # exactly the negatives
    assert pair.worst_input_index in {(1,), (3,), (5,)}
    assert all(m[2] == pytest.approx(0.1) and m[3] == pytest.approx(0.2) for m in pair.mismatches)


def test_one_percent_error_on_some_entries():
    x = randn(engine, 2, 4)
    pair = failing_pair(check_gradients(E.OnePercentOff.apply, (x,)))
    assert sorted(m[1] for m in pair.mismatches) == [(0, 1), (1, 1)]  # flat positions 1 and 5
    assert pair.max_rel_err == pytest.approx(0.01, rel=1e-3)
    # a tolerance of 2% lets it through
    assert check_gradients(E.OnePercentOff.apply, (x,), rtol=0.02).passed


def test_relative_error_against_a_zero_numerical_derivative_is_inf():
    class ConstantWithGradient(engine.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 0.0

        @staticmethod
        def backward(ctx, g):
            return g * 1e-3  # the forward is constant: the derivative is 0

    x = randn(engine, 3)
    pair = failing_pair(check_gradients(ConstantWithGradient.apply, (x,)))
    assert pair.max_abs_err == pytest.approx(1e-3) and pair.max_rel_err == float("inf")
    passing = check_gradients(ConstantWithGradient.apply, (x,), atol=0.01, fast_mode=True).pairs[0]
    assert passing.passed and passing.numerical == 0.0 and passing.max_rel_err == float("inf")


def test_wrong_shape_gradient_is_reported_not_raised():
    report = check_gradients(E.WrongShape.apply, (randn(engine, 3),))
    assert not report.passed and report.pairs == []
    (problem,) = report.problems
    assert "RuntimeError" in problem and "invalid gradient" in problem and "[3]" in problem
    with pytest.raises(RuntimeError, match="invalid gradient"):  # as torch: the engine's own error
        gradcheck(E.WrongShape.apply, (randn(engine, 3),))


def test_backward_that_raises_is_reported_with_user_frame():
    report = check_gradients(E.Raises.apply, (randn(engine, 3),))
    assert not report.passed
    (problem,) = report.problems
    assert "ValueError: backward exploded" in problem
    assert f"{__file__}:" in problem  # the line of the `raise` in this file
    assert report.message() == problem
    with pytest.raises(ValueError, match="backward exploded"):
        gradcheck(E.Raises.apply, (randn(engine, 3),))
    # errors in user code are not gradcheck failures: raise_exception=False does not hide them
    with pytest.raises(ValueError):
        gradcheck(E.Raises.apply, (randn(engine, 3),), raise_exception=False)


def test_forward_that_raises_is_reported():
    def forward(x):
        return x / 0 if False else 1 / 0

    report = check_gradients(forward, (randn(engine, 3),))
    assert not report.passed and report.pairs == []
    assert report.problems[0].startswith("forward raised ZeroDivisionError: division by zero (at ")


def test_nondeterministic_backward():
    x = randn(engine, 4)
    report = check_gradients(E.Noisy.apply, (x,))
    assert not report.passed
    assert any(p.startswith("Backward is not reentrant") for p in report.problems)
    with pytest.raises(GradcheckError) as info:
        gradcheck(E.Noisy.apply, (x,))
    assert str(info.value).startswith(
        "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
        "times gives different values, although analytical gradient matches numerical gradient."
        "The tolerance for nondeterminism was 0.0."
    )
    assert gradcheck(E.Noisy.apply, (x,), nondet_tol=1e-6)


def test_second_order_only_bug():
    x = randn(engine, 3)
    assert gradcheck(E.CubeDetached.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradgradcheck(E.CubeDetached.apply, (x,))
    assert not gradgradcheck(E.CubeDetached.apply, (x,), raise_exception=False)
    report = check_gradients(E.CubeDetached.apply, (x,), order=2)
    assert not report.passed and report.order == 2
    assert all(p.passed for p in report.pairs if p.order == 1)
    pair = failing_pair(report)
    # second order: inputs are (x, grad_output); d(grad_x)/dx is wrong, d(grad_x)/d(grad_output) right
    assert (pair.order, pair.output_index, pair.input_index) == (2, 0, 0)
    assert [p.passed for p in report.pairs if p.order == 2 and p.input_index == 1] == [True]
    assert all(m[3] == 0.0 for m in pair.mismatches)


def test_backward_not_multiplied_by_grad_output():
    x = randn(engine, 3)
    report = check_gradients(E.NotMultiplied.apply, (x,))
    assert not report.passed and all(p.passed for p in report.pairs)
    assert report.problems[0].startswith("backward not multiplied by grad_output")
    with pytest.raises(GradcheckError, match="^backward not multiplied by grad_output$"):
        gradcheck(E.NotMultiplied.apply, (x,))


def test_undefined_output_gradient():
    """As torch: backward gets None for every output; a RuntimeError becomes its message."""
    x = randn(engine, 3)
    with pytest.raises(TypeError):  # torch lets errors other than RuntimeError through
        gradcheck(E.NoMaterialize.apply, (x,))
    with pytest.raises(GradcheckError, match="^Expected backward function to handle undefined output grads"):
        with pytest.warns(UserWarning, match="^Backwards compatibility: New undefined gradient support"):
            gradcheck(E.NoMaterializeRuntimeError.apply, (x,))
    for func in (E.NoMaterialize.apply, lambda a: E.NoMaterializeRuntimeError.apply(a).sin()):
        report = check_gradients(func, (x,))
        assert not report.passed and all(p.passed for p in report.pairs)
        (problem,) = report.problems
        assert problem.startswith("Expected backward function to handle undefined output grads")
        assert "backward with every output gradient undefined raised" in problem
        assert check_gradients(func, (x,), check_undefined_grad=False).passed
        assert gradcheck(func, (x,), check_undefined_grad=False)


def test_one_undefined_output_gradient_among_several():
    """Backpropagating one output leaves the other's gradient undefined (None) too."""
    x = randn(engine, 3)
    with pytest.raises(TypeError):
        gradcheck(E.TwoOutputsNoMaterialize.apply, (x,))
    report = check_gradients(E.TwoOutputsNoMaterialize.apply, (x,))
    assert not report.passed
    assert any("TypeError" in p for p in report.problems)


def test_no_differentiable_output():
    x = randn(engine, 3)
    assert gradcheck(lambda a: engine.zeros(3, dtype=engine.float64), (x,))
    with pytest.raises(GradcheckError, match="^Numerical gradient for function expected to be zero$"):
        gradcheck(lambda a: a.detach() * 2, (x,))
    assert not gradcheck(lambda a: a.detach() * 2, (x,), fast_mode=True, raise_exception=False)


def test_output_changing_shape_under_perturbation():
    def unstable(x):
        return x if x.detach().numpy()[0] == 0.5 else x[:2]

    x = f64(engine, [0.5, 1.0, 2.0])
    with pytest.raises(AssertionError, match="Expected `func` to return outputs with the same shape"):
        gradcheck(unstable, (x,))
    report = check_gradients(unstable, (x,))
    assert not report.passed and "AssertionError" in report.problems[0]


# ------------------------------------------------------------------------------ fast mode


def test_fast_mode_localises_the_mismatch():
    x = f64(engine, [[1.5, -0.5, 2.0], [-3.0, 0.7, -1.0]])
    report = check_gradients(E.LeakyWrongOnNegatives.apply, (x,), fast_mode=True)
    assert not report.passed and report.localized and report.mode == "fast"
    pair = failing_pair(report)
    assert sorted(m[1] for m in pair.mismatches) == [(0, 1), (1, 0), (1, 2)]  # the negatives
    assert pair.jacobian_shape == (6, 6) and pair.worst_input_index in {(0, 1), (1, 0), (1, 2)}
    message = report.message()
    assert message.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "Below, we recompute numerical and analytical jacobians in slow mode" in message
    assert "Entries that disagree" in message and "output[1, 0] / input[1, 0]: numerical 0.1" in message
    with pytest.raises(GradcheckError, match="Entries that disagree"):
        gradcheck(E.LeakyWrongOnNegatives.apply, (x,), fast_mode=True)


def test_fast_mode_can_miss_small_errors_that_full_mode_catches():
    """v^T J u averages: a 1% error on 2 of 8 entries hides in fast mode, as in torch."""
    x = randn(engine, 2, 4)
    assert check_gradients(E.OnePercentOff.apply, (x,), fast_mode=True).passed
    assert not check_gradients(E.OnePercentOff.apply, (x,)).passed


def test_fast_mode_passing_pairs_are_not_localised():
    func, inputs = CORRECT["matmul"](engine)
    report = check_gradients(func, inputs, fast_mode=True)
    assert report.passed and not report.localized
    assert all(p.mismatches == [] and p.worst_input_index is None for p in report.pairs)


def test_fast_mode_is_deterministic():
    func, inputs = CORRECT["elementwise"](engine)
    one = check_gradients(func, inputs, fast_mode=True).pairs[0]
    two = check_gradients(func, inputs, fast_mode=True).pairs[0]
    assert (one.numerical, one.analytical) == (two.numerical, two.analytical)


# ------------------------------------------------------------------ inputs left untouched


@pytest.mark.parametrize("fast_mode", [False, True], ids=["full", "fast"])
def test_inputs_restored_bit_exactly(fast_mode):
    values = np.array([0.1, -0.0, 1e-310, np.pi, -7.25, 1 / 3], dtype=np.float64)
    x = engine.tensor(values.copy(), requires_grad=True)
    w = randn(engine, 6, seed=3)
    before = (x.detach().numpy().tobytes(), w.detach().numpy().tobytes())
    versions = (x._version, w._version)

    def fails_midway(a, b):
        if a.detach().numpy()[3] != np.pi:  # raises once the numerical loop reaches a[3]
            raise RuntimeError("perturbed")
        return a * b

    cases = [(lambda a, b: a * b, (x, w)), (E.WrongConstant.apply, (x,)), (fails_midway, (x, w))]
    for func, args in cases:
        check_gradients(func, args, fast_mode=fast_mode, order=2)
        if func is not fails_midway:
            gradcheck(func, args, fast_mode=fast_mode, raise_exception=False)
        assert (x.detach().numpy().tobytes(), w.detach().numpy().tobytes()) == before
        assert (x._version, w._version) == versions
        assert x.grad is None and w.grad is None
    with pytest.raises(RuntimeError, match="perturbed"):
        gradcheck(fails_midway, (x, w), fast_mode=fast_mode)
    assert (x.detach().numpy().tobytes(), w.detach().numpy().tobytes()) == before


# ------------------------------------------------------------------------- float32 inputs


def test_float32_warns_with_torch_text_and_checks_as_is():
    x = engine.tensor(np.random.RandomState(0).randn(3).astype(np.float32), requires_grad=True)
    with pytest.warns(UserWarning) as record:
        verdict = gradcheck(lambda a: a.sin(), (x,), raise_exception=False)
    assert [str(w.message) for w in record] == [NON_DOUBLE]
    assert record[0].filename == __file__  # points at the caller
    assert verdict is False  # float32 central differences with eps=1e-6 are too coarse, as in torch


def test_check_gradients_upcasts_float32():
    x = engine.tensor(np.random.RandomState(0).randn(3).astype(np.float32), requires_grad=True)
    c = engine.tensor(np.ones(3, dtype=np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = check_gradients(lambda a, b: a.sin() * b, (x, c))
    assert report.passed and report.upcast and report.dtype == "float64"
    assert x.dtype == engine.float32 and x.grad is None
    with pytest.warns(UserWarning, match="Input #0 requires gradient"):
        report = check_gradients(lambda a, b: a.sin() * b, (x, c), upcast=False)
    # float32 central differences at eps=1e-6 are rounding noise; a larger step agrees (noise.py)
    assert report.passed and not report.upcast and report.dtype == "float32"
    assert report.pairs[0].noise and report.pairs[0].noise[0][5].startswith("eps=")


# ------------------------------------------------------------------------ API and messages


def test_gradcheck_error_message_format():
    x = f64(engine, [1.0, 2.0])
    with pytest.raises(GradcheckError) as info:
        gradcheck(E.WrongConstant.apply, (x,))
    assert isinstance(info.value, RuntimeError)
    assert str(info.value) == (
        "Jacobian mismatch for output 0 with respect to input 0,\n"
        "numerical:tensor([[2.0000, 0.0000],\n        [0.0000, 4.0000]], dtype=engine.float64)\n"
        "analytical:tensor([[1., 0.],\n        [0., 2.]], dtype=engine.float64)\n"
    )
    assert check_gradients(E.WrongConstant.apply, (x,)).message() == str(info.value)


def test_message_numbers_like_torch_pairs_by_position():
    """torch counts inputs requiring grad and differentiable outputs; pairs use tuple positions."""
    x = randn(engine, 3)

    def func(k, const, a):
        return const.sum() * 0 + k, E.WrongConstant.apply(a)

    args = (2.0, randn(engine, 3, seed=1, requires_grad=False), x)
    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 0 with respect to input 0,"):
        gradcheck(func, args)
    pair = failing_pair(check_gradients(func, args))
    assert (pair.output_index, pair.input_index) == (1, 2)


def test_raise_exception_false_returns_false():
    x = randn(engine, 3)
    assert gradcheck(E.WrongConstant.apply, (x,), raise_exception=False) is False
    assert gradcheck(E.Square.apply, (x,), raise_exception=False) is True
    assert gradgradcheck(E.CubeDetached.apply, (x,), raise_exception=False) is False


def test_invalid_inputs_raise_like_torch():
    with pytest.raises(ValueError, match="expects at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2, (randn(engine, 3, requires_grad=False),), raise_exception=False)
    expanded = randn(engine, 1).expand(3)
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(lambda a: a * 2, (expanded,))
    report = check_gradients(lambda a: a * 2, (randn(engine, 3, requires_grad=False),))
    assert not report.passed and "requires_grad=True" in report.problems[0]


def test_report_is_plain_data():
    func, inputs = CORRECT["matmul"](engine)
    report = check_gradients(func, inputs)
    data = dataclasses.asdict(report)
    assert set(data) == {
        "passed",
        "order",
        "mode",
        "device",
        "dtype",
        "upcast",
        "pairs",
        "problems",
        "elapsed",
        "localized",
        "problem_kinds",
        "forward_drift",
        "notes",
    }
    assert report.device == "cpu" and report.dtype == "float64" and report.elapsed > 0
    assert [f.name for f in dataclasses.fields(PairReport)][-10:] == [
        "order",
        "mode",
        "comparison",
        "mismatch_count",
        "mismatch_count_exact",
        "nondifferentiable",
        "noise",
        "estimates_tried",
        "numerical_jacobian",
        "analytical_jacobian",
    ]
    assert all(p.numerical_jacobian is None and p.analytical_jacobian is None for p in report.pairs)


def test_gradgradcheck_with_given_and_non_contiguous_grad_outputs():
    x = randn(engine, 3, 4)
    assert gradgradcheck(lambda a: a.sin() * a, (x,), gen_non_contig_grad_outputs=True)
    grad_output = randn(engine, 3, 4, seed=5)
    assert gradgradcheck(lambda a: a.sin() * a, (x,), (grad_output,))
    assert gradgradcheck(lambda a: a.sin() * a, (x,), fast_mode=True)


def test_check_gradients_order_2_pairs_count_grad_outputs_as_inputs():
    report = check_gradients(
        lambda a, b: (a * b).sin(), (randn(engine, 2), randn(engine, 2, seed=1)), order=2
    )
    assert report.passed
    second = [(p.output_index, p.input_index) for p in report.pairs if p.order == 2]
    # outputs: grad_a, grad_b; inputs: a, b, grad_output
    assert second == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]


# ---------------------------------------------------------------- same verdicts as torch

TORCH_CASES = {
    **{f"correct_{k}": v for k, v in CORRECT.items()},
    "wrong_constant": lambda T: (make_functions(T).WrongConstant.apply, (randn(T, 4),)),
    "missing_chain": lambda T: (make_functions(T).MissingChainFactor.apply, (randn(T, 2, 3),)),
    "transposed_matmul": lambda T: (
        make_functions(T).TransposedMatMul.apply,
        (randn(T, 2, 3), randn(T, 3, 3, seed=1)),
    ),
    "leaky_negatives": lambda T: (make_functions(T).LeakyWrongOnNegatives.apply, (randn(T, 6),)),
    "one_percent": lambda T: (make_functions(T).OnePercentOff.apply, (randn(T, 2, 4),)),
    "wrong_shape": lambda T: (make_functions(T).WrongShape.apply, (randn(T, 3),)),
    "raises": lambda T: (make_functions(T).Raises.apply, (randn(T, 3),)),
    "noisy": lambda T: (make_functions(T).Noisy.apply, (randn(T, 4),)),
    "not_multiplied": lambda T: (make_functions(T).NotMultiplied.apply, (randn(T, 3),)),
    "no_materialize": lambda T: (make_functions(T).NoMaterialize.apply, (randn(T, 3),)),
    "no_materialize_inner": lambda T: (
        lambda a: make_functions(T).NoMaterializeRuntimeError.apply(a).sin(),
        (randn(T, 3),),
    ),
    "two_outputs_no_materialize": lambda T: (make_functions(T).TwoOutputsNoMaterialize.apply, (randn(T, 3),)),
    "detached_output": lambda T: (lambda a: a.detach() * 2, (randn(T, 3),)),
    "constant_output": lambda T: (lambda a: T.zeros(3, dtype=T.float64), (randn(T, 3),)),
}


def outcome(T, check, build, **kwargs) -> str:
    func, inputs = build(T)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "pass" if check(func, inputs, raise_exception=False, **kwargs) else "fail"
        except Exception as exc:
            return type(exc).__name__


@pytest.mark.parametrize("fast_mode", [False, True], ids=["full", "fast"])
@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_verdict_matches_torch(torch, name, fast_mode):
    build = TORCH_CASES[name]
    ours = outcome(engine, gradcheck, build, fast_mode=fast_mode)
    theirs = outcome(torch, torch.autograd.gradcheck, build, fast_mode=fast_mode)
    assert ours == theirs


@pytest.mark.parametrize("name", ["correct_elementwise", "correct_matmul", "correct_custom_square"])
def test_second_order_verdict_matches_torch(torch, name):
    build = TORCH_CASES[name]
    assert outcome(engine, gradgradcheck, build) == outcome(torch, torch.autograd.gradgradcheck, build)
    detached = lambda T: (make_functions(T).CubeDetached.apply, (randn(T, 3),))  # noqa: E731
    assert outcome(engine, gradgradcheck, detached) == outcome(torch, torch.autograd.gradgradcheck, detached)
