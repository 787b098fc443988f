"""Second derivatives (gradgradcheck): the create_graph gradient differentiated again, against finite
differences of the first. The squared form, out * out, has a non-zero second derivative even where the op
is linear, so the op's backward must itself be differentiable."""

import pytest
from numgrad import check_gradgrad
from opcheck import make_arrays

import engine
from ops.checks import differentiated, tensors
from ops.registry import cases


@pytest.mark.parametrize("sample", cases("double_backward"))
def test_double_backward(sample):
    f, inputs = differentiated(sample, tensors(engine, make_arrays(sample.kinds)))
    check_gradgrad(f, *inputs)


@pytest.mark.parametrize("sample", cases("double_backward_squared"))
def test_double_backward_squared(sample):
    f, inputs = differentiated(sample, tensors(engine, make_arrays(sample.kinds)), squared=True)
    check_gradgrad(f, *inputs)
