"""vmap over forward AD: a batch of tangents (or of primals and tangents) propagates through each
op's batching rule. torch 2.13's torch.func.vmap refuses make_dual; its prototype vmap (what
gradcheck's check_batched_forward_grad maps with) takes it, and is the reference here."""

from __future__ import annotations

import numpy as np
import pytest

import engine

RNG = np.random.default_rng(3)
X = RNG.standard_normal(3)
XS = RNG.standard_normal((4, 3))
TS = RNG.standard_normal((4, 3))
M = RNG.standard_normal((3, 3))


@pytest.fixture(params=["engine", pytest.param("torch", marks=pytest.mark.torch_parity)])
def lib(request):
    return engine if request.param == "engine" else pytest.importorskip("torch")


def vmap(lib, func, in_dims=0):
    if lib is engine:
        return engine.func.vmap(func, in_dims)
    return lib._vmap_internals._vmap(func, in_dims)


def values(t) -> np.ndarray:
    return np.asarray(t.detach().tolist())


def jvp_of(lib, func):
    fwAD = lib.autograd.forward_ad

    def jvp(primal, tangent):
        with fwAD.dual_level():
            out = func(fwAD.make_dual(primal, tangent))
            return fwAD.unpack_dual(out).tangent

    return jvp


def f(lib):
    m = lib.tensor(M, dtype=lib.float64)
    return lambda x: (m @ x.sin() * x).softmax(0)


def test_a_batch_of_tangents_gives_each_its_jvp(lib):
    x, ts = lib.tensor(X, dtype=lib.float64), lib.tensor(TS, dtype=lib.float64)
    jvp = jvp_of(lib, f(lib))
    batched = vmap(lib, jvp, in_dims=(None, 0))(x, ts)
    one_by_one = np.stack([values(jvp(x, t)) for t in ts])
    np.testing.assert_allclose(values(batched), one_by_one, rtol=1e-12)


def test_batched_primals_and_tangents_together():
    """(torch's prototype vmap has no rule for a batched primal's alias; torch.func.vmap none for make_dual)"""
    lib = engine
    xs, ts = lib.tensor(XS, dtype=lib.float64), lib.tensor(TS, dtype=lib.float64)
    jvp = jvp_of(lib, f(lib))
    batched = vmap(lib, jvp)(xs, ts)
    one_by_one = np.stack([values(jvp(x, t)) for x, t in zip(xs, ts)])
    np.testing.assert_allclose(values(batched), one_by_one, rtol=1e-12)
