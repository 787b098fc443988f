"""batch_norm and layer_norm: statistics on raw arrays here, the normalization as one table row.

batch_norm also updates the running statistics in place (as ATen does: their versions
are not bumped); the row gets the statistics it normalizes with as attrs. Inside vmap, where
the statistics are each example's, the norms are composed of batched rows instead.
"""

from __future__ import annotations

import math

from ... import backend
from ...autograd.grad_mode import no_grad
from ...func.batched import BatchedTensor
from ...ops import derivatives as D
from ...ops.nn import kernels as K
from ...ops.op import apply_op, kept_box
from ...ops.shaping import core as shaping_core
from ...tensor import Tensor
from .mixed_dtype import check_parameters
from .padding import pad
from .pooling import avg_pool2d, avg_pool3d


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


BATCH_NORM_RUNNING_STATS_MESSAGE = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will be updated "
    "in place, were not batched.\nIf you are using a module and do not need eval mode, please set "
    "`track_running_stats` to be False.If you are using a prebuilt module and do not need eval mode, please "
    "see the functorch website for resources on how to patch your module to work with vmap"
)


def _batched(*tensors) -> bool:
    return any(t.__class__ is BatchedTensor for t in tensors)


def _normalized(x: Tensor, dims: tuple, eps: float, mean=None, var=None) -> Tensor:
    """(x - mean) / sqrt(var + eps) over `dims`, each example's statistics through batched rows (vmap)."""
    if mean is None:
        mean = x.mean(dims, keepdim=True)
        var = x.var(dims, correction=0, keepdim=True)
    return (x - mean) * (var + eps).rsqrt()


def _affine(out: Tensor, weight, bias, shape: tuple) -> Tensor:
    if weight is not None:
        out = out * weight.reshape(shape)
    return out if bias is None else out + bias.reshape(shape)


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
    check_parameters(input, weight, bias, running_mean, running_var)
    dims = (0,) + tuple(range(2, x.ndim))
    if _batched(input, weight, bias, running_mean, running_var):
        return _batch_norm_composed(
            input, running_mean, running_var, weight, bias, training, momentum, eps, dims
        )
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


def _batch_norm_composed(
    input, running_mean, running_var, weight, bias, training, momentum, eps, dims
) -> Tensor:
    """batch_norm inside vmap: each example normalized over its own batch (its own running statistics
    updated in place) or by the running statistics."""
    channels = (1, -1) + (1,) * (input.dim() - 2) if input.dim() > 1 else (-1,)
    if training:
        if (running_mean is not None and running_mean.__class__ is not BatchedTensor) or (
            running_var is not None and running_var.__class__ is not BatchedTensor
        ):
            raise RuntimeError(BATCH_NORM_RUNNING_STATS_MESSAGE)
        mean = input.mean(dims, keepdim=True)
        var = input.var(dims, correction=0, keepdim=True)
        with no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(mean.reshape(-1) * momentum)
            if running_var is not None:
                n = input.numel() // input.shape[1]
                running_var.mul_(1 - momentum).add_(var.reshape(-1) * (momentum * n / (n - 1)))
        out = _normalized(input, dims, eps, mean, var)
    elif running_mean is None or running_var is None:
        raise RuntimeError(
            f"running_{'mean' if running_mean is None else 'var'} must be defined in evaluation mode"
        )
    else:
        out = _normalized(input, dims, eps, running_mean.reshape(channels), running_var.reshape(channels))
    return _affine(out, weight, bias, channels)


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
    check_parameters(input, weight, bias)
    if _batched(input, weight, bias):
        out = _normalized(input, tuple(range(input.dim() - k, input.dim())), eps)
        return _affine(out, weight, bias, normalized_shape)
    mean, rstd = K.layer_norm_stats(backend.xp_of(input._data), input._data, k, eps)
    xhat = kept_box(input, weight, bias)  # for the raw backward (not one of torch's saved values)
    return apply_op(D.NATIVE_LAYER_NORM, (input, weight, bias), (normalized_shape, eps, mean, rstd, xhat))


# -------------------------------------------------------------- group, instance and local norms


def group_norm(input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """Normalized over each (sample, group of channels) (NativeGroupNormBackward0)."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    shape = list(input.shape)
    _verify_batch_size([shape[0] * shape[1] // num_groups, num_groups] + shape[2:])
    return aten_group_norm(input, num_groups, weight, bias, eps)


def aten_group_norm(
    input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-5, cudnn_enabled=True
):
    """torch.group_norm: group_norm without the functional form's batch-size check."""
    shape = list(input.shape)
    n, c = shape[:2]
    if c % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{shape} and num_groups={num_groups}"
        )
    weight_shape = [0] if weight is None else list(weight.shape)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and not (t.dim() == 1 and t.numel() == c):
            raise RuntimeError(  # torch names the weight's shape in both messages
                f"Expected {name} to be a vector of size equal to the number of channels in input, but got "
                f"{name} of shape {weight_shape} and input of shape {shape}"
            )
    check_parameters(input, weight, bias)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"GroupNormKernelImpl\" not implemented for '{input.dtype.scalar_type}'")
    if _batched(input, weight, bias):
        grouped = _normalized(input.reshape(n, num_groups, -1), (2,), eps).reshape(shape)
        return _affine(grouped, weight, bias, (1, c) + (1,) * (len(shape) - 2))
    x = input._data.reshape(n, num_groups, -1)
    mean = x.mean(axis=2)
    rstd = 1 / (x.var(axis=2) + eps) ** 0.5
    hxw = math.prod(shape[2:])
    return apply_op(
        D.NATIVE_GROUP_NORM, (input.contiguous(), weight, bias), (n, c, hxw, num_groups, eps, mean, rstd)
    )


def _verify_spatial_size(size) -> None:
    if math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def _repeated(t: Tensor | None, times: int):
    """t.repeat(times) for a per-channel vector (RepeatBackward0), as ATen's instance_norm makes it."""
    return None if t is None else apply_op(D.REPEAT, (t,), (tuple(t.shape), (times,)))


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """batch_norm of the input viewed as one sample of N * C channels, as ATen composes it."""
    if use_input_stats:
        _verify_spatial_size(input.size())
    elif running_mean is None or running_var is None:
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when use_input_stats is false"
        )
    shape = tuple(input.shape)
    b, c = shape[:2]
    x = shaping_core.view(input.contiguous(), (1, b * c) + shape[2:])
    for name, t in (
        ("weight", weight),
        ("bias", bias),
        ("running_mean", running_mean),
        ("running_var", running_var),
    ):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {b * c} elements not {t.numel() * b}")  # fmt: skip
    check_parameters(input, weight, bias)  # not the running statistics, as in torch
    data = x._data
    if use_input_stats:
        dims = (0,) + tuple(range(2, data.ndim))
        mean, var = data.mean(axis=dims), data.var(axis=dims)
        count = data.size // (b * c)
        if running_mean is not None:
            _update_repeated(running_mean, mean, momentum, b)
        if running_var is not None:
            _update_repeated(running_var, var * (count / (count - 1)), momentum, b)
    else:
        xp = backend.xp_of(data)
        mean, var = xp.tile(running_mean._data, b), xp.tile(running_var._data, b)
    invstd = 1 / (var + eps) ** 0.5
    out = apply_op(
        D.NATIVE_BATCH_NORM,
        (x, _repeated(weight, b), _repeated(bias, b)),
        (use_input_stats, eps, mean.copy(), invstd),
    )
    return shaping_core.view(out, shape)


def _update_repeated(buffer: Tensor, value, momentum: float, times: int) -> None:
    """A running statistic per channel: its repeated copies updated with `value`, then averaged back, as ATen."""
    repeated = momentum * value + (1 - momentum) * backend.xp_of(value).tile(buffer._data, times)
    buffer._data[...] = repeated.reshape(times, -1).mean(axis=0)


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """input / (k + alpha * mean of squares over `size` neighbouring channels) ** beta, as torch composes it."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)"
        )
    if input.numel() == 0:
        return input
    div = input * input
    if dim == 3:
        div = shaping_core.unsqueeze(div, 1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = shaping_core.squeeze(avg_pool2d(div, (size, 1), stride=1), 1)
    else:
        sizes = tuple(input.shape)
        div = shaping_core.view(div, sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = shaping_core.squeeze(avg_pool3d(div, (size, 1, 1), stride=1), 1)
        div = shaping_core.view(div, sizes)
    div = (div * alpha + k) ** beta
    return input / div
