"""vmap's randomness="same" and "different" as torch.func.vmap has them: one draw shared by the batch,
or one independent draw per example (factories, *_like, dropout, bernoulli_), and torch's refusals."""

from __future__ import annotations

import numpy as np
import pytest

import engine

# name -> f(lib, x) drawing random numbers inside the vmapped function
DRAWS = {
    "rand": lambda lib, a: lib.rand(4),
    "randn_like": lambda lib, a: lib.randn_like(a),
    "rand_like of a shared tensor": lambda lib, a: lib.rand_like(lib.zeros(4)) + a,
    "randint": lambda lib, a: lib.randint(0, 1000, (4,)),
    "randperm": lambda lib, a: lib.randperm(6),
    "dropout": lambda lib, a: lib.nn.functional.dropout(a + 1, 0.5),
    "dropout in place": lambda lib, a: lib.nn.functional.dropout(a + 1, 0.5, inplace=True),
    "dropout2d": lambda lib, a: lib.nn.functional.dropout2d(a[None, :, None, None] + 1, 0.5)[0, :, 0, 0],
    "bernoulli_": lambda lib, a: (a + 0.5).bernoulli_(),
    "bernoulli_ of a shared tensor": lambda lib, a: lib.zeros(4).bernoulli_() + a,
}


def _outcome(lib, name, randomness):
    """Whether every example drew the same numbers, and the shape; or the error."""
    lib.manual_seed(0)
    try:
        out = lib.func.vmap(lambda a: DRAWS[name](lib, a), randomness=randomness)(lib.zeros(8, 4))
    except RuntimeError as error:
        return f"RuntimeError: {error}"
    return bool((out == out[0]).all()), tuple(out.shape)


@pytest.mark.parametrize(
    ("name", "randomness"),
    [(name, "different") for name in DRAWS] + [("dropout in place", "same"), ("bernoulli_", "same")],
)
def test_randomness_as_torch(torch, name, randomness):
    assert _outcome(engine, name, randomness) == _outcome(torch, name, randomness)


def test_different_draws_are_independent_per_example():
    out = engine.func.vmap(lambda a: engine.randn(2000) + a, randomness="different")(
        engine.zeros(3, 1)
    ).numpy()
    assert np.all(np.abs(out.mean(axis=1)) < 0.1) and np.all(np.abs(out.std(axis=1) - 1) < 0.1)
    assert np.all(np.abs(np.corrcoef(out)[np.triu_indices(3, 1)]) < 0.1)


def test_nested_levels_draw_per_example_of_every_different_level(torch):
    def distinct(lib, inner, outer):
        f = lib.func.vmap(lib.func.vmap(lambda a: lib.rand(2), randomness=inner), randomness=outer)
        return len(set(f(lib.zeros(3, 5)).flatten().tolist()))

    for inner, outer in (("different", "different"), ("same", "different")):
        assert distinct(engine, inner, outer) == distinct(torch, inner, outer)
