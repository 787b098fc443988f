"""autograd.grad(..., is_grads_batched=True) as torch 2.13's: the first dim of each grad_output is a batch
of vectors, each giving one vector-Jacobian product, all of them from one call; torch's errors.

Each test runs on the engine and on torch where it is installed, with the same expectations.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import engine

RNG = np.random.default_rng(7)
X = RNG.standard_normal(3)
W = RNG.standard_normal(3)
V = RNG.standard_normal((4, 3))


@pytest.fixture(params=["engine", pytest.param("torch", marks=pytest.mark.torch_parity)])
def lib(request):
    return engine if request.param == "engine" else pytest.importorskip("torch")


def leaf(lib, array):
    return lib.tensor(array, dtype=lib.float64, requires_grad=True)


def values(t) -> np.ndarray:
    return np.asarray(t.detach().tolist())


def exactly(message: str) -> str:
    return "^" + re.escape(message) + "$"


def cubed(lib):
    """x ** 3 as a custom Function, whose backward, written for one vector, runs on the batch of them."""

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    def backward(ctx, g):
        return 3 * g * ctx.saved_tensors[0] ** 2

    methods = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    return type("Cubed", (lib.autograd.Function,), methods)


def test_each_vector_of_the_batch_gives_its_own_product(lib):
    x, w = leaf(lib, X), leaf(lib, W)
    y = x.sin() * w + cubed(lib).apply(x)
    vs = lib.tensor(V, dtype=lib.float64)
    gx, gw = lib.autograd.grad(y, (x, w), vs, retain_graph=True, is_grads_batched=True)
    assert tuple(gx.shape) == tuple(gw.shape) == (4, 3)
    for k, v in enumerate(vs):
        one_x, one_w = lib.autograd.grad(y, (x, w), v, retain_graph=True)
        np.testing.assert_allclose(values(gx[k]), values(one_x), rtol=1e-12)
        np.testing.assert_allclose(values(gw[k]), values(one_w), rtol=1e-12)
    np.testing.assert_allclose(values(gx), V * (np.cos(X) * W + 3 * X * X), rtol=1e-12)
    assert not gx.requires_grad


def test_every_output_has_its_batch(lib):
    x = leaf(lib, X)
    ones = lib.ones(2, 3, dtype=lib.float64)
    (gx,) = lib.autograd.grad((x * 2, x * x), x, (ones, ones * 3), is_grads_batched=True)
    np.testing.assert_allclose(values(gx), np.broadcast_to(2 + 6 * X, (2, 3)), rtol=1e-12)


def test_unused_inputs_are_none_or_zeros_of_the_inputs_shape(lib):
    x, unused = leaf(lib, X), leaf(lib, W)
    vs = lib.tensor(V, dtype=lib.float64)
    gx, gu = lib.autograd.grad(
        x * 2, (x, unused), vs, retain_graph=True, is_grads_batched=True, allow_unused=True
    )
    assert gu is None and tuple(gx.shape) == (4, 3)
    gx, gu = lib.autograd.grad(x * 2, (x, unused), vs, is_grads_batched=True, materialize_grads=True)
    assert tuple(gu.shape) == (3,) and values(gu).tolist() == [0.0] * 3  # torch's zeros_like(input): no batch


def test_under_create_graph_the_products_stay_differentiable(lib):
    x = leaf(lib, X)
    vs = lib.tensor(V, dtype=lib.float64)
    (gx,) = lib.autograd.grad(x**3, x, vs, create_graph=True, is_grads_batched=True)
    assert gx.requires_grad
    np.testing.assert_allclose(values(gx), V * 3 * X * X, rtol=1e-12)
    (second,) = lib.autograd.grad(gx.sum(), x)
    np.testing.assert_allclose(values(second), V.sum(0) * 6 * X, rtol=1e-12)


def test_the_vectors_must_have_the_outputs_shape_after_the_batch_dim(lib):
    x = leaf(lib, X)
    message = (
        "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch dimension. "
        "The sizes of the remaining dimensions are expected to match the shape of corresponding output, but a "
        f"mismatch was detected: grad_output[0] has a shape of {lib.__name__}.Size([]) and output[0] has a shape "
        f"of {lib.__name__}.Size([3]). If you only want some tensors in `grad_output` to be considered batched, "
        "consider using vmap."
    )  # torch names the first vector's shape less its first dim
    with pytest.raises(RuntimeError, match=exactly(message)):
        lib.autograd.grad(x * 2, x, lib.ones(2, 4, dtype=lib.float64), is_grads_batched=True)


def test_the_batches_must_have_one_size(lib):
    x = leaf(lib, X)
    message = "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes [2, 5] for the mapped dimension"
    gs = (lib.ones(2, 3, dtype=lib.float64), lib.ones(5, 3, dtype=lib.float64))
    with pytest.raises(ValueError, match=exactly(message)):
        lib.autograd.grad((x * 2, x * 3), x, gs, is_grads_batched=True)
    with pytest.raises(ValueError, match=exactly(message)):
        lib.autograd.grad((x * 2, x * 3), x, gs, is_grads_batched=True, create_graph=True)


def test_an_input_the_outputs_do_not_use_is_refused_as_without_a_batch(lib):
    x, unused = leaf(lib, X), leaf(lib, W)
    with pytest.raises(
        RuntimeError, match="The differentiated Tensor at index 0 appears to not have been used"
    ):
        lib.autograd.grad(x * 2, unused, lib.ones(2, 3, dtype=lib.float64), is_grads_batched=True)


def test_a_gradient_taken_inside_vmap_without_create_graph_runs_on_the_batch(lib):
    x = leaf(lib, X)
    y = x.exp() * x
    vs = lib.tensor(V, dtype=lib.float64)
    gx = lib.func.vmap(lambda v: lib.autograd.grad(y, x, v, retain_graph=True)[0])(vs)
    np.testing.assert_allclose(values(gx), V * np.exp(X) * (1 + X), rtol=1e-12)
