"""interpolate / upsample: nearest, nearest-exact, (bi/tri)linear, bicubic and area resampling.

Nearest modes gather input positions (UpsampleNearest{1,2,3}DBackward0 ...); the interpolating
modes apply one interpolation matrix per spatial dim (UpsampleBilinear2DBackward0 ...), with PyTorch's
CPU rules for source positions; area is adaptive average pooling, as in PyTorch. uint8 bilinear and
bicubic (antialiased or not) resample in torch's fixed-point arithmetic (ops/nn/fixed_point.py).
"""

from __future__ import annotations

import numbers
import warnings

import numpy

from ... import backend
from ...ops import derivatives as D
from ...ops.nn import kernels as K
from ...ops.nn.fixed_point import resample_uint8
from ...ops.op import apply_op
from ...tensor import Tensor, wrap
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

_INTERPOLATING = ("linear", "bilinear", "bicubic", "trilinear")
# (mode, input dims) -> the node, and the kernel torch names when it refuses an integer input
_NODES = {
    ("nearest", 3): ("UpsampleNearest1DBackward0", "compute_indices_weights_nearest"),
    ("nearest", 4): ("UpsampleNearest2DBackward0", "upsample_nearest2d_channels_last"),
    ("nearest", 5): ("UpsampleNearest3DBackward0", "compute_indices_weights_nearest"),
    ("nearest-exact", 3): ("UpsampleNearestExact1DBackward0", "compute_indices_weights_nearest"),
    ("nearest-exact", 4): ("UpsampleNearestExact2DBackward0", "upsample_nearest2d_channels_last"),
    ("nearest-exact", 5): ("UpsampleNearestExact3DBackward0", "compute_indices_weights_nearest"),
    ("linear", 3): ("UpsampleLinear1DBackward0", "compute_indices_weights_linear"),
    ("bilinear", 4): ("UpsampleBilinear2DBackward0", "upsample_bilinear2d_channels_last"),
    ("trilinear", 5): ("UpsampleTrilinear3DBackward0", "compute_indices_weights_linear"),
    ("bicubic", 4): ("UpsampleBicubic2DBackward0", "compute_indices_weights_cubic"),
}
_NEEDS = {"linear": 3, "bilinear": 4, "trilinear": 5}
_AREA = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d, 5: adaptive_avg_pool3d}


def _output_size_and_scales(input: Tensor, size, scale_factor, mode: str, recompute_scale_factor):
    """What the kernel gets: the output size, and the scale factors it computes source positions with."""
    dim = input.dim() - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {spatial} and output size of {size}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
                )
            if not all(isinstance(n, numbers.Integral) for n in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], but "
                    f"got size with types {[type(n) for n in size]}"
                )
            output_size, scales = list(size), None
        else:
            output_size, scales = [size] * dim, None
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {spatial} and scale_factor of shape {scale_factor}. Please provide "
                    "input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            output_size, scales = None, list(scale_factor)
        else:
            output_size, scales = None, [scale_factor] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None or recompute_scale_factor:
        output_size, scales = [int(n * s) for n, s in zip(spatial, scales)], None
    if output_size is None:  # ATen's compute_output_size: the input size times the factor, truncated
        output_size = [int(n * s) for n, s in zip(spatial, scales)]
    return [int(n) for n in output_size], scales


def interpolate(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | "
                "trilinear"
            )
    elif align_corners is None:
        align_corners = False
    output_size, scales = _output_size_and_scales(input, size, scale_factor, mode, recompute_scale_factor)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D tensor "
            "as input"
        )
    ndim = input.dim()
    if mode == "area" and ndim in _AREA:
        return _AREA[ndim](input, output_size)
    if (mode, ndim) in _NODES:
        return _upsample(input, mode, output_size, scales, align_corners, antialias)
    if mode in _NEEDS and ndim in (3, 4, 5):
        raise NotImplementedError(f"Got {ndim}D input, but {mode} mode needs {_NEEDS[mode]}D input")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {ndim}D) for the modes: nearest | linear | "
        f"bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})"
    )


def _sizes_message(spatial, output_size) -> str:
    names = ("D", "H", "W")[-len(spatial) :]

    def listed(sizes):
        return ", ".join(f"{n}: {s}" for n, s in zip(names, sizes))

    joint = " and output" if len(spatial) == 1 else " output"
    return (
        f"Input and output sizes should be greater than 0, but got input ({listed(spatial)}){joint} "
        f"({listed(output_size)})"
    )


def _upsample(input: Tensor, mode: str, output_size, scales, align_corners: bool, antialias: bool) -> Tensor:
    """The ATen upsample op of `mode`: a gather (nearest modes), one interpolation matrix per dim, or
    (uint8 bilinear / bicubic) torch's fixed-point resampling, which has no gradient."""
    node, kernel = _NODES[(mode, input.dim())]
    spatial = tuple(input.shape[2:])
    if any(n <= 0 for n in spatial + tuple(output_size)):
        raise RuntimeError(_sizes_message(spatial, output_size))
    data = input._data
    xp = backend.xp_of(data)
    scales = scales or [None] * len(spatial)
    nearest = mode.startswith("nearest")
    if antialias:
        kernel = "compute_index_ranges_weights"
    uint8_ok = nearest or mode in ("bilinear", "bicubic")
    if not input.dtype.is_floating_point and not (uint8_ok and input.dtype is backend.uint8):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype.scalar_type}'")
    if nearest:
        indices = [
            K.nearest_indices(n, o, s, mode == "nearest-exact", node == "UpsampleNearest2DBackward0")
            for n, o, s in zip(spatial, output_size, scales)
        ]
        key = (Ellipsis,) + tuple(xp.asarray(i) for i in numpy.ix_(*indices))
        return apply_op(D.UPSAMPLE[node], (input,), (tuple(input.shape), tuple(output_size), key))
    if not input.dtype.is_floating_point:
        return wrap(resample_uint8(data, output_size, align_corners, scales, mode == "bicubic", antialias))
    if antialias:
        raise NotImplementedError(
            "engine: antialiased interpolation of floating-point tensors is not supported"
        )
    matrices = tuple(
        K.interpolation_matrix(xp, n, o, align_corners, s, mode == "bicubic", data.dtype)
        for n, o, s in zip(spatial, output_size, scales)
    )
    return apply_op(D.UPSAMPLE[node], (input,), (tuple(output_size), matrices))


def upsample(
    input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners=None
) -> Tensor:
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
