"""Two candidates for one reference: `gradcli diff examples/diff_pairs.py`."""

import engine
import gradcli


def inputs():
    return (engine.randn(8, 16, requires_grad=True), (engine.randn(16, 16) / 4).requires_grad_())


def reference(x, w):
    h = engine.nn.functional.gelu(x @ w)
    return h.sum(dim=1).pow(2).mean()


class FastGelu(engine.autograd.Function):
    """A hand-written exact GELU whose backward lost a factor of 1/2."""

    @staticmethod
    def forward(ctx, u):
        cdf = 0.5 * (1 + engine.erf(u / 2**0.5))
        ctx.save_for_backward(u, cdf)
        return u * cdf

    @staticmethod
    def backward(ctx, g):
        u, cdf = ctx.saved_tensors
        pdf = (-0.5 * u * u).exp() / (2 * 3.141592653589793) ** 0.5
        return g * (2 * cdf + u * pdf)  # should be cdf + u * pdf


@gradcli.pair(reference=reference, inputs=inputs)
def tanh_gelu(x, w):
    h = engine.nn.functional.gelu(x @ w, approximate="tanh")
    return h.sum(dim=1).pow(2).mean()


@gradcli.pair(reference=reference, inputs=inputs)
def fast_gelu(x, w):
    h = FastGelu.apply(x @ w)
    return h.sum(dim=1).pow(2).mean()


@gradcli.pair(reference=reference, inputs=inputs)
def rewritten(x, w):
    u = engine.matmul(x, w)
    h = 0.5 * u * (1 + engine.erf(u / 2**0.5))
    return h.sum(dim=1).pow(2).mean()
