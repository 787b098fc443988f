"""Tensor.view(dtype): the same bytes read as another dtype (torch's view_dtype).

As in torch 2.13 the result shares the storage and the version counter but is outside the graph
(not a differentiable view: no grad_fn, no `_base`). Between dtypes of different sizes the last
dim must be contiguous and the sizes must fit; torch's checks and words, in its order.
"""

from __future__ import annotations

from ... import backend
from ...tensor import Tensor, view_tensor


def view_dtype(t: Tensor, dtype: backend.dtype) -> Tensor:
    if backend.bfloat16 in (t.dtype, dtype):
        raise NotImplementedError(
            "engine: view(dtype) to or from bfloat16 is not supported (the engine stores bfloat16 as float32)"
        )
    old, new = t.dtype.itemsize, dtype.itemsize
    if old != new:
        _check_sizes(t, dtype, new // old if new > old else 0)
    return view_tensor(t._data.view(dtype.np), t)


def _check_sizes(t: Tensor, dtype: backend.dtype, ratio: int) -> None:
    """torch's refusals of a view between element sizes; `ratio`: how many of t's elements make one
    new element (0 when the new elements are smaller)."""
    what = f"to view {t.dtype.scalar_type} as {dtype.scalar_type} (different element sizes)"
    if t.dim() == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    strides = t.stride()
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
    if not ratio:
        return
    if t.shape[-1] % ratio:
        raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got {t.shape[-1]}")
    if t.storage_offset() % ratio:
        raise RuntimeError(
            f"self.storage_offset() must be divisible by {ratio} {what}, but got {t.storage_offset()}"
        )
    for i, stride in enumerate(strides[:-1]):
        if stride % ratio:
            raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} {what}, but got {stride}")
