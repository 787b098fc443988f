"""The public names an op gets from `api.public`: engine.<name>, Tensor.<name>, Tensor.<name>_."""

import numpy as np
import pytest
from numgrad import check_grad, check_gradgrad

import engine
from engine.ops import api
from engine.ops.pointwise import core as functions

UNARY_IN_PLACE = sorted(api.IN_PLACE)


def test_engine_exports_every_public_function():
    assert set(functions.__all__) <= set(api.FUNCTIONS)
    for name in api.FUNCTIONS:
        assert getattr(engine, name) is api.FUNCTIONS[name], name


def test_tensor_has_every_public_method():
    for name, fn in api.METHODS.items():
        assert getattr(engine.Tensor, name) is fn, name


@pytest.mark.parametrize("name", UNARY_IN_PLACE)
def test_unary_in_place_matches_the_op_and_differentiates(name):
    base = name[:-1]
    # inside every domain: log, sqrt (> 0), asin, atanh, erfinv (< 1), acosh (> 1)
    low, high = (1.2, 2.0) if base in ("acosh", "arccosh") else (0.2, 0.9)
    data = np.random.RandomState(0).uniform(low, high, (3, 4))
    x = engine.tensor(data, requires_grad=True)
    y = x * 1.0
    before = y._version
    out = getattr(y, name)()
    assert out is y and y._version == before + 1
    np.testing.assert_allclose(y.detach().numpy(), getattr(engine, base)(x).detach().numpy())
    assert y.grad_fn.name() == getattr(engine, base)(x).grad_fn.name()

    def f(a):
        return getattr(a * 1.0, name)()

    check_grad(f, x)
    check_gradgrad(f, x)


@pytest.mark.parametrize("name", UNARY_IN_PLACE)
def test_unary_in_place_on_a_leaf_that_requires_grad_is_refused(name):
    x = engine.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        getattr(x, name)()


def test_public_names_exist_in_torch(torch):
    missing_functions = [n for n in api.FUNCTIONS if not hasattr(torch, n)]
    public_methods = [n for n in api.METHODS if not n.startswith("_")]  # _im2col ...: for TensorMath
    missing_methods = [n for n in public_methods + UNARY_IN_PLACE if not hasattr(torch.Tensor, n)]
    assert missing_functions == [] and missing_methods == []
