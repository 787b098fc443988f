"""F.dropout: the input times a scaled Bernoulli mask (MulBackward0, as in PyTorch)."""

from __future__ import annotations

from ... import backend
from ...ops import inplace as I
from ...ops.pointwise import core as pointwise_core
from ...tensor import Tensor, wrap


def _mask(input: Tensor, p: float):
    """Keep each element with probability 1 - p, scaled by 1 / (1 - p) (zeros when p == 1)."""
    data = input._data
    if p == 1:
        return backend.xp_of(data).zeros_like(data)
    gen = backend.generator(input.device)
    uniform = gen.random(data.shape, dtype=data.dtype) if data.dtype.itemsize >= 4 else gen.random(data.shape)
    keep = (uniform >= p).astype(data.dtype)
    keep *= 1.0 / (1.0 - p)
    return keep


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    mask = wrap(_mask(input, p))
    return I.mul_(input, mask) if inplace else pointwise_core.mul(input, mask)
