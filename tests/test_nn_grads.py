"""engine.nn.functional: forward values, first and second derivatives (float64).

The module under test is ENGINE_MODULE ("engine" by default); ENGINE_MODULE=torch runs
the same expectations against real PyTorch. Each case is ``(id, fn, ref, kinds)`` as in
test_op_grads.py: ``fn`` takes the differentiable tensors (targets, indices and options
are closed over), ``ref`` is the forward in numpy (None: checked by gradients only).
"""

import os

import numpy as np
import pytest
from numgrad import check_grad, check_gradgrad
from test_op_grads import log_softmax_np, make_inputs

torch = pytest.importorskip(os.environ.get("ENGINE_MODULE", "engine"))
F = torch.nn.functional
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")


def T(a, dtype=None):
    return torch.tensor(np.asarray(a), dtype=dtype)


# ----------------------------------------------------------------------------- references


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


# --------------------------------------------------------------------------------- inputs

R = "r"
TGT4 = np.array([0, 2, 1, 2])
TGT4_IGN = np.array([0, -100, 1, 2])
PROBS = np.random.RandomState(7).dirichlet(np.ones(3), size=4)
W3 = np.array([0.5, 2.0, 1.5])
IDX = np.array([[1, 2], [4, 1]])
BN_MEAN, BN_VAR = np.array([0.1, -0.2, 0.3]), np.array([1.5, 0.5, 2.0])


def _loss_target(seed, shape, lo=-1.0, hi=1.0):
    return np.random.RandomState(seed).uniform(lo, hi, shape)


MSE_T = _loss_target(3, (3, 4))
SL1_X_OFFSETS = np.array([[-2.1, -0.6, 0.4, 1.7], [0.2, -0.3, 2.5, -1.2], [0.7, -0.8, 1.3, 0.05]])
BCE_T = _loss_target(5, (3, 4), 0.0, 1.0)


def _probs_from(x):
    """Map any real x into (0.05, 0.95) smoothly, so binary_cross_entropy sees valid probabilities."""
    return 0.05 + 0.9 * torch.sigmoid(x)


CASES = [
    # ---- linear
    ("linear_2d_bias", lambda x, w, b: F.linear(x, w, b), lambda x, w, b: x @ w.T + b, [(R, (4, 3)), (R, (5, 3)), (R, (5,))]),
    ("linear_1d_bias", lambda x, w, b: F.linear(x, w, b), lambda x, w, b: x @ w.T + b, [(R, (3,)), (R, (2, 3)), (R, (2,))]),
    ("linear_3d_bias", lambda x, w, b: F.linear(x, w, b), lambda x, w, b: x @ w.T + b, [(R, (2, 2, 3)), (R, (2, 3)), (R, (2,))]),
    ("linear_3d", lambda x, w: F.linear(x, w), lambda x, w: x @ w.T, [(R, (2, 2, 3)), (R, (2, 3))]),
    # ---- convolution
    ("conv1d", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1),
     lambda x, w, b: conv_np(x, w, b, 2, 1), [(R, (2, 2, 7)), (R, (3, 2, 3)), (R, (3,))]),
    ("conv1d_groups_dilation", lambda x, w: F.conv1d(x, w, padding=2, dilation=2, groups=2),
     lambda x, w: conv_np(x, w, None, 1, 2, 2, 2), [(R, (1, 4, 8)), (R, (4, 2, 3))]),
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b, padding=1),
     lambda x, w, b: conv_np(x, w, b, 1, 1), [(R, (2, 2, 4, 4)), (R, (3, 2, 3, 3)), (R, (3,))]),
    ("conv2d_stride_dilation", lambda x, w: F.conv2d(x, w, stride=2, padding=2, dilation=2),
     lambda x, w: conv_np(x, w, None, 2, 2, 2), [(R, (1, 2, 6, 6)), (R, (2, 2, 3, 3))]),
    ("conv2d_groups", lambda x, w, b: F.conv2d(x, w, b, stride=(1, 2), groups=2),
     lambda x, w, b: conv_np(x, w, b, (1, 2), 0, 1, 2), [(R, (1, 4, 4, 5)), (R, (4, 2, 2, 2)), (R, (4,))]),
    ("conv2d_same_even_kernel", lambda x, w: F.conv2d(x, w, padding="same"),
     lambda x, w: conv_np(np.pad(x, [(0, 0), (0, 0), (0, 1), (0, 1)]), w), [(R, (1, 2, 4, 4)), (R, (2, 2, 2, 2))]),
    ("conv2d_unbatched", lambda x, w: F.conv2d(x, w, padding=1),
     lambda x, w: conv_np(x[None], w, None, 1, 1)[0], [(R, (2, 4, 4)), (R, (2, 2, 3, 3))]),
    ("unfold_fold", lambda x: F.fold(F.unfold(x, 2, padding=1, stride=1) * 1.5, (3, 4), 2, padding=1), None,
     [(R, (1, 2, 3, 4))]),
    # ---- pooling ("d": distinct values, so each window's maximum is unique)
    ("max_pool2d", lambda x: F.max_pool2d(x, 2), lambda x: pool_np(x, (2, 2), (2, 2), (0, 0), "max"),
     [("d", (2, 2, 4, 4))]),
    ("max_pool2d_overlap_pad", lambda x: F.max_pool2d(x, 3, stride=2, padding=1),
     lambda x: pool_np(x, (3, 3), (2, 2), (1, 1), "max"), [("d", (1, 2, 5, 5))]),
    ("max_pool2d_ceil_dilation", lambda x: F.max_pool2d(x, 2, stride=2, dilation=2, ceil_mode=True),
     lambda x: pool_np(x, (2, 2), (2, 2), (0, 0), "max", ceil_mode=True, dilation=(2, 2)), [("d", (1, 1, 6, 7))]),
    ("max_pool1d", lambda x: F.max_pool1d(x, 2), lambda x: x.reshape(2, 2, 3, 2).max(-1), [("d", (2, 2, 6))]),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 2), lambda x: pool_np(x, (2, 2), (2, 2), (0, 0), "avg"),
     [(R, (2, 2, 4, 4))]),
    ("avg_pool2d_pad_exclude", lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False),
     lambda x: pool_np(x, (3, 3), (2, 2), (1, 1), "avg", count_include_pad=False), [(R, (1, 2, 5, 4))]),
    ("avg_pool2d_ceil", lambda x: F.avg_pool2d(x, 2, ceil_mode=True),
     lambda x: pool_np(x, (2, 2), (2, 2), (0, 0), "avg", ceil_mode=True), [(R, (1, 1, 5, 5))]),
    ("avg_pool2d_divisor", lambda x: F.avg_pool2d(x, 2, divisor_override=3),
     lambda x: pool_np(x, (2, 2), (2, 2), (0, 0), "avg") * 4 / 3, [(R, (1, 2, 4, 4))]),
    ("avg_pool1d", lambda x: F.avg_pool1d(x, 3, stride=2, padding=1),
     lambda x: pool_np(x[:, :, None, :], (1, 3), (1, 2), (0, 1), "avg")[:, :, 0], [(R, (2, 2, 7))]),
    # ---- normalization
    ("batch_norm_2d", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), bn_np,
     [(R, (4, 3)), (R, (3,)), (R, (3,))]),
    ("batch_norm_4d", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), bn_np,
     [(R, (3, 3, 2, 2)), (R, (3,)), (R, (3,))]),
    ("batch_norm_no_affine", lambda x: F.batch_norm(x, None, None, training=True),
     lambda x: bn_np(x, np.ones(3), np.zeros(3)), [(R, (2, 3, 3))]),
    ("batch_norm_eval", lambda x, w, b: F.batch_norm(x, T(BN_MEAN), T(BN_VAR), w, b, training=False),
     lambda x, w, b: (x - BN_MEAN[:, None]) / np.sqrt(BN_VAR[:, None] + 1e-5) * w[:, None] + b[:, None],
     [(R, (2, 3, 2)), (R, (3,)), (R, (3,))]),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (4,), w, b), lambda x, w, b: ln_np(x, 1, w, b),
     [(R, (2, 3, 4)), (R, (4,)), (R, (4,))]),
    ("layer_norm_2dims", lambda x, w: F.layer_norm(x, (2, 3), w), lambda x, w: ln_np(x, 2, w),
     [(R, (2, 2, 3)), (R, (2, 3))]),
    ("layer_norm_no_affine", lambda x: F.layer_norm(x, (3,)), lambda x: ln_np(x, 1), [(R, (4, 3))]),
    # ---- embedding
    ("embedding", lambda w: F.embedding(T(IDX), w), lambda w: w[IDX], [(R, (6, 3))]),
    # ---- activations
    ("gelu", lambda x: F.gelu(x), gelu_np, [(R, (3, 4))]),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"),
     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))), [(R, (3, 4))]),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x), [("d", (3, 4))]),
    ("softmax_implicit_free", lambda x: F.softmax(x, dim=-1) * F.log_softmax(x, 1),
     lambda x: np.exp(log_softmax_np(x, 1)) * log_softmax_np(x, 1), [(R, (3, 4))]),
    # ---- losses
    ("mse_loss", lambda x, t: F.mse_loss(x, t), lambda x, t: ((x - t) ** 2).mean(), [(R, (3, 4)), (R, (3, 4))]),
    ("mse_loss_sum", lambda x: F.mse_loss(x, T(MSE_T), reduction="sum"), lambda x: ((x - MSE_T) ** 2).sum(),
     [(R, (3, 4))]),
    ("mse_loss_none", lambda x: F.mse_loss(x, T(MSE_T), reduction="none"), lambda x: (x - MSE_T) ** 2,
     [(R, (3, 4))]),
    ("l1_loss", lambda x: F.l1_loss(x, T(np.zeros((3, 4)))), lambda x: np.abs(x).mean(), [("d", (3, 4))]),
    ("smooth_l1_loss", lambda x: F.smooth_l1_loss(x + T(SL1_X_OFFSETS), T(np.zeros((3, 4))), beta=0.5),
     lambda x: reduce_np(np.where(np.abs(x + SL1_X_OFFSETS) < 0.5, (x + SL1_X_OFFSETS) ** 2, np.abs(x + SL1_X_OFFSETS) - 0.25), "mean"),
     [("p", (3, 4))]),
    ("smooth_l1_loss_none_target", lambda x, t: F.smooth_l1_loss(x * 3, t, reduction="none"), None,
     [(R, (3, 4)), (R, (3, 4))]),
    ("nll_loss", lambda x: F.nll_loss(x, T(TGT4)), lambda x: nll_np(x, TGT4), [(R, (4, 3))]),
    ("nll_loss_weight_ignore_sum", lambda x: F.nll_loss(x, T(TGT4_IGN), weight=T(W3), reduction="sum"),
     lambda x: nll_np(x, TGT4_IGN, W3, "sum"), [(R, (4, 3))]),
    ("nll_loss_weight_mean", lambda x: F.nll_loss(x, T(TGT4_IGN), weight=T(W3)),
     lambda x: nll_np(x, TGT4_IGN, W3, "mean"), [(R, (4, 3))]),
    ("nll_loss_none", lambda x: F.nll_loss(x, T(TGT4), reduction="none"),
     lambda x: nll_np(x, TGT4, None, "none"), [(R, (4, 3))]),
    ("nll_loss_4d", lambda x: F.nll_loss(x, T(TGT4.reshape(1, 2, 2))),
     lambda x: nll_np(x, TGT4.reshape(1, 2, 2)), [(R, (1, 3, 2, 2))]),
    ("nll_loss_3d_none", lambda x: F.nll_loss(x, T(TGT4.reshape(2, 2)), reduction="none"),
     lambda x: nll_np(x, TGT4.reshape(2, 2), None, "none"), [(R, (2, 3, 2))]),
    ("cross_entropy", lambda x: F.cross_entropy(x, T(TGT4)), lambda x: nll_np(log_softmax_np(x, 1), TGT4),
     [(R, (4, 3))]),
    ("cross_entropy_weight_ignore", lambda x: F.cross_entropy(x, T(TGT4_IGN), weight=T(W3)),
     lambda x: nll_np(log_softmax_np(x, 1), TGT4_IGN, W3), [(R, (4, 3))]),
    ("cross_entropy_label_smoothing", lambda x: F.cross_entropy(x, T(TGT4_IGN), label_smoothing=0.2), None,
     [(R, (4, 3))]),
    ("cross_entropy_smoothing_weight_sum",
     lambda x: F.cross_entropy(x, T(TGT4), weight=T(W3), label_smoothing=0.1, reduction="sum"), None,
     [(R, (4, 3))]),
    ("cross_entropy_probs", lambda x: F.cross_entropy(x, T(PROBS)),
     lambda x: -(log_softmax_np(x, 1) * PROBS).sum() / 4, [(R, (4, 3))]),
    ("cross_entropy_probs_weight_smoothing", lambda x: F.cross_entropy(x, T(PROBS), weight=T(W3), label_smoothing=0.3),
     None, [(R, (4, 3))]),
    ("cross_entropy_3d", lambda x: F.cross_entropy(x, T(TGT4.reshape(2, 2))), None, [(R, (2, 3, 2))]),
    ("binary_cross_entropy", lambda x: F.binary_cross_entropy(_probs_from(x), T(BCE_T)), None, [(R, (3, 4))]),
    ("binary_cross_entropy_weight_none_target",
     lambda x, t: F.binary_cross_entropy(_probs_from(x), _probs_from(t), weight=T(np.arange(1.0, 5.0)), reduction="none"),
     None, [(R, (3, 4)), (R, (3, 4))]),
    ("bce_with_logits", lambda x: F.binary_cross_entropy_with_logits(x, T(BCE_T)),
     lambda x: bce_logits_np(x, BCE_T), [(R, (3, 4))]),
    ("bce_with_logits_weights_target",
     lambda x, t: F.binary_cross_entropy_with_logits(x * 2, t, weight=T(np.arange(1.0, 5.0)), pos_weight=T(np.array([0.5, 1, 2, 3.0]))),
     lambda x, t: bce_logits_np(x * 2, t, np.arange(1.0, 5.0), np.array([0.5, 1, 2, 3.0])), [(R, (3, 4)), ("p", (3, 4))]),
    # ---- padding
    ("pad_constant", lambda x: F.pad(x, (1, 2, 0, 1), value=0.5),
     lambda x: np.pad(x, [(0, 0), (0, 1), (1, 2)], constant_values=0.5), [(R, (2, 2, 3))]),
    ("pad_negative", lambda x: F.pad(x, (-1, 2)), lambda x: np.pad(x[:, 1:], [(0, 0), (0, 2)]), [(R, (3, 4))]),
    ("pad_reflect", lambda x: F.pad(x, (2, 1, 1, 1), mode="reflect"),
     lambda x: np.pad(x, [(0, 0), (1, 1), (2, 1)], mode="reflect"), [(R, (2, 3, 4))]),
    ("pad_replicate", lambda x: F.pad(x, (2, 3), mode="replicate"),
     lambda x: np.pad(x, [(0, 0), (0, 0), (2, 3)], mode="edge"), [(R, (1, 2, 3))]),
]  # fmt: skip

IDS = [case[0] for case in CASES]
assert len(set(IDS)) == len(IDS), "duplicate case ids"
WITH_REF = [case for case in CASES if case[2] is not None]


@pytest.mark.parametrize("name, fn, ref, kinds", WITH_REF, ids=[c[0] for c in WITH_REF])
def test_forward(name, fn, ref, kinds):
    arrays, tensors = make_inputs(kinds)
    out = fn(*tensors)
    expected = np.asarray(ref(*[a.copy() for a in arrays]))
    assert out.dtype == torch.float64
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, fn, ref, kinds", CASES, ids=IDS)
def test_grad(name, fn, ref, kinds):
    _, tensors = make_inputs(kinds)
    check_grad(fn, *tensors)


@pytest.mark.parametrize("name, fn, ref, kinds", CASES, ids=IDS)
def test_gradgrad(name, fn, ref, kinds):
    _, tensors = make_inputs(kinds)
    check_gradgrad(lambda *xs: fn(*xs) ** 2, *tensors)


# ---- what finite differences cannot see


def test_batch_norm_updates_running_stats():
    x = T(np.random.RandomState(0).standard_normal((5, 3, 2)))
    mean, var = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    F.batch_norm(x, mean, var, training=True, momentum=0.25)
    a = x.numpy()
    np.testing.assert_allclose(mean.numpy(), 0.25 * a.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(var.numpy(), 0.75 + 0.25 * a.var(axis=(0, 2), ddof=1), rtol=1e-12)
    assert mean._version == 0 and var._version == 0  # ATen writes them without a version bump


def test_dropout_masks_and_scales():
    torch.manual_seed(0)
    x = torch.ones(400, 50, dtype=torch.float64, requires_grad=True)
    y = F.dropout(x, 0.3)
    values = np.unique(y.detach().numpy())
    np.testing.assert_allclose(values, [0.0, 1 / 0.7])
    assert abs((y.detach().numpy() == 0).mean() - 0.3) < 0.02
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
    assert F.dropout(x, 0.3, training=False) is x and F.dropout(x, 0.0) is x
    assert (F.dropout(x, 1.0).detach().numpy() == 0).all()


def test_max_pool2d_return_indices():
    x = T(np.arange(16.0).reshape(1, 1, 4, 4))
    out, indices = F.max_pool2d(x, 2, return_indices=True)
    np.testing.assert_array_equal(indices.numpy(), [[[[5, 7], [13, 15]]]])
    assert indices.dtype == torch.int64
    np.testing.assert_array_equal(out.numpy(), [[[[5.0, 7.0], [13.0, 15.0]]]])


def test_embedding_padding_row_gets_no_grad():
    w = T(np.random.RandomState(1).standard_normal((5, 2))).requires_grad_()
    F.embedding(T(np.array([0, 2, 2, 4])), w, padding_idx=2).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[1, 1], [0, 0], [0, 0], [0, 0], [1, 1]])


def test_embedding_scale_grad_by_freq():
    """padding_idx and scale_grad_by_freq change the gradient on purpose: no finite differences here."""
    w = T(np.random.RandomState(1).standard_normal((6, 3))).requires_grad_()
    F.embedding(T(IDX), w, padding_idx=2, scale_grad_by_freq=True).sum().backward()
    expected = np.zeros((6, 3))
    expected[1] = 1.0  # used twice, scaled by 1/2
    expected[4] = 1.0
    np.testing.assert_array_equal(w.grad.numpy(), expected)


def test_float32_stays_float32():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(5, requires_grad=True)
    loss = F.cross_entropy(F.linear(x, w, b), torch.tensor([0, 1, 4, 2]))
    loss.backward()
    assert loss.dtype == torch.float32
    assert w.grad.dtype == x.grad.dtype == b.grad.dtype == torch.float32
    c = F.conv2d(torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3, requires_grad=True), padding=1)
    assert c.dtype == torch.float32
