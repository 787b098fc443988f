"""F.dropout and its channel-wise variants: the input times a scaled Bernoulli mask (MulBackward0,
as in PyTorch); dropout1d/2d/3d draw one mask entry per (sample, channel), as ATen's feature_dropout."""

from __future__ import annotations

import warnings

from ... import backend
from ...ops import inplace as I
from ...ops.pointwise import core as pointwise_core
from ...tensor import Tensor, wrap


def _mask(input: Tensor, p: float, shape: tuple):
    """Keep each entry with probability 1 - p, scaled by 1 / (1 - p) (zeros when p == 1); inside vmap's
    "different", a mask per example."""
    data = input._data
    if p == 1:
        return wrap(backend.xp_of(data).zeros(shape, dtype=data.dtype))
    gen = backend.generator(input.device)
    shape = backend.drawn_shape(shape)
    uniform = gen.random(shape, dtype=data.dtype) if data.dtype.itemsize >= 4 else gen.random(shape)
    keep = (uniform >= p).astype(data.dtype)
    keep *= 1.0 / (1.0 - p)
    return backend.drawn(wrap(keep))


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _apply_mask(input: Tensor, mask: Tensor, inplace: bool) -> Tensor:
    return I.mul_(input, mask) if inplace else pointwise_core.mul(input, mask)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    if not training or p == 0:
        return input
    return _apply_mask(input, _mask(input, p, input._data.shape), inplace)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    """ATen's feature_dropout: one mask entry per (sample, channel), broadcast over the rest
    (a 0-dim zero when p == 1, as ATen multiplies by)."""
    if p == 0 or not training or input.numel() == 0:
        return input
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = () if p == 1 else input._data.shape[:2] + (1,) * (input.dim() - 2)
    return _apply_mask(input, _mask(input, p, shape), inplace)


def _channels(input: Tensor, p: float, training: bool, inplace: bool, batched: bool) -> Tensor:
    """Feature dropout; an input without its batch dim runs with one, as torch does."""
    if batched:
        return _feature_dropout(input, p, training, inplace)
    input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature_dropout(input, p, training, inplace)
    return result.squeeze_(0) if inplace else result.squeeze(0)


def _rank_warning(name: str, ndim: int, spatial: str, ranks: str) -> str:
    return (
        f"{name}: Received a {ndim}-D input to {name}, which is deprecated "
        "and will result in an error in a future release. To retain the behavior "
        f"and silence this warning, please use dropout instead. Note that {name} "
        f"exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, "
        f"a channel dimension, and an optional batch dimension (i.e. {ranks} inputs)."
    )


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, L) or (C, L) input."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {ndim}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs)."
        )
    return _channels(input, p, training, inplace, batched=ndim == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, H, W) input; a 3-D input is read as (N, C, L), as torch reads it."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        warnings.warn(_rank_warning("dropout2d", ndim, "2", "3D or 4D"), stacklevel=2)
    if ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (4, 5):
        warnings.warn(_rank_warning("dropout3d", ndim, "3", "4D or 5D"), stacklevel=2)
    return _channels(input, p, training, inplace, batched=ndim == 5)
