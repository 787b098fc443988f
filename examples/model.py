"""A small MLP with a custom Swish activation, checked by `gradcli check examples/model.py`.

Two ways to declare what to check are shown: the top-level `model` + `inputs` form (gradients
with respect to the input and to every parameter), and `@gradcli.case` functions.
"""

import engine
import gradcli


class Swish(engine.autograd.Function):
    """swish(x) = x * sigmoid(x), with a hand-written backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x * engine.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # Recomputed from the saved input (not saved from forward) so that the backward is
        # itself differentiable: --order 2 checks that too.
        s = engine.sigmoid(x)
        return grad_output * s * (1 + x * (1 - s))

    @staticmethod
    def jvp(ctx, x_tangent):
        """Forward mode's rule, the same derivative times the input's tangent (--modes fwd)."""
        (x,) = ctx.saved_tensors
        s = engine.sigmoid(x)
        return x_tangent * s * (1 + x * (1 - s))


class MLP:
    """Two linear layers with Swish between them; duck-types a module's parameters()."""

    def __init__(self, n_in: int, n_hidden: int, n_out: int):
        self.w1 = (engine.randn(n_in, n_hidden) / n_in**0.5).requires_grad_()
        self.b1 = engine.zeros(n_hidden, requires_grad=True)
        self.w2 = (engine.randn(n_hidden, n_out) / n_hidden**0.5).requires_grad_()
        self.b2 = engine.zeros(n_out, requires_grad=True)

    def named_parameters(self):
        return [("w1", self.w1), ("b1", self.b1), ("w2", self.w2), ("b2", self.b2)]

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def __call__(self, x):
        return Swish.apply(x @ self.w1 + self.b1) @ self.w2 + self.b2


# Form 1: `model` and `inputs`: d(model(x))/dx and d(model(x))/d(every parameter).
model = MLP(3, 8, 2)
inputs = (engine.randn(4, 3, requires_grad=True),)


# Form 2: decorated cases (each with its own inputs and, if needed, its own options).
@gradcli.case(engine.randn(5, 3, dtype=engine.float64, requires_grad=True))
def swish(x):
    return Swish.apply(x)


@gradcli.case(lambda: (engine.randn(6, dtype=engine.float64, requires_grad=True),), order=2)
def swish_second_order(x):
    return Swish.apply(x)


@gradcli.case(engine.randn(4, 3, requires_grad=True), engine.randn(4, 2), name="mse_loss")
def mse(x, target):
    return ((model(x) - target) ** 2).mean()
