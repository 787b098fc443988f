"""One code path for every device: forward, first and second derivatives of each sample on 'cuda' equal the
CPU's. On the CuPy stand-in (tests/fake_cupy.py: numpy underneath, refusing numpy-only paths) this shows
every kernel and formula reaches its arrays through the array-module dispatch; on a GPU, that CUDA computes
what the CPU does. Without a GPU the CUDA test is one skip."""

import fake_cupy
import numpy as np
import pytest
from opcheck import make_arrays

import engine
from ops.checks import first_float, tensors
from ops.registry import cases

ON_CUDA = (
    cases("device_parity")
    if engine.cuda.is_available()
    else [pytest.param(None, id="no-cuda", marks=pytest.mark.skip(reason="CUDA not available"))]
)


def _run(sample, arrays, device):
    """The sample's output, its gradients (a fixed v) and the gradients of <gradients, w>, on `device`."""
    inputs = tensors(engine, arrays, device)
    out = first_float(sample.call(engine, *inputs))
    found = [out]
    diff = [t for t in inputs if t.requires_grad]
    if not (sample.grad and diff and out.requires_grad):
        return inputs, found
    rng = np.random.default_rng(0)
    v = engine.tensor(rng.standard_normal(tuple(out.shape)), device=device)
    grads = engine.autograd.grad(out, diff, v, allow_unused=True, create_graph=True)
    found += grads
    terms = [
        (g * engine.tensor(rng.standard_normal(tuple(g.shape)), device=device)).sum()
        for g in grads
        if g is not None and g.requires_grad
    ]
    if terms:
        found += engine.autograd.grad(sum(terms), diff, allow_unused=True)
    return inputs, found


def _compare(sample, rtol, atol, on_device):
    arrays = make_arrays(sample.kinds)
    default = engine.get_default_device()
    engine.set_default_device("cpu")  # the constants a sample makes (indices, masks) go where its inputs are
    try:
        _, expected = _run(sample, arrays, "cpu")
        engine.set_default_device("cuda")
        inputs, got = _run(sample, arrays, "cuda")
    finally:
        engine.set_default_device(default)
    assert all(on_device(t) for t in inputs) and len(got) == len(expected)
    for g, e in zip(got, expected):
        assert (g is None) == (e is None)
        if e is not None:
            assert on_device(g)
            np.testing.assert_allclose(g.detach().cpu().numpy(), e.detach().numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("sample", cases("device_parity"))
def test_device_parity(fake_cuda, sample):
    _compare(
        sample, 1e-12, 1e-14, lambda t: t.device.type == "cuda" and isinstance(t._data, fake_cupy.ndarray)
    )


@pytest.mark.parametrize("sample", ON_CUDA)
def test_device_parity_on_cuda(engine_numpy, sample):
    """A GPU's transcendental functions round differently from numpy's: equal to a few units in the last place."""
    _compare(sample, 1e-9, 1e-12, lambda t: t.device.type == "cuda")
