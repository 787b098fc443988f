"""A bug only the second-order check sees: passes `--order 1`, fails `--order 2`.

The sigmoid is saved from forward, where it was computed without a graph, so backward is
right but not differentiable with respect to x: its own derivative misses the s' terms.
"""

import engine
import gradcli
from engine.autograd import Function


class SwishSavedSigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        s = engine.sigmoid(x)
        ctx.save_for_backward(x, s)  # s has no history: d s / d x is lost for double backward
        return x * s

    @staticmethod
    def backward(ctx, grad):
        x, s = ctx.saved_tensors
        return grad * s * (1 + x * (1 - s))


@gradcli.case(engine.randn(6, dtype=engine.float64, requires_grad=True))
def swish_saved_sigmoid(x):
    return SwishSavedSigmoid.apply(x)
