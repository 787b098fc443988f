"""conv1d / conv2d / conv3d (stride, padding incl. 'same' / 'valid', dilation, groups), their transposes,
unfold and fold.

Convolutions go through one ConvolutionBackward0 row, transposed ones through another of that name;
unbatched input is unsqueezed and squeezed around it, as PyTorch does.
"""

from __future__ import annotations

import warnings

from ...ops import derivatives as D
from ...ops.nn import functions as nn_functions
from ...ops.nn import kernels as K
from ...ops.op import apply_op, kept_box
from ...ops.shaping import core as shaping_core
from ...tensor import Tensor
from ._utils import ntuple
from .conv_dtypes import check_dtypes
from .padding import pad as _pad


def _same_padding(kernel, dilation, stride) -> tuple[tuple, list]:
    """Symmetric padding for 'same', plus the extra right padding an even kernel needs."""
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    symmetric, extra = [], []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        symmetric.append(total // 2)
        extra.append(total - 2 * (total // 2))
    return tuple(symmetric), extra


def _check(input: Tensor, weight: Tensor, groups: int, nd: int) -> None:
    if weight.dim() != nd + 2:
        raise RuntimeError(
            f"Expected {nd + 2}-dimensional weight for {nd + 2}-dimensional input {list(input.shape)}, "
            f"but got {weight.dim()}-dimensional weight of size {list(weight.shape)} instead"
        )
    channels = input.shape[1]
    if channels != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{list(input.shape)} "
            f"to have {weight.shape[1] * groups} channels, but got {channels} channels instead"
        )
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got "
            f"weight of size [{list(weight.shape)}] instead"
        )


def _conv(input, weight, bias, stride, padding, dilation, groups, nd: int, name: str) -> Tensor:
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, "
            f"but got input of size: {list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    batched = input.dim() == nd + 2
    x = input if batched else shaping_core.unsqueeze(input, 0)
    _check(x, weight, groups, nd)
    kernel = tuple(weight.shape[2:])
    stride, dilation = ntuple(stride, nd), ntuple(dilation, nd)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            padding, extra = _same_padding(kernel, dilation, stride)
            if any(extra):
                warnings.warn(
                    "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
                    "copy of the input be created",
                    stacklevel=3,
                )
                x = _pad(x, [v for e in reversed(extra) for v in (0, e)])
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    padding = ntuple(padding, nd)
    padded = tuple(n + 2 * p for n, p in zip(x.shape[2:], padding))
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if any(n < s for n, s in zip(padded, span)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
            f"({' x '.join(map(str, span))}). Kernel size can't be greater than actual input size"
        )
    check_dtypes(x, weight, bias, groups, transposed=False)
    # The forward's im2col columns, kept for the weight gradient when there will be one.
    columns = kept_box(weight)
    out = apply_op(D.CONVOLUTION, (x, weight, bias), (stride, padding, dilation, groups, columns))
    return out if batched else shaping_core.squeeze(out, 0)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding blocks as columns: (N, C, H, W) -> (N, C * kh * kw, L) (Im2ColBackward0)."""
    if input.dim() != 4:
        raise NotImplementedError(f"Input Error: Only 4D input Tensors are supported (got {input.dim()}D)")
    kernel, dilation, stride = ntuple(kernel_size, 2), ntuple(dilation, 2), ntuple(stride, 2)
    pads = K.symmetric(ntuple(padding, 2))
    return nn_functions.im2col(input, kernel, stride, pads, dilation)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Columns summed back into an image: (N, C * kh * kw, L) -> (N, C, *output_size) (Col2ImBackward0)."""
    if input.dim() != 3:
        raise NotImplementedError(
            f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got {input.dim()}D)"
        )
    kernel, dilation, stride = ntuple(kernel_size, 2), ntuple(dilation, 2), ntuple(stride, 2)
    pads = K.symmetric(ntuple(padding, 2))
    n, ck = input.shape[:2]
    shape = (n, ck // (kernel[0] * kernel[1])) + ntuple(output_size, 2)
    return nn_functions.col2im(input, shape, kernel, stride, pads, dilation)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _per_dim(what: str, values: tuple, one_d: int) -> list:
    """`what_height: v` ... as torch's message lists them (a 1-D convolution is checked as a 2-D one of height 1)."""
    names = ("depth", "height", "width")[-max(len(values), 2) :]
    values = ((one_d,) if len(values) == 1 else ()) + tuple(values)
    return [f"{what}_{name}: {v}" for name, v in zip(names, values)]


def _check_transposed(x: Tensor, weight: Tensor, bias, groups: int, nd: int) -> None:
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of "
            f"size [{list(weight.shape)}] instead"
        )
    if x.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(x.shape)} to have "
            f"{weight.shape[0]} channels, but got {x.shape[1]} channels instead"
        )
    c_out = weight.shape[1] * groups
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != c_out):
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
            f"{c_out} elements, but got bias of size {list(bias.shape)} instead"
        )
    check_dtypes(x, weight, bias, groups, transposed=True)


def _conv_transpose(
    input, weight, bias, stride, padding, output_padding, groups, dilation, nd: int, name: str
):
    """The transposed convolution (ConvolutionBackward0, transposed): a convolution's input gradient."""
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, "
            f"but got input of size: {list(input.shape)}"
        )
    batched = input.dim() == nd + 2
    x = input if batched else shaping_core.unsqueeze(input, 0)
    _check_transposed(x, weight, bias, groups, nd)
    stride, padding, dilation = ntuple(stride, nd), ntuple(padding, nd), ntuple(dilation, nd)
    output_padding = ntuple(output_padding, nd)
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            + " ".join(
                _per_dim("output_padding", output_padding, 0)
                + _per_dim("stride", stride, 1)
                + _per_dim("dilation", dilation, 1)
            )  # fmt: skip
        )
    kernel = tuple(weight.shape[2:])
    out = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1
                for i, s, p, d, k, op in zip(x.shape[2:], stride, padding, dilation, kernel, output_padding))  # fmt: skip
    if any(o <= 0 for o in out):
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))}). Calculated output size per "
            f"channel: ({' x '.join(map(str, out))}). Output size is too small"
        )
    y = apply_op(D.CONV_TRANSPOSE, (x, weight, bias), (stride, padding, dilation, groups, output_padding))
    return y if batched else shaping_core.squeeze(y, 0)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 1, "conv_transpose1d"
    )


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 2, "conv_transpose2d"
    )


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 3, "conv_transpose3d"
    )
