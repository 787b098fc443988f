import engine
import gradcli


class WrongTanh(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.tanh()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (1 - y)  # should be 1 - y * y


def inputs():
    return (engine.randn(4, 3, requires_grad=True), engine.randn(3, 5, requires_grad=True))


def reference(x, w):
    h = (x @ w).tanh()
    return (h * h).sum(dim=1).exp().mean()


@gradcli.pair(reference=reference, inputs=inputs)
def same(x, w):
    h = engine.tanh(x @ w)
    return (h * h).sum(dim=1).exp().mean()


@gradcli.pair(reference=reference, inputs=inputs)
def wrong_tanh(x, w):
    h = WrongTanh.apply(x @ w)
    return (h * h).sum(dim=1).exp().mean()


@gradcli.pair(reference=reference, inputs=inputs)
def shifted(x, w):
    h = (x @ w + 1e-3).tanh()
    return (h * h).sum(dim=1).exp().mean()


@gradcli.pair(reference=reference, inputs=inputs)
def scaled(x, w):
    h = (x @ (w * 1.01)).tanh()
    return (h * h).sum(dim=1).exp().mean()
