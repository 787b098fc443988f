"""Custom Functions under vmap, with torch's rules and messages: the torch 2.x form (a separate
setup_context), and generate_vmap_rule=True or a vmap staticmethod (not both) once an input is
batched; values and per-sample gradients through such a Function."""

from __future__ import annotations

import re

import numpy as np
import pytest

DOCS = "https://pytorch.org/docs/main/notes/extending.func.html"


def functions(lib, generate: bool, own_rule: bool):
    class Cube(lib.autograd.Function):
        generate_vmap_rule = generate

        @staticmethod
        def forward(x):
            return x**3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x**2

    if own_rule:

        def vmap(info, in_dims, x):
            return Cube.apply(x.movedim(in_dims[0], 0)), 0

        Cube.vmap = staticmethod(vmap)
    return Cube


class_cases = [(True, False), (False, True)]


@pytest.mark.parametrize(("generate", "own_rule"), class_cases)
def test_a_function_with_vmap_support_is_batched_and_differentiated(lib, generate, own_rule):
    cube = functions(lib, generate, own_rule)
    x = lib.tensor([[1.0, 2.0], [-1.0, 0.5], [3.0, 0.0]], dtype=lib.float64)
    out = lib.func.vmap(cube.apply)(x)
    np.testing.assert_allclose(out.numpy(), x.numpy() ** 3)
    grads = lib.func.vmap(lib.func.grad(lambda row: cube.apply(row).sum()))(x)
    np.testing.assert_allclose(grads.numpy(), 3 * x.numpy() ** 2)


@pytest.mark.parametrize("batched", [True, False])
def test_neither_rule_nor_both_is_refused(lib, batched):
    x = lib.ones(3, 2)
    plain = functions(lib, generate=False, own_rule=False)
    with pytest.raises(RuntimeError, match=re.escape(
        f"You tried to vmap over Cube, but it does not have vmap support. Please override and implement the "
        f"vmap staticmethod or set generate_vmap_rule=True. For more details, please see {DOCS}"
    )):  # fmt: skip
        lib.func.vmap(plain.apply if batched else lambda row: plain.apply(lib.ones(2)) * row)(x)
    both = functions(lib, generate=True, own_rule=True)
    with pytest.raises(RuntimeError, match=re.escape(
        "You tried to vmap over Cube, but it has both generate_vmap_rule=True and an overridden vmap "
        "staticmethod. Please set generate_vmap_rule=False or delete the overridden vmap staticmethod to "
        f"avoid ambiguity. For more details, please see {DOCS}"
    )):  # fmt: skip
        lib.func.vmap(both.apply)(x)


def test_the_old_form_is_refused_under_vmap_even_unbatched(lib):
    class Old(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    message = (
        "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it "
        f"must override the setup_context staticmethod. For more details, please see {DOCS}"
    )
    with pytest.raises(RuntimeError, match=re.escape(message)):
        lib.func.vmap(lambda row: Old.apply(lib.ones(2)) * row)(lib.ones(3, 2))
    assert Old.apply(lib.ones(2)).tolist() == [2.0, 2.0]  # outside vmap it is as it was


def _old_double(lib):
    class OldDouble(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    return OldDouble


TRANSFORMS = {
    "grad": lambda func, f, x: func.grad(lambda a: f(a).sum())(x),
    "vjp": lambda func, f, x: func.vjp(f, x),
    "jvp": lambda func, f, x: func.jvp(f, (x,), (x,)),
    "jacrev": lambda func, f, x: func.jacrev(f)(x),
    "jacfwd": lambda func, f, x: func.jacfwd(f)(x),
    "hessian": lambda func, f, x: func.hessian(lambda a: f(a).sum())(x),
}


@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_the_old_form_is_refused_under_every_func_transform(lib, transform):
    message = "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...)"
    with pytest.raises(RuntimeError, match=re.escape(message)):
        TRANSFORMS[transform](lib.func, _old_double(lib).apply, lib.ones(3, dtype=lib.float64))


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_autograd_functional_runs_the_old_form_as_torch_does(lib, strategy):
    """autograd.functional's vectorize and forward mode are torch's older vmap and forward AD, not torch.func."""
    x = lib.ones(3, dtype=lib.float64)
    jac = lib.autograd.functional.jacobian(_old_double(lib).apply, x, vectorize=True, strategy=strategy)
    np.testing.assert_array_equal(jac.detach().numpy(), 2 * np.eye(3))


def test_the_default_vmap_staticmethod_says_what_to_do(lib):
    with pytest.raises(NotImplementedError, match=re.escape(
        "To use autograd.Function with vmap, you must either override the vmap staticmethod or set "
        "generate_vmap_rule=True."
    )):  # fmt: skip
        lib.autograd.Function.vmap(None, None)
    assert lib.autograd.Function.generate_vmap_rule is False


def test_the_older_vmap_of_batched_gradients_runs_any_function(lib):
    """autograd.grad(is_grads_batched=True) (and gradcheck's batched checks) use torch's older vmap,
    which runs a Function in the old form without torch.func's rules."""

    class Old(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
    vectors = lib.eye(3, dtype=lib.float64)
    (jacobian,) = lib.autograd.grad(Old.apply(x), x, vectors, is_grads_batched=True)
    np.testing.assert_allclose(jacobian.numpy(), np.diag([2.0, -4.0, 6.0]))
