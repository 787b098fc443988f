"""gradcheck / gradgradcheck behaving as torch.autograd's: undefined output gradients run through
the real backward, functions without differentiable outputs, outputs changing shape or dtype
under perturbation, the options' requirements.

Each test runs on the engine and, where it is installed, on torch itself (the `lib` fixture), so
the expected behaviour and texts are PyTorch 2.13's (with `torch` read as the library's name).
"""

from __future__ import annotations

import re
import warnings
from types import SimpleNamespace

import pytest

import engine
from gradcheck.test_gradcheck import make_functions

UNDEFINED_FAILED = (
    'Expected backward function to handle undefined output grads. Please look at "Notes about undefined '
    'output gradients" in "tools/autograd/derivatives.yaml"'
)
BACKWARDS_COMPATIBILITY = (
    "Backwards compatibility: New undefined gradient support checking feature is enabled by default, but it "
    "may break existing callers of this function. If this is true for you, you can call this function with "
    '"check_undefined_grad=False" to disable the feature'
)


@pytest.fixture(params=["engine", pytest.param("torch", marks=pytest.mark.torch_parity)])
def lib(request):
    """The library under test: the engine, or torch for the same expectations (skipped without it)."""
    if request.param == "torch":
        return pytest.importorskip("torch")
    return engine


def exactly(message: str) -> str:
    return "^" + re.escape(message) + "$"


def functions(lib) -> SimpleNamespace:
    """Custom Functions written against `lib` (Inner refuses an undefined gradient, as a backward
    written without None in mind would)."""
    Inner = make_functions(lib).NoMaterializeRuntimeError

    class Outer(lib.autograd.Function):
        """Given no gradient, defines one for x (zeros) and leaves y's undefined."""

        @staticmethod
        def forward(ctx, x, y):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return x * 2 + y

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            if g is None:
                return lib.zeros_like(x), None
            return g * 2, g

    class Counted(Inner):
        """Inner's forward; a backward that counts its calls with no gradient and copes with them."""

        undefined_calls = 0

        @staticmethod
        def backward(ctx, g):
            if g is None:
                Counted.undefined_calls += 1
                return None
            return g * 2

    return SimpleNamespace(Inner=Inner, Outer=Outer, Counted=Counted)


def double(lib, *shape):
    return lib.rand(*shape, dtype=lib.float64, requires_grad=True)


# ----------------------------------------------------------------- undefined gradients


def test_undefined_gradients_reach_every_node_backward_leaves_undefined(lib):
    """The outer backward defines x's gradient but not y's: y's Function still gets None."""
    F = functions(lib)
    x, y = double(lib, 3), double(lib, 3)

    def func(a, b):
        return F.Outer.apply(a, F.Inner.apply(b))

    with pytest.warns(UserWarning, match=exactly(BACKWARDS_COMPATIBILITY)):
        with pytest.raises(RuntimeError) as info:
            lib.autograd.gradcheck(func, (x, y))
    assert type(info.value).__name__ == "GradcheckError" and str(info.value) == UNDEFINED_FAILED
    assert isinstance(info.value.__cause__, RuntimeError) and str(info.value.__cause__) == "no gradient"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert lib.autograd.gradcheck(func, (x, y), raise_exception=False) is False
    assert lib.autograd.gradcheck(func, (x, y), check_undefined_grad=False)


def test_undefined_gradient_check_runs_backward_for_real(lib):
    """Once with every output undefined; with two outputs, once more for each."""
    F = functions(lib)
    x = double(lib, 3)
    F.Counted.undefined_calls = 0
    assert lib.autograd.gradcheck(F.Counted.apply, (x,))
    assert F.Counted.undefined_calls == 1
    F.Counted.undefined_calls = 0
    assert lib.autograd.gradcheck(lambda a: (F.Counted.apply(a), F.Counted.apply(a * 1)), (x,))
    assert F.Counted.undefined_calls == 4  # all undefined: both; then each output alone: one each
    F.Counted.undefined_calls = 0
    assert lib.autograd.gradcheck(F.Counted.apply, (x,), check_undefined_grad=False)
    assert F.Counted.undefined_calls == 0


def test_undefined_gradient_check_runs_the_function_again(lib):
    calls = []

    def func(a):
        calls.append(1)
        return a * 2

    x = double(lib, 3)
    lib.autograd.gradcheck(func, (x,))
    with_check = len(calls)
    calls.clear()
    lib.autograd.gradcheck(func, (x,), check_undefined_grad=False)
    assert with_check == len(calls) + 1


def test_check_gradients_reports_where_the_undefined_gradient_broke_backward():
    F = functions(engine)
    x, y = double(engine, 3), double(engine, 3)
    report = engine.autograd.check_gradients(lambda a, b: F.Outer.apply(a, F.Inner.apply(b)), (x, y))
    assert not report.passed and all(p.passed for p in report.pairs)
    (problem,) = report.problems
    assert problem.startswith(UNDEFINED_FAILED + ": backward with every output gradient undefined raised ")
    assert "RuntimeError: no gradient" in problem


# --------------------------------------------------------------- no differentiable outputs


@pytest.mark.parametrize("fast_mode", [False, True])
def test_no_outputs_at_all_pass(lib, fast_mode):
    x = double(lib, 3)
    assert lib.autograd.gradcheck(lambda a: (), (x,), fast_mode=fast_mode) is True
    assert lib.autograd.gradcheck(lambda a: [], (x,), fast_mode=fast_mode) is True
    assert lib.autograd.gradcheck(lambda a: a.argmax(), (x,), fast_mode=fast_mode) is True


@pytest.mark.parametrize("fast_mode", [False, True])
def test_outputs_without_gradient_must_be_numerically_constant(lib, fast_mode):
    x = double(lib, 3)
    for func in (
        lambda a: a.detach(),
        lambda a: lib.tensor([a[0].item()], dtype=lib.float64) * 0 + a.detach(),
    ):
        with pytest.raises(
            RuntimeError, match=exactly("Numerical gradient for function expected to be zero")
        ):
            lib.autograd.gradcheck(func, (x,), fast_mode=fast_mode)
        assert lib.autograd.gradcheck(func, (x,), fast_mode=fast_mode, raise_exception=False) is False


@pytest.mark.parametrize("value", [1, None])
def test_outputs_that_are_not_tensors_fail_on_their_requires_grad(lib, value):
    x = double(lib, 3)
    message = f"'{type(value).__name__}' object has no attribute 'requires_grad'"
    for func in (lambda a: value, lambda a: (a * 2, value)):
        with pytest.raises(AttributeError, match=exactly(message)):
            lib.autograd.gradcheck(func, (x,))


# ------------------------------------------------------- outputs changing under perturbation


def grows_at_one(lib):
    return lambda t: lib.cat([t, t]) if bool((t >= 1).all()) else t


def narrows_at_one(lib):
    return lambda t: t.to(lib.float32) if bool((t >= 1).all()) else t


@pytest.mark.parametrize(
    "make, fast_mode, message",
    [
        (
            grows_at_one,
            False,
            "Expected `func` to return outputs with the same shape when inputs are perturbed on index (0,) by "
            "1e-06, but got: shapes {lib}.Size([1]) and {lib}.Size([2]).",
        ),
        (
            grows_at_one,
            True,
            "Expected `func` to return outputs with the same shape when inputs are perturbed by 1e-06, but got: "
            "shapes {lib}.Size([1]) and {lib}.Size([2]).",
        ),
        (
            narrows_at_one,
            False,
            "Expected `func` to return outputs with the same dtype when inputs are perturbed on index (0,) by "
            "1e-06, but got: dtypes {lib}.float64 and {lib}.float32.",
        ),
        (
            narrows_at_one,
            True,
            "Expected `func` to return outputs with the same dtype when inputs are perturbed by 1e-06, but got: "
            "dtypes {lib}.float64 and {lib}.float32.",
        ),
    ],
)
def test_outputs_changing_shape_or_dtype_under_perturbation(lib, make, fast_mode, message):
    a = lib.ones(1, dtype=lib.float64, requires_grad=True)
    expected = exactly(message.format(lib=lib.__name__))
    with pytest.raises(AssertionError, match=expected):
        lib.autograd.gradcheck(make(lib), (a,), fast_mode=fast_mode)
    with pytest.raises(AssertionError, match=expected):  # not a gradcheck failure: raise_exception has no say
        lib.autograd.gradcheck(make(lib), (a,), fast_mode=fast_mode, raise_exception=False)


def test_perturbed_element_index_is_named(lib):
    a = lib.tensor([[0.0, 0.5], [1.0, 0.5]], dtype=lib.float64, requires_grad=True)

    def func(t):  # the element at (1, 0) sits at 1: moving it down and up changes the shape
        return t if bool((t < 1).any() & (t[1, 0] < 1)) else t[0]

    with pytest.raises(AssertionError, match="on index \\(1, 0\\) by 1e-06, but got: shapes"):
        lib.autograd.gradcheck(func, (a,))


def test_an_output_aliasing_its_input_is_read_before_the_input_moves_back(lib):
    x = double(lib, 3)
    with pytest.raises(RuntimeError, match=exactly("Numerical gradient for function expected to be zero")):
        lib.autograd.gradcheck(lambda a: a.detach(), (x,))


# ----------------------------------------------------------------------- check_batched_grad


def test_check_batched_grad_is_accepted(lib):
    x = double(lib, 3)
    assert lib.autograd.gradcheck(lambda a: a * 2, (x,), check_batched_grad=False)
    assert lib.autograd.gradgradcheck(lambda a: a * a, (x,), check_batched_grad=False)


def test_backward_ad_is_checked_by_default(lib):
    x = double(lib, 3)
    assert lib.autograd.gradcheck(lambda a: a * 2, (x,), check_backward_ad=True)
    assert lib.autograd.gradgradcheck(lambda a: a * a * a, (x,), check_rev_over_rev=True)


def test_forward_mode_alone_is_a_check_of_its_own(lib):
    x = double(lib, 3)
    assert lib.autograd.gradcheck(lambda a: a.sin() * a, (x,), check_backward_ad=False, check_forward_ad=True)
    assert lib.autograd.gradgradcheck(
        lambda a: a.sin() * a,
        (x,),
        check_rev_over_rev=False,
        check_fwd_over_rev=True,
        check_undefined_grad=False,
    )


@pytest.mark.parametrize("option", ["check_undefined_grad", "check_batched_grad"])
def test_what_only_reverse_mode_checks_needs_it(lib, option):
    x = double(lib, 3)
    options = {"check_undefined_grad": False, option: True}  # check_undefined_grad is on by default
    message = f"Setting {option}=True requires check_rev_over_rev to be True"
    with pytest.raises(AssertionError, match=exactly(message)):
        lib.autograd.gradgradcheck(
            lambda a: a * a, (x,), check_rev_over_rev=False, check_fwd_over_rev=True, **options
        )
    if option == "check_batched_grad":
        message = "Setting check_batched_grad=True requires check_backward_ad to be True"
        with pytest.raises(AssertionError, match=exactly(message)):
            lib.autograd.gradcheck(
                lambda a: a * 2, (x,), check_backward_ad=False, check_forward_ad=True, check_batched_grad=True
            )


@pytest.mark.parametrize("batched", [False, True])
def test_turning_off_both_modes_is_refused(lib, batched):
    x = double(lib, 3)
    with pytest.raises(
        AssertionError,
        match=exactly("Expected at least one of check_forward_ad or check_backward_ad to be True"),
    ):
        lib.autograd.gradcheck(lambda a: a * 2, (x,), check_backward_ad=False, check_batched_grad=batched)
    with pytest.raises(
        AssertionError,
        match=exactly("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"),
    ):
        lib.autograd.gradgradcheck(
            lambda a: a * a, (x,), check_rev_over_rev=False, check_undefined_grad=batched
        )
