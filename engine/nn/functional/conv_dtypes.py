"""torch's dtype errors for a convolution on the CPU, which depend on the kernel ATen picks.

A float32 input on the CPU goes to oneDNN (MKLDNN) for most shapes (`use_mkldnn` in ATen's
Convolution.cpp, with more than one thread assumed), whose check names tensor types; the slow
kernels raise "expected scalar type". A bias of another dtype is refused before either.
"""

from __future__ import annotations

from ...backend import tensor_type_name
from ...tensor import Tensor


def check_dtypes(x: Tensor, weight: Tensor, bias: Tensor | None, groups: int, *, transposed: bool) -> None:
    """Raise torch's error where the weight or bias dtype is not the (batched) input's."""
    if x.device.type != "cpu":
        if x.dtype is not weight.dtype:
            raise RuntimeError(_mkldnn_message(x, weight))
        return
    if not transposed and bias is not None and bias.dtype is not x.dtype:
        raise RuntimeError(
            f"Input type ({x.dtype.cpp_name}) and bias type ({bias.dtype.cpp_name}) should be the same"
        )
    if weight.dtype is x.dtype:
        return
    if _uses_mkldnn(x, weight, groups):
        raise RuntimeError(_mkldnn_message(x, weight))
    raise RuntimeError(f"expected scalar type {x.dtype.scalar_type} but found {weight.dtype.scalar_type}")


def _uses_mkldnn(x: Tensor, weight: Tensor, groups: int) -> bool:
    """ATen's choice for a float32 CPU input, the shapes seen as 2-D (a 1-D convolution has height 1)."""
    if x.dtype.name != "float32":
        return False
    shape = tuple(x.shape) if x.dim() >= 4 else (*x.shape[:2], 1, *x.shape[2:])
    kernel = tuple(weight.shape[2:]) if weight.dim() >= 4 else (1, *weight.shape[2:])
    return (
        groups > 1
        or (kernel[-1] > 3 and kernel[-2] > 3)
        or shape[0] > 1
        or shape[0] * shape[1] * shape[2] * shape[3] > 20480
    )


def _mkldnn_message(x: Tensor, weight: Tensor) -> str:
    return (
        f"Input type ({tensor_type_name(x._data)}) and weight type ({tensor_type_name(weight._data)}) "
        "should be the same or input should be a MKLDNN tensor and weight is a dense tensor"
    )
