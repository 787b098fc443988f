"""Conv1d/2d/3d (weight (out, in / groups, *kernel)) and ConvTranspose1d/2d/3d (weight (in, out / groups,
*kernel)), with bias, PyTorch's default init and repr."""

from __future__ import annotations

import math

from ...ops.creation import empty
from ...tensor import Size, Tensor
from .. import functional as F
from .. import init
from ..functional._utils import ntuple
from ..module import Module
from ..parameter import Parameter

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    _nd = 0

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        stride, dilation, kernel_size = ntuple(stride, nd), ntuple(dilation, nd), ntuple(kernel_size, nd)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = ntuple(padding, nd)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {set(_PADDING_MODES)}, but got padding_mode='{padding_mode}'"
            )
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation
        self.transposed, self.output_padding = False, (0,) * nd
        self.groups, self.padding_mode = groups, padding_mode
        self._reversed_padding_repeated_twice = self._reversed_padding(padding, kernel_size, dilation)
        weight_shape = self._weight_shape(in_channels, out_channels, groups, kernel_size)
        self.weight = Parameter(empty(weight_shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    @staticmethod
    def _weight_shape(in_channels: int, out_channels: int, groups: int, kernel_size: tuple) -> tuple:
        return (out_channels, in_channels // groups, *kernel_size)

    @staticmethod
    def _reversed_padding(padding, kernel_size, dilation) -> list:
        """F.pad's argument for padding_mode != 'zeros' (last dim first)."""
        if not isinstance(padding, str):
            return [p for p in reversed(padding) for _ in range(2)]
        pads = [0, 0] * len(kernel_size)
        if padding == "same":
            for i, (d, k) in enumerate(zip(reversed(dilation), reversed(kernel_size))):
                total = d * (k - 1)
                pads[2 * i], pads[2 * i + 1] = total // 2, total - total // 2
        return pads

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _conv(self, input, weight, bias, stride, padding, dilation, groups):
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return self._conv(padded, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return self._conv(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class Conv1d(_ConvNd):
    _nd = 1

    def _conv(self, *args):
        return F.conv1d(*args)


class Conv2d(_ConvNd):
    _nd = 2

    def _conv(self, *args):
        return F.conv2d(*args)


class Conv3d(_ConvNd):
    _nd = 3

    def _conv(self, *args):
        return F.conv3d(*args)


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution: the weight laid out (in, out / groups, *kernel), only zero padding."""

    _transpose = None  # the functional form, set by each subclass

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, device,
            dtype,
        )  # fmt: skip
        self.transposed, self.output_padding = True, ntuple(output_padding, self._nd)

    @staticmethod
    def _weight_shape(in_channels: int, out_channels: int, groups: int, kernel_size: tuple) -> tuple:
        return (in_channels, out_channels // groups, *kernel_size)

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        """output_padding, or what reaches `output_size` (within a stride of the smallest output)."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        lead = 2 if input.dim() == nd + 2 else 1
        if len(output_size) == lead + nd:
            output_size = output_size[lead:]
        if len(output_size) != nd:
            raise ValueError(
                f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must have {nd} or {lead + nd} "
                f"elements (got {len(output_size)})"
            )
        low = [
            (input.size(d + lead) - 1) * self.stride[d] - 2 * self.padding[d] + self.dilation[d] * (self.kernel_size[d] - 1) + 1
            for d in range(nd)
        ]  # fmt: skip
        high = [size + s - 1 for size, s in zip(low, self.stride)]
        for size, lo, hi in zip(output_size, low, high):
            if size < lo or size > hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from {low} to {high} "
                    f"(for an input of {Size(input.shape[lead:])})"
                )
        return tuple(size - lo for size, lo in zip(output_size, low))

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return type(self)._transpose(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    _nd = 1
    _transpose = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    _nd = 2
    _transpose = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    _nd = 3
    _transpose = staticmethod(F.conv_transpose3d)


class Fold(Module):
    """F.fold as a module: columns (N, C * prod(kernel), L) summed back into (N, C, *output_size)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    """F.unfold as a module: sliding blocks of (N, C, H, W) as columns (N, C * prod(kernel), L)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
