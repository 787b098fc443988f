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


def erf(xp, x):
    """erf to float64 accuracy with array ops only (numpy has none): a series below 2.5, erfc's
    continued fraction above."""
    device_erf = backend.device_special(xp, "erf")  # CuPy's kernel where there is one
    if device_erf is not None:
        return device_erf(x)
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


def gelu(xp, x, approximate):
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + xp.tanh(inner))
    return 0.5 * x * (1.0 + erf(xp, x * (1.0 / math.sqrt(2.0))))


# ------------------------------------------------------------------ forwards of the rows


def to_copy(a, dtype, device):
    return backend.to_device(a, device).astype(dtype.np, copy=False)


def softmax(xp, a, dim):
    e = xp.exp(a - a.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def log_softmax(xp, a, dim):
    shifted = a - a.max(axis=dim, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))


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


def layer_norm(x, weight, bias, mean, rstd):
    out = (x - mean) * rstd
    if weight is not None:
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
