"""In-place ops inside vmap, as torch.func.vmap has them: a batched tensor changed in place per example,
an unbatched one refused (torch's messages, word for word) where the values written carry a batch."""

from __future__ import annotations

import numpy as np
import pytest

import engine

# name -> (f(lib, batched, shared)): each mutates a tensor in place inside the vmapped function
CASES = {
    "batched.add_(number)": lambda lib, a, b: a.clone().add_(1),
    "batched.add_(batched)": lambda lib, a, b: a.clone().add_(a + 2),
    "batched.mul_(shared)": lambda lib, a, b: (a + 1).mul_(b * 3),
    "batched.relu_()": lambda lib, a, b: (a - 1).relu_(),
    "batched view.add_": lambda lib, a, b: _then(lambda c: c[:2].add_(1), a.clone()),
    "batched[index] = number": lambda lib, a, b: _then(
        lambda c: c.__setitem__(lib.tensor([0, 2]), 5.0), a.clone()
    ),
    "batched[1] = batched": lambda lib, a, b: _then(lambda c: c.__setitem__(1, c[0] + 7), a.clone()),
    "shared.add_(batched)": lambda lib, a, b: b.clone().add_(a),
    "shared.sub_(batched)": lambda lib, a, b: b.clone().sub_(a),
    "shared.copy_(batched)": lambda lib, a, b: b.clone().copy_(a),
    "shared.clamp_(batched)": lambda lib, a, b: b.clone().clamp_(min=a),
    "shared.masked_fill_(batched)": lambda lib, a, b: b.clone().masked_fill_(b > 0, a[0]),
    "shared[0] = batched": lambda lib, a, b: _then(lambda c: c.__setitem__(0, a[0]), b.clone()),
}


def _then(change, tensor):
    change(tensor)
    return tensor


def _outcome(lib, name):
    a = lib.zeros(3, 4) + lib.arange(3.0)[:, None]
    b = lib.ones(4)
    try:
        return lib.func.vmap(lambda x, y: CASES[name](lib, x, y), in_dims=(0, None))(a, b).tolist()
    except RuntimeError as error:
        return f"RuntimeError: {error}"


@pytest.mark.filterwarnings("ignore:There is a performance drop")
@pytest.mark.parametrize("name", CASES)
def test_inplace_inside_vmap_as_torch(torch, name):
    assert _outcome(engine, name) == _outcome(torch, name)


def test_inplace_on_a_batch_changes_each_example_and_its_gradient():
    def f(x):
        y = x * 2
        y.mul_(x)
        return y.sum()

    xs = np.random.default_rng(1).standard_normal((5, 3))
    out = engine.func.vmap(engine.func.grad(f))(engine.tensor(xs))
    np.testing.assert_allclose(out.numpy(), 4 * xs, rtol=1e-12)
