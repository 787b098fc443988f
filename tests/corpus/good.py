"""Correct custom Functions: `gradcli check` must pass every case here.

Each case is named `ok_<what>`; no name is a substring of another, so `-k ok_<what>`
selects exactly one case. Backwards are written in engine ops, so they are differentiable.
"""

import engine
import gradcli
from engine.autograd import Function


def f64(*shape, low=None):
    """A float64 leaf requiring grad; with `low`, uniform on [low, low + 1) (for log, sqrt...)."""
    if low is None:
        return engine.randn(*shape, dtype=engine.float64, requires_grad=True)
    return (engine.rand(*shape, dtype=engine.float64) + low).requires_grad_()


class Sin(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.sin(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * engine.cos(x)


class Cos(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.cos(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -grad * engine.sin(x)


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * grad * x


class Tanh3x(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.tanh(3 * x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        t = engine.tanh(3 * x)
        return grad * 3 * (1 - t * t)


class MatMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad @ b.t(), a.t() @ grad


class Softmax(Function):
    @staticmethod
    def forward(ctx, x):
        y = engine.softmax(x, -1)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        y = engine.softmax(x, -1)
        return y * (grad - (grad * y).sum(-1, keepdim=True))


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * a


class LeakyReLU(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.where(x > 0, x, 0.01 * x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * engine.where(x > 0, 1.0, 0.01)


class SplitActivation(Function):
    """sin on the first half of the rows, x**2 on the rest."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        n = x.shape[0] // 2
        return engine.cat([engine.sin(x[:n]), x[n:] * x[n:]])

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        n = x.shape[0] // 2
        return engine.cat([grad[:n] * engine.cos(x[:n]), grad[n:] * 2 * x[n:]])


class Softplus(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.log1p(engine.exp(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * engine.sigmoid(x)


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = engine.exp(x)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * engine.exp(x)


class Log(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.log(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / x


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad / b, -grad * a / (b * b)


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.sigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        y = engine.sigmoid(x)
        return grad * y * (1 - y)


class Pow(Function):
    @staticmethod
    def forward(ctx, x, p):
        ctx.save_for_backward(x)
        ctx.p = p
        return x**p

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * ctx.p * x ** (ctx.p - 1), None


class Normalize(Function):
    """x / ||x|| over the last dimension."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x / (x * x).sum(-1, keepdim=True).sqrt()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        n = (x * x).sum(-1, keepdim=True).sqrt()
        y = x / n
        return (grad - y * (grad * y).sum(-1, keepdim=True)) / n


class Clamp(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.clamp(x, -0.5, 0.5)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * ((x > -0.5) & (x < 0.5)).to(grad.dtype)


class SinCos(Function):
    """Two outputs: both gradients flow back into x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.sin(x), engine.cos(x)

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        (x,) = ctx.saved_tensors
        return grad_sin * engine.cos(x) - grad_cos * engine.sin(x)


class LinearBias(Function):
    """x @ w + b with b broadcast over the rows."""

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return x @ w + b

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad @ w.t(), x.t() @ grad, grad.sum(0)


class Swish(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * engine.sigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = engine.sigmoid(x)
        return grad * s * (1 + x * (1 - s))


class LogSumExp(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        m = x.amax(-1, keepdim=True)
        return (m + engine.log(engine.exp(x - m).sum(-1, keepdim=True))).squeeze(-1)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad.unsqueeze(-1) * engine.softmax(x, -1)


class Sqrt(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.sqrt(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (2 * engine.sqrt(x))


class Scale(Function):
    """A plain Python float argument passes through; its gradient slot is None."""

    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x * alpha

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.alpha, None


class Hypot(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return engine.sqrt(a * a + b * b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        r = engine.sqrt(a * a + b * b)
        return grad * a / r, grad * b / r


class CubeSetup(Function):
    """PyTorch 2 style: forward without ctx, setup_context saves."""

    @staticmethod
    def forward(x):
        return x * x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * grad * x * x


@gradcli.case(f64(4, 3))
def ok_sine(x):
    return Sin.apply(x)


@gradcli.case(f64(5))
def ok_cos(x):
    return Cos.apply(x)


@gradcli.case(f64(3, 2))
def ok_square(x):
    return Square.apply(x)


@gradcli.case(f64(6))
def ok_tanh3x(x):
    return Tanh3x.apply(x)


@gradcli.case(f64(3, 3), f64(3, 3))
def ok_matmul(a, b):
    return MatMul.apply(a, b)


@gradcli.case(f64(3, 3))
def ok_softmax(x):
    return Softmax.apply(x)


@gradcli.case(f64(4), f64(4))
def ok_mul(a, b):
    return Mul.apply(a, b)


@gradcli.case(f64(8))
def ok_leaky_relu(x):
    return LeakyReLU.apply(x)


@gradcli.case(f64(4, 2))
def ok_split_activation(x):
    return SplitActivation.apply(x)


@gradcli.case(f64(6))
def ok_softplus(x):
    return Softplus.apply(x)


@gradcli.case(engine.randn(5, requires_grad=True))  # float32: upcast to float64 for the check
def ok_exp_float32(x):
    return Exp.apply(x)


@gradcli.case(lambda: (f64(5, low=0.5),))
def ok_natural_log(x):
    return Log.apply(x)


@gradcli.case(f64(4), f64(4, low=1.0))
def ok_div(a, b):
    return Div.apply(a, b)


@gradcli.case(f64(6))
def ok_sigmoid(x):
    return Sigmoid.apply(x)


@gradcli.case(f64(5, low=0.5), 3)
def ok_pow(x, p):
    return Pow.apply(x, p)


@gradcli.case(f64(2, 4))
def ok_normalize(x):
    return Normalize.apply(x)


@gradcli.case(f64(8))
def ok_clamp(x):
    return Clamp.apply(x)


@gradcli.case(f64(4))
def ok_sincos(x):
    return SinCos.apply(x)


@gradcli.case(f64(4, 3), f64(3, 2), f64(2))
def ok_linear_bias(x, w, b):
    return LinearBias.apply(x, w, b)


@gradcli.case(f64(5), order=2)
def ok_swish_order2(x):
    return Swish.apply(x)


@gradcli.case(f64(3, 4))
def ok_logsumexp(x):
    return LogSumExp.apply(x)


@gradcli.case(f64(5, low=0.5))
def ok_sqrt(x):
    return Sqrt.apply(x)


@gradcli.case(f64(4), 2.5)
def ok_scale(x, alpha):
    return Scale.apply(x, alpha)


@gradcli.case(f64(4, low=0.5), f64(4, low=0.5))
def ok_hypot(a, b):
    return Hypot.apply(a, b)


@gradcli.case(f64(4))
def ok_cube_setup_context(x):
    return CubeSetup.apply(x)


@gradcli.case(f64(3, 2))
def ok_composed(x):
    """Custom Functions composed with built-in ops."""
    return (Sin.apply(x) * Exp.apply(x)).sum(0)
