"""The batching rules per family, through the functions users call: vmap equals a loop of the function
over the examples, per-sample gradients (vmap of grad) equal a loop of grad, and torch.func agrees."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.func import grad, vmap

RNG = np.random.default_rng(7)
BATCH = 4


def _x(*shape):
    return RNG.standard_normal((BATCH, *shape))


SHARED_TARGET = np.array([0, 2, 1])
SHARED_INDEX = np.array([[0, 2], [1, 0], [2, 2]])
SPD = (lambda a: a @ a.transpose(0, 2, 1) + 3 * np.eye(3))(_x(3, 3))


def _lib_tensor(lib, array):
    return lib.tensor(array)


# name -> (f(lib, x), examples stacked): each f maps one example to a tensor, as a user writes it
CASES = {
    # losses
    "mse_loss": (lambda lib, x: lib.nn.functional.mse_loss(x, x.sin()), _x(3, 5)),
    "smooth_l1_loss": (lambda lib, x: lib.nn.functional.smooth_l1_loss(x, x.cos() * 2, beta=0.5), _x(3, 5)),
    "huber_loss": (lambda lib, x: lib.nn.functional.huber_loss(x, x.cos() * 2, delta=0.7), _x(3, 5)),
    "bce_with_logits": (
        lambda lib, x: lib.nn.functional.binary_cross_entropy_with_logits(x, x.cos().sigmoid()),
        _x(3, 5),
    ),
    "soft_margin_loss": (lambda lib, x: lib.nn.functional.soft_margin_loss(x, x.detach().sign()), _x(3, 5)),
    "nll_loss": (
        lambda lib, x: lib.nn.functional.nll_loss(x.log_softmax(1), _lib_tensor(lib, SHARED_TARGET)),
        _x(3, 4),
    ),
    "cross_entropy_sum": (
        lambda lib, x: lib.nn.functional.cross_entropy(x, _lib_tensor(lib, SHARED_TARGET), reduction="sum"),
        _x(3, 4),
    ),
    "mse_loss_none": (lambda lib, x: lib.nn.functional.mse_loss(x, x.exp(), reduction="none"), _x(3, 2)),
    # indexing, gather, scatter
    "gather": (lambda lib, x: x.gather(1, _lib_tensor(lib, SHARED_INDEX)), _x(3, 4)),
    "index_select": (lambda lib, x: x.index_select(1, _lib_tensor(lib, SHARED_TARGET)), _x(3, 4)),
    "advanced_index": (lambda lib, x: x[_lib_tensor(lib, SHARED_TARGET), 1:], _x(3, 4)),
    "take": (lambda lib, x: x.take(_lib_tensor(lib, SHARED_INDEX)), _x(3, 4)),
    "scatter_add": (lambda lib, x: x.scatter_add(1, _lib_tensor(lib, SHARED_INDEX), x[:, :2] * 3), _x(3, 4)),
    "scatter": (lambda lib, x: x.scatter(1, _lib_tensor(lib, SHARED_INDEX[:, :1]), x[:, 2:3] * 3), _x(3, 4)),
    "index_add": (lambda lib, x: x.index_add(0, _lib_tensor(lib, SHARED_TARGET[:2]), x[:2].exp()), _x(3, 4)),
    # cumulative and whole-tensor reductions
    "logcumsumexp": (lambda lib, x: lib.logcumsumexp(x, 1), _x(3, 4)),
    "max_all": (lambda lib, x: x.max() * x, _x(3, 4)),
    "prod_all": (lambda lib, x: x.prod(), _x(2, 3)),
    "nansum": (lambda lib, x: lib.nansum(x, 1), _x(3, 4)),
    # shapes
    "diagonal": (lambda lib, x: x.diagonal(1), _x(3, 4)),
    "trace": (lambda lib, x: x.trace(), _x(3, 4)),
    "diag_embed": (lambda lib, x: lib.diag_embed(x, 1), _x(3)),
    "unfold": (lambda lib, x: x.unfold(1, 2, 1), _x(3, 4)),
    "repeat": (lambda lib, x: x.repeat(2, 1, 2), _x(3, 4)),
    # pads, pooling, upsampling
    "constant_pad": (lambda lib, x: lib.nn.functional.pad(x, (1, 2), value=0.5), _x(2, 3)),
    "reflection_pad": (lambda lib, x: lib.nn.functional.pad(x, (2, 1), mode="reflect"), _x(2, 4)),
    "replication_pad": (lambda lib, x: lib.nn.functional.pad(x, (1, 1, 2, 0), mode="replicate"), _x(1, 3, 3)),
    "adaptive_avg_pool2d": (lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, 2), _x(2, 5, 4)),
    "upsample_bilinear": (
        lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"),
        _x(1, 1, 2, 3),
    ),
    "upsample_nearest": (lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2), _x(1, 2, 3)),
    "glu": (lambda lib, x: lib.nn.functional.glu(x, 1), _x(3, 4)),
    # linalg
    "det": (lambda lib, x: lib.linalg.det(x), _x(3, 3)),
    "inv": (lambda lib, x: lib.linalg.inv(x), _x(3, 3)),
    "solve": (lambda lib, x: lib.linalg.solve(x, x[:, 0]), _x(3, 3)),
    "slogdet": (lambda lib, x: lib.linalg.slogdet(x)[1], _x(3, 3)),
    "cholesky": (lambda lib, x: lib.linalg.cholesky(x), SPD),
    "eigvalsh": (lambda lib, x: lib.linalg.eigvalsh(x), SPD),
    "svdvals": (lambda lib, x: lib.linalg.svdvals(x), _x(3, 2)),
    "cross": (lambda lib, x: lib.linalg.cross(x, x.flip(0)), _x(2, 3)),
    "cdist": (lambda lib, x: lib.cdist(x, x * 2), _x(3, 2)),
}

#: cases whose backward formula branches on or computes with raw values (prod's zeros, det's singular
#: matrices, soft_margin's target): their per-sample gradients are refused (docs/engine.md), never wrong
GRAD_READS_VALUES = {"soft_margin_loss", "prod_all", "det"}

#: one case per family for the comparison with torch.func.vmap
TORCH_SAMPLES = [
    "nll_loss",
    "huber_loss",
    "gather",
    "scatter_add",
    "logcumsumexp",
    "trace",
    "reflection_pad",
    "adaptive_avg_pool2d",
    "solve",
    "cholesky",
]


def _loop(f, xs) -> np.ndarray:
    return np.stack([f(engine.tensor(x)).detach().numpy() for x in xs])


@pytest.mark.parametrize("name", CASES)
def test_vmap_equals_a_loop_of_the_function(name):
    f, xs = CASES[name]
    out = vmap(lambda x: f(engine, x))(engine.tensor(xs))
    np.testing.assert_allclose(out.numpy(), _loop(lambda x: f(engine, x), xs), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", [name for name in CASES if name not in GRAD_READS_VALUES])
def test_per_sample_gradients_equal_a_loop_of_grad(name):
    f, xs = CASES[name]

    def scalar(x):
        return (f(engine, x) * f(engine, x).detach().cos()).sum()

    out = vmap(grad(scalar))(engine.tensor(xs))
    np.testing.assert_allclose(out.numpy(), _loop(grad(scalar), xs), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", TORCH_SAMPLES)
def test_vmap_matches_torch_func_vmap(torch, name):
    f, xs = CASES[name]
    ours = vmap(grad(lambda x: f(engine, x).sum()))(engine.tensor(xs))
    theirs = torch.func.vmap(torch.func.grad(lambda x: f(torch, x).sum()))(torch.tensor(xs))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-11)
    values = vmap(lambda x: f(engine, x))(engine.tensor(xs))
    np.testing.assert_allclose(
        values.numpy(),
        torch.func.vmap(lambda x: f(torch, x))(torch.tensor(xs)).numpy(),
        rtol=1e-10,
        atol=1e-12,
    )


@pytest.mark.parametrize("batched", [(True, True), (False, True)])
def test_outer_products_under_vmap_equal_a_loop(batched):
    """mm with an inner dim of 1 (a per-sample weight gradient) runs as a broadcast product."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 4, 1) if batched[0] else (4, 1))
    b = rng.standard_normal((5, 1, 3))
    in_dims = (0 if batched[0] else None, 0)
    got = vmap(engine.mm, in_dims=in_dims)(engine.tensor(a), engine.tensor(b)).numpy()
    expected = np.stack([(a[i] if batched[0] else a) @ b[i] for i in range(5)])
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    "cut",
    [
        lambda c: c.split([1, 2], dim=-1)[1].reshape(2),
        lambda c: c.split(2)[0] * 2,
        lambda c: c.chunk(3)[2],
        lambda c: c.unbind(0)[1],
        lambda c: c.tensor_split(2)[1],
    ],
)
def test_pieces_of_a_batched_tensor_keep_the_batch(cut):
    """split/chunk/unbind inside vmap cut each example, never the first example for every row."""
    xs = np.arange(12.0).reshape(4, 3)
    got = vmap(cut)(engine.tensor(xs)).numpy()
    np.testing.assert_array_equal(got, np.stack([cut(engine.tensor(row)).numpy() for row in xs]))


def test_per_sample_gradients_through_split():
    w = engine.randn(2, dtype=engine.float64)
    xs = engine.randn(5, 3, dtype=engine.float64)
    loss = lambda p, x: (x.split([1, 2])[1] * p).sum()  # noqa: E731
    got = vmap(grad(loss), in_dims=(None, 0))(w, xs)
    np.testing.assert_allclose(got.numpy(), xs.numpy()[:, 1:])
