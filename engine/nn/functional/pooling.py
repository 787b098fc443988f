"""max_pool1d/2d and avg_pool1d/2d/3d; the 1-D forms run the 2-D op on an unsqueezed input, as torch."""

from __future__ import annotations

from ... import backend
from ...ops import derivatives as D
from ...ops import functions
from ...ops import kernels as K
from ...ops.op import apply_op
from ...tensor import Tensor, wrap
from ._utils import ntuple

_TUPLE_RULES = {  # what torch says when an argument has the wrong number of ints, per pooling rank
    2: {
        "kernel_size": "kernel_size must either be a single int, or a tuple of two ints",
        "stride": "stride must either be omitted, a single int, or a tuple of two ints",
        "padding": "padding must either be a single int, or a tuple of two ints",
        "dilation": "dilation must be either a single int, or a tuple of two ints",
    },
    3: {
        "kernel_size": "kernel_size must be a single int, or a tuple of three ints",
        "stride": "stride must be omitted, a single int, or a tuple of three ints",
        "padding": "padding must be a single int, or a tuple of three ints",
        "dilation": "dilation must be either a single int, or a tuple of three ints",
    },
}


def _pool_tuple(name: str, arg: str, value, nd: int) -> tuple:
    """An int, or a tuple of 1 or `nd` ints, as `nd` ints; torch's refusal of any other length."""
    if not isinstance(value, (tuple, list)):
        return (int(value),) * nd
    if len(value) not in (1, nd):
        raise RuntimeError(f"{name}: {_TUPLE_RULES[nd][arg]}")
    return tuple(int(v) for v in value) * (nd if len(value) == 1 else 1)


def _pool_args(kernel_size, stride, padding, dilation, name: str = "max_pool2d", nd: int = 2) -> tuple:
    kernel = _pool_tuple(name, "kernel_size", kernel_size, nd)
    omitted = stride is None or (isinstance(stride, (tuple, list)) and not stride)
    stride = kernel if omitted else _pool_tuple(name, "stride", stride, nd)
    padding, dilation = _pool_tuple(name, "padding", padding, nd), _pool_tuple(name, "dilation", dilation, nd)
    for k, p, d in zip(kernel, padding, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} "
                f"and dilation={d}"
            )
    return kernel, stride, padding, dilation


def _geometry(input: Tensor, kernel, stride, padding, dilation, ceil_mode) -> tuple:
    if input.dim() not in (3, 4) or input.numel() == 0:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    spatial = tuple(input.shape[-2:])
    out, pads = K.pool_geometry(spatial, kernel, stride, padding, dilation, ceil_mode)
    if any(o <= 0 for o in out):
        channels = input.shape[-3]
        raise RuntimeError(
            f"Given input size: ({channels}x{spatial[0]}x{spatial[1]}). Calculated output size: "
            f"({channels}x{out[0]}x{out[1]}). Output size is too small"
        )
    return spatial, out, pads


def max_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Window maxima (MaxPool2DWithIndicesBackward0); with return_indices, their flat in-plane indices too."""
    kernel, stride, padding, dilation = _pool_args(kernel_size, stride, padding, dilation)
    spatial, out, pads = _geometry(input, kernel, stride, padding, dilation, ceil_mode)
    data = input._data
    planes = data.reshape((1, -1) + spatial)  # every (n, c) plane alike, batched or not
    xp = backend.xp_of(data)
    flat, in_plane = K.max_pool(xp, planes, kernel, stride, pads, dilation, out)
    out_shape = tuple(input.shape[:-2]) + out
    flat = flat.reshape(out_shape)
    unique = not K.overlapping(kernel, stride, dilation)
    result = apply_op(
        D.MAX_POOL, (input,), (tuple(input.shape), kernel, stride, padding, dilation, ceil_mode, flat, unique)
    )
    return (result, wrap(in_plane.reshape(out_shape))) if return_indices else result


def _lift_1d(name: str, input: Tensor, kernel_size, stride, padding, dilation=1) -> tuple:
    """A 1-D pool's input and arguments as the 2-D op's: height-1 planes and (1, k) windows."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"{name}() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    stride = kernel_size if stride is None or stride == () or stride == [] else stride
    return (
        functions.unsqueeze(input, -2),
        (1, ntuple(kernel_size, 1)[0]),
        (1, ntuple(stride, 1)[0]),
        (0, ntuple(padding, 1)[0]),
        (1, ntuple(dilation, 1)[0]),
    )


def max_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    planes, kernel, stride, padding, dilation = _lift_1d(
        "max_pool1d", input, kernel_size, stride, padding, dilation
    )
    result = max_pool2d(planes, kernel, stride, padding, dilation, ceil_mode, return_indices)
    if return_indices:
        values, indices = result
        return functions.squeeze(values, -2), wrap(indices._data.squeeze(-2))
    return functions.squeeze(result, -2)


def avg_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override=None,
) -> Tensor:
    kernel, stride, padding, _ = _pool_args(kernel_size, stride, padding, 1, "avg_pool2d")
    spatial, out, pads = _geometry(input, kernel, stride, padding, (1, 1), ceil_mode)
    return _avg_pool(D.AVG_POOL, input, kernel, stride, padding, spatial, out, pads, ceil_mode, count_include_pad,
                     divisor_override)  # fmt: skip


def _avg_pool(
    op, input, kernel, stride, padding, spatial, out, pads, ceil_mode, count_include_pad, divisor_override
):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    divisor = K.avg_divisor(spatial, kernel, stride, padding, out, count_include_pad, divisor_override)
    if not isinstance(divisor, int):
        divisor = backend.xp_of(input._data).asarray(divisor).astype(input._data.dtype)
    return apply_op(
        op,
        (input,),
        (
            tuple(input.shape),
            kernel,
            stride,
            pads,
            out,
            divisor,
            ceil_mode,
            count_include_pad,
            divisor_override,
        ),
    )


def avg_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    planes, kernel, stride, padding, _ = _lift_1d("avg_pool1d", input, kernel_size, stride, padding)
    return functions.squeeze(avg_pool2d(planes, kernel, stride, padding, ceil_mode, count_include_pad), -2)


def avg_pool3d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override=None,
) -> Tensor:
    """Window means over the last three dims of (N, C, D, H, W) or (C, D, H, W) (AvgPool3DBackward0)."""
    kernel, stride, padding, _ = _pool_args(kernel_size, stride, padding, 1, "avg_pool3d", 3)
    if input.dim() not in (4, 5) or input.numel() == 0:
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    spatial = tuple(input.shape[-3:])
    out, pads = K.pool_geometry(spatial, kernel, stride, padding, (1, 1, 1), ceil_mode)
    if any(n + 2 * p < k for n, p, k in zip(spatial, padding, kernel)):
        (t, h, w), (kt, kh, kw) = spatial, kernel
        raise RuntimeError(
            f"input image (T: {t} H: {h} W: {w}) smaller than kernel size (kT: {kt} kH: {kh} kW: {kw})"
        )
    return _avg_pool(D.AVG_POOL3D, input, kernel, stride, padding, spatial, out, pads, ceil_mode, count_include_pad,
                     divisor_override)  # fmt: skip
