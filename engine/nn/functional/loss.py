"""Losses, with PyTorch's argument checks, messages and graphs.

mse / smooth_l1 / nll / bce / bce_with_logits are one row each; l1_loss and the
cross_entropy variants are compositions, as they are in ATen (so the graphs match).
"""

from __future__ import annotations

import warnings

import numpy

from ... import backend
from ...autograd import grad_mode
from ...ops import derivatives as D
from ...ops import functions
from ...ops.op import apply_op
from ...tensor import Tensor, wrap
from ._utils import legacy_reduction
from .activation import log_softmax


def _warn_size(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=3,
        )


def _broadcast(input: Tensor, target: Tensor) -> tuple:
    if input.shape == target.shape:
        return input, target
    functions.broadcast_check(input, target)
    shape = numpy.broadcast_shapes(input.shape, target.shape)
    return (
        input if input.shape == shape else functions.expand(input, shape),
        target if target.shape == shape else functions.expand(target, shape),
    )


def _reduced(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return functions.mean(loss)
    return functions.sum(loss) if reduction == "sum" else loss


def _weighted(loss: Tensor, weight: Tensor, input: Tensor, reduction: str) -> Tensor:
    """The elementwise-weighted forms of mse_loss / l1_loss (plain ops, as in torch)."""
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    total = functions.sum(loss)
    return total / functions.sum(weight) if reduction == "mean" else total


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None) -> Tensor:
    _warn_size(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    a, b = _broadcast(input, target)
    if weight is not None:
        return _weighted(functions.pow(a - b, 2), weight, input, reduction)
    return apply_op(D.MSE_LOSS, (a, b), (reduction,))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None) -> Tensor:
    _warn_size(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    a, b = _broadcast(input, target)
    if weight is not None:
        return _weighted(functions.abs(a - b), weight, input, reduction)
    return _reduced(functions.abs(a - b), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0) -> Tensor:
    _warn_size(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    a, b = _broadcast(input, target)
    if beta == 0.0:
        return _reduced(functions.abs(a - b), reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return apply_op(D.SMOOTH_L1_LOSS, (a, b), (reduction, beta))


# ----------------------------------------------------------------------------- nll_loss


def _target_array(target: Tensor):
    t = target._data
    if not (
        (t.dtype.kind == "i" and t.dtype.itemsize == 8) or (t.dtype.kind == "u" and t.dtype.itemsize == 1)
    ):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.dtype.scalar_type}")
    return t.astype("int64", copy=False)


def _nll_layout(input: Tensor, target: Tensor) -> tuple:
    """The (N, C[, H, W]) input the row sees, its node name, and the target laid out to match."""
    ndim, shape, tshape = input.dim(), tuple(input.shape), tuple(target.shape)
    if ndim == 1:
        if target.dim() > 1 or (target.dim() == 1 and tshape[0] != 1):
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {tshape[0]}")
        return input, "NllLossBackward0"
    if tshape[:1] != shape[:1]:
        raise ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size ({tshape[0]}).")
    if ndim == 2:
        if target.dim() != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        return input, "NllLossBackward0"
    if ndim == 4:
        if target.dim() != 3:
            raise RuntimeError(
                f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                f"{target.dim()}"
            )
        if tshape[1:] != shape[2:]:
            raise RuntimeError(f"size mismatch (got input: {list(shape)} , target: {list(tshape)}")
        return input, "NllLoss2DBackward0"
    if tshape[1:] != shape[2:]:
        raise RuntimeError(f"Expected target size {list(shape[:1] + shape[2:])}, got {list(tshape)}")
    return functions.view(input.contiguous(), shape[0], shape[1], 1, -1), "NllLoss2DBackward0"


def _nll_weights(t, weight: Tensor | None, ignore_index: int, classes: int, dtype) -> tuple:
    """Per-target loss weights (0 where ignored), targets safe to index with, and their sum."""
    xp = backend.xp_of(t)
    lo, hi = (int(t.min()), int(t.max())) if t.size else (0, 0)
    if not lo <= ignore_index <= hi and 0 <= lo and hi < classes:  # the common case: nothing to mask
        if weight is None:
            return xp.ones(t.shape, dtype=dtype), t, float(t.size)
        coef = weight._data[t].astype(dtype, copy=False)
        return coef, t, coef.sum()
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= classes))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    safe = xp.where(valid, t, 0)
    coef = (valid if weight is None else weight._data[safe] * valid).astype(dtype)
    return coef, safe, coef.sum()


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)
    t = _target_array(target)
    x, name = _nll_layout(input, target)
    xp = backend.xp_of(t)
    classes = input.shape[0 if input.dim() == 1 else 1]
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(
            f"weight tensor should be defined either for all {classes} classes or no classes but got weight "
            f"tensor of shape: {list(weight.shape)}"
        )
    coef, safe, total = _nll_weights(t, weight, ignore_index, classes, input._data.dtype)
    if x.dim() == 1:
        key = (safe,)
    elif x.dim() == 2:
        key = (xp.arange(x.shape[0]), safe)
    else:
        n, _, h, w = x.shape
        safe = safe.reshape(n, h, w)
        coef = coef.reshape(n, h, w)
        key = (
            xp.arange(n).reshape(n, 1, 1),
            safe,
            xp.arange(h).reshape(1, h, 1),
            xp.arange(w).reshape(1, 1, w),
        )
    out = apply_op(D.NLL_LOSS[name], (x,), (tuple(x.shape), key, coef, reduction, total))
    if reduction == "none" and x is not input:
        out = functions.view(out, target.shape)
    return out


# ------------------------------------------------------------------------- cross_entropy


def _soft_target_loss(logp, target, weight, reduction, label_smoothing, class_dim, classes) -> Tensor:
    """Cross entropy against class probabilities, as ATen composes it."""
    if not target.dtype.is_floating_point:
        raise RuntimeError(
            f"Expected floating point type for target with class probabilities, got {target.dtype.scalar_type}"
        )
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms = logp * target
    if weight is not None:
        terms = terms * _class_view(weight, logp.dim(), class_dim)
    if reduction == "none":
        return -functions.sum(terms, class_dim)
    total = -functions.sum(terms)
    if reduction == "sum":
        return total
    return apply_op(D.DIV_SCALAR, (total,), (logp.numel() // classes,))


def _class_view(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return functions.view(weight, shape)


def _smoothed(nll, logp, target, weight, ignore_index, reduction, label_smoothing, class_dim, classes):
    """(1 - e) * nll + e / C * (the loss against a uniform target), as ATen composes it."""
    t = target._data
    ignored = t == ignore_index
    terms = logp if weight is None else logp * _class_view(weight, logp.dim(), class_dim)
    smooth = apply_op(D.MASKED_FILL, (-functions.sum(terms, class_dim),), (ignored, 0.0))
    if reduction == "mean":
        kept = t[~ignored]
        denominator = kept.size if weight is None else weight._data[kept].sum()
        smooth = functions.sum(smooth) / wrap(backend.xp_of(t).asarray(denominator, dtype=logp._data.dtype))
    elif reduction == "sum":
        smooth = functions.sum(smooth)
    left = apply_op(D.MUL_SCALAR, (nll,), (1 - label_smoothing,))
    return left + apply_op(D.MUL_SCALAR, (smooth,), (label_smoothing / classes,))


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """log_softmax over the class dim, then nll_loss (class indices) or -sum(p log q) (probabilities)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    classes = input.shape[class_dim]
    logp = log_softmax(input, class_dim)
    if input.shape == target.shape:
        return _soft_target_loss(logp, target, weight, reduction, label_smoothing, class_dim, classes)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing == 0:
        return nll
    return _smoothed(nll, logp, target, weight, ignore_index, reduction, label_smoothing, class_dim, classes)


# ---------------------------------------------------------------------------- binary losses


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction="mean",
) -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}) is "
            "deprecated. Please ensure they have the same size."
        )
    x = input._data
    if ((x < 0) | (x > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    w = None if weight is None else backend.xp_of(x).broadcast_to(weight._data, x.shape)
    return apply_op(D.BINARY_CROSS_ENTROPY, (input, target), (w, reduction))


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    for name, t in (("weight", weight), ("pos_weight", pos_weight)):
        if t is not None and t.requires_grad and grad_mode.state[0]:
            raise RuntimeError(
                f"The function 'binary_cross_entropy_with_logits' is not differentiable with respect to "
                f"argument '{name}'. This input cannot have requires_grad True."
            )
    attrs = (
        None if weight is None else weight._data,
        None if pos_weight is None else pos_weight._data,
        reduction,
    )
    return apply_op(D.BCE_WITH_LOGITS, (input, target), attrs)
