"""Forward AD over the registry: each op's tangent (J v) against central finite differences along v,
against its backward (u·(J v) == (Jᵀu)·v), and against torch 2.13's forward AD."""

import importlib

import numpy as np
import pytest
from opcheck import make_arrays

import engine
from ops.checks import first_float, tensors
from ops.registry import cases

EPS = 1e-6


def _directions(inputs, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(t.shape)) if t.requires_grad else None for t in inputs]


def _jvp(lib, sample, inputs, directions):
    """The output and its tangent, each input carrying its direction as its tangent."""
    fwAD = lib.autograd.forward_ad
    with fwAD.dual_level():
        duals = [
            t if v is None else fwAD.make_dual(t, lib.tensor(v, dtype=t.dtype))
            for t, v in zip(inputs, directions)
        ]
        out = first_float(sample.call(lib, *duals))
        primal, tangent = fwAD.unpack_dual(out)
        return primal, tangent


def _flat(t):
    return np.asarray(t.detach().clone().numpy(), dtype=np.float64).reshape(
        -1
    )  # clone: torch may give a ZeroTensor


@pytest.mark.parametrize("sample", cases("forward_ad"))
def test_jvp_finite_differences(sample):
    inputs = tensors(engine, make_arrays(sample.kinds))
    directions = _directions(inputs)
    _, tangent = _jvp(engine, sample, inputs, directions)

    def shifted(step):
        moved = [
            t if v is None else engine.tensor(t.detach().numpy() + step * v)
            for t, v in zip(inputs, directions)
        ]
        with engine.no_grad():
            return _flat(first_float(sample.call(engine, *moved)))

    expected = (shifted(EPS) - shifted(-EPS)) / (2 * EPS)
    assert tangent is not None
    np.testing.assert_allclose(_flat(tangent), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("sample", cases("forward_ad"))
def test_jvp_matches_vjp(sample):
    inputs = tensors(engine, make_arrays(sample.kinds))
    directions = _directions(inputs)
    primal, tangent = _jvp(engine, sample, inputs, directions)
    out = first_float(sample.call(engine, *inputs))
    u = np.random.default_rng(1).standard_normal(tuple(out.shape))
    wanted = [t for t in inputs if t.requires_grad]
    grads = engine.autograd.grad(out, wanted, engine.tensor(u), allow_unused=True, materialize_grads=True)
    backward = sum(
        float((_flat(g) * v.reshape(-1)).sum())
        for g, v in zip(grads, (d for d in directions if d is not None))
    )
    forward = float((_flat(tangent) * u.reshape(-1)).sum())
    np.testing.assert_allclose(forward, backward, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(_flat(primal), _flat(out))


@pytest.mark.torch_parity
@pytest.mark.parametrize("sample", cases("forward_ad_torch"))
def test_jvp_torch_parity(sample):
    torch = importlib.import_module("torch")
    arrays = make_arrays(sample.kinds)
    ours = tensors(engine, arrays)
    theirs = tensors(torch, arrays)
    directions = _directions(ours)
    _, expected = _jvp(torch, sample, theirs, directions)
    _, tangent = _jvp(engine, sample, ours, directions)
    rtol, atol = sample.torch_tol
    np.testing.assert_allclose(_flat(tangent), _flat(expected), rtol=max(rtol, 1e-7), atol=max(atol, 1e-9))


def _gradients(sample, inputs, u, shift=0.0, directions=None):
    """Jᵀu at the inputs (moved by `shift` along the directions), through a create_graph backward."""
    moved = [
        t if v is None or not shift else engine.tensor(t.detach().numpy() + shift * v, requires_grad=True)
        for t, v in zip(inputs, directions or [None] * len(inputs))
    ]
    wanted = [t for t in moved if t.requires_grad]
    out = first_float(sample.call(engine, *moved))
    return engine.autograd.grad(
        out, wanted, engine.tensor(u), allow_unused=True, materialize_grads=True, create_graph=True
    )


@pytest.mark.parametrize("sample", cases("double_backward"))
def test_forward_over_reverse(sample):
    """The gradient's tangent (a backward recorded under forward AD, saved outputs with their
    tangents) against central differences of the gradient along the inputs' directions."""
    inputs = tensors(engine, make_arrays(sample.kinds))
    directions = _directions(inputs)
    out = first_float(sample.call(engine, *inputs))
    u = np.random.default_rng(1).standard_normal(tuple(out.shape))
    fwAD = engine.autograd.forward_ad
    with fwAD.dual_level():
        duals = [
            t if v is None else fwAD.make_dual(t, engine.tensor(v, dtype=t.dtype))
            for t, v in zip(inputs, directions)
        ]
        tangents = [fwAD.unpack_dual(g).tangent for g in _gradients(sample, duals, u)]
    ahead = _gradients(sample, inputs, u, EPS, directions)
    behind = _gradients(sample, inputs, u, -EPS, directions)
    for tangent, a, b in zip(tangents, ahead, behind):
        expected = (_flat(a) - _flat(b)) / (2 * EPS)
        got = np.zeros_like(expected) if tangent is None else _flat(tangent)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
