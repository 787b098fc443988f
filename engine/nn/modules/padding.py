"""The padding modules: ZeroPad, ConstantPad, ReflectionPad, ReplicationPad and CircularPad, 1-3 d."""

from __future__ import annotations

from ...tensor import Tensor
from .. import functional as F
from ..module import Module


class _PadNd(Module):
    _nd = 0  # how many trailing dims are padded
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * (2 * self._nd)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (self._nd + 1, self._nd + 2):
            raise ValueError(f"expected {self._nd + 1}D or {self._nd + 2}D input (got {input.dim()}D input)")
        return super().forward(input)


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


def _classes(base, prefix: str, mode: str | None = None) -> list:
    made = []
    for nd in (1, 2, 3):
        attrs = {"_nd": nd, "__module__": __name__}
        if mode is not None:
            attrs["_mode"] = mode
        made.append(type(f"{prefix}{nd}d", (base,), attrs))
    return made


ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _classes(_PadNd, "ReflectionPad", "reflect")
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _classes(_PadNd, "ReplicationPad", "replicate")
CircularPad1d, CircularPad2d, CircularPad3d = _classes(_CircularPadNd, "CircularPad")
ConstantPad1d, ConstantPad2d, ConstantPad3d = _classes(_ConstantPadNd, "ConstantPad")
ZeroPad1d, ZeroPad2d, ZeroPad3d = _classes(_ZeroPadNd, "ZeroPad")
