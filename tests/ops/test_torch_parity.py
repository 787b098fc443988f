"""torch 2.13 on the same inputs: the same values, dtypes, shapes and node names, the same gradients of a
random projection of the output (tests/opcheck.py's compare_with_torch), the same graph behind the output,
node by node; with a float32 first operand the same promotion, and in float32 the same results to float32's
precision."""

import importlib

import numpy as np
import pytest
from opcheck import compare_with_torch, make_arrays, match_torch

import engine
from ops.checks import first_float, graph, tensors
from ops.registry import cases

pytestmark = pytest.mark.torch_parity


@pytest.mark.parametrize("sample", cases("torch_parity"))
def test_torch_parity(sample):
    rtol, atol = sample.torch_tol
    compare_with_torch(sample.call, make_arrays(sample.kinds), rtol=rtol, atol=atol, grad=sample.grad)


@pytest.mark.parametrize("sample", cases("torch_parity_graph"))
def test_torch_parity_graph(sample):
    """Every node behind the output, depth first, has torch's name."""
    torch = importlib.import_module("torch")
    arrays = make_arrays(sample.kinds)
    ours = first_float(sample.call(engine, *tensors(engine, arrays)))
    theirs = first_float(sample.call(torch, *tensors(torch, arrays)))
    assert graph(ours) == graph(theirs)


@pytest.mark.parametrize("sample", cases("torch_parity_float32"))
def test_torch_parity_float32_meets_float64(sample):
    """The first tensor in float32: promoted as torch promotes it (or refused, as lerp is), its gradient
    cast back to float32."""
    arrays = make_arrays(sample.kinds, seed=3)

    def call(lib):
        xs = [
            lib.tensor(a, dtype=lib.float32 if i == 0 else lib.float64, requires_grad=True)
            for i, a in enumerate(arrays)
        ]
        out = sample.call(lib, *xs)
        grads = lib.autograd.grad(out.sum(), xs, allow_unused=True)
        return [out] + [g for g in grads if g is not None]

    match_torch(call, rtol=2e-6)  # float32 gradients summed into a float64 one: float32's precision


@pytest.mark.parametrize("sample", cases("torch_parity_in_float32"))
def test_torch_parity_in_float32(sample):
    """Every input in float32: a float32 output and float32 gradients, torch's to float32's precision."""
    torch = importlib.import_module("torch")
    arrays = [a.astype(np.float32) if a.dtype.kind == "f" else a for a in make_arrays(sample.kinds)]
    results = []
    for lib in (engine, torch):
        inputs = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        out = first_float(sample.call(lib, *inputs))
        out.sum().backward()
        assert out.dtype == lib.float32
        assert all(t.grad.dtype == lib.float32 for t in inputs if t.grad is not None)
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in inputs if t.grad is not None])
    assert len(results[0]) == len(results[1])
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5, atol=1e-5)
    for e, t in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-5)
