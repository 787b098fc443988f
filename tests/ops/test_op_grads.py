"""What finite differences cannot show of max, min and where: indices, ties, the condition.

Values, first and second derivatives of every op are the registry's (tests/ops/). The module under
test is ENGINE_MODULE ("engine" by default); run with ENGINE_MODULE=torch to validate these
expectations against real PyTorch.
"""

import os

import numpy as np
import pytest

torch = pytest.importorskip(os.environ.get("ENGINE_MODULE", "engine"))


def make_array(domain, shape, rng):
    n = int(np.prod(shape, dtype=int))
    if domain == "r":
        a = rng.uniform(-1.5, 1.5, n)
    elif domain == "p":
        a = rng.uniform(0.5, 2.0, n)
    else:  # "d": half-integers * 0.3 plus small noise: |x| in [0.11, 0.19] u [0.41, 0.49] u ...
        a = (rng.permutation(n) - n / 2 + 0.5) * 0.3 + rng.uniform(-0.04, 0.04, n)
        a[a == 0] = 0.15
    return a.reshape(shape)


def make_inputs(kinds, seed=0):
    rng = np.random.RandomState(seed)
    arrays = [make_array(domain, shape, rng) for domain, shape in kinds]
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    return arrays, tensors


R34, D34 = ("r", (3, 4)), ("d", (3, 4))


# ---- ops with more than one output / non-float outputs


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim_indices(op, dim, keepdim):
    (a,), (x,) = make_inputs([D34])
    values, indices = getattr(x, op)(dim, keepdim=keepdim)
    res = getattr(x, op)(dim=dim, keepdim=keepdim)
    arg = np.argmax if op == "max" else np.argmin
    exp_idx = arg(a, axis=dim)
    exp_val = getattr(np, op)(a, axis=dim)
    if keepdim:
        exp_idx, exp_val = np.expand_dims(exp_idx, dim), np.expand_dims(exp_val, dim)
    assert indices.dtype == torch.int64
    assert not indices.requires_grad and values.requires_grad
    np.testing.assert_array_equal(indices.numpy(), exp_idx)
    np.testing.assert_array_equal(res.indices.numpy(), exp_idx)
    np.testing.assert_allclose(values.detach().numpy(), exp_val)
    np.testing.assert_allclose(res.values.detach().numpy(), exp_val)
    # only the selected positions receive gradient
    values.sum().backward()
    expected_grad = np.zeros_like(a)
    np.put_along_axis(expected_grad, np.expand_dims(arg(a, axis=dim), dim), 1.0, axis=dim)
    np.testing.assert_array_equal(x.grad.numpy(), expected_grad)


def test_max_full_ties_grad_split_evenly():
    x = torch.tensor([1.0, 3.0, 3.0, 2.0], dtype=torch.float64, requires_grad=True)
    x.max().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.5, 0.5, 0.0])


def test_where_condition_has_no_grad():
    (a, b), (x, y) = make_inputs([R34, R34])
    out = torch.where(x > y, x, y)
    np.testing.assert_allclose(out.detach().numpy(), np.maximum(a, b))
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), (a > b).astype(np.float64))
    np.testing.assert_array_equal(y.grad.numpy(), (a <= b).astype(np.float64))
