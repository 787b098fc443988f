"""The nn rows' raw-array forwards (numpy or cupy, via `xp`).

Sliding windows (convolution, pooling) are strided views of a padded input. `im2col` copies
them into columns so a convolution is one batched matmul; `col2im` adds columns back into an
image. The two are adjoint, so each is the other's backward, which is what makes convolution
twice differentiable. Nothing here knows about Tensors or autograd.
"""

from __future__ import annotations

import itertools
import math

import numpy

from ... import backend
from ..pointwise.kernels import log_sigmoid
from ..reductions.kernels import vector_norm

# ------------------------------------------------------------------------ window geometry


def out_size(n: int, k: int, s: int, lo: int, hi: int, d: int) -> int:
    return (n + lo + hi - d * (k - 1) - 1) // s + 1


def out_shape(spatial, kernel, stride, pads, dilation) -> tuple:
    return tuple(
        out_size(n, k, s, lo, hi, d) for n, k, s, (lo, hi), d in zip(spatial, kernel, stride, pads, dilation)
    )


def symmetric(padding) -> tuple:
    """Per-dim (lo, hi) pads from torch's symmetric `padding`."""
    return tuple((p, p) for p in padding)


def pool_geometry(spatial, kernel, stride, padding, dilation, ceil_mode) -> tuple:
    """Output sizes and (lo, hi) pads of a pooling; ceil_mode pads the high side so the last window fits.

    As in PyTorch, a ceil_mode window must start inside the input or the left padding.
    """
    outs, pads = [], []
    for n, k, s, p, d in zip(spatial, kernel, stride, padding, dilation):
        span = d * (k - 1) + 1
        if ceil_mode:
            o = -(-(n + 2 * p - span) // s) + 1
            if (o - 1) * s >= n + p:
                o -= 1
        else:
            o = (n + 2 * p - span) // s + 1
        outs.append(o)
        pads.append((p, max(p, (o - 1) * s + span - n - p)))
    return tuple(outs), tuple(pads)


def overlapping(kernel, stride, dilation) -> bool:
    """Whether neighbouring windows share elements (col2im must then add, not assign)."""
    return any(s < d * (k - 1) + 1 for k, s, d in zip(kernel, stride, dilation))


def pad_array(xp, x, pads, value=0):
    """x with its trailing len(pads) dims padded by (lo, hi) with `value` (a copy only if needed)."""
    if not any(lo or hi for lo, hi in pads):
        return x
    lead = x.ndim - len(pads)
    spatial = x.shape[lead:]
    out = xp.full(
        x.shape[:lead] + tuple(n + lo + hi for n, (lo, hi) in zip(spatial, pads)), value, dtype=x.dtype
    )
    out[(slice(None),) * lead + tuple(slice(lo, lo + n) for n, (lo, _) in zip(spatial, pads))] = x
    return out


def _crop(x, pads, spatial):
    lead = x.ndim - len(pads)
    return x[(slice(None),) * lead + tuple(slice(lo, lo + n) for n, (lo, _) in zip(spatial, pads))]


def windows(xp, padded, kernel, stride, dilation, out):
    """A view (*lead, *kernel, *out) of `padded`: [.., k.., o..] is padded[.., o*s + k*d ..]."""
    nd = len(kernel)
    lead = padded.ndim - nd
    strides = padded.strides
    spatial_strides = strides[lead:]
    shape = padded.shape[:lead] + tuple(kernel) + tuple(out)
    new_strides = (
        strides[:lead]
        + tuple(a * d for a, d in zip(spatial_strides, dilation))
        + tuple(a * s for a, s in zip(spatial_strides, stride))
    )
    return xp.lib.stride_tricks.as_strided(padded, shape, new_strides)


# ------------------------------------------------------------------------- im2col / col2im


def im2col(xp, x, kernel, stride, pads, dilation):
    """(N, C, *spatial) -> (N, C * prod(kernel), prod(out)) columns, laid out as torch's F.unfold does."""
    n, c = x.shape[:2]
    out = out_shape(x.shape[2:], kernel, stride, pads, dilation)
    view = windows(xp, pad_array(xp, x, pads), kernel, stride, dilation, out)
    return view.reshape(n, c * math.prod(kernel), math.prod(out))


def col2im(xp, cols, shape, kernel, stride, pads, dilation):
    """The adjoint of im2col: columns added back into a (N, C, *spatial) image of `shape`."""
    n, c = shape[:2]
    spatial = tuple(shape[2:])
    out = out_shape(spatial, kernel, stride, pads, dilation)
    blocks = cols.reshape((n, c) + tuple(kernel) + out)
    padded = xp.zeros((n, c) + tuple(m + lo + hi for m, (lo, hi) in zip(spatial, pads)), dtype=cols.dtype)
    if not overlapping(kernel, stride, dilation):  # each element belongs to at most one window
        windows(xp, padded, kernel, stride, dilation, out)[...] = blocks
    else:
        both = (slice(None), slice(None))
        for offsets in itertools.product(*(range(k) for k in kernel)):
            key = both + tuple(
                slice(o * d, o * d + s * (m - 1) + 1, s) for o, d, s, m in zip(offsets, dilation, stride, out)
            )
            padded[key] += blocks[both + offsets]
    return _crop(padded, pads, spatial)


# ---------------------------------------------------------------------------- convolution


def conv_forward(xp, x, w, b, stride, padding, dilation, groups, cache=None):
    """Convolution as im2col plus one batched matmul per group: (N, C, *sp) -> (N, O, *out).

    The columns are left in `cache[0]`, when given, for the weight gradient to reuse.
    """
    n = x.shape[0]
    o = w.shape[0]
    kernel = w.shape[2:]
    pads = symmetric(padding)
    out = out_shape(x.shape[2:], kernel, stride, pads, dilation)
    cols = im2col(xp, x, kernel, stride, pads, dilation)  # (N, C*K, L)
    if cache is not None:
        cache[0] = cols
    length = cols.shape[-1]
    if groups == 1:
        y = xp.matmul(w.reshape(o, -1), cols)
    else:
        y = xp.matmul(w.reshape(groups, o // groups, -1), cols.reshape(n, groups, -1, length))
        y = y.reshape(n, o, length)
    if b is not None:
        y += b.reshape(o, 1)
    return y.reshape((n, o) + out)


def conv_input_grad(xp, g, w, shape, padding, dilation, groups):
    """The input gradient of a stride-1 convolution (1 or 2 spatial dims), without col2im's strided adds.

    The columns W^T g are computed on a grid as wide as the padded input (g is widened with
    zeros), so each kernel offset's block adds back into the flattened padded image as one
    contiguous slice per plane; the windows that wrap around a row carry zeros.
    """
    n, c = shape[:2]
    spatial = tuple(shape[2:])
    o, kernel = w.shape[0], tuple(w.shape[2:])
    pads = symmetric(padding)
    padded = tuple(m + 2 * p for m, p in zip(spatial, padding))
    out = tuple(g.shape[2:])
    wide = xp.zeros((n, o) + out[:-1] + padded[-1:], dtype=g.dtype)
    wide[..., : out[-1]] = g
    length = math.prod(out[:-1]) * padded[-1]
    cols = xp.matmul(
        xp.swapaxes(w.reshape(groups, o // groups, -1), 1, 2), wide.reshape(n, groups, o // groups, length)
    ).reshape(n, c, math.prod(kernel), length)
    plane_strides = [math.prod(padded[i + 1 :]) for i in range(len(padded))]
    flat = xp.zeros((n, c, math.prod(padded) + (kernel[-1] - 1) * dilation[-1]), dtype=g.dtype)
    for i, offsets in enumerate(itertools.product(*(range(k) for k in kernel))):
        start = sum(k * d * ps for k, d, ps in zip(offsets, dilation, plane_strides))
        flat[:, :, start : start + length] += cols[:, :, i]
    image = flat[:, :, : math.prod(padded)].reshape((n, c) + padded)
    return _crop(image, pads, spatial)


# -------------------------------------------------------------------------------- pooling


def _valid(xp, spatial, kernel_offsets, stride, pads, dilation, out):
    """Which windows' element at `kernel_offsets` lies inside the input (not in the padding): (*out) bool."""
    mask = xp.ones(out, dtype=bool)
    for i, (n, k, s, (lo, _), d, o) in enumerate(zip(spatial, kernel_offsets, stride, pads, dilation, out)):
        pos = xp.arange(o) * s - lo + k * d
        shape = [1] * len(out)
        shape[i] = o
        mask = mask & ((pos >= 0) & (pos < n)).reshape(shape)
    return mask


def max_pool(xp, x, kernel, stride, pads, dilation, out):
    """Per window of (N, C, *sp), the flat index into x of its maximum, and the index within the plane.

    A few passes per kernel element over output-sized arrays (no window copies; masked numpy ops
    are slow, so the first maximum's offset is accumulated arithmetically). Ties go to the first
    element in window order, a NaN wins (the last one), and padding never does, as in PyTorch.
    """
    n, c = x.shape[:2]
    spatial = tuple(x.shape[2:])
    nd = len(kernel)
    lowest = -numpy.inf if x.dtype.kind == "f" else numpy.iinfo(x.dtype).min
    view = windows(xp, pad_array(xp, x, pads, lowest), kernel, stride, dilation, out)
    padded = any(lo or hi for lo, hi in pads)
    plane_strides = [math.prod(spatial[i + 1 :]) for i in range(nd)]
    lead = (slice(None), slice(None))
    offsets = list(itertools.product(*(range(k) for k in kernel)))
    slices = [view[lead + k] for k in offsets]
    shifts = [sum(o * d * ps for o, d, ps in zip(k, dilation, plane_strides)) for k in offsets]
    valid = [_valid(xp, spatial, k, stride, pads, dilation, out) for k in offsets] if padded else None
    top = slices[0]
    for v in slices[1:]:
        top = xp.maximum(top, v)  # NaN propagates
    pos = xp.zeros(top.shape, dtype=numpy.int64)
    found = None
    for i, (v, shift) in enumerate(zip(slices, shifts)):
        hit = v == top
        if padded:
            hit &= valid[i]
        if found is None:
            found = hit
            continue
        pos += (hit & ~found) * shift
        found |= hit
    nan = top != top
    if nan.any():  # a window holding NaN points at its last NaN
        for i, (v, shift) in enumerate(zip(slices, shifts)):
            isnan = (v != v) & nan if not padded else (v != v) & nan & valid[i]
            pos = xp.where(isnan, shift, pos)
    base = 0
    for i, (s, (lo, _), o, ps) in enumerate(zip(stride, pads, out, plane_strides)):
        shape = [1] * nd
        shape[i] = o
        base = base + ((xp.arange(o, dtype=numpy.int64) * s - lo) * ps).reshape(shape)
    in_plane = pos + base
    planes = (xp.arange(n * c, dtype=numpy.int64) * math.prod(spatial)).reshape((n, c) + (1,) * nd)
    return in_plane + planes, in_plane


def avg_divisor(spatial, kernel, stride, padding, out, count_include_pad, divisor_override):
    """What each window's sum is divided by (PyTorch's rules), as a number or an array of `out`.

    Window geometry, worked out on the host: pooling moves an array divisor to the input's device.
    """
    if divisor_override:
        return divisor_override
    sizes = []
    for n, k, s, p, o in zip(spatial, kernel, stride, padding, out):
        start = numpy.arange(o) * s - p
        end = numpy.minimum(start + k, n + p)
        if not count_include_pad:
            start, end = numpy.maximum(start, 0), numpy.minimum(end, n)
        sizes.append(end - start)
    divisor = sizes[0]
    for size in sizes[1:]:
        divisor = numpy.multiply.outer(divisor, size)
    if (divisor == divisor.flat[0]).all():
        return int(divisor.flat[0])
    return divisor


def window_sum(xp, x, kernel, stride, pads, out):
    """Sum of each (undilated, zero-padded) window over the trailing dims: (*lead, *sp) -> (*lead, *out)."""
    nd = len(kernel)
    lead = x.ndim - nd
    view = windows(xp, pad_array(xp, x, pads), kernel, stride, (1,) * nd, out)
    return view.sum(axis=tuple(range(lead, lead + nd)))


def batch_norm(x, weight, bias, mean, invstd):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    scale = invstd if weight is None else invstd * weight
    shift = -mean * scale if bias is None else bias - mean * scale
    out = x * scale.reshape(shape)
    out += shift.reshape(shape)
    return out


def row_dots(xp, a, b):
    """sum(a * b) along each row of two 2-d arrays, without the product's array where einsum can."""
    if a.dtype in (numpy.float32, numpy.float64) and b.dtype == a.dtype:
        return xp.einsum("ij,ij->i", a, b)
    return (a * b).sum(axis=1)


def layer_norm_stats(xp, x, k, eps):
    """LayerNorm's mean and 1 / std over the last `k` dims (kept), in three passes: mean, centred,
    sum of squares (numpy's var takes more, with its own centring)."""
    n = math.prod(x.shape[x.ndim - k :])
    mean = x.mean(axis=tuple(range(x.ndim - k, x.ndim)), keepdims=True)
    centred = (x - mean).reshape(mean.size, n)
    var = row_dots(xp, centred, centred).reshape(mean.shape) / max(n, 1)
    return mean, 1 / (var + eps) ** 0.5


def layer_norm(x, weight, bias, mean, rstd, xhat=None):
    """`xhat`: a box the forward fills with (x - mean) * rstd, for the raw backward."""
    out = x - mean
    out *= rstd
    if xhat is not None:
        xhat[0] = out
        out = out * weight if weight is not None else out.copy()  # the output is the user's to change
    elif weight is not None:
        out *= weight
    if bias is not None:
        out += bias
    return out


def constant_pad(xp, a, value, new_shape, out_key, in_key):
    out = xp.full(new_shape, value, dtype=a.dtype)
    out[out_key] = a[in_key]
    return out


# ----------------------------------------------------------------------------------- losses


def reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def nll_loss(x, key, coef, reduction, total):
    """-x[n, target[n]] * weight[target[n]] (0 where ignored), reduced; `key` picks the targets."""
    loss = x[key] * coef
    if reduction == "none":
        return -loss
    total_loss = -loss.sum()
    return total_loss / total if reduction == "mean" else total_loss


def smooth_l1_loss(xp, a, b, reduction, beta):
    d = xp.abs(a - b)
    return reduce(xp.where(d < beta, (0.5 / beta) * d * d, d - 0.5 * beta), reduction)


def binary_cross_entropy(xp, x, t, weight, reduction):
    loss = (t - 1) * xp.maximum(xp.log(1 - x), -100) - t * xp.maximum(xp.log(x), -100)
    return reduce(loss if weight is None else loss * weight, reduction)


def binary_cross_entropy_with_logits(xp, x, t, weight, pos_weight, reduction):
    log_sig = log_sigmoid(xp, x)
    if pos_weight is None:
        loss = (1 - t) * x - log_sig
    else:
        loss = (1 - t) * x - ((pos_weight - 1) * t + 1) * log_sig
    return reduce(loss if weight is None else loss * weight, reduction)


# ------------------------------------------------------------- nn: activations and the other nn rows


def silu(xp, x):
    return x / (1 + xp.exp(-x))


def mish(xp, x):
    return x * xp.tanh(xp.log1p(xp.exp(x)))


def hardsigmoid(xp, x):
    return xp.minimum(xp.maximum(x + 3, 0), 6) / 6


def elu(xp, x, alpha, scale, input_scale):
    return xp.where(x <= 0, xp.expm1(x * input_scale) * (alpha * scale), x * scale)


def softplus(xp, x, beta, threshold):
    z = x * beta
    return xp.where(z > threshold, x, xp.log1p(xp.exp(z)) / beta)


def glu(xp, x, dim):
    a, b = xp.split(x, 2, axis=dim)
    return a / (1 + xp.exp(-b))


def cdist(xp, x1, x2, p):
    """p-norm distances between the rows of x1 (..., R1, M) and x2 (..., R2, M), batch dims broadcast."""
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    if diff.shape[-1] == 0:
        return xp.zeros(diff.shape[:-1], dtype=x1.dtype)
    return vector_norm(xp, diff, p, -1, False)


def euclidean_dist(xp, x1, x2):
    """Distances as one matrix product, [-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T, as ATen's _euclidean_dist."""
    n1 = (x1 * x1).sum(axis=-1, keepdims=True)
    n2 = (x2 * x2).sum(axis=-1, keepdims=True)
    left = xp.concatenate([x1 * -2, n1, xp.ones_like(n1)], axis=-1)
    right = xp.concatenate([x2, xp.ones_like(n2), n2], axis=-1)
    return xp.sqrt(xp.maximum(left @ xp.swapaxes(right, -1, -2), 0))


def huber_loss(xp, a, b, reduction, delta):
    z = xp.abs(a - b)
    return reduce(xp.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)), reduction)


def group_norm(x, weight, bias, group, mean, rstd):
    n, c = x.shape[:2]
    out = ((x.reshape(n, group, -1) - mean[..., None]) * rstd[..., None]).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if weight is not None:
        out *= weight.reshape(shape)
    if bias is not None:
        out += bias.reshape(shape)
    return out


def fresh(xp, out, source):
    """`out` as an array of its own: a copy where a reshape left it a view of the input."""
    return out.copy() if xp.may_share_memory(out, source) else out


def along_trailing_dims(xp, x, matrices):
    """A linear map of the trailing len(matrices) dims: each (out, in) matrix applied along its dim."""
    for k, matrix in enumerate(matrices):
        axis = k - len(matrices)
        if axis == -1:
            x = x @ matrix.T
        else:
            x = xp.swapaxes(xp.swapaxes(x, axis, -1) @ matrix.T, axis, -1)
    return x


def adaptive_bounds(n_in: int, n_out: int):
    """Each adaptive window's [start, end) along one dim, as PyTorch's adaptive pools cut them (host arrays)."""
    i = numpy.arange(n_out)
    return (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)


def adaptive_average_matrix(xp, n_in: int, n_out: int, dtype):
    """The (n_out, n_in) matrix that averages each adaptive window."""
    start, end = adaptive_bounds(n_in, n_out)
    j = numpy.arange(n_in)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return xp.asarray(inside / (end - start)[:, None]).astype(dtype)


def adaptive_max_pool(xp, x, out_size):
    """Per adaptive window of (P, H, W) planes, the in-plane flat index of its maximum (ties: the first;
    a NaN wins, the last one, as PyTorch's CPU kernel scans)."""
    planes, (h, w) = x.shape[0], x.shape[1:]
    tables = []  # per dim, (out, widest window) input positions; a narrower window repeats its last one
    for n, o in zip((h, w), out_size):
        start, end = adaptive_bounds(n, o)
        tables.append(
            numpy.minimum(start[:, None] + numpy.arange(int((end - start).max())), end[:, None] - 1)
        )
    rows, cols = tables
    pos = xp.asarray((rows[:, None, :, None] * w + cols[None, :, None, :]).reshape(out_size + (-1,)))
    values = x.reshape(planes, h * w)[:, pos]  # (P, oh, ow, window)
    best = values.argmax(axis=-1)
    nan = values != values
    if nan.any():
        last_nan = nan.shape[-1] - 1 - nan[..., ::-1].argmax(axis=-1)
        best = xp.where(nan.any(axis=-1), last_nan, best)
    return xp.take_along_axis(xp.broadcast_to(pos, values.shape), best[..., None], axis=-1)[..., 0]


def max_unpool(xp, x, indices, output_size):
    """Zeros of `output_size` with x's values written at flat `indices` into it."""
    out = xp.zeros(math.prod(output_size), dtype=x.dtype)
    out[indices.reshape(-1)] = x.reshape(-1)
    return out.reshape(output_size)


def embedding_bag(xp, weight, per_sample_weights, indices, bags, coef, num_bags, mode, max_indices):
    """Each bag's rows of `weight`, summed with weights `coef` (and per_sample_weights), or their maxima."""
    if mode == "max":
        rows, columns, valid = max_indices
        return weight[rows, columns] * valid
    scale = coef if per_sample_weights is None else coef * per_sample_weights
    out = xp.zeros((num_bags, weight.shape[1]), dtype=weight.dtype)
    backend.scatter_add(out, bags, weight[indices] * scale[:, None])
    return out


def conv_transpose(xp, x, w, b, stride, padding, dilation, groups, output_padding):
    """Transposed convolution: W^T x per group as columns, added back into the image (col2im), then cut to
    (i - 1) s - 2 p + d (k - 1) + output_padding + 1 per dim (zeros past the last window)."""
    n, c_in = x.shape[:2]
    spatial = x.shape[2:]
    kernel = w.shape[2:]
    c_out = w.shape[1] * groups
    length = math.prod(spatial)
    cols = xp.matmul(
        xp.swapaxes(w.reshape(groups, c_in // groups, -1), 1, 2), x.reshape(n, groups, c_in // groups, length)
    ).reshape(n, -1, length)
    full = tuple((i - 1) * s + d * (k - 1) + 1 for i, s, d, k in zip(spatial, stride, dilation, kernel))
    image = col2im(xp, cols, (n, c_out) + full, kernel, stride, ((0, 0),) * len(kernel), dilation)
    out_size = tuple(f - 2 * p + op for f, p, op in zip(full, padding, output_padding))
    out = xp.zeros((n, c_out) + out_size, dtype=image.dtype)
    src = tuple(slice(p, min(p + o, f)) for p, o, f in zip(padding, out_size, full))
    dst = tuple(slice(0, min(o, f - p)) for p, o, f in zip(padding, out_size, full))
    out[(slice(None), slice(None)) + dst] = image[(slice(None), slice(None)) + src]
    if b is not None:
        out += b.reshape((c_out,) + (1,) * len(kernel))
    return out


# ------------------------------------------------------------------- upsampling (PyTorch's CPU rules)


def _source_scale(n_in: int, n_out: int, scale, opmath):
    """compute_scales_value: 1 / scale_factor when one was given, else n_in / n_out, in `opmath`."""
    if scale is not None and scale > 0:
        return opmath(1.0 / scale)
    return opmath(n_in) / opmath(n_out)


def nearest_indices(n_in: int, n_out: int, scale, exact: bool, shortcuts: bool):
    """Each output position's source along one dim: floor(dst * s) (exact: floor((dst + 0.5) * s)), in float32.

    `shortcuts`: PyTorch's 2-D nearest kernel copies a dim whose size is kept, and halves the index of a
    dim doubled, whatever the scale factor says.
    """
    if shortcuts and n_out == n_in:
        return numpy.arange(n_out)
    if shortcuts and n_out == 2 * n_in:
        return numpy.arange(n_out) >> 1
    s = _source_scale(n_in, n_out, scale, numpy.float32)
    dst = numpy.arange(n_out, dtype=numpy.float32)
    src = numpy.floor(((dst + numpy.float32(0.5)) if exact else dst) * s).astype(numpy.int64)
    return numpy.minimum(src, n_in - 1)


def _source_positions(n_in: int, n_out: int, align_corners: bool, scale, cubic: bool, opmath):
    """area_pixel_compute_source_index for every output position (and its scale), in `opmath`."""
    dst = numpy.arange(n_out, dtype=opmath)
    if align_corners:
        s = opmath(n_in - 1) / opmath(n_out - 1) if n_out > 1 else opmath(0)
        return s * dst
    src = _source_scale(n_in, n_out, scale, opmath) * (dst + opmath(0.5)) - opmath(0.5)
    return src if cubic else numpy.maximum(src, opmath(0))


def _guarded(src, n_in: int):
    """guard_index_and_lambda: the left index (at most n_in - 1) and the fraction past it, within [0, 1]."""
    index = numpy.minimum(numpy.floor(src).astype(numpy.int64), n_in - 1)
    return index, numpy.clip(src - index, 0, 1)


def _cubic_coefficients(t, a=-0.75):
    """The 4 cubic-convolution weights of the taps at -1, 0, 1, 2 around a fraction t (PyTorch's A = -0.75)."""

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def interpolation_matrix(xp, n_in: int, n_out: int, align_corners: bool, scale, cubic: bool, dtype):
    """The (n_out, n_in) matrix of linear (or cubic) interpolation along one dim; taps past the ends clamp."""
    if n_in == n_out and not cubic:  # PyTorch's linear kernels copy a dim whose size is kept
        return xp.eye(n_in, dtype=dtype)
    opmath = numpy.float64 if numpy.dtype(dtype) == numpy.float64 else numpy.float32
    index, t = _guarded(_source_positions(n_in, n_out, align_corners, scale, cubic, opmath), n_in)
    rows = numpy.arange(n_out)
    matrix = numpy.zeros((n_out, n_in), dtype=opmath)
    if cubic:
        for offset, weight in zip((-1, 0, 1, 2), _cubic_coefficients(t)):
            numpy.add.at(matrix, (rows, numpy.clip(index + offset, 0, n_in - 1)), weight)
    else:
        numpy.add.at(matrix, (rows, index), 1 - t)
        numpy.add.at(matrix, (rows, index + (index < n_in - 1)), t)
    return xp.asarray(matrix.astype(dtype))


# ------------------------------------------------------------------------------------ attention


def safe_softmax(xp, x, dim):
    """softmax, but 0 (not NaN) along a row that is -inf throughout (ATen's _safe_softmax)."""
    if x.size == 0:
        return x.copy()
    top = x.max(axis=dim, keepdims=True)
    e = xp.exp(x - xp.where(top == -math.inf, 0, top))
    total = e.sum(axis=dim, keepdims=True)
    return xp.where(total == 0, 0, e / xp.where(total == 0, 1, total))


def attention(xp, q, k, v, mask, scale, groups, logsumexp=None):
    """softmax(q k^T * scale + mask) v over the last two dims; each of k's and v's heads serves `groups`.

    The box `logsumexp`, when given, gets each row's log-sum-exp of the scores (as torch's flash
    attention saves it), from which the backward rebuilds the probabilities in two passes.
    """
    if groups > 1:
        k, v = xp.repeat(k, groups, axis=-3), xp.repeat(v, groups, axis=-3)
    scores = q @ xp.swapaxes(k, -1, -2)  # a new array: the softmax runs in place on it
    scores *= scale
    if mask is not None:
        scores = scores + mask  # may broadcast to a larger shape
    top = scores.max(axis=-1, keepdims=True)
    if xp.isneginf(top).any():  # a row masked throughout: 0, not NaN (ATen's _safe_softmax)
        return safe_softmax(xp, scores, -1) @ v
    scores -= top
    xp.exp(scores, out=scores)
    total = scores.sum(axis=-1, keepdims=True)
    scores /= total
    if logsumexp is not None:
        logsumexp[0] = top + xp.log(total)
    return scores @ v
