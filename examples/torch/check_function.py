"""Custom torch.autograd.Functions, one right and one wrong: `gradcli check examples/torch/check_function.py`.

Swish's backward and jvp are right (its backward is differentiable: --order 2 checks it in both modes).
Cube's backward forgot the power rule's factor x: 3 * grad_output * x, not 3 * grad_output * x**2.
"""

import torch

import gradcli


class Swish(torch.autograd.Function):
    """swish(x) = x * sigmoid(x), with a hand-written backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_output * s * (1 + x * (1 - s))

    @staticmethod
    def jvp(ctx, x_tangent):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return x_tangent * s * (1 + x * (1 - s))


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * grad_output * x  # BUG: should be 3 * grad_output * x**2


@gradcli.case(torch.randn(4, 3, dtype=torch.float64, requires_grad=True), order=2)
def swish(x):
    return Swish.apply(x)


@gradcli.case(torch.randn(2, 3, dtype=torch.float64, requires_grad=True))
def cube(x):
    return Cube.apply(x)
