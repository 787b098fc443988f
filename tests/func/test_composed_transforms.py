"""Transforms composed with each other and with autograd, against torch.func (torch 2.13): higher-order
Jacobians in every mode order (jacfwd of jacfwd opens no second dual level: its inner jvp runs by
reverse mode), gradients through vmap's outputs (the per-example path), and vmap's randomness there."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.func import vmap

RNG = np.random.default_rng(11)
X = RNG.standard_normal(4)
XS = RNG.standard_normal((3, 4))
W = RNG.standard_normal(4)


def vector_fn(a):
    return a.sin() * a.sum() + a.exp()


def scalar_fn(a):
    return (a.sin() * a.exp()).sum() * a.sum()


COMPOSITIONS = {
    "jacfwd(jacfwd)": lambda func: func.jacfwd(func.jacfwd(vector_fn)),
    "jacrev(jacrev)": lambda func: func.jacrev(func.jacrev(vector_fn)),
    "jacrev(jacfwd)": lambda func: func.jacrev(func.jacfwd(vector_fn)),
    "jacfwd(jacrev)": lambda func: func.jacfwd(func.jacrev(vector_fn)),
    "jacfwd(jacfwd(jacfwd))": lambda func: func.jacfwd(func.jacfwd(func.jacfwd(scalar_fn))),
    "jacrev(jacfwd(jacrev))": lambda func: func.jacrev(func.jacfwd(func.jacrev(scalar_fn))),
    "grad(grad)": lambda func: lambda a: func.vmap(func.grad(func.grad(lambda t: t.sin() * t.exp())))(a),
    "grad of vmap": lambda func: func.grad(lambda a: func.vmap(vector_fn)(a.expand(2, 4)).sum()),
    "jvp of jvp": lambda func: (
        lambda a: func.jvp(lambda b: func.jvp(vector_fn, (b,), (b.cos(),))[1], (a,), (a * 0 + 1,))[1]
    ),
    "jvp of grad": lambda func: lambda a: func.jvp(func.grad(scalar_fn), (a,), (a.cos(),))[1],
    "vjp of jvp": lambda func: (
        lambda a: func.vjp(lambda b: func.jvp(vector_fn, (b,), (b.cos(),))[1], a)[1](a.sin())[0]
    ),
}


@pytest.mark.parametrize("name", list(COMPOSITIONS))
def test_composed_transforms_give_torchs_results(torch, name):
    ours = COMPOSITIONS[name](engine.func)(engine.tensor(X))
    theirs = COMPOSITIONS[name](torch.func)(torch.tensor(X))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert not ours.requires_grad
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_jacfwd_of_jacfwd_is_the_hessian_by_finite_differences():
    x, eps = engine.tensor(X), 1e-6
    hess = engine.func.jacfwd(engine.func.jacfwd(scalar_fn))(x).numpy()
    grad = engine.func.grad(scalar_fn)
    by_differences = np.stack(
        [
            (grad(engine.tensor(X + eps * e)).numpy() - grad(engine.tensor(X - eps * e)).numpy()) / (2 * eps)
            for e in np.eye(4)
        ],
        axis=1,
    )
    np.testing.assert_allclose(hess, by_differences, rtol=1e-6, atol=1e-8)


def _through_vmap(lib, closure: bool):
    w = lib.tensor(W, requires_grad=True)
    xs = lib.tensor(XS, requires_grad=True)
    out = lib.func.vmap(lambda a: (w * a).sin().sum() if closure else a.sin() * a.sum())(xs)
    (out * lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
    return out, w.grad, xs.grad


@pytest.mark.parametrize("closure", [True, False], ids=["closed-over weight", "batched input"])
def test_backward_through_vmap_reaches_inputs_and_closed_over_tensors(torch, closure):
    ours, theirs = _through_vmap(engine, closure), _through_vmap(torch, closure)
    assert ours[0].requires_grad
    for a, b in zip(ours, theirs):
        if b is None:
            assert a is None
            continue
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_vmap_without_grad_keeps_outputs_free_of_graph():
    with engine.no_grad():
        out = vmap(engine.sin)(engine.tensor(XS, requires_grad=True))
    assert not out.requires_grad


def _scaled(randomness: str):
    xs = engine.ones(5, 3, requires_grad=True)
    return vmap(lambda a: a * engine.rand(()), randomness=randomness)(xs)


def test_randomness_holds_while_differentiating_through_vmap():
    engine.manual_seed(0)
    same = _scaled("same").detach().numpy()
    assert np.unique(same).size == 1
    different = _scaled("different").detach().numpy()
    assert np.unique(different[:, 0]).size == 5
    with pytest.raises(RuntimeError, match="^vmap: called random operation while in randomness error mode"):
        _scaled("error")
