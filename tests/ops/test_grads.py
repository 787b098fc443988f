"""First derivatives: autograd's vector-Jacobian products against central finite differences."""

import pytest
from numgrad import check_grad
from opcheck import make_arrays

import engine
from ops.checks import differentiated, tensors
from ops.registry import cases


@pytest.mark.parametrize("sample", cases("grads"))
def test_grads(sample):
    f, inputs = differentiated(sample, tensors(engine, make_arrays(sample.kinds)))
    check_grad(f, *inputs)
