"""F.pad: constant (negative pads crop), reflect and replicate, with PyTorch's node names."""

from __future__ import annotations

from ... import backend
from ...ops import derivatives as D
from ...ops.op import apply_op
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


def _gathered(input: Tensor, pad, mode: str) -> Tensor:
    k, ndim = len(pad) // 2, input.dim()
    if k not in (1, 2, 3) or ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n{_NON_CONSTANT_HELP}"
        )
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
    if mode == "constant":
        return _constant(input, pad, value)
    if mode in ("reflect", "replicate"):
        return _gathered(input, pad, mode)
    if mode == "circular":
        raise NotImplementedError("circular padding is not supported by engine")
    raise NotImplementedError(f"Unrecognised padding mode {mode}")
