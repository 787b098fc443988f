"""Deliberately wrong custom Functions: `gradcli check` must fail every case here.

Each case is named `bug_<what>` and holds exactly one bug; no name is a substring of
another, so `-k bug_<what>` selects exactly one case and the exit code is per bug.
"""

import engine
import gradcli
from engine.autograd import Function


def f64(*shape, low=None):
    """A float64 leaf requiring grad; with `low`, uniform on [low, low + 1) (for log, sqrt...)."""
    if low is None:
        return engine.randn(*shape, dtype=engine.float64, requires_grad=True)
    return (engine.rand(*shape, dtype=engine.float64) + low).requires_grad_()


class SinNoChain(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.sin(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return engine.cos(x)  # BUG: missing the chain-rule factor grad


class CosWrongSign(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.cos(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * engine.sin(x)  # BUG: d cos = -sin


class SquareWrongConstant(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x  # BUG: missing the factor 2


class Tanh3xNoInner(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.tanh(3 * x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        t = engine.tanh(3 * x)
        return grad * (1 - t * t)  # BUG: missing the inner derivative 3


class MatMulTransposed(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad @ b, a.t() @ grad  # BUG: grad @ b.t() (square, so shapes agree)


class SoftmaxWrongAxis(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.softmax(x, -1)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        y = engine.softmax(x, -1)
        return y * (grad - (grad * y).sum(0, keepdim=True))  # BUG: reduces over dim 0, not -1


class MulSwapped(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * a, grad * b  # BUG: swapped: d/da = b, d/db = a


class LeakyReLUNegativeSide(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.where(x > 0, x, 0.01 * x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * engine.where(x > 0, 1.0, 0.1)  # BUG: only wrong for x < 0 (slope 0.01)


class SplitActivationOneSlice(Function):
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
        return engine.cat([grad[:n] * engine.cos(x[:n]), grad[n:] * x[n:]])  # BUG: second half lacks 2


class SoftplusOnePercent(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.log1p(engine.exp(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        # BUG: a 1% error where x > 0.5 (a too-coarse approximation on part of the entries)
        return grad * engine.sigmoid(x) * engine.where(x > 0.5, 1.01, 1.0)


class ExpNondeterministic(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.exp(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        # BUG: nondeterministic (tiny noise, within tolerance of the Jacobian, but never the same twice)
        return grad * engine.exp(x) + 1e-9 * engine.randn(*x.shape, dtype=x.dtype)


class LogWrongShape(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.log(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return (grad / x).sum(0, keepdim=True)  # BUG: gradient of shape (1, n) for an input of (m, n)


class SqrtRaises(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.sqrt(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (2 * ctx.result)  # BUG: ctx.result was never saved: AttributeError


class DivTooFewGrads(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad / b  # BUG: one gradient for two inputs


class MulNoneGrad(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, None  # BUG: b requires grad but gets none


class LinearBiasMean(Function):
    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return x @ w + b

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad @ w.t(), x.t() @ grad, grad.mean(0)  # BUG: the broadcast bias sums, not averages


class LogTimes(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.log(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x  # BUG: d log x = 1/x


class DivQuotientSign(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad / b, grad * a / (b * b)  # BUG: d(a/b)/db = -a/b**2


class SigmoidOfInput(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.sigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x * (1 - x)  # BUG: y * (1 - y) with the input instead of the output


class PowExponent(Function):
    @staticmethod
    def forward(ctx, x, p):
        ctx.save_for_backward(x)
        ctx.p = p
        return x**p

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * ctx.p * x**ctx.p, None  # BUG: x ** (p - 1)


class NormalizeNoProjection(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x / (x * x).sum(-1, keepdim=True).sqrt()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x * x).sum(-1, keepdim=True).sqrt()  # BUG: ignores that the norm depends on x


class ClampNoMask(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.clamp(x, -0.5, 0.5)

    @staticmethod
    def backward(ctx, grad):
        return grad  # BUG: the clamped entries have zero gradient


class SinCosDropsSecond(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return engine.sin(x), engine.cos(x)

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        (x,) = ctx.saved_tensors
        return grad_sin * engine.cos(x)  # BUG: the second output's gradient is ignored


class HypotSwappedTerms(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return engine.sqrt(a * a + b * b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        r = engine.sqrt(a * a + b * b)
        return grad * b / r, grad * a / r  # BUG: the two partials are swapped


@gradcli.case(f64(4, 3))
def bug_missing_chain_factor(x):
    return SinNoChain.apply(x)


@gradcli.case(f64(5))
def bug_wrong_sign(x):
    return CosWrongSign.apply(x)


@gradcli.case(f64(3, 2))
def bug_wrong_constant(x):
    return SquareWrongConstant.apply(x)


@gradcli.case(f64(6))
def bug_missing_inner_derivative(x):
    return Tanh3xNoInner.apply(x)


@gradcli.case(f64(3, 3), f64(3, 3))
def bug_transposed_matmul(a, b):
    return MatMulTransposed.apply(a, b)


@gradcli.case(f64(3, 3))
def bug_wrong_reduction_axis(x):
    return SoftmaxWrongAxis.apply(x)


@gradcli.case(f64(4), f64(4))
def bug_swapped_input_grads(a, b):
    return MulSwapped.apply(a, b)


@gradcli.case(f64(8))
def bug_part_of_domain(x):
    return LeakyReLUNegativeSide.apply(x)


@gradcli.case(f64(4, 2))
def bug_one_slice(x):
    return SplitActivationOneSlice.apply(x)


@gradcli.case(f64(8))
def bug_one_percent_error(x):
    return SoftplusOnePercent.apply(x)


@gradcli.case(f64(5))
def bug_nondeterministic(x):
    return ExpNondeterministic.apply(x)


@gradcli.case(lambda: (f64(3, 4, low=0.5),))
def bug_wrong_grad_shape(x):
    return LogWrongShape.apply(x)


@gradcli.case(f64(5, low=0.5))
def bug_backward_raises(x):
    return SqrtRaises.apply(x)


@gradcli.case(f64(4), f64(4, low=1.0))
def bug_too_few_grads(a, b):
    return DivTooFewGrads.apply(a, b)


@gradcli.case(f64(4), f64(4))
def bug_none_grad(a, b):
    return MulNoneGrad.apply(a, b)


@gradcli.case(f64(4, 3), f64(3, 2), f64(2))
def bug_bias_mean(x, w, b):
    return LinearBiasMean.apply(x, w, b)


@gradcli.case(f64(5, low=0.5))
def bug_log_times(x):
    return LogTimes.apply(x)


@gradcli.case(f64(4), f64(4, low=1.0))
def bug_quotient_sign(a, b):
    return DivQuotientSign.apply(a, b)


@gradcli.case(f64(6))
def bug_sigmoid_of_input(x):
    return SigmoidOfInput.apply(x)


@gradcli.case(f64(5, low=0.5), 3)
def bug_pow_exponent(x, p):
    return PowExponent.apply(x, p)


@gradcli.case(f64(2, 4))
def bug_normalize_projection(x):
    return NormalizeNoProjection.apply(x)


@gradcli.case(f64(8))
def bug_clamp_mask(x):
    return ClampNoMask.apply(x)


@gradcli.case(f64(4))
def bug_second_output_dropped(x):
    return SinCosDropsSecond.apply(x)


@gradcli.case(f64(4, low=0.5), f64(4, low=0.5))
def bug_hypot_swapped(a, b):
    return HypotSwappedTerms.apply(a, b)
