"""max_pool1d/2d and avg_pool1d/2d/3d; the 1-D forms run the 2-D op on an unsqueezed input, as torch."""

from __future__ import annotations

import math

from ... import backend
from ...ops import derivatives as D
from ...ops.nn import kernels as K
from ...ops.op import apply_op
from ...ops.pointwise import core as pointwise_core
from ...ops.reductions import core as reductions_core
from ...ops.shaping import core as shaping_core
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
        shaping_core.unsqueeze(input, -2),
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
        return shaping_core.squeeze(values, -2), wrap(indices._data.squeeze(-2))
    return shaping_core.squeeze(result, -2)


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
    return shaping_core.squeeze(avg_pool2d(planes, kernel, stride, padding, ceil_mode, count_include_pad), -2)


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


# ---------------------------------------------------------------- adaptive pools, unpooling, lp pools


def _list_with_default(out_size, defaults):
    """An output size whose None entries take the input's size (torch's _list_with_default)."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [d if v is None else v for v, d in zip(out_size, defaults[-len(out_size) :])]


def _adaptive_checks(name: str, input: Tensor, output_size) -> tuple:
    if input.dim() not in (3, 4) and name.endswith("2d"):
        raise RuntimeError(f"{name}(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
                f"{list(input.shape)} with dimension {i} being empty"
            )
    if not input.dtype.is_floating_point:
        kernel = name + "_cpu" if name.endswith("3d") else name
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype.scalar_type}'")
    return tuple(int(o) for o in output_size)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Means over adaptive windows (AdaptiveAvgPool2DBackward0); a 1 x 1 output is a mean (MeanBackward1)."""
    return _adaptive_avg_pool(input, output_size, 2)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Means over adaptive windows (AdaptiveAvgPool3DBackward0); a 1 x 1 x 1 output is a mean (MeanBackward1)."""
    return _adaptive_avg_pool(input, output_size, 3)


def _adaptive_avg_pool(input: Tensor, output_size, nd: int) -> Tensor:
    name = f"adaptive_avg_pool{nd}d"
    size = _list_with_default(output_size, list(input.shape))
    size = _pool_tuple_any(f"{name}: output_size must be {nd}", size, nd)
    if any(o < 0 for o in size):
        raise RuntimeError(
            f"{name}: elements of output_size must be greater than or equal to 0 but received "
            + "{"
            + ", ".join(map(str, size[:2]))
            + "".join(f",{o}" for o in size[2:])
            + "}"  # torch's spacing
        )
    if size == (1,) * nd:  # ATen's shortcut, taken before any check of the input
        return reductions_core.mean(input, tuple(range(-1, -nd - 1, -1)), keepdim=True)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {list(input.shape)}")
    size = _adaptive_checks(name, input, size)
    xp, dtype = backend.xp_of(input._data), input._data.dtype
    matrices = tuple(K.adaptive_average_matrix(xp, n, o, dtype) for n, o in zip(input.shape[-nd:], size))
    return apply_op(D.ADAPTIVE_AVG_POOL[f"AdaptiveAvgPool{nd}DBackward0"], (input,), (matrices,))


def _pool_tuple_any(message: str, value, n: int) -> tuple:
    if isinstance(value, int):
        return (value,) * n
    if len(value) != n:
        raise RuntimeError(message)
    return tuple(int(v) for v in value)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Maxima over adaptive windows (AdaptiveMaxPool2DBackward0); indices are flat within each plane."""
    size = _list_with_default(output_size, list(input.shape))
    size = _pool_tuple_any("adaptive_max_pool2d(): internal error: output_size.size() must be 2", size, 2)
    size = _adaptive_checks("adaptive_max_pool2d", input, size)
    data = input._data
    xp = backend.xp_of(data)
    spatial = tuple(input.shape[-2:])
    lead = tuple(input.shape[:-2])
    if 0 in size:
        in_plane = xp.zeros(lead + size, dtype=backend.int64.np)
    else:
        in_plane = K.adaptive_max_pool(xp, data.reshape((-1,) + spatial), size).reshape(lead + size)
    planes = xp.arange(math.prod(lead), dtype=backend.int64.np).reshape(lead + (1, 1)) * math.prod(spatial)
    result = apply_op(D.ADAPTIVE_MAX_POOL2D, (input,), (tuple(input.shape), in_plane + planes))
    return (result, wrap(in_plane)) if return_indices else result


def _check_1d(name: str, input: Tensor, output_size) -> int:
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 'self' "
            f"(while checking arguments for {name})"
        )
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 1:
            raise RuntimeError(
                f"{name}() argument 'output_size' should contain one int (got {len(output_size)})"
            )
        output_size = output_size[0]
    return int(output_size)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    size = _check_1d("adaptive_avg_pool1d", input, output_size)
    return shaping_core.squeeze(adaptive_avg_pool2d(shaping_core.unsqueeze(input, -2), (1, size)), -2)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    size = _check_1d("adaptive_max_pool1d", input, output_size)
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(
                "adaptive_max_pool1d(): Expected input to have non-zero size for non-batch dimensions, but input "
                f"has sizes {list(input.shape)} with dimension {i} being empty"
            )
    values, indices = adaptive_max_pool2d(shaping_core.unsqueeze(input, -2), (1, size), True)
    values = shaping_core.squeeze(values, -2)
    return (values, wrap(indices._data.squeeze(-2))) if return_indices else values


def _unpool_output_size(input: Tensor, kernel, stride, padding, output_size) -> list:
    """The unpooled size: the pooling's input size by default, else `output_size` within a stride of it."""
    nd = len(kernel)
    default = [(input.shape[-nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        return default
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(
            f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a length of "
            f"'{len(output_size)}'"
        )
    for d in range(nd):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(
                f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})'
            )
    return list(output_size)


def _max_unpool2d(input: Tensor, indices: Tensor, output_size) -> Tensor:
    """ATen's max_unpool2d: each plane's values written at their in-plane indices (MaxUnpool2DBackward0)."""
    if indices.dtype is not backend.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {indices.dtype.scalar_type}")
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with {input.dim()} dimensions."
        )
    if input.shape != indices.shape:
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) but got "
            f"indices tensor with shape: {list(indices.shape)}"
        )
    oh, ow = output_size
    idx = indices._data
    bad = (idx < 0) | (idx >= oh * ow)
    if bad.any():
        raise RuntimeError(
            f"Found an invalid max index: {int(idx[bad].reshape(-1)[0])} (output volumes are of size {oh}x{ow})"
        )
    lead = tuple(input.shape[:-2])
    planes = backend.xp_of(idx).arange(math.prod(lead), dtype=idx.dtype).reshape(lead + (1, 1))
    return apply_op(D.MAX_UNPOOL2D, (input,), (idx + planes * (oh * ow), lead + (oh, ow)))


def max_unpool2d(
    input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
) -> Tensor:
    kernel = ntuple(kernel_size, 2)
    stride = kernel if stride is None else ntuple(stride, 2)
    size = _unpool_output_size(input, kernel, stride, ntuple(padding, 2), output_size)
    return _max_unpool2d(input, indices, size)


def max_unpool1d(
    input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
) -> Tensor:
    kernel = ntuple(kernel_size, 1)
    stride = kernel if stride is None else ntuple(stride, 1)
    size = _unpool_output_size(input, kernel, stride, ntuple(padding, 1), output_size) + [1]
    out = _max_unpool2d(shaping_core.unsqueeze(input, -1), wrap(indices._data[..., None]), size)
    return shaping_core.squeeze(out, -1)


def _lp(out: Tensor, norm_type: float, window: int) -> Tensor:
    """(sign(out) * relu(|out|) * window) ** (1 / p): the mean of |x|^p back to a p-norm, as torch writes it."""
    return ((pointwise_core.sign(out) * pointwise_core.relu(pointwise_core.abs(out))) * window) ** (
        1.0 / norm_type
    )


def lp_pool1d(
    input: Tensor, norm_type: float, kernel_size: int, stride=None, ceil_mode: bool = False
) -> Tensor:
    out = avg_pool1d(input**norm_type, kernel_size, kernel_size if stride is None else stride, 0, ceil_mode)
    return _lp(out, norm_type, kernel_size)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    kw, kh = ntuple(kernel_size, 2)
    out = avg_pool2d(input**norm_type, kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, kw * kh)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    kd, kw, kh = ntuple(kernel_size, 3)
    out = avg_pool3d(input**norm_type, kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, kd * kw * kh)
