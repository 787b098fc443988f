"""batch_norm and layer_norm: statistics on raw arrays here, the normalization as one table row.

batch_norm also updates the running statistics in place (as ATen does: their versions
are not bumped); the row gets the statistics it normalizes with as attrs.
"""

from __future__ import annotations

import math

from ...ops import derivatives as D
from ...ops.op import apply_op
from ...tensor import Tensor


def _verify_batch_size(shape) -> None:
    size = shape[0] * math.prod(shape[2:])
    if size == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {shape!r}")


def _check_channels(name: str, t: Tensor | None, channels: int) -> None:
    if t is not None and t.numel() != channels:
        raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")


def _update(buffer: Tensor, value, momentum: float) -> None:
    """running = momentum * batch + (1 - momentum) * running, in place (like ATen, no version bump)."""
    data = buffer._data
    data[...] = momentum * value + (1 - momentum) * data


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    x = input._data
    channels = x.shape[1] if x.ndim > 1 else 1
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):  # fmt: skip
        _check_channels(name, t, channels)
    dims = (0,) + tuple(range(2, x.ndim))
    if training:
        mean = x.mean(axis=dims)
        var = x.var(axis=dims)
        if running_mean is not None:
            _update(running_mean, mean, momentum)
        if running_var is not None:
            n = x.size // channels
            _update(running_var, var * (n / (n - 1)), momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError(
                f"running_{'mean' if running_mean is None else 'var'} must be defined in evaluation mode"
            )
        mean, var = running_mean._data, running_var._data
    invstd = 1 / (var + eps) ** 0.5
    return apply_op(D.NATIVE_BATCH_NORM, (input, weight, bias), (training, eps, mean.copy(), invstd))


def layer_norm(
    input: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.dim() - k :]) != normalized_shape or k > input.dim():
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                f"{list(t.shape)} and normalized_shape = {list(normalized_shape)}"
            )
    x = input._data
    dims = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=dims, keepdims=True)
    rstd = 1 / (x.var(axis=dims, keepdims=True) + eps) ** 0.5
    return apply_op(D.NATIVE_LAYER_NORM, (input, weight, bias), (normalized_shape, eps, mean, rstd))
