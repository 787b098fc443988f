"""engine.nn.init: in-place initialisations with PyTorch's distributions and bounds.

Each writes the tensor's array directly (no graph, as under no_grad) and bumps its
version, as an in-place op does. Random streams come from the engine's per-device
generator (seeded by engine.manual_seed); they are not torch's streams.
"""

from __future__ import annotations

import math
import warnings

from .. import backend
from ..tensor import Tensor

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (torch.nn.init.calculate_gain)."""
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _write(tensor: Tensor, values) -> Tensor:
    tensor._data[...] = values
    tensor._vc.version += 1
    return tensor


def _sample(tensor: Tensor, kind: str, a: float, b: float):
    """Uniform(a, b) or Normal(a, b) samples shaped like `tensor`, in its dtype, on its device."""
    gen = backend.generator(tensor.device)
    dt = tensor._data.dtype
    native = dt.itemsize >= 4 and dt.kind == "f"
    shape = tensor._data.shape
    if kind == "uniform":
        u = gen.random(shape, dtype=dt) if native else gen.random(shape)
        return (a + (b - a) * u).astype(dt, copy=False)
    z = gen.standard_normal(shape, dtype=dt) if native else gen.standard_normal(shape)
    return (a + b * z).astype(dt, copy=False)


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    return _write(tensor, _sample(tensor, "uniform", a, b))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    return _write(tensor, _sample(tensor, "normal", mean, std))


def constant_(tensor: Tensor, val: float) -> Tensor:
    return _write(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    return _write(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    return _write(tensor, 0)


def _empty_warning(tensor: Tensor) -> bool:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None
) -> Tensor:
    """U(-bound, bound), bound = gain * sqrt(3 / fan); what Linear and Conv use with a = sqrt(5)."""
    if _empty_warning(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None
) -> Tensor:
    if _empty_warning(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return normal_(tensor, 0.0, std)
