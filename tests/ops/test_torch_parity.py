"""torch 2.13 on the same float64 inputs: the same values, dtypes, shapes and node names, and the same
gradients of a random projection of the output (tests/opcheck.py's compare_with_torch)."""

import pytest
from opcheck import compare_with_torch, make_arrays, match_torch

from ops.registry import cases

pytestmark = pytest.mark.torch_parity


@pytest.mark.parametrize("sample", cases("torch_parity"))
def test_torch_parity(sample):
    rtol, atol = sample.torch_tol
    compare_with_torch(sample.call, make_arrays(sample.kinds), rtol=rtol, atol=atol, grad=sample.grad)


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
