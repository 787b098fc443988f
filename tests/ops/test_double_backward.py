"""Second derivatives (gradgradcheck): the create_graph gradient differentiated again, against finite
differences of the first. The squared form, out * out, has a non-zero second derivative even where the op
is linear, so the op's backward must itself be differentiable."""

import numpy as np
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


def _graph(fn, depth: int) -> list:
    """The names of `fn` and the nodes below it to `depth`, depth first, each with its depth."""
    if fn is None or depth < 0:
        return []
    names = [(depth, type(fn).__name__)]
    for child, _ in fn.next_functions:
        names += _graph(child, depth - 1)
    return names


# Each backward's own node: what torch records for it under create_graph, and below it.
BACKWARD_NODES = {
    "slice": lambda lib, x: x[1:, ::2].exp().sum(),
    "select": lambda lib, x: x[1].exp().sum(),
    "mean": lambda lib, x: x.mean().exp(),
    "mean_dim": lambda lib, x: x.mean(1).exp().sum(),
    "softmax": lambda lib, x: lib.softmax(x, 1).exp().sum(),
}


@pytest.mark.parametrize("case", sorted(BACKWARD_NODES))
def test_backward_nodes_under_create_graph_are_torchs(torch, case):
    graphs, grads = [], []
    for lib in (engine, torch):
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(BACKWARD_NODES[case](lib, x), x, create_graph=True)
        graphs.append(_graph(g.grad_fn, depth=1))
        (gg,) = lib.autograd.grad(g.pow(2).sum(), x)
        grads.append(np.array([g.tolist(), gg.tolist()]))
    assert graphs[0] == graphs[1]
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)
