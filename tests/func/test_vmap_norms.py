"""batch_norm, layer_norm and group_norm inside vmap: each example's own statistics (composed of batched
rows), per-sample gradients through them, running statistics as torch.func.vmap updates or refuses them."""

from __future__ import annotations

import numpy as np
import pytest

import engine

RNG = np.random.default_rng(3)
X = RNG.standard_normal((3, 4, 6, 5))
W6, B6, W5 = RNG.standard_normal(6), RNG.standard_normal(6), RNG.standard_normal(5)

NORMS = {
    "layer_norm": lambda lib, a: lib.nn.functional.layer_norm(a, (5,), lib.tensor(W5), lib.tensor(W5) * 2),
    "layer_norm of two dims": lambda lib, a: lib.nn.functional.layer_norm(a, (6, 5)),
    "group_norm": lambda lib, a: lib.nn.functional.group_norm(a, 2, lib.tensor(W6), lib.tensor(B6)),
    "batch_norm training": lambda lib, a: lib.nn.functional.batch_norm(
        a, None, None, lib.tensor(W6), lib.tensor(B6), training=True
    ),
    "batch_norm eval": lambda lib, a: lib.nn.functional.batch_norm(
        a, lib.tensor(B6) * 0.1, lib.tensor(W6).abs(), lib.tensor(W6), None, training=False
    ),
}


def _values_and_grads(lib, name):
    f = lambda a: NORMS[name](lib, a) * a.cos()  # noqa: E731
    values = lib.func.vmap(f)(lib.tensor(X))
    grads = lib.func.vmap(lib.func.grad(lambda a: f(a).sum()))(lib.tensor(X))
    return values.detach().numpy(), grads.numpy()


@pytest.mark.parametrize("name", NORMS)
def test_norms_inside_vmap_match_torch_func(torch, name):
    for ours, theirs in zip(_values_and_grads(engine, name), _values_and_grads(torch, name)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", NORMS)
def test_norms_inside_vmap_equal_a_loop(name):
    values = engine.func.vmap(lambda a: NORMS[name](engine, a))(engine.tensor(X))
    loop = np.stack([NORMS[name](engine, engine.tensor(x)).numpy() for x in X])
    np.testing.assert_allclose(values.numpy(), loop, rtol=1e-10, atol=1e-12)


def _running(lib):
    mean, var = lib.zeros(3, 6, dtype=lib.float64), lib.ones(3, 6, dtype=lib.float64)
    norm = lambda a, m, v: lib.nn.functional.batch_norm(a, m, v, training=True, momentum=0.3)  # noqa: E731
    lib.func.vmap(norm)(lib.tensor(X), mean, var)
    try:
        lib.func.vmap(lambda a: norm(a, lib.zeros(6, dtype=lib.float64), lib.ones(6, dtype=lib.float64)))(
            lib.tensor(X)
        )
    except RuntimeError as error:
        return mean.numpy(), var.numpy(), str(error)


def test_batch_norm_running_statistics_as_torch(torch):
    (mean, var, error), (torch_mean, torch_var, torch_error) = _running(engine), _running(torch)
    np.testing.assert_allclose(mean, torch_mean, rtol=1e-12)
    np.testing.assert_allclose(var, torch_var, rtol=1e-12)
    assert error == torch_error
