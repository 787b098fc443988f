"""Inputs, constants and numpy references the registry's samples share."""

from __future__ import annotations

import math

import numpy as np

inf, nan = math.inf, math.nan
R, D = "r", "d"
R34, P34, D34, I34 = ("r", (3, 4)), ("p", (3, 4)), ("d", (3, 4)), ("int", (3, 4))
R234, D234 = ("r", (2, 3, 4)), ("d", (2, 3, 4))
S, DS = ("r", ()), ("d", ())
MASK34 = np.array([[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]], dtype=bool)


def _signed(low, high):
    """|x| in [low, high], either sign: fmod / remainder / floor division stay away from their jumps."""
    return lambda rng, n: rng.choice([-1.0, 1.0], n) * rng.uniform(low, high, n)


DIVIDEND, DIVISOR = (_signed(2.2, 2.8), (3, 4)), (lambda rng, n: rng.uniform(1.0, 1.05, n), (3, 4))


def values(*rows):
    """A domain of fixed values (ties, zeros, NaN, infinities), in the shape asked for."""
    data = np.array(rows, dtype=float).reshape(-1)
    return lambda rng, n: data[:n]


def zeros_every(k, low=0.5):
    """Nonzero values (magnitudes from `low`) with an exact zero every k-th element."""

    def make(rng, n):
        a = rng.uniform(low, 1.5, n) * rng.choice([-1.0, 1.0], n)
        a[::k] = 0.0
        return a

    return make


def with_nan(rng, n):
    a = rng.uniform(-1.5, 1.5, n)
    a[::3] = nan
    return a


def idx(lib, values):
    return lib.tensor(values, dtype=lib.int64)


def mask(lib, shape, seed=3):
    return lib.tensor(np.random.default_rng(seed).integers(0, 2, shape).astype(bool))


def on_a_copy(call):
    """An in-place call(lib, target, *others) made on a non-leaf copy of target."""
    return lambda lib, x, *others: call(lib, x * 1, *others)


# ------------------------------------------------------------------------------ linear algebra


def spd(lib, x):
    """A symmetric positive-definite matrix (batch) made from x, so finite differences see one."""
    return x @ x.mT + x.shape[-1] * lib.eye(x.shape[-1], dtype=x.dtype)


def sym(lib, x):
    return x + x.mT


def svd_product(r):
    """U Vh over the k leading singular vectors (an orthogonal factor of A: no sign in it)."""
    k = r.S.shape[-1]
    return r.U[..., :, :k] @ r.Vh[..., :k, :]


def svd_reconstruct(r):
    return (r.U * r.S[..., None, :]) @ r.Vh


def svd_projectors(r):
    return r.U @ r.U.mT + r.Vh.mT @ r.Vh


def eigh_reconstruct(r):
    return (r.eigenvectors * r.eigenvalues[..., None, :]) @ r.eigenvectors.mT


def in_place_product(name, **kwargs):
    """y = s * 1; y.<name>(a, b, **kwargs), which must return y."""

    def call(lib, s, a, b):
        y = s * 1
        assert getattr(y, name)(a, b, **kwargs) is y
        return y

    return call


def matrix_norm(kwargs):
    """linalg.matrix_norm(x, **kwargs), a dtype named by a string taken from lib."""

    def call(lib, x):
        options = dict(kwargs)
        if "dtype" in options:
            options["dtype"] = getattr(lib, options["dtype"])
        return lib.linalg.matrix_norm(x, **options)

    return call


# ------------------------------------------------------------------------------ in place, softmax


def softmax_np(a, dim):
    e = np.exp(a - a.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def log_softmax_np(a, dim):
    return np.log(softmax_np(a, dim))


def inplace_chain(lib, x):
    y = x * 1
    y.mul_(2)
    y.add_(x)
    y.exp_()
    return y


def inplace_chain_np(x):
    return np.exp(x * 2 + x)


def setitem_row(lib, x):
    y = x * 1
    y[0] = x[1] * 3
    return y


def inplace_through_view(lib, x):
    y = x.clone()
    v = y[1:]
    v.mul_(x[:2])
    return y


def inplace_through_view_np(x):
    y = x.copy()
    y[1:] *= x[:2]
    return y


def inplace_augmented(lib, x):
    y = x * 2
    y += x
    y *= x
    y -= 1
    y /= x + 2
    return y


def inplace_misc(lib, x):
    y = x.sin()
    y.pow_(2)
    y.sub_(x)
    y.div_(2)
    y.clamp_(-0.6, 0.3)
    return y


def inplace_misc_np(x):
    return np.clip((np.sin(x) ** 2 - x) / 2, -0.6, 0.3)


def inplace_clamp_tensor(lib, x, lo, hi):
    y = x * 1
    y.clamp_(lo, hi)
    return y


def inplace_transposed_view(lib, x):
    y = x * 1
    y.t()[1].mul_(x[:, 0])
    return y


def inplace_transposed_view_np(x):
    y = x * 1
    y[:, 1] *= x[:, 0]
    return y


# ------------------------------------------------------------------------------ nn references


def conv_np(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct convolution by loops over output and kernel positions (1 or 2 spatial dims)."""
    nd = x.ndim - 2
    stride, padding, dilation = ((v,) * nd if isinstance(v, int) else v for v in (stride, padding, dilation))
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    kernel = w.shape[2:]
    out_sp = [(xp.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    o, cg = w.shape[0], w.shape[1]
    og = o // groups
    out = np.zeros((x.shape[0], o, *out_sp))
    for idx in np.ndindex(*out_sp):
        for kidx in np.ndindex(*kernel):
            pos = tuple(idx[i] * stride[i] + kidx[i] * dilation[i] for i in range(nd))
            patch = xp[(slice(None), slice(None)) + pos]
            for g in range(groups):
                wk = w[(slice(g * og, (g + 1) * og), slice(None)) + kidx]
                out[(slice(None), slice(g * og, (g + 1) * og)) + idx] += (
                    patch[:, g * cg : (g + 1) * cg] @ wk.T
                )
    if b is not None:
        out += b.reshape((1, o) + (1,) * nd)
    return out


def pool_np(x, kernel, stride, padding, reduce, ceil_mode=False, count_include_pad=True, dilation=(1, 1)):
    """Max or average pooling of (N, C, H, W) by loops, with PyTorch's output size and divisor rules."""
    h, w = x.shape[2:]
    outs = []
    for n, k, s, p, d in zip((h, w), kernel, stride, padding, dilation):
        span = d * (k - 1) + 1
        o = (-(-(n + 2 * p - span) // s) if ceil_mode else (n + 2 * p - span) // s) + 1
        if ceil_mode and (o - 1) * s >= n + p:
            o -= 1
        outs.append(o)
    out = np.zeros(x.shape[:2] + tuple(outs))
    for i, j in np.ndindex(*outs):
        hs, ws = i * stride[0] - padding[0], j * stride[1] - padding[1]
        rows = [hs + a * dilation[0] for a in range(kernel[0])]
        cols = [ws + a * dilation[1] for a in range(kernel[1])]
        vals = [x[:, :, r, c] for r in rows for c in cols if 0 <= r < h and 0 <= c < w]
        if reduce == "max":
            out[:, :, i, j] = np.max(vals, axis=0)
        else:
            he, we = min(hs + kernel[0], h + padding[0]), min(ws + kernel[1], w + padding[1])
            size = (he - hs) * (we - ws)
            if not count_include_pad:
                size = (min(he, h) - max(hs, 0)) * (min(we, w) - max(ws, 0))
            out[:, :, i, j] = np.sum(vals, axis=0) / size
    return out


def bn_np(x, w, b, eps=1e-5):
    dims = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    xhat = (x - x.mean(axis=dims, keepdims=True)) / np.sqrt(x.var(axis=dims, keepdims=True) + eps)
    return xhat * w.reshape(shape) + b.reshape(shape)


def ln_np(x, k, w=None, b=None, eps=1e-5):
    dims = tuple(range(x.ndim - k, x.ndim))
    out = (x - x.mean(axis=dims, keepdims=True)) / np.sqrt(x.var(axis=dims, keepdims=True) + eps)
    return out * (1 if w is None else w) + (0 if b is None else b)


def reduce_np(loss, reduction):
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def gelu_np(x):
    from math import erf

    return 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))


def nll_np(logp, t, w=None, reduction="mean", ignore=-100):
    classes = logp.shape[1]
    w = np.ones(classes) if w is None else w
    moved = np.moveaxis(logp, 1, -1).reshape(-1, classes)
    flat_t = t.reshape(-1)
    keep = flat_t != ignore
    safe = np.where(keep, flat_t, 0)
    coef = w[safe] * keep
    loss = -moved[np.arange(len(safe)), safe] * coef
    if reduction == "none":
        return loss.reshape(t.shape)
    return loss.sum() / coef.sum() if reduction == "mean" else loss.sum()


def bce_logits_np(x, t, w=None, pw=None):
    log_sig = -np.logaddexp(0, -x)
    log_sig_neg = -np.logaddexp(0, x)
    pw = 1 if pw is None else pw
    loss = -(pw * t * log_sig + (1 - t) * log_sig_neg)
    return (loss if w is None else loss * w).mean()


TGT4 = np.array([0, 2, 1, 2])
TGT4_IGN = np.array([0, -100, 1, 2])
PROBS = np.random.RandomState(7).dirichlet(np.ones(3), size=4)
W3 = np.array([0.5, 2.0, 1.5])
IDX = np.array([[1, 2], [4, 1]])
BN_MEAN, BN_VAR = np.array([0.1, -0.2, 0.3]), np.array([1.5, 0.5, 2.0])


def loss_target(seed, shape, lo=-1.0, hi=1.0):
    return np.random.RandomState(seed).uniform(lo, hi, shape)


MSE_T = loss_target(3, (3, 4))
SL1_X_OFFSETS = np.array([[-2.1, -0.6, 0.4, 1.7], [0.2, -0.3, 2.5, -1.2], [0.7, -0.8, 1.3, 0.05]])
BCE_T = loss_target(5, (3, 4), 0.0, 1.0)


def probs_from(x):
    """Map any real x into (0.05, 0.95) smoothly, so binary_cross_entropy sees valid probabilities."""
    return 0.05 + 0.9 * x.sigmoid()


# ------------------------------------------------------------------------------ whole graphs against torch's

TGT4_VS = np.array([0, 2, 1, 1])
IDX_VS = np.array([[1, 2], [3, 9]])
WEIGHT3_VS = np.array([0.2, 1.0, 3.0])


def UNIT(rng, n):
    """Values in (0, 1): probabilities for binary_cross_entropy's input, targets for the regression losses."""
    return rng.uniform(0.0, 1.0, n)


_RNG = np.random.default_rng(5)
PROBS_VS = _RNG.dirichlet(np.ones(3), 4)  # soft targets
T43_VS = _RNG.uniform(0.0, 1.0, (4, 3))
C3_VS = _RNG.standard_normal(3)
