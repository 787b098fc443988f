"""vmap where the batch cannot run op by op: a function that works out indices from the values it is shown
(and per-sample gradients whose formulas branch on values) runs once per example, as torch's vmap falls back
to a loop: torch.func's results (torch 2.13)."""

from __future__ import annotations

import numpy as np
import pytest

import engine

RNG = np.random.default_rng(0)
X, Y, M = RNG.standard_normal((3, 2, 4, 5)), RNG.standard_normal((3, 4)), RNG.standard_normal((3, 3, 3))

CASES = {
    "instance_norm": lambda lib, F, x, y, m: lib.func.vmap(lambda a: F.instance_norm(a[None]))(x),
    "max_pool2d": lambda lib, F, x, y, m: lib.func.vmap(lambda a: F.max_pool2d(a, 2))(x),
    "sort": lambda lib, F, x, y, m: lib.func.vmap(lambda a: a.sort(-1).values)(y),
    "topk": lambda lib, F, x, y, m: lib.func.vmap(lambda a: a.topk(2).values)(y),
    "median along a dim": lambda lib, F, x, y, m: lib.func.vmap(lambda a: a.median(0).values)(x[:, 0]),
    "argmax": lambda lib, F, x, y, m: lib.func.vmap(lambda a: a.argmax(-1))(y),
    "grad of prod": lambda lib, F, x, y, m: lib.func.vmap(lib.func.grad(lambda a: a.prod()))(y),
    "grad of cumprod": lambda lib, F, x, y, m: lib.func.vmap(lib.func.grad(lambda a: a.cumprod(0).sum()))(y),
    "grad of det": lambda lib, F, x, y, m: lib.func.vmap(lib.func.grad(lib.linalg.det))(m),
    "grad of soft_margin_loss": lambda lib, F, x, y, m: lib.func.vmap(
        lib.func.grad(lambda a: F.soft_margin_loss(a, lib.ones(4, dtype=a.dtype)))
    )(y),
}


def _run(lib, name):
    return CASES[name](lib, lib.nn.functional, lib.tensor(X), lib.tensor(Y), lib.tensor(M)).detach().numpy()


@pytest.mark.parametrize("name", list(CASES))
def test_the_per_example_fallback_gives_torchs_results(torch, name):
    np.testing.assert_allclose(_run(engine, name), _run(torch, name), rtol=1e-10, atol=1e-12)
