"""engine.nn.functional: what finite differences cannot see (running statistics, dropout's masks, indices,
gradients changed on purpose), in float64 unless a test says otherwise.

Values, first and second derivatives of every function are the registry's (tests/ops/nn.py). The
module under test is ENGINE_MODULE ("engine" by default); ENGINE_MODULE=torch runs the same
expectations against real PyTorch.
"""

import os

import numpy as np
import pytest

torch = pytest.importorskip(os.environ.get("ENGINE_MODULE", "engine"))
F = torch.nn.functional
IDX = np.array([[1, 2], [4, 1]])


def T(a, dtype=None):
    return torch.tensor(np.asarray(a), dtype=dtype)


# ---- what finite differences cannot see


def test_batch_norm_updates_running_stats():
    x = T(np.random.RandomState(0).standard_normal((5, 3, 2)))
    mean, var = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    F.batch_norm(x, mean, var, training=True, momentum=0.25)
    a = x.numpy()
    np.testing.assert_allclose(mean.numpy(), 0.25 * a.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(var.numpy(), 0.75 + 0.25 * a.var(axis=(0, 2), ddof=1), rtol=1e-12)
    assert mean._version == 0 and var._version == 0  # ATen writes them without a version bump


def test_dropout_masks_and_scales():
    torch.manual_seed(0)
    x = torch.ones(400, 50, dtype=torch.float64, requires_grad=True)
    y = F.dropout(x, 0.3)
    values = np.unique(y.detach().numpy())
    np.testing.assert_allclose(values, [0.0, 1 / 0.7])
    assert abs((y.detach().numpy() == 0).mean() - 0.3) < 0.02
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
    assert F.dropout(x, 0.3, training=False) is x and F.dropout(x, 0.0) is x
    assert (F.dropout(x, 1.0).detach().numpy() == 0).all()


def test_max_pool2d_return_indices():
    x = T(np.arange(16.0).reshape(1, 1, 4, 4))
    out, indices = F.max_pool2d(x, 2, return_indices=True)
    np.testing.assert_array_equal(indices.numpy(), [[[[5, 7], [13, 15]]]])
    assert indices.dtype == torch.int64
    np.testing.assert_array_equal(out.numpy(), [[[[5.0, 7.0], [13.0, 15.0]]]])


def test_embedding_padding_row_gets_no_grad():
    w = T(np.random.RandomState(1).standard_normal((5, 2))).requires_grad_()
    F.embedding(T(np.array([0, 2, 2, 4])), w, padding_idx=2).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[1, 1], [0, 0], [0, 0], [0, 0], [1, 1]])


def test_embedding_scale_grad_by_freq():
    """padding_idx and scale_grad_by_freq change the gradient on purpose: no finite differences here."""
    w = T(np.random.RandomState(1).standard_normal((6, 3))).requires_grad_()
    F.embedding(T(IDX), w, padding_idx=2, scale_grad_by_freq=True).sum().backward()
    expected = np.zeros((6, 3))
    expected[1] = 1.0  # used twice, scaled by 1/2
    expected[4] = 1.0
    np.testing.assert_array_equal(w.grad.numpy(), expected)


def test_float32_stays_float32():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(5, requires_grad=True)
    loss = F.cross_entropy(F.linear(x, w, b), torch.tensor([0, 1, 4, 2]))
    loss.backward()
    assert loss.dtype == torch.float32
    assert w.grad.dtype == x.grad.dtype == b.grad.dtype == torch.float32
    c = F.conv2d(torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3, requires_grad=True), padding=1)
    assert c.dtype == torch.float32
