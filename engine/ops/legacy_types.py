"""torch's legacy tensor types: `engine.FloatTensor`, `engine.LongTensor`, ...

Calling one is the legacy constructor in its dtype on the CPU (`LongTensor([1, 3])` holds the
values, `LongTensor(2, 3)` is uninitialised of that size: `Tensor.new`'s rules), `isinstance`
tells a CPU tensor of that dtype, and `x.type(engine.LongTensor)` converts to it.
"""

from __future__ import annotations

from .. import backend
from ..tensor import Tensor
from .creation import empty


class LegacyTensorType(type):
    """The class of the legacy types (torch's `torch.tensortype`)."""

    dtype: backend.dtype
    is_cuda = False

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __call__(cls, *args, **kwargs) -> Tensor:
        return empty(0, dtype=cls.dtype, device=backend.CPU).new(*args, **kwargs)


def _legacy_type(name: str, dtype: backend.dtype) -> LegacyTensorType:
    return LegacyTensorType(name, (), {"dtype": dtype, "__module__": "engine", "__qualname__": name})


FloatTensor = _legacy_type("FloatTensor", backend.float32)
DoubleTensor = _legacy_type("DoubleTensor", backend.float64)
HalfTensor = _legacy_type("HalfTensor", backend.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", backend.bfloat16)
ByteTensor = _legacy_type("ByteTensor", backend.uint8)
CharTensor = _legacy_type("CharTensor", backend.int8)
ShortTensor = _legacy_type("ShortTensor", backend.int16)
IntTensor = _legacy_type("IntTensor", backend.int32)
LongTensor = _legacy_type("LongTensor", backend.int64)
BoolTensor = _legacy_type("BoolTensor", backend.bool_)

__all__ = [
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
]
