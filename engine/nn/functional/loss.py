"""Losses, with PyTorch's argument checks, messages and graphs.

mse / smooth_l1 / nll / bce / bce_with_logits are one row each; l1_loss and the
cross_entropy variants are compositions, as they are in ATen (so the graphs match).
"""

from __future__ import annotations

import math
import warnings

import numpy

from ... import backend
from ...autograd.thread_local import this_thread
from ...func.batched import BatchedTensor
from ...ops import creation, operands
from ...ops import derivatives as D
from ...ops.nn import functions as nn_functions
from ...ops.op import apply_op
from ...ops.pointwise import core as pointwise_core
from ...ops.reductions import core as reductions_core
from ...ops.shaping import core as shaping_core
from ...ops.shaping import functions as shaping
from ...tensor import Tensor, wrap
from ._utils import REDUCTIONS, check_reduction, legacy_reduction
from .activation import log_softmax, logsigmoid
from .distance import pairwise_distance


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
    operands.broadcast_check(input, target)
    shape = numpy.broadcast_shapes(input.shape, target.shape)
    return (
        input if input.shape == shape else shaping_core.expand(input, shape),
        target if target.shape == shape else shaping_core.expand(target, shape),
    )


def _reduced(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return reductions_core.mean(loss)
    return reductions_core.sum(loss) if reduction == "sum" else loss


def _weighted(loss: Tensor, weight: Tensor, input: Tensor, reduction: str) -> Tensor:
    """The elementwise-weighted forms of mse_loss / l1_loss (plain ops, as in torch)."""
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    total = reductions_core.sum(loss)
    return total / reductions_core.sum(weight) if reduction == "mean" else total


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None) -> Tensor:
    _warn_size(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    a, b = _broadcast(input, target)
    if weight is not None:
        return _weighted(pointwise_core.pow(a - b, 2), weight, input, reduction)
    return apply_op(D.MSE_LOSS, (a, b), (reduction,))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None) -> Tensor:
    _warn_size(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    a, b = _broadcast(input, target)
    if weight is not None:
        return _weighted(pointwise_core.abs(a - b), weight, input, reduction)
    return _reduced(pointwise_core.abs(a - b), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0) -> Tensor:
    _warn_size(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    a, b = _broadcast(input, target)
    if beta == 0.0:
        return _reduced(pointwise_core.abs(a - b), reduction)
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
    return shaping_core.view(input.contiguous(), shape[0], shape[1], 1, -1), "NllLoss2DBackward0"


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
    if target.__class__ is BatchedTensor and weight is None and input.dim() <= 2:
        return _nll_loss_by_mask(input, target, ignore_index, reduction)
    t = _target_array(target)
    x, name = _nll_layout(input, target)
    xp = backend.xp_of(t)
    classes = input.shape[0 if input.dim() == 1 else 1]
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(
            f"weight tensor should be defined either for all {classes} classes or no classes but got weight "
            f"tensor of shape: {list(weight.shape)}"
        )
    if weight is not None and weight.dtype is not input.dtype:  # torch's kernel never promotes the weight
        raise RuntimeError(
            f"expected scalar type {input.dtype.scalar_type} but found {weight.dtype.scalar_type}"
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
        out = shaping_core.view(out, target.shape)
    return out


def _nll_loss_by_mask(input: Tensor, target: Tensor, ignore_index: int, reduction: str) -> Tensor:
    """nll_loss for a target batched by vmap, whose values no attr can hold: the picked
    log-probabilities as a product with a one-hot mask, every step an op with a batching rule."""
    _nll_layout(input, target)
    class_dim = input.dim() - 1
    classes = creation.arange(input.shape[class_dim], device=input.device)
    picked = target.unsqueeze(-1) if class_dim else target.reshape(())
    mask = pointwise_core.eq(picked, classes)
    valid = pointwise_core.ne(target if class_dim else target.reshape(()), ignore_index).to(input.dtype)
    losses = -(input * mask.to(input.dtype)).sum(class_dim) * valid
    if reduction == "none":
        return losses
    total = losses.sum()
    return total if reduction == "sum" else total / valid.sum()


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
        return -reductions_core.sum(terms, class_dim)
    total = -reductions_core.sum(terms)
    if reduction == "sum":
        return total
    return apply_op(D.DIV_SCALAR, (total,), (logp.numel() // classes,))


def _class_view(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return shaping_core.view(weight, shape)


def _smoothed(nll, logp, target, weight, ignore_index, reduction, label_smoothing, class_dim, classes):
    """(1 - e) * nll + e / C * (the loss against a uniform target), as ATen composes it."""
    t = target._data
    ignored = t == ignore_index
    terms = logp if weight is None else logp * _class_view(weight, logp.dim(), class_dim)
    smooth = apply_op(D.MASKED_FILL, (-reductions_core.sum(terms, class_dim),), (ignored, 0.0))
    if reduction == "mean":
        kept = t[~ignored]
        denominator = kept.size if weight is None else weight._data[kept].sum()
        smooth = reductions_core.sum(smooth) / wrap(
            backend.xp_of(t).asarray(denominator, dtype=logp._data.dtype)
        )
    elif reduction == "sum":
        smooth = reductions_core.sum(smooth)
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
    if target.dtype is not input.dtype:  # torch's TensorIterator refuses before the kernel looks at values
        raise RuntimeError(f"Found dtype {target.dtype.scalar_type} but expected {input.dtype.scalar_type}")
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
        if t is not None and t.requires_grad and this_thread.grad_enabled:
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


# -------------------------------------------------------------- losses composed as ATen composes them


def _reduction_arg(size_average, reduce, reduction: str) -> str:
    """The reduction a loss uses: the legacy pair's (with its warning), else `reduction`, checked."""
    if size_average is not None or reduce is not None:
        return legacy_reduction(size_average, reduce, reduction)
    return check_reduction(reduction)


def _aten_reduced(loss: Tensor, reduction: str) -> Tensor:
    """ATen's apply_loss_reduction: mean() (MeanBackward0), sum() (SumBackward0) or the loss itself."""
    return _reduced(loss, reduction)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None) -> Tensor:
    _warn_size(input, target)
    a, b = _broadcast(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return apply_op(D.HUBER_LOSS, (a, b), (check_reduction(reduction), delta))
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = apply_op(D.HUBER_LOSS, (a, b), ("none", delta)) * weight
    if reduction not in REDUCTIONS:
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    return _reduced(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)), reduced (SoftMarginLossBackward0; the target is not differentiable)."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    if target.requires_grad and this_thread.grad_enabled:
        raise RuntimeError(
            "The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. "
            "This input cannot have requires_grad True."
        )
    return apply_op(D.SOFT_MARGIN_LOSS, (input,), (target._data, reduction))


def kl_div(
    input, target, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False
) -> Tensor:
    """target * (log target - input), as ATen composes it (xlogy(target, target) - target * input)."""
    if size_average is not None or reduce is not None:
        enum = legacy_reduction(size_average, reduce, reduction)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support size."
                "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        enum = "sum" if reduction == "batchmean" else check_reduction(reduction)
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = pointwise_core.exp(target) * (target - input)
    else:
        loss = apply_op(D.XLOGY, (target, target)) - target * input
    reduced = _aten_reduced(loss, enum)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def poisson_nll_loss(
    input,
    target,
    log_input: bool = True,
    full: bool = False,
    size_average=None,
    eps: float = 1e-8,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if log_input:
        loss = pointwise_core.exp(input) - target * input
    else:
        loss = input - target * pointwise_core.log(nn_functions.add_scalar(input, eps))
    if full:
        two_pi_target = apply_op(D.MUL_SCALAR, (target,), (2 * math.pi,))
        stirling = target * pointwise_core.log(target) - target
        stirling = stirling + apply_op(D.MUL_SCALAR, (pointwise_core.log(two_pi_target),), (0.5,))
        loss = loss + apply_op(D.MASKED_FILL, (stirling,), ((target <= 1)._data, 0))
    return _aten_reduced(loss, reduction)


def margin_ranking_loss(
    input1, input2, target, margin: float = 0, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """max(0, -target * (input1 - input2) + margin), reduced, as ATen composes it."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} "
        )
    unclamped = nn_functions.add_scalar(-target * (input1 - input2), margin)
    return _aten_reduced(nn_functions.clamp_min_(unclamped, 0), reduction)


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with pairwise distances, reduced, as ATen composes it."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
            f"but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs"
        )
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = reductions_core.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    loss = nn_functions.clamp_min(nn_functions.add_scalar(dist_pos, margin) - dist_neg, 0)
    return _aten_reduced(loss, reduction)


def multilabel_soft_margin_loss(
    input, target, weight=None, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = reductions_core.sum(loss, class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return reductions_core.mean(loss)
    if reduction == "sum":
        return reductions_core.sum(loss)
    raise ValueError(reduction + " is not valid")


_COSINE_EPSILON = 1e-12


def cosine_embedding_loss(
    input1, input2, target, margin: float = 0, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """1 - cos (target 1) or max(0, cos - margin) (target -1), reduced, as ATen composes it."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    targ_dim = target.dim()
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if targ_dim == 1 and not (input1.dim() == 2 and input2.dim() == 2):
        raise RuntimeError(
            "1D target tensor expects 2D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    if targ_dim == 0 and not (input1.dim() == 1 and input2.dim() == 1):
        raise RuntimeError(
            "0D target tensor expects 1D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    prod_sum = reductions_core.sum(input1 * input2, targ_dim)
    mag_square1 = nn_functions.add_scalar(reductions_core.sum(input1 * input1, targ_dim), _COSINE_EPSILON)
    mag_square2 = nn_functions.add_scalar(reductions_core.sum(input2 * input2, targ_dim), _COSINE_EPSILON)
    cos = prod_sum / (mag_square1 * mag_square2).sqrt_()
    zeros = creation.zeros_like(cos)
    one = creation.full((), 1, dtype=cos.dtype, device=cos.device)
    pos = one - cos  # ATen's `1 - cos`: a wrapped scalar minus a tensor, SubBackward0
    neg = nn_functions.clamp_min_(nn_functions.sub_scalar(cos, margin), 0)
    output = shaping.where(target == 1, pos, zeros) + shaping.where(target == -1, neg, zeros)
    return _aten_reduced(output, reduction)
