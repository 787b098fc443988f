"""uint8 bilinear / bicubic resampling in PyTorch's fixed-point arithmetic (its CPU uint8 kernels).

torch resamples a uint8 image one dim at a time, the last dim first, skipping dims whose size is
kept: each output pixel sums its taps times int16 weights (float64 weights scaled by 2**precision),
adds one half and shifts back, clamped to 0..255. Each pass rounds to uint8 before the next one.
With `antialias` the taps and weights are PIL's (the filter stretched by the downscaling factor);
without it they are the plain linear or cubic taps, those past the ends folded onto the edge pixel.
"""

from __future__ import annotations

import math

import numpy

from ... import backend


def _source_scale(n_in: int, n_out: int, align_corners: bool, scale) -> float:
    """area_pixel_compute_scale in double."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    if scale is not None and scale > 0:
        return 1.0 / scale
    return n_in / n_out


def _linear_filter(x: float) -> float:
    x = abs(x)
    return 1.0 - x if x < 1.0 else 0.0


def _cubic_filter(a: float):
    """The cubic convolution kernel with PyTorch's constant `a` (-0.5 as PIL with antialias, else -0.75)."""

    def kernel(x: float) -> float:
        x = abs(x)
        if x < 1.0:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2.0:
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return 0.0

    return kernel


def _antialiased_taps(i: int, n_in: int, scale: float, support: float, size: int, kernel):
    """PIL's taps of output position i: the first source index and the normalised weights."""
    center = scale * (i + 0.5)
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    first = max(int(center - support + 0.5), 0)
    count = min(max(min(int(center + support + 0.5), n_in) - first, 0), size)
    weights = [kernel((j + first - center + 0.5) * invscale) for j in range(count)]
    total = 0.0
    for w in weights:
        total += w
    if total != 0.0:
        weights = [w / total for w in weights]
    return first, weights, max([0.0, *weights]) if total != 0.0 else 0.0


def _plain_taps(i: int, n_in: int, scale: float, size: int, align_corners: bool, kernel):
    """The linear (size 2) or cubic (size 4) taps of output position i; taps past an end fold onto it."""
    cubic = size > 2
    src = scale * i if align_corners else scale * (i + 0.5) - 0.5
    if not align_corners and not cubic and src < 0:
        src = 0.0
    index = min(math.floor(numpy.float32(src)), n_in - 1)  # guard_index_and_lambda floors in float
    fraction = min(max(src - index, 0.0), 1.0)
    half = size // 2
    low = index - half + 1
    first = max(low, 0)
    count = min(max(min(index + half + 1, n_in) - first, 0), size)
    weights = [0.0] * size
    top, slot = 0.0, 0
    for j in range(size):
        w = kernel(float(j + 1 - half) - fraction)
        if low + j <= 0:
            slot = 0
        elif low + j >= n_in - 1:
            slot = count - 1
        weights[slot] += w
        top = max(top, weights[slot])
        slot += 1
    return first, weights[:count], top


def _int16_taps(n_in: int, n_out: int, align_corners: bool, scale, cubic: bool, antialias: bool):
    """(first source index per output, (n_out, taps) int weights, precision) along one dim."""
    s = _source_scale(n_in, n_out, align_corners, scale)
    size = 4 if cubic else 2
    kernel = _cubic_filter(-0.5 if antialias else -0.75) if cubic else _linear_filter
    if antialias:
        support = size * 0.5 * s if s >= 1.0 else size * 0.5
        width = math.ceil(support) * 2 + 1
        taps = [_antialiased_taps(i, n_in, s, support, width, kernel) for i in range(n_out)]
    else:
        width = size
        taps = [_plain_taps(i, n_in, s, size, align_corners, kernel) for i in range(n_out)]
    top = max(t[2] for t in taps)
    precision = 0
    while precision < 22 and int(0.5 + top * (1 << (precision + 1))) < 1 << 15:
        precision += 1
    first = numpy.array([t[0] for t in taps], dtype=numpy.int64)
    weights = numpy.zeros((n_out, width), dtype=numpy.int64)
    for i, (_, ws, _) in enumerate(taps):
        for k, w in enumerate(ws):
            v = w * (1 << precision)
            weights[i, k] = int(v - 0.5) if v < 0 else int(v + 0.5)
    return first, weights, precision


def _resample_dim(xp, image, axis: int, n_out: int, align_corners: bool, scale, cubic: bool, antialias: bool):
    n_in = image.shape[axis]
    first, weights, precision = _int16_taps(n_in, n_out, align_corners, scale, cubic, antialias)
    sources = numpy.minimum(first[:, None] + numpy.arange(weights.shape[1]), n_in - 1)
    moved = xp.moveaxis(image, axis, -1).astype(xp.int64)
    total = xp.full(moved.shape[:-1] + (n_out,), 1 << (precision - 1), dtype=xp.int64)
    for k in range(weights.shape[1]):
        total += moved[..., xp.asarray(sources[:, k])] * xp.asarray(weights[:, k])
    out = xp.clip(total >> precision, 0, 255).astype(xp.uint8)
    return xp.moveaxis(out, -1, axis)


def resample_uint8(image, output_size, align_corners: bool, scales, cubic: bool, antialias: bool):
    """`image` (N, C, *spatial) uint8 resized to `output_size` as torch's CPU uint8 kernels do."""
    xp = backend.xp_of(image)
    spatial = len(output_size)
    out = image
    for d in reversed(range(spatial)):
        axis = image.ndim - spatial + d
        if out.shape[axis] != output_size[d]:
            out = _resample_dim(xp, out, axis, output_size[d], align_corners, scales[d], cubic, antialias)
    return out.copy() if out is image else out
