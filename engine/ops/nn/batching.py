"""Batching rules of the nn rows (ops/batching.py gathers them): losses reduced per example,
pads and upsamplings by a key every example shares, maps of the trailing dims."""

from __future__ import annotations

from collections.abc import Callable

import numpy

from ..batch_dims import BatchedAttr, aligned, all_batched, batched_key, reduced, takes_batched_attrs


def _attr(op, attrs, name: str):
    return attrs[op.node.attr_names.index(name)]


@takes_batched_attrs
def _loss(op, datas, batched, attrs, shape):
    """A pointwise loss: its unreduced forward on the aligned inputs (a batched target attr too), then
    each example reduced."""
    rank = max(d.ndim - 1 if b else d.ndim for d, b in zip(datas, batched))
    datas = [aligned(d, rank) if b else d for d, b in zip(datas, batched)]
    attrs = [aligned(a.array, rank) if a.__class__ is BatchedAttr else a for a in attrs]
    k = op.node.attr_names.index("reduction")
    unreduced = (*attrs[:k], "none", *attrs[k + 1 :])
    return reduced(op.forward(numpy, *datas, *unreduced), attrs[k])


def _nll_loss(op, datas, batched, attrs, shape):
    """-x[n, target[n]] * weight[target[n]] for a target every example shares, reduced per example."""
    _, key, coef, reduction, total = attrs
    loss = -datas[0][batched_key(key)] * coef
    if reduction == "none":
        return loss
    summed = loss.sum(axis=tuple(range(1, loss.ndim)))
    return summed / total if reduction == "mean" else summed


def _picked(op, datas, batched, attrs, shape):
    """A pad by reflection or replication, a nearest upsampling: self[key], the key shared."""
    return datas[0][batched_key(_attr(op, attrs, "key"))]


def _constant_pad(op, datas, batched, attrs, shape):
    x = datas[0]
    _, value, new_shape, out_key, in_key, _ = attrs
    out = numpy.full((x.shape[0], *new_shape), value, dtype=x.dtype)
    out[batched_key(out_key)] = x[batched_key(in_key)]
    return out


def _trailing(op, datas, batched, attrs, shape):
    """An op of the trailing dims that takes any leading ones (interpolation, adaptive averages)."""
    return op.forward(numpy, *datas, *attrs)


def _leading(op, datas, batched, attrs, shape):
    """An op that broadcasts its inputs' leading dims (cdist): every input given the batch."""
    return op.forward(numpy, *all_batched(datas, batched), *attrs)


_LOSSES = (
    "MseLossBackward0 SmoothL1LossBackward0 HuberLossBackward0 SoftMarginLossBackward0 "
    "BinaryCrossEntropyBackward0 BinaryCrossEntropyWithLogitsBackward0"
).split()
_PADS = [f"{kind}Pad{n}DBackward0" for kind in ("Reflection", "Replication") for n in (1, 2, 3)]
_NEAREST = [f"UpsampleNearest{exact}{n}DBackward0" for exact in ("", "Exact") for n in (1, 2, 3)]
_INTERPOLATING = (
    "UpsampleLinear1DBackward0 UpsampleBilinear2DBackward0 UpsampleBicubic2DBackward0 "
    "UpsampleTrilinear3DBackward0 AdaptiveAvgPool2DBackward0 AdaptiveAvgPool3DBackward0"
).split()

RULES: dict[str, Callable] = {
    **dict.fromkeys(_LOSSES, _loss),
    "NllLossBackward0": _nll_loss,
    "NllLoss2DBackward0": _nll_loss,
    **dict.fromkeys(_PADS + _NEAREST, _picked),
    **dict.fromkeys(_INTERPOLATING, _trailing),
    "ConstantPadNdBackward0": _constant_pad,
    "CdistBackward0": _leading,
}
