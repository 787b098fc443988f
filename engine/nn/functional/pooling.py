"""max_pool1d/2d and avg_pool1d/2d; the 1-D forms run the 2-D op on an unsqueezed input, as torch."""

from __future__ import annotations

from ... import backend
from ...ops import derivatives as D
from ...ops import functions
from ...ops import kernels as K
from ...ops.op import apply_op
from ...tensor import Tensor, wrap
from ._utils import ntuple


def _pool_args(kernel_size, stride, padding, dilation) -> tuple:
    kernel = ntuple(kernel_size, 2)
    stride = (
        kernel if stride is None or (isinstance(stride, (tuple, list)) and not stride) else ntuple(stride, 2)
    )
    padding, dilation = ntuple(padding, 2), ntuple(dilation, 2)
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
    kernel, stride, padding, _ = _pool_args(kernel_size, stride, padding, 1)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    spatial, out, pads = _geometry(input, kernel, stride, padding, (1, 1), ceil_mode)
    divisor = K.avg_divisor(spatial, kernel, stride, padding, out, count_include_pad, divisor_override)
    if not isinstance(divisor, int):
        divisor = backend.xp_of(input._data).asarray(divisor).astype(input._data.dtype)
    return apply_op(
        D.AVG_POOL,
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
