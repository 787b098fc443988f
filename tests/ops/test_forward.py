"""Forward: each sample's values against its numpy reference, and its output's node name."""

import numpy as np
import pytest
from opcheck import make_arrays

import engine
from ops.checks import first_float, tensors
from ops.opinfo import NUMPY
from ops.registry import cases


@pytest.mark.parametrize("sample", cases("forward"))
def test_forward(sample):
    arrays = make_arrays(sample.kinds)
    out = first_float(sample.call(engine, *tensors(engine, arrays)))
    if sample.node is not None:
        assert out.grad_fn.name() == sample.node
    if sample.ref is not None:
        ref = (lambda *xs: sample.call(np, *xs)) if sample.ref == NUMPY else sample.ref
        expected = np.asarray(ref(*[a.copy() for a in arrays]))
        assert out.dtype == engine.float64
        assert tuple(out.shape) == expected.shape
        rtol, atol = sample.ref_tol
        np.testing.assert_allclose(out.detach().numpy(), expected, rtol=rtol, atol=atol)
