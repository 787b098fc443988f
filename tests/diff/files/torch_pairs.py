import torch

import gradcli


class WrongSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x  # should be 2 * x


def reference(x):
    return (x.sin() ** 2).exp().sum()


@gradcli.pair(reference=reference, inputs=lambda: (torch.randn(4, 3, requires_grad=True),))
def wrong_square(x):
    return WrongSquare.apply(x.sin()).exp().sum()
