"""A custom Linear Function with a realistic bug: `gradcli check examples/buggy.py` fails.

y = x @ W.T + b, so dL/dW = grad_output.T @ x. The backward below computes x.T @ grad_output
instead: for a square W the shapes agree, so nothing crashes and training even "works".
"""

import engine
import gradcli


class Linear(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.t() + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = grad_output @ weight
        grad_weight = x.t() @ grad_output  # BUG: transposed, should be grad_output.t() @ x
        grad_bias = grad_output.sum(0)
        return grad_x, grad_weight, grad_bias


@gradcli.case(
    engine.randn(5, 3, dtype=engine.float64, requires_grad=True),
    engine.randn(3, 3, dtype=engine.float64, requires_grad=True),
    engine.randn(3, dtype=engine.float64, requires_grad=True),
)
def linear(x, weight, bias):
    return Linear.apply(x, weight, bias)
