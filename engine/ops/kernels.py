"""Raw-array kernels behind the rows of the derivative table (numpy or cupy, via `xp`).

The forwards that are more than one expression live here, so the table stays a table.
Sliding windows (convolution, pooling) are strided views of a padded input. `im2col`
copies them into columns so a convolution is one batched matmul; `col2im` adds columns
back into an image. The two are adjoint, so each is the other's backward, which is what
makes convolution twice differentiable. Nothing here knows about Tensors or autograd.
"""

from __future__ import annotations

import itertools
import math

import numpy

from .. import backend

SQRT_PI = math.sqrt(math.pi)


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


# ------------------------------------------------------------------------------ pointwise


def _erf_series(xp, s):
    """erf(s) for 0 <= s < 2.5: 2/sqrt(pi) exp(-s^2) s sum_k (2s^2)^k / (2k+1)!! (positive terms)."""
    y = 2.0 * s * s
    acc = xp.ones_like(s)
    for k in range(36, 0, -1):
        acc = 1.0 + acc * y / (2 * k + 1)
    return (2.0 / SQRT_PI) * xp.exp(-s * s) * s * acc


def _erfc_fraction(xp, t):
    """erfc(t) for t >= 2.5: exp(-t^2) / sqrt(pi) / (t + 1/2 / (t + 1 / (t + 3/2 / ...)))."""
    f = t.copy()
    for k in range(26, 0, -1):
        f = t + (k / 2.0) / f
    return xp.exp(-t * t) / (SQRT_PI * f)


def _erf_parts(xp, x):
    """(|x| in float64, erf(|x|) where |x| < 2.5 else erfc(|x|), the mask |x| < 2.5)."""
    a = xp.abs(x).astype(numpy.float64)
    out = xp.empty_like(a)
    small = a < 2.5
    out[small] = _erf_series(xp, a[small])
    large = ~small
    out[large] = _erfc_fraction(xp, a[large])
    return a, out, small


# erf(x) = x P(x^2) / Q(x^2) for |x| <= 4: a rational least-squares fit refined toward minimax, relative
# error under 2e-9 in float64 arithmetic, so float32 results are at most one rounding off (about 6e-8);
# beyond 4, erf rounds to +-1 in float32. About 30 elementwise passes, against 150 for the series.
_ERF_SINGLE_P = (
    1.1283791683082531,
    0.16637806479542117,
    0.050857120247547266,
    0.0029324331747744236,
    0.0003043472952329405,
    -4.075182230582759e-07,
    -4.578483649252136e-08,
)
_ERF_SINGLE_Q = (
    1.0,
    0.4807820964968448,
    0.10533136619745133,
    0.013441317945773518,
    0.001033534737857549,
    4.055523160251907e-05,
    -6.369692463331716e-07,
)


# Phi(x) = 1/2 + tanh(x P(x^2)) / 2 for float32 GELU: P fits atanh(erf(x / sqrt 2)) / x on [0, 6], weighted
# least squares refined toward minimax of GELU's absolute error; numpy's float32 tanh is one fast
# pass and saturates to +-1, so Phi is 0 (GELU -0.0) in the far negative tail and never below 0.
# Evaluated in float32, GELU is within 7e-8 of exact on [-8, 8] (torch's float32 kernel: 1.2e-6), in
# about half the passes of erf's rational fit. Clipped at 5.79, where x P(x^2) >= 10.5: numpy's SIMD
# float32 tanh is exactly +-1 only from 10 on (libm's from 9.01), and the tail must be exactly 0.
_PHI_TANH_P = (
    0.7978842161296489,
    0.03633428346425835,
    -3.312995518208869e-05,
    -5.5240170048154255e-05,
    3.969111034843143e-06,
    -1.3344650624583723e-07,
    1.8056185754794998e-09,
)
_PHI_TANH_BOUND = 5.79


def polynomial(xp, t, coefficients):
    """sum c_k t^k by Horner's rule, in place on one new array (coefficients lowest degree first)."""
    acc = t * coefficients[-1]  # the first step makes the array: no pass filling it with a constant
    acc += coefficients[-2]
    for c in coefficients[-3::-1]:
        acc *= t
        acc += c
    return acc


def _erf_single(xp, x):
    """erf for float32 and narrower: the rational fit above, evaluated in float64."""
    a = xp.clip(x, -4.0, 4.0, dtype=numpy.float64)  # one pass: casting first costs a second
    z = a * a
    a *= polynomial(xp, z, _ERF_SINGLE_P)
    a /= polynomial(xp, z, _ERF_SINGLE_Q)
    return a.astype(x.dtype)


def erf(xp, x):
    """erf with array ops only (numpy has none): the rational fit for float32 and narrower; for float64
    a series below 2.5 and erfc's continued fraction above, to float64 accuracy."""
    device_erf = backend.device_special(xp, "erf")  # CuPy's kernel where there is one
    if device_erf is not None:
        return device_erf(x)
    if x.dtype.itemsize <= 4:
        return _erf_single(xp, x)
    _, part, small = _erf_parts(xp, x)
    result = xp.where(small, part, 1.0 - part)
    return (xp.sign(x) * result).astype(x.dtype, copy=False)


def erfc(xp, x):
    """1 - erf(x), computed directly where erf is close to 1 (so erfc(5) keeps its digits)."""
    device_erfc = backend.device_special(xp, "erfc")
    if device_erfc is not None:
        return device_erfc(x)
    _, part, small = _erf_parts(xp, x)
    upper = xp.where(small, 1.0 - part, part)  # erfc(|x|)
    return xp.where(x < 0, 2.0 - upper, upper).astype(x.dtype, copy=False)


def erfinv(xp, y):
    """The inverse of erf: an approximate start refined by Halley's method on erf(x) = |y|.

    The start, sqrt(sqrt(c^2 - w / a) - c) with w = log(1 - y^2), c = 2 / (pi a) + w / 2 and
    a = 0.147, is within 0.2%; each step x -= u / (1 + x u), u = (erf(x) - |y|) / erf'(x),
    triples the correct digits. Near |y| = 1 the residual is taken as (1 - |y|) - erfc(x),
    both exact there, so the tail keeps its digits.
    """
    device_erfinv = backend.device_special(xp, "erfinv")
    if device_erfinv is not None:
        return device_erfinv(y)
    y64 = y.astype(numpy.float64)
    a = xp.abs(y64)
    q = 1.0 - a
    inside = a < 1
    w = xp.log(xp.where(inside, q * (1.0 + a), 1.0))
    c = 2.0 / (math.pi * 0.147) + w / 2.0
    x = xp.sqrt(xp.sqrt(c * c - w / 0.147) - c)
    central = a <= 0.5
    for _ in range(3):
        _, part, small = _erf_parts(xp, x)
        erf_x = xp.where(small, part, 1.0 - part)
        erfc_x = xp.where(small, 1.0 - part, part)
        residual = xp.where(central, erf_x - a, q - erfc_x)
        u = residual / ((2.0 / SQRT_PI) * xp.exp(-x * x))
        x = x - u / (1.0 + x * u)
    x = xp.where(inside, x, xp.where(a == 1, math.inf, math.nan))
    return xp.copysign(x, y64).astype(y.dtype, copy=False)


def log_sigmoid(xp, x):
    """log(sigmoid(x)) without overflow: min(x, 0) - log1p(exp(-|x|))."""
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


def normal_cdf(xp, x):
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2, a new array; float32 on the CPU through the fit above."""
    if xp is numpy and x.dtype == numpy.float32:
        a = numpy.clip(x, -_PHI_TANH_BOUND, _PHI_TANH_BOUND)  # NaN stays NaN; clip is one fast pass
        phi = polynomial(xp, a * a, _PHI_TANH_P)
        phi *= a
        numpy.tanh(phi, out=phi)
        phi *= 0.5
        phi += 0.5
        return phi
    phi = erf(xp, x * (1.0 / math.sqrt(2.0)))
    phi += 1.0
    phi *= 0.5  # exact: x * 0.5 * (erf + 1) and x * ((erf + 1) * 0.5) round alike
    return phi


def gelu(xp, x, approximate, cdf=None):
    """x Phi(x); exact GELU puts Phi(x), the normal cdf, in the box `cdf` when given, for the backward."""
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return x * 0.5 * (xp.tanh(inner) + 1.0)  # array first: numpy keeps its dtype's tag (bfloat16)
    phi = normal_cdf(xp, x)
    if cdf is not None:
        cdf[0] = phi
    out = x * phi  # -inf * 0 is NaN, as torch's float32 GELU
    if xp is numpy and x.dtype == numpy.float32 and not out.max(initial=-math.inf) < math.inf:  # one read
        xp.copyto(out, math.nan, where=x == math.inf)  # torch's CPU float32 kernel: GELU(inf) is NaN too
    return out


# ------------------------------------------------------------------ forwards of the rows


def expand(xp, a, size):
    """A broadcast view that can be written, as torch's expand (numpy's broadcast_to is read-only):
    a write through it reaches the one element each broadcast row shares."""
    out = xp.broadcast_to(a, size)
    if xp is not numpy or not a.flags.writeable:  # CuPy's views are all writable
        return out
    return numpy.lib.stride_tricks.as_strided(a, out.shape, out.strides)


def as_strided(a, size, stride, storage_offset):
    return backend.restrided(a, tuple(size), tuple(stride), storage_offset)


def concatenate(xp, arrays, dim):
    return backend.bfloat16_like(xp.concatenate(arrays, axis=dim), arrays)


def stack(xp, arrays, dim):
    return backend.bfloat16_like(xp.stack(arrays, axis=dim), arrays)


def where(xp, condition, a, b):
    return backend.bfloat16_like(xp.where(condition, a, b), [x for x in (a, b) if hasattr(x, "dtype")])


def to_copy(a, dtype, device):
    return backend.cast(backend.to_device(a, device), dtype, copy=False)


def copied_into(xp, target, src):
    """copy_'s values: `src` (an array or a Python number) in `target`'s shape and dtype. A number becomes
    an array first: CuPy's broadcast_to takes arrays only."""
    return xp.broadcast_to(xp.asarray(src), target.shape).astype(target.dtype, copy=True)


def softmax(xp, a, dim):
    if a.size == 0:  # numpy's max has no identity on an empty axis; torch's result is empty
        return a.copy()
    e = xp.exp(a - a.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def log_softmax(xp, a, dim):
    if a.size == 0:
        return a.copy()
    shifted = a - a.max(axis=dim, keepdims=True)
    shifted -= xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))  # in place: one array fewer
    return shifted


def index_put(a, values, key):
    out = a.copy()
    out[key] = values
    return out


def addmm(bias, mat1, mat2):
    out = mat1 @ mat2
    out += bias
    return out


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


# ------------------------------------------------------------------ reductions and scans


def scan(xp, combine, x, dim):
    """The inclusive scan of `combine` (an associative xp ufunc) along `dim`, in log2(n) whole-array steps.

    Each step combines every element with the one 2^k before it (Hillis and Steele), so the
    same code runs on numpy and CuPy, neither of which scans with logaddexp or maximum.
    """
    out = x.copy()
    n = x.shape[dim] if x.ndim else 1
    lead = (slice(None),) * dim
    step = 1
    while step < n:
        later, earlier = lead + (slice(step, None),), lead + (slice(None, n - step),)
        out[later] = combine(out[later], out[earlier])
        step *= 2
    return out


def variance(xp, x, dims, correction, keepdim):
    """The variance over `dims` with `correction`: inf or nan, silently, without degrees of freedom.

    Exactly 0 over a constant slice, as torch's Welford pass gives: the mean (which rounding may
    move off the constant) is clipped into the slice's range, so the std's backward masks it."""
    n = math.prod(x.shape[d] for d in dims)
    if not x.size:  # numpy would warn "Mean of empty slice"; torch's result, silently
        shape = x.sum(axis=dims, keepdims=keepdim).shape
        return xp.full(shape, math.nan if n - correction <= 0 else 0.0, dtype=x.dtype)
    mean = x.mean(axis=dims, keepdims=True)
    mean = xp.clip(mean, x.min(axis=dims, keepdims=True), x.max(axis=dims, keepdims=True))
    centred = x - mean
    return (centred * centred).sum(axis=dims, keepdims=keepdim) / max(n - correction, 0)


def cast(x, dtype):
    """x in `dtype` (a numpy dtype; None: as it is)."""
    return x if dtype is None else x.astype(dtype, copy=False)


def cumulative(scan_fn, x, dim, dtype):
    """cumsum / cumprod (`scan_fn`) along `dim` in `dtype`; a 0-dim tensor is its own."""
    return scan_fn(x, axis=dim, dtype=dtype) if x.ndim else x.astype(dtype or x.dtype, copy=True)


def picked(x, dim, keepdim, key):
    """The elements an indexing `key` picks, one per slice along `dim` (kept as size 1 with keepdim)."""
    out = x[key]
    return out if keepdim or out.ndim == 0 else out.squeeze(dim)


def logcumsumexp(xp, x, dim):
    """log(cumsum(exp(x))) without overflow: a scan of logaddexp (which handles +-inf)."""
    return scan(xp, xp.logaddexp, x, dim) if x.ndim else x.copy()


def logsumexp(xp, x, dims, keepdim):
    """log(sum(exp(x))) shifted by the maximum of each slice (by 0 where that maximum is infinite)."""
    if x.size == 0:
        return xp.log(xp.exp(x).sum(axis=dims, keepdims=keepdim))
    top = x.max(axis=dims, keepdims=True)
    top = xp.where(xp.isinf(top), 0, top)
    out = xp.log(xp.exp(x - top).sum(axis=dims, keepdims=True)) + top
    return out if keepdim else out.reshape(tuple(n for d, n in enumerate(x.shape) if d not in dims))


def cumulative_extreme(xp, x, dim, maximum):
    """cummax / cummin: the running extreme and the index where it was (last) reached.

    As torch's, a NaN is the extreme from where it appears, and a tie moves the index on.
    """
    values = scan(xp, xp.maximum if maximum else xp.minimum, x, dim) if x.ndim else x.copy()
    if x.ndim == 0:
        return values, xp.zeros((), dtype=numpy.int64)
    shape = [1] * x.ndim
    shape[dim] = x.shape[dim]
    positions = xp.arange(x.shape[dim], dtype=numpy.int64).reshape(shape)
    reached = (x == values) | (x != x)  # a new (or equal) extreme, or a NaN
    indices = scan(xp, xp.maximum, xp.where(reached, positions, 0), dim)
    return values, indices


def median_indices(xp, x, dim, ignore_nan):
    """Per slice along `dim`, the index of the lower median (torch's median); keepdims.

    A stable sort gives torch's choice among equal values. A slice with a NaN has the NaN as
    median (the first one) unless `ignore_nan` (nanmedian), which takes the median of the rest.
    """
    order = xp.argsort(x, axis=dim, kind="stable")  # NaNs sort last
    nans = x != x
    count = x.shape[dim] - nans.sum(axis=dim, keepdims=True)  # non-NaN elements
    if ignore_nan:
        k = xp.maximum(count - 1, 0) // 2
    else:
        k = xp.where(count < x.shape[dim], count, (x.shape[dim] - 1) // 2)  # the first NaN sorts at `count`
    return xp.take_along_axis(order, k, axis=dim)


def median_all(xp, x, ignore_nan):
    """The lower median of every element (NaN for none, or, unless `ignore_nan`, for any NaN)."""
    flat = x.reshape(-1)
    if flat.size == 0:
        return xp.asarray(numpy.nan, dtype=x.dtype)
    return flat[median_indices(xp, flat, 0, ignore_nan)].reshape(())


def mode_indices(xp, x, dim):
    """Per slice along `dim`: the index of the most frequent value (the smallest of equally frequent
    ones), at its last occurrence, as torch's mode picks it; keepdims."""
    order = xp.argsort(x, axis=dim, kind="stable")
    ordered = xp.take_along_axis(x, order, axis=dim)
    n = x.shape[dim]
    lead = (slice(None),) * dim
    shape = [1] * x.ndim
    shape[dim] = n
    positions = xp.arange(n, dtype=numpy.int64).reshape(shape)
    starts = xp.ones(ordered.shape, dtype=bool)  # where a run of equal values begins
    starts[lead + (slice(1, None),)] = ordered[lead + (slice(1, None),)] != ordered[lead + (slice(None, -1),)]
    run_start = scan(xp, xp.maximum, xp.where(starts, positions, 0), dim)
    length = positions - run_start + 1  # the run's length so far, largest at its last element
    last = xp.argmax(length, axis=dim, keepdims=True)  # the first longest run: the smallest value
    return xp.take_along_axis(order, last, axis=dim)


def vector_norm(xp, x, ord, dims, keepdim):
    """linalg.vector_norm on arrays of the result's dtype."""
    a = xp.abs(x)
    if ord == 2:
        return xp.sqrt((a * a).sum(axis=dims, keepdims=keepdim))
    if ord == 1:
        return a.sum(axis=dims, keepdims=keepdim)
    if ord == math.inf:
        return a.max(axis=dims, keepdims=keepdim)
    if ord == -math.inf:
        return a.min(axis=dims, keepdims=keepdim)
    if ord == 0:
        return (a != 0).sum(axis=dims, keepdims=keepdim).astype(x.dtype)
    return (a**ord).sum(axis=dims, keepdims=keepdim) ** (1.0 / ord)


# ------------------------------------------------------------------------- shape and indexing


def strided(xp, a, shape, strides):
    """A view of `a`'s memory from its first element, `strides` in elements (writable where `a` is)."""
    item = a.itemsize
    return xp.lib.stride_tricks.as_strided(a, tuple(shape), tuple(s * item for s in strides))


def element_strides(a) -> list:
    return [s // a.itemsize for s in a.strides]


def diagonal(xp, a, offset, dim1, dim2):
    """torch.diagonal: a view, the diagonal as the last dimension (numpy's is read-only)."""
    shape, strides = a.shape, element_strides(a)
    start1, start2 = max(-offset, 0), max(offset, 0)
    length = max(min(shape[dim1] - start1, shape[dim2] - start2), 0)
    if length:
        key = [slice(None)] * a.ndim
        key[dim1], key[dim2] = slice(start1, None), slice(start2, None)
        a = a[tuple(key)]
    rest = [d for d in range(len(shape)) if d not in (dim1, dim2)]
    return strided(
        xp,
        a,
        [shape[d] for d in rest] + [length],
        [strides[d] for d in rest] + [strides[dim1] + strides[dim2]],
    )


def diag_embed(xp, a, offset, dim1, dim2):
    """Zeros with `a`'s last dimension written on the diagonal (offset) of the dims dim1, dim2."""
    n = a.shape[-1] + abs(offset) if a.ndim else abs(offset) + 1
    shape = list(a.shape[:-1])
    for d in sorted((dim1, dim2)):
        shape.insert(d, n)
    out = xp.zeros(shape, dtype=a.dtype)
    diagonal(xp, out, offset, dim1, dim2)[...] = a
    return out


def unfold(xp, a, dim, size, step):
    """Tensor.unfold: windows of `size` every `step` along `dim`, as a view (the window last)."""
    if a.ndim == 0:
        return a.reshape((1,))[:size]
    shape, strides = list(a.shape), element_strides(a)
    shape.append(size)
    strides.append(strides[dim])
    shape[dim] = (shape[dim] - size) // step + 1
    strides[dim] *= step
    return strided(xp, a, shape, strides)


def strided_view(xp, a, size, stride, storage_offset):
    """torch.as_strided: `size` and `stride` over the memory `a` lives in, from `storage_offset`."""
    root = backend.storage_and_offset(a)[0]
    memory = strided(xp, root, (root.size,), (1,))
    return strided(xp, memory[storage_offset:], size, stride)


def grid_key(xp, dim, index) -> tuple:
    """The advanced-indexing key that reads, at each position of `index`, entry index[...] along `dim`."""
    key = []
    for d, n in enumerate(index.shape):
        if d == dim:
            key.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = n
            key.append(xp.arange(n).reshape(shape))
    return tuple(key)


def scatter(xp, self, key, values, reduce, include_self=True):
    """A copy of `self` with `values` scattered at `key` (torch's scatter, scatter_add, scatter_reduce).

    `reduce`: None (assign), "sum"/"add", "prod"/"multiply", "mean", "amax" or "amin"; without
    `include_self` the positions written start from the reduction's identity instead of `self`.
    A 0-dim `self` is addressed by `key` as one element.
    """
    if self.ndim == 0:
        return scatter(xp, self.reshape((1,)), key, values, reduce, include_self).reshape(())
    out = self.copy()
    if reduce is None:
        out[key] = values
        return out
    if not include_self:
        out[key] = _identity(xp, reduce, out.dtype)
    if reduce in ("sum", "add"):
        backend.scatter_add(out, key, values)
        return out
    # the others: flat positions (a grid key: arrays only), repeated ones combined in turn
    arrays = xp.broadcast_arrays(*key)
    pos = xp.ravel_multi_index(tuple(arrays), out.shape).reshape(-1)
    values = xp.broadcast_to(xp.asarray(values, dtype=out.dtype), arrays[0].shape).reshape(-1)
    flat = out.reshape(-1)
    if reduce == "mean":
        backend.scatter_add(flat, pos, values)
        count = xp.full(flat.shape, 1 if include_self else 0, dtype=flat.dtype)
        backend.scatter_add(count, pos, xp.ones(pos.shape, dtype=flat.dtype))
        count = xp.maximum(count, 1)
        flat[...] = flat // count if flat.dtype.kind in "iu" else flat / count
        return out
    combine = {"prod": xp.multiply, "multiply": xp.multiply, "amax": xp.maximum, "amin": xp.minimum}[reduce]
    _reduce_at(xp, flat, pos, values, combine)
    return out


def _identity(xp, reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    info = xp.finfo(dtype) if dtype.kind == "f" else xp.iinfo(dtype)
    lowest = -xp.inf if dtype.kind == "f" else info.min
    highest = xp.inf if dtype.kind == "f" else info.max
    return lowest if reduce == "amax" else highest


def _reduce_at(xp, flat, pos, values, combine) -> None:
    """flat[pos] = combine(flat[pos], values) with repeated positions combined in turn, in rounds of
    distinct positions (ufunc.at without it: multiply and max/min have no atomic form on every device)."""
    if pos.size == 0:
        return
    order = xp.argsort(pos, kind="stable")
    pos, values = pos[order], values[order]
    rank = xp.arange(pos.size) - xp.searchsorted(pos, pos, side="left")
    for r in range(int(rank.max()) + 1):
        chosen = rank == r
        at = pos[chosen]
        flat[at] = combine(flat[at], values[chosen])


def split(a, dim, sizes) -> tuple:
    """Views of consecutive pieces of `sizes` along `dim`."""
    out, start = [], 0
    for n in sizes:
        out.append(a[(slice(None),) * dim + (slice(start, start + n),)])
        start += n
    return tuple(out)


def unbind(a, dim) -> tuple:
    """Views of each index along `dim` (Ellipsis: a 0-dim piece stays a view, not a scalar)."""
    return tuple(a[(slice(None),) * dim + (i, Ellipsis)] for i in range(a.shape[dim]))


def take_at(a, key):
    """a[key], a 0-dim array read as one element (the shaping rows' keys address it so)."""
    return (a.reshape((1,)) if a.ndim == 0 else a)[key]


def masked_fill(xp, a, mask, value):
    return backend.bfloat16_like(xp.where(mask, value, a).astype(a.dtype, copy=False), [a])


def masked_scatter(xp, a, source, shape, key):
    """`a` broadcast to `shape`, with source's first elements written where the mask (`key`) is set."""
    out = xp.broadcast_to(a, shape).copy()
    take = key[0].size
    (out.reshape((1,)) if out.ndim == 0 else out)[key] = source.reshape(-1)[:take]
    return out


def triangle_mask(xp, shape, diagonal, lower):
    """Where the last two dims of `shape` keep their values in tril (lower) / triu."""
    rows = xp.arange(shape[-2]).reshape((-1, 1))
    cols = xp.arange(shape[-1]).reshape((1, -1))
    return cols - rows <= diagonal if lower else cols - rows >= diagonal


def triangle(xp, a, diagonal, lower):
    return xp.where(triangle_mask(xp, a.shape, diagonal, lower), a, xp.zeros((), dtype=a.dtype))


# ---------------------------------------------------------- elementwise (ops/pointwise.py)
# Forwards of the elementwise rows, with torch's dtype rules: ops that always give floats compute
# integers and bools in the default dtype (`floating`), the others refuse the dtypes torch has no
# kernel for, in torch's words (`not_implemented`).


def scalar_type(np_dtype) -> str:
    """How torch's messages name a dtype: Float, Long, Bool."""
    return backend.dtype_of(numpy.empty(0, np_dtype)).scalar_type


def not_implemented(kernel: str, np_dtype) -> NotImplementedError:
    """torch's error for a dtype its kernel has no loop for: '"hypot_cpu" not implemented for 'Long''."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type(np_dtype)}'")


def typed_number(value, np_dtype):
    """A Python number as a scalar of `np_dtype`, wrapped as C casts it (uint8 300 -> 44), as torch does;
    a host scalar, which numpy and CuPy arrays both take."""
    return numpy.asarray(value).astype(np_dtype)[()]


def floating(x):
    """`x` (an array or a Python number), integers and bools in the default dtype (torch's sin(int) is float32)."""
    if not hasattr(x, "dtype") or x.dtype.kind == "f":
        return x
    return x.astype(backend.get_default_dtype().np)


def dtype_of(a, b):
    """The dtype of a binary op's operands (already promoted; one may be a Python number)."""
    return a.dtype if hasattr(a, "dtype") else b.dtype


def integral_rounding(fn, x, kernel: str):
    """floor / ceil / trunc / round: integers are already whole (a copy, as torch's), bools refused."""
    kind = x.dtype.kind
    if kind == "f":
        return fn(x)
    if kind == "b":
        raise not_implemented(kernel, x.dtype)
    return x.copy()


def round_decimals(xp, x, decimals):
    """Round half to even at 10^-decimals, as torch: rint(x * 10^d) / 10^d (or rint(x / 10^-d) * 10^-d)."""
    if x.dtype.kind != "f":
        raise not_implemented("round_vml_cpu" if decimals == 0 else "round_cpu", x.dtype)
    work = x.astype(numpy.float32) if x.dtype == numpy.float16 else x  # half computes in float
    scale = float(10 ** abs(decimals))  # a Python float: the array keeps its dtype
    out = xp.rint(work / scale) * scale if decimals < 0 else xp.rint(work * scale) / scale
    return out.astype(x.dtype, copy=False)


def absolute(xp, x):
    if x.dtype.kind == "b":
        raise not_implemented("abs_cpu", x.dtype)
    return xp.abs(x)


def frac(xp, x):
    if x.dtype.kind != "f":
        raise not_implemented("frac_cpu", x.dtype)
    return x - xp.trunc(x)


def sign(xp, x):
    """-1, 0 or 1 in x's dtype; 0 for NaN and a bool unchanged, as torch's (numpy's sign gives NaN)."""
    if x.dtype.kind == "b":
        return x.copy()
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def _division_dtype(a, b, kernel: str):
    """The dtype of an integer-capable division (bools refused, as torch's `kernel`); an integer
    division by zero raises, as torch's on the CPU, where numpy would warn and give 0."""
    dt = dtype_of(a, b)
    if dt.kind == "b":
        raise not_implemented(kernel, dt)
    if dt.kind != "f" and (bool((b == 0).any()) if hasattr(b, "any") else b == 0):
        raise RuntimeError("ZeroDivisionError")
    return dt


def div_rounded(xp, a, b, rounding_mode):
    """torch.div with a rounding mode, "trunc" or "floor" (checked by the caller); None: true division
    (integers in the default dtype)."""
    if rounding_mode is None:
        return floating(a) / floating(b)
    dt = _division_dtype(a, b, f"div_{rounding_mode}_cpu")
    if dt.kind == "f":
        return xp.floor_divide(a, b) if rounding_mode == "floor" else xp.trunc(a / b)
    q = xp.floor_divide(a, b)
    if rounding_mode == "trunc":  # C division: towards zero, so a negative inexact quotient goes up by one
        q = q + ((q < 0) & (q * b != a))
    return q


def fmod(xp, a, b):
    """C's fmod: the remainder takes the sign of the dividend."""
    _division_dtype(a, b, "fmod_cpu")
    return xp.fmod(a, b)


def remainder(xp, a, b):
    """Python's modulus (the sign of the divisor), computed as torch does: fmod, then + b where the
    signs differ (so an exact multiple keeps fmod's signed zero)."""
    if _division_dtype(a, b, "remainder_cpu").kind != "f":
        return xp.remainder(a, b)
    mod = xp.fmod(a, b)
    return xp.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


def float_only(fn, a, b, kernel: str):
    """A binary op torch computes on floating dtypes only (hypot, logaddexp)."""
    dt = dtype_of(a, b)
    if dt.kind != "f":
        raise not_implemented(kernel, dt)
    return fn(a, b)


def log_number(v) -> float:
    """log of a Python number as C's log gives it: -inf at 0, NaN below (math.log raises)."""
    return math.log(v) if v > 0 else -math.inf if v == 0 else math.nan


def xlogy(xp, x, y):
    """x * log(y), 0 where x == 0 (even for y == 0), NaN where y is NaN; integers in the default dtype."""
    x = floating(x)
    if hasattr(y, "dtype"):
        y = floating(y)
        log_y = xp.log(y)
    else:
        log_y = log_number(y)
    out = xp.where(x == 0, 0.0, x * log_y)
    return xp.where(y != y, math.nan, out)


def lerp(xp, start, end, weight, kernel: str):
    """start + weight (end - start) for |weight| < 0.5, else end - (end - start)(1 - weight), as torch."""
    if start.dtype.kind != "f":
        raise not_implemented(kernel, start.dtype)
    diff = end - start
    if hasattr(weight, "dtype") and weight.dtype != start.dtype:  # a 0-dim weight of another dtype
        weight = weight.astype(start.dtype)
    if not hasattr(weight, "dtype"):  # a Python number: in the inputs' dtype, as torch's opmath
        weight = start.dtype.type(weight)
        return start + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
    return xp.where(xp.abs(weight) < 0.5, start + weight * diff, end - diff * (1 - weight))


def nan_to_num(xp, x, nan, posinf, neginf):
    if x.dtype.kind != "f":
        return x.copy()
    return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def power(base, exponent):
    """base ** exponent. Integers to a negative integer power: refused for a number exponent, and
    elementwise for a tensor one as torch gives them (0, or +-1 for a base of +-1), where numpy
    refuses both."""
    try:
        return base**exponent
    except ValueError:
        if not hasattr(exponent, "dtype"):
            raise RuntimeError("Integers to negative integer powers are not allowed.") from None
        if exponent.dtype.kind not in "iu":
            raise
    negative = exponent < 0
    out = base ** (exponent * ~negative)  # x ** 0 == 1 where the exponent is negative
    odd = (exponent % 2) != 0
    ones = out * 0 + 1
    out = out * ~negative + ones * (negative & (base == 1)) + (ones - 2 * odd) * (negative & (base == -1))
    return out.astype(ones.dtype, copy=False)


def shift(xp, a, b, left: bool):
    """a << b or a >> b with torch's rule for shifts outside [0, bits): 0, or the sign for >>."""
    bits = 8 * a.dtype.itemsize
    outside = (b < 0) | (b >= bits)
    b = xp.where(outside, 0, b).astype(a.dtype)
    if left:
        return xp.where(outside, 0, xp.left_shift(a, b)).astype(a.dtype, copy=False)
    sign = xp.right_shift(a, bits - 1) if a.dtype.kind == "i" else 0  # what a signed shift shifts in
    return xp.where(outside, sign, xp.right_shift(a, b)).astype(a.dtype, copy=False)


# --------------------------------------------------------------------------- linear algebra
# Forwards of the linear-algebra rows. LAPACK (numpy) refuses a singular or indefinite matrix
# without saying where; torch names the batch element and the pivot or minor, so on failure
# the matrix is factored again here, the way getrf / potrf go, to find them.


class LinAlgError(RuntimeError):
    """engine.linalg.LinAlgError: a matrix function failed on its input (singular, not positive-definite)."""


def _batch_prefix(index: int, batched: bool) -> str:
    return f"(Batch element {index}): " if batched else ""


def _host_matrices(a) -> numpy.ndarray:
    return backend.to_numpy(a).reshape((-1,) + tuple(a.shape[-2:])).astype(numpy.float64)


def lu_zero_pivot(a: numpy.ndarray) -> int:
    """getrf's info for one square matrix: the 1-based position of its first zero pivot, or 0."""
    a = a.copy()
    n = a.shape[-1]
    for k in range(n):
        p = k + int(numpy.argmax(numpy.abs(a[k:, k])))
        if a[p, k] == 0:
            return k + 1
        a[[k, p]] = a[[p, k]]
        a[k + 1 :, k] /= a[k, k]
        a[k + 1 :, k + 1 :] -= numpy.outer(a[k + 1 :, k], a[k, k + 1 :])
    return 0


def lu_solve(a, b) -> numpy.ndarray:
    """a^{-1} b as LAPACK's getrf and getrs compute it, so a singular `a` gives their inf and nan
    (a zero pivot is left unscaled; the triangular solves skip zero entries, as dtrsm does)."""
    batch = numpy.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = numpy.broadcast_to(a, batch + a.shape[-2:])
    b = numpy.broadcast_to(b, batch + b.shape[-2:])
    out = numpy.empty(b.shape, dtype=numpy.result_type(a, b))
    n = a.shape[-1]
    for index in numpy.ndindex(*batch):
        lu, x = a[index].astype(out.dtype), b[index].astype(out.dtype)
        for k in range(n):
            p = k + int(numpy.argmax(numpy.abs(lu[k:, k])))
            if lu[p, k] != 0:
                lu[[k, p]], x[[k, p]] = lu[[p, k]], x[[p, k]]
                lu[k + 1 :, k] /= lu[k, k]
            lu[k + 1 :, k + 1 :] -= numpy.outer(lu[k + 1 :, k], lu[k, k + 1 :])
        for k in range(n):  # L y = P b, L unit lower
            x[k + 1 :] -= numpy.outer(lu[k + 1 :, k], numpy.where(x[k] != 0, x[k], 0))
        for k in reversed(range(n)):  # U x = y
            nonzero = x[k] != 0
            x[k] = numpy.where(nonzero, x[k] / lu[k, k], 0)
            x[:k] -= numpy.outer(lu[:k, k], x[k])
        out[index] = x
    return out


def singular_error(a, name, message) -> LinAlgError:
    """The error torch gives for the first singular matrix of `a`: `name: (Batch element b): message(pivot)`."""
    matrices = _host_matrices(a)
    for b, matrix in enumerate(matrices):
        pivot = lu_zero_pivot(matrix)
        if pivot:
            return LinAlgError(f"{name}: {_batch_prefix(b, a.ndim > 2)}{message(pivot)}")
    worst = numpy.abs(numpy.linalg.det(matrices)).argmin()  # rounding hid the zero: the nearest to singular
    return LinAlgError(f"{name}: {_batch_prefix(int(worst), a.ndim > 2)}{message(matrices.shape[-1])}")


def _solved(xp, solve, a, error):
    """`solve()`, or `error()` raised where LAPACK found the matrix singular (CuPy answers inf or nan instead)."""
    try:
        out = solve()
    except numpy.linalg.LinAlgError:
        raise error() from None
    if xp is not numpy and out.size and not bool(xp.isfinite(out).all()) and bool(xp.isfinite(a).all()):
        if any(lu_zero_pivot(m) for m in _host_matrices(a)):
            raise error()
    return out


def inv(xp, a, name):
    def error():
        return singular_error(
            a,
            name,
            lambda k: (
                f"The diagonal element {k} is zero, the inversion could not be completed because the input "
                "matrix is singular."
            ),
        )

    return _solved(xp, lambda: xp.linalg.inv(a), a, error)


def solve(xp, a, b, left, vector):
    """linalg.solve: A X = B (or X A = B), B a batch of vectors when `vector`."""
    if vector:
        b = b[..., None]
    if not left:  # X A = B  <=>  A^T X^T = B^T
        a, b = xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2)

    def error():
        return singular_error(
            a, "engine.linalg.solve", lambda k: "The solver failed because the input matrix is singular."
        )

    out = _solved(xp, lambda: xp.linalg.solve(a, b), a, error)
    if not left:
        out = xp.swapaxes(out, -1, -2)
    return out[..., 0] if vector else out


def cholesky(xp, a, upper, name):
    """The Cholesky factor of the lower triangle of `a` (of the upper one, returned upper, when `upper`)."""
    if upper:
        a = xp.swapaxes(a, -1, -2)
    try:
        out = xp.linalg.cholesky(a)
        failed = xp is not numpy and out.size and not bool(xp.isfinite(out).all())
    except numpy.linalg.LinAlgError:
        failed = True
    if failed:
        raise cholesky_error(a, name)
    return xp.swapaxes(out, -1, -2) if upper else out


def cholesky_error(a, name) -> LinAlgError:
    """potrf's failure: the order of the first leading minor of the first failing matrix that is not positive-definite."""
    matrices = _host_matrices(a)
    for b, matrix in enumerate(matrices):
        for k in range(1, matrix.shape[-1] + 1):
            try:
                numpy.linalg.cholesky(matrix[:k, :k])
            except numpy.linalg.LinAlgError:
                return LinAlgError(
                    f"{name}: {_batch_prefix(b, a.ndim > 2)}The factorization could not be completed because the "
                    f"input is not positive-definite (the leading minor of order {k} is not positive-definite)."
                )
    return LinAlgError(
        f"{name}: The factorization could not be completed because the input is not positive-definite."
    )


def slogdet(xp, a):
    sign, logabsdet = xp.linalg.slogdet(a)
    return xp.asarray(sign, dtype=a.dtype), xp.asarray(logabsdet, dtype=a.dtype)


def qr(xp, a, mode):
    """(Q, R); mode 'r' gives an empty Q, as torch does."""
    if mode == "r":
        return xp.zeros((0,), dtype=a.dtype), xp.linalg.qr(a, mode="r")
    q, r = xp.linalg.qr(a, mode=mode)
    return q, r


def svd(xp, a, full_matrices, compute_uv):
    """(U, S, Vh); without `compute_uv`, U and Vh are empty, as torch's are."""
    if not compute_uv:
        return (
            xp.zeros((0,), dtype=a.dtype),
            xp.linalg.svd(a, compute_uv=False),
            xp.zeros((0,), dtype=a.dtype),
        )
    return tuple(xp.linalg.svd(a, full_matrices=full_matrices))


def eigh(xp, a, uplo, compute_v):
    if not compute_v:
        return xp.linalg.eigvalsh(a, UPLO=uplo), xp.zeros((0,), dtype=a.dtype)
    return tuple(xp.linalg.eigh(a, UPLO=uplo))


def scaled_addmm(xp, bias, mat1, mat2, beta, alpha):
    """beta * bias + alpha * (mat1 @ mat2): the matrix products of addmm, addmv, addr, baddbmm (torch's
    rules: with beta 0 the bias is not read, nor the product with alpha 0; integers take integer scalars)."""
    product = mat1 @ mat2
    integral = product.dtype.kind in "iub"
    if integral:
        beta, alpha = int(beta), int(alpha)
    if alpha == 0:
        product = xp.zeros_like(product)
    elif alpha != 1:
        product = product * alpha
    if beta == 0:
        out = xp.broadcast_to(product, xp.broadcast_shapes(product.shape, bias.shape)).copy()
    else:
        out = product + (bias if beta == 1 else bias * beta)
    return out.astype(product.dtype, copy=False) if integral else out


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
