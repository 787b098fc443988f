"""One case per verdict class: `gradcli check examples/verdicts.py::CASE` (docs/verdicts.md).

Each is code people write; only `passes`, `fourier` (NOISE) and `hinge` (KINK) pass.
"""

import engine
import engine.nn as nn
import gradcli


def x64(*shape):
    return engine.randn(*shape, dtype=engine.float64, requires_grad=True)


W = engine.randn(3, 2, dtype=engine.float64)


@gradcli.case(lambda: (x64(4, 3),))
def passes(x):
    return (x @ W).tanh()


@gradcli.case(lambda: (engine.tensor([0.1, 0.2, 0.3], dtype=engine.float64, requires_grad=True),))
def fourier(x):
    """High-frequency features: at eps=1e-6 the central difference's truncation error shows."""
    return (x * 1e5).sin() / 1e5


@gradcli.case(lambda: (engine.tensor([1e-7, 0.5, -0.5], dtype=engine.float64, requires_grad=True),))
def hinge(x):
    """A hinge whose first input sits within eps of its kink at 0."""
    return x.relu() + 0.1 * x


class Linear(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return x @ weight.t()

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output @ weight, x.t() @ grad_output  # BUG: should be grad_output.t() @ x


@gradcli.case(lambda: (x64(5, 3), x64(3, 3)))
def linear(x, weight):
    return Linear.apply(x, weight)


mlp = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.1), nn.Tanh()).double()


@gradcli.case(lambda: (x64(4, 3),), modules=(mlp,))
def dropout(x):
    """The model was never put in eval mode: its dropout draws a new mask on every call."""
    return mlp(x)


class RunningCentre(nn.Module):
    """Centres its input on a running mean that every call updates."""

    def __init__(self):
        super().__init__()
        self.mean = 0.0

    def forward(self, x):
        self.mean = 0.9 * self.mean + 0.1 * float(x.mean())
        return x - self.mean


centre = RunningCentre()


@gradcli.case(lambda: (x64(4),))
def running_mean(x):
    return centre(x).tanh()


@gradcli.case(lambda: (engine.randn(4, 3, requires_grad=True),))
def projection(x):
    """float32 code, checked in float64: the weight made inside the forward stays float32."""
    weight = engine.ones(3, 2) / 3
    return x @ weight


class Dithered(engine.autograd.Function):
    """A backward whose rounding depends on the order of a parallel sum: right to 1e-9, but two
    backwards of one graph differ."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * (2 + 1e-9 * engine.rand(*grad_output.shape, dtype=grad_output.dtype))


@gradcli.case(lambda: (x64(3),))
def dithered(x):
    return Dithered.apply(x)


@gradcli.case(lambda: (x64(4, 3),))
def wrong_shape(x):
    return x @ W.t()
