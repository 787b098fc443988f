"""parameters_to_vector and vector_to_parameters."""

from __future__ import annotations

from ...ops.shaping import core as shaping_core
from ...tensor import Tensor, typename


def _check_param_device(param: Tensor, old_device: int | None) -> int:
    """-1 for the CPU, the GPU's index otherwise; torch's TypeError when parameters are on two devices."""
    device = (param.device.index or 0) if param.device.type == "cuda" else -1
    if old_device is not None and device != old_device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return device


def parameters_to_vector(parameters) -> Tensor:
    """Every parameter flattened and concatenated (CatBackward0 over ViewBackward0s)."""
    device = None
    flat = []
    for param in parameters:
        device = _check_param_device(param, device)
        flat.append(shaping_core.view(param, -1))
    return shaping_core.cat(flat)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Each parameter's data becomes its slice of `vec`, viewed in its shape (sharing vec's storage)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected engine.Tensor, but got: {typename(vec)}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_param_device(param, device)
        count = param.numel()
        param.data = shaping_core.view_as(vec[pointer : pointer + count], param).data
        pointer += count
