"""Float32 kernels checked in their own dtype: `gradcli check examples/native.py --dtype native`.

log(cosh(x)) written to stay finite in float32, |x| + log1p(exp(-2|x|)) - log 2, with two
hand-written backwards: the right one, tanh(x), and a "fast" one that approximates tanh by
clamping x to [-1, 1], off by up to a quarter. With --dtype native the analytical gradient is
the float32 one the kernel computes, compared with a numerical one computed in float64.
"""

import math

import engine
import gradcli


class LogCosh(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.abs() + engine.log1p(engine.exp(-2 * x.abs())) - math.log(2)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * engine.tanh(x)


class LogCoshFast(LogCosh):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x.clamp(-1, 1)  # BUG: tanh(x) is not clamp(x, -1, 1)


def x():
    return (engine.randn(6, requires_grad=True),)  # float32


@gradcli.case(x)
def logcosh(x):
    return LogCosh.apply(x)


@gradcli.case(x)
def logcosh_fast(x):
    return LogCoshFast.apply(x)
