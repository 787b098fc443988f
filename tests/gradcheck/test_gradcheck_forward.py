"""Forward mode in check_gradients: JVP columns against the numerical Jacobian, at orders 1 and 2.

Run on torch tensors (gradcli's adapter, torch.autograd.forward_ad underneath): a custom Function
with a wrong `jvp` fails in forward mode only, localised to its entries; one without `jvp` leaves
a note, not a failure.
"""

from __future__ import annotations

import inspect

import pytest

from engine.autograd.gradcheck.api import check_gradients
from engine.autograd.gradcheck.forward import UNSUPPORTED_NOTE
from engine.autograd.gradcheck.report import comparison

pytestmark = pytest.mark.torch_parity


@pytest.fixture
def lib(torch):
    from gradcli.libraries.torch_tensors import TorchTensors

    return TorchTensors()


def functions(torch):
    class WrongJvp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.exp()

        @staticmethod
        def jvp(ctx, t):
            return t * 2  # exp's tangent is t * exp(x)

    class NoJvp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3

    return WrongJvp, NoJvp


def x_of(torch, n=3):
    return torch.linspace(-1, 1, n, dtype=torch.float64).requires_grad_()


def summary(report):
    return [(p.order, p.mode, p.passed) for p in report.pairs]


def test_labels_are_jaxs():
    assert [comparison(o, m) for o in (1, 2) for m in ("rev", "fwd")] == [
        "VJP",
        "JVP",
        "VJP of VJP",
        "JVP of VJP",
    ]


@pytest.mark.parametrize("fast_mode", [False, True])
def test_a_right_function_passes_in_both_modes(torch, lib, fast_mode):
    def f(x, w):
        return (x.sin() * w).cumsum(0), x.tanh()

    inputs = (x_of(torch), torch.rand(3, dtype=torch.float64, requires_grad=True))
    report = check_gradients(f, inputs, tensors=lib, modes=("rev", "fwd"), fast_mode=fast_mode)
    assert report.passed, report.problems
    assert sorted(summary(report)) == sorted([(1, m, True) for m in ("rev", "fwd") for _ in range(4)])
    assert [p.mode for p in report.pairs] == ["rev"] * 4 + ["fwd"] * 4  # reverse mode's first


def test_reverse_mode_alone_compares_no_jvp(torch, lib):
    report = check_gradients(lambda x: x * x, (x_of(torch),), tensors=lib)
    assert summary(report) == [(1, "rev", True)]


@pytest.mark.parametrize("fast_mode", [False, True])
def test_a_wrong_jvp_fails_forward_mode_only_with_its_entries(torch, lib, fast_mode):
    wrong, _ = functions(torch)
    x = x_of(torch)
    report = check_gradients(wrong.apply, (x,), tensors=lib, modes=("rev", "fwd"), fast_mode=fast_mode)
    assert not report.passed
    rev, fwd = report.pairs
    assert (rev.mode, rev.passed, fwd.mode, fwd.passed) == ("rev", True, "fwd", False)
    assert fwd.mismatch_count == 3 and [m[:2] for m in sorted(fwd.mismatches)] == [
        ((i,), (i,)) for i in range(3)
    ]
    for _, in_idx, numerical, analytical in fwd.mismatches:
        assert analytical == pytest.approx(2.0) and numerical == pytest.approx(
            float(x.detach()[in_idx].exp())
        )
    assert report.message().startswith(
        "Jacobian computed with forward mode mismatch for output 0 with respect to input 0"
    )


def test_a_function_without_jvp_is_a_note_not_a_failure(torch, lib):
    _, no_jvp = functions(torch)
    report = check_gradients(no_jvp.apply, (x_of(torch),), tensors=lib, modes=("rev", "fwd"))
    assert report.passed and summary(report) == [(1, "rev", True)]
    (note,) = report.notes
    assert note.startswith("forward mode not checked: NoJvp has no jvp, which forward-mode AD needs (at ")
    assert note.endswith(f"{__file__}:{inspect.getsourcelines(no_jvp)[1]})")


def test_an_op_without_forward_ad_is_a_note_with_the_librarys_error_and_the_users_line(torch, lib):
    weight = torch.randn(5, 2, dtype=torch.float64, requires_grad=True)
    index = torch.tensor([0, 2, 4, 1])
    offsets = torch.tensor([0, 2])

    def bags(w):
        return torch.nn.functional.embedding_bag(index, w, offsets)

    report = check_gradients(bags, (weight,), tensors=lib, modes=("rev", "fwd"))
    assert report.passed and summary(report) == [(1, "rev", True)]
    (note,) = report.notes
    assert note.startswith(UNSUPPORTED_NOTE + " raised NotImplementedError: Trying to use forward AD with")
    assert "Please file an issue" not in note and "\n" not in note  # the library's first line only
    assert note.endswith(f"(at {__file__}:{bags.__code__.co_firstlineno + 1})")


def test_order_two_checks_the_gradient_in_forward_mode_too(torch, lib):
    report = check_gradients(
        lambda x: x.tanh() * x, (x_of(torch),), order=2, tensors=lib, modes=("rev", "fwd")
    )
    assert report.passed, report.problems
    assert [(p.order, p.mode) for p in report.pairs] == [(1, "rev"), (1, "fwd")] + [(2, "rev")] * 2 + [
        (2, "fwd")
    ] * 2


def test_a_backward_forward_mode_cannot_differentiate_is_a_second_order_note(torch, lib):
    _, no_jvp = functions(torch)

    def f(x):  # its backward runs NoJvp, so the gradient has no forward-mode derivative
        class Outer(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * x

            @staticmethod
            def backward(ctx, g):
                return no_jvp.apply(g)

            @staticmethod
            def jvp(ctx, t):
                return t * 0

        return Outer.apply(x)

    report = check_gradients(f, (x_of(torch),), order=2, tensors=lib, modes=("rev", "fwd"), atol=1e10)
    assert report.notes == [
        "second order: forward mode not checked: NoJvp has no jvp, which forward-mode AD needs"
        f" (at {__file__}:{inspect.getsourcelines(no_jvp)[1]})"
    ]


def test_forward_mode_alone_compares_no_vjp(torch, lib):
    wrong, _ = functions(torch)
    report = check_gradients(wrong.apply, (x_of(torch),), tensors=lib, modes=("fwd",))
    assert summary(report) == [(1, "fwd", False)]


@pytest.mark.parametrize("modes", [("rev", "jvp"), ()])
def test_modes_are_checked(torch, lib, modes):
    with pytest.raises(ValueError, match="modes must name"):
        check_gradients(lambda x: x, (x_of(torch),), tensors=lib, modes=modes)
