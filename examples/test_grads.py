"""gradcli in a test suite: `pytest examples/test_grads.py` (gradcli's pytest plugin, installed with it).

Each @gradcli.case is a test item (`test_grads.py::swish`); `assert_gradients` checks inside a
plain test. `swish` passes; `cube` has a wrong backward and fails with gradcli's report.
"""

import engine
import gradcli


class Swish(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = x.sigmoid()
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        return grad_output * (s + x * s * (1 - s))


class Cube(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x  # BUG: should be 3 * x**2


def x64(*shape):
    return engine.randn(*shape, dtype=engine.float64, requires_grad=True)


@gradcli.case(lambda: (x64(4, 3),))
def swish(x):
    return Swish.apply(x)


@gradcli.case(lambda: (x64(5),))
def cube(x):
    return Cube.apply(x)


class SwishLayer(engine.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = engine.nn.Linear(3, 2)

    def forward(self, x):
        return Swish.apply(self.fc(x))


def test_swish_layer():
    """A module: its parameters are checked too (model.fc.weight, model.fc.bias), on float64 copies."""
    result = gradcli.assert_gradients(SwishLayer(), (engine.randn(4, 3, requires_grad=True),))
    assert [pair.input for pair in result.pairs] == ["x", "model.fc.weight", "model.fc.bias"]
