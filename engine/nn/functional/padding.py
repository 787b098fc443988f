"""F.pad: constant (negative pads crop), reflect, replicate and circular, with PyTorch's node names."""

from __future__ import annotations

from ... import backend
from ...ops import derivatives as D
from ...ops.op import apply_op
from ...ops.shaping import core as shaping_core
from ...tensor import Tensor

_NON_CONSTANT_HELP = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)


def _pairs(pad, ndim: int) -> list:
    """(dim, lo, hi) per padded dim; `pad` lists the last dim first, as torch's does."""
    return [(ndim - 1 - i, int(pad[2 * i]), int(pad[2 * i + 1])) for i in range(len(pad) // 2)]


def _constant(input: Tensor, pad, value) -> Tensor:
    shape = tuple(input.shape)
    new_shape, out_key, in_key = list(shape), [slice(None)] * len(shape), [slice(None)] * len(shape)
    for dim, lo, hi in _pairs(pad, len(shape)):
        n = shape[dim]
        size = n + lo + hi
        if size < 0:
            raise RuntimeError(
                f"The input size {n}, plus negative padding {lo} and {hi} resulted in a negative output size, "
                f"which is invalid. Check dimension {dim} of your input."
            )
        kept = max(n - max(-lo, 0) - max(-hi, 0), 0)
        new_shape[dim] = size
        in_key[dim] = slice(max(-lo, 0), max(-lo, 0) + kept)
        out_key[dim] = slice(max(lo, 0), max(lo, 0) + kept)
    attrs = (
        tuple(pad),
        0 if value is None else value,
        tuple(new_shape),
        tuple(out_key),
        tuple(in_key),
        shape,
    )
    return apply_op(D.CONSTANT_PAD, (input,), attrs)


def _source_index(xp, n: int, lo: int, hi: int, mode: str):
    """For each padded position along one dim, the input position it copies."""
    i = xp.arange(-lo, n + hi)
    if mode == "replicate":
        return xp.clip(i, 0, n - 1)
    i = xp.abs(i)
    return xp.where(i > n - 1, 2 * (n - 1) - i, i)


def _check_non_constant(input: Tensor, pad) -> int:
    """How many trailing dims a reflect / replicate / circular pad pads, or torch's refusal."""
    k, ndim = len(pad) // 2, input.dim()
    if k not in (1, 2, 3) or ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n{_NON_CONSTANT_HELP}"
        )
    return k


def _gathered(input: Tensor, pad, mode: str) -> Tensor:
    k, ndim = _check_non_constant(input, pad), input.dim()
    shape = tuple(input.shape)
    xp = backend.xp_of(input._data)
    indices = []
    for dim, lo, hi in reversed(_pairs(pad, ndim)):
        n = shape[dim]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(
                f"Argument #{2 * k + 2}: Padding size should be less than the corresponding input dimension, "
                f"but got: padding ({lo}, {hi}) at dimension {dim} of input {list(shape)}"
            )
        indices.append(_source_index(xp, n, lo, hi, mode))
    grid = [idx.reshape((-1,) + (1,) * (k - 1 - j)) for j, idx in enumerate(indices)]
    key = (slice(None),) * (ndim - k) + tuple(grid)
    name = f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{k}DBackward0"
    return apply_op(D.INDEX_PAD[name], (input,), (tuple(pad), shape, key))


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got padding "
            f"length {len(pad)} and input of dimension {input.dim()}"
        )
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode == "constant":
        return _constant(input, pad, value)
    if value is not None and value != 0:  # torch lets a value of 0 through
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if mode == "circular":
        return _circular(input, pad)
    return _gathered(input, pad, mode)


def _circular(input: Tensor, pad) -> Tensor:
    """Wrap-around padding as ATen writes it: an empty output, the input copied into its middle, then each
    padded dim's borders copied from the opposite side of the output (CopySlices over SliceBackward0s)."""
    k = _check_non_constant(input, pad)
    in_shape = tuple(input.shape)
    lead = input.dim() - k
    out_shape = list(in_shape)
    for i in range(k):
        lo, hi = int(pad[2 * (k - i - 1)]), int(pad[2 * (k - i - 1) + 1])
        size = in_shape[lead + i]
        out_shape[lead + i] = size + lo + hi
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[lead + i] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = input.new_empty(out_shape)
    out_part, in_part = out, input
    for i in range(k):
        dim, lo, hi = k - i + lead - 1, int(pad[2 * i]), int(pad[2 * i + 1])
        out_part = shaping_core._slice(out_part, dim, max(lo, 0), out_shape[dim] - max(hi, 0), 1)
        in_part = shaping_core._slice(in_part, dim, max(-lo, 0), in_shape[dim] - max(-hi, 0), 1)
    out_part.copy_(in_part)
    for i in range(k):
        dim, lo, hi = k - i + lead - 1, int(pad[2 * i]), int(pad[2 * i + 1])
        size = out_shape[dim]
        if lo > 0:
            source = shaping_core._slice(out, dim, size - lo - max(hi, 0), size - max(hi, 0), 1)
            shaping_core._slice(out, dim, 0, lo, 1).copy_(source)
        if hi > 0:
            source = shaping_core._slice(out, dim, max(lo, 0), max(lo, 0) + hi, 1)
            shaping_core._slice(out, dim, size - hi, size, 1).copy_(source)
    return out
