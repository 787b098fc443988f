"""F.embedding (EmbeddingBackward0), F.embedding_bag (EmbeddingBagBackward0) and F.one_hot (forward only)."""

from __future__ import annotations

import warnings

from ... import backend
from ...backend import tensor_type_name
from ...ops import derivatives as D
from ...ops.op import apply_op
from ...ops.shaping import core as shaping_core
from ...tensor import Tensor, wrap


def _renorm_(weight: Tensor, idx, max_norm: float, norm_type: float) -> None:
    """Rows used by `idx` whose norm exceeds max_norm are scaled down in place (no graph)."""
    xp = backend.xp_of(weight._data)
    rows = xp.unique(idx.reshape(-1))
    picked = weight._data[rows]
    norms = (xp.abs(picked) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    over = norms > max_norm
    scale = xp.where(over, max_norm / (norms + 1e-7), 1.0).astype(picked.dtype)
    weight._data[rows] = picked * scale[:, None]
    weight._vc.version += 1


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Gradients are dense whatever `sparse` says (the engine has no sparse tensors)."""
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= num or padding_idx < 0 and padding_idx < -num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % num
    idx = input._data
    if idx.dtype.kind not in "iu":
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            f"but got {tensor_type_name(input._data)} instead (while checking arguments for embedding)"
        )
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    xp = backend.xp_of(weight._data)
    scale = None
    if scale_grad_by_freq:
        counts = xp.bincount(idx.reshape(-1), minlength=num)
        scale = 1.0 / counts[idx]
    if padding_idx is not None:
        keep = idx != padding_idx
        scale = keep if scale is None else scale * keep
    if scale is not None:
        scale = scale.astype(weight._data.dtype)[..., None]
    attrs = (num, idx, -1 if padding_idx is None else padding_idx, scale_grad_by_freq, scale)
    return apply_op(D.EMBEDDING, (weight,), attrs)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 indices (*) -> (*, num_classes) of 0/1, forward only as in PyTorch."""
    idx = tensor._data
    if idx.dtype != backend.int64.np:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    xp = backend.xp_of(idx)
    if idx.size == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return wrap(xp.zeros(idx.shape + (num_classes,), dtype=idx.dtype))
    if int(idx.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(idx.max()) + 1
    elif num_classes <= int(idx.max()):
        raise RuntimeError("Class values must be smaller than num_classes.")
    return wrap((idx[..., None] == xp.arange(num_classes)).astype(idx.dtype))


_BAG_MODES = ("sum", "mean", "max")


def _index_array(t: Tensor, what: str):
    data = t._data
    if data.dtype.kind not in "iu":
        raise RuntimeError(
            f"Expected tensor for argument #1 '{what}' to have one of the following scalar types: Long, Int; "
            f"but got {tensor_type_name(data)} instead (while checking arguments for embedding_bag)"
        )
    return data.astype(backend.int64.np, copy=False)


def _bag_layout(input: Tensor, offsets, per_sample_weights, include_last_offset: bool):
    """Flat indices, each one's bag, the number of bags, and the flat per-sample weights."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length "
                "sequences. However, found offsets of type "
                + ("<class 'engine.Tensor'>" if isinstance(offsets, Tensor) else str(type(offsets)))
            )
        rows, length = input.shape
        idx = _index_array(input, "indices").reshape(-1)
        xp = backend.xp_of(idx)
        bags = xp.repeat(xp.arange(rows, dtype=idx.dtype), length)
        flat_weights = None if per_sample_weights is None else shaping_core.reshape(per_sample_weights, -1)
        return idx, bags, rows, flat_weights
    if input.dim() != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    idx = _index_array(input, "indices")
    starts = _index_array(offsets, "offsets")
    n = idx.shape[0]
    if starts.size and int(starts[0]) != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
            f"However, got {int(starts[0])}\n[ {tensor_type_name(offsets._data)}{{}} ]"
        )
    if starts.size and int(starts[-1]) > n:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of {int(starts[-1])}"
        )
    num_bags = starts.shape[0] - 1 if include_last_offset else starts.shape[0]
    xp = backend.xp_of(idx)
    bags = (
        xp.searchsorted(starts, xp.arange(n), side="right") - 1
    )  # each position's bag: the last start at or before it
    return idx, bags, num_bags, per_sample_weights


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """Sums, means or maxima of bags of embedding rows (EmbeddingBagBackward0); gradients are dense."""
    if weight.dtype is backend.int64 and input.dtype.is_floating_point:
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, ...)` "
            "is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it must have the "
            f"same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    idx, bags, num_bags, psw = _bag_layout(input, offsets, per_sample_weights, include_last_offset)
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub."
        )
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(
                f"padding_idx must be within the number of embeddings, -{num} through {num - 1}, but got {padding_idx}"
            )
        padding_idx %= num
    bad = (idx < 0) | (idx >= num)
    if bad.any():
        position = int(bad.nonzero()[0][0])
        if mode != "max" and weight.dtype is not backend.float64:  # torch's fbgemm kernel says it its way
            raise RuntimeError(
                f"Index {position} of input takes value {int(idx[position])} which is not in the valid range "
                f"[0, {num})"
            )
        raise RuntimeError(
            f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {int(idx[position])}"
        )
    xp = backend.xp_of(idx)
    dtype = weight._data.dtype
    keep = xp.ones(idx.shape, dtype=bool) if padding_idx is None else idx != padding_idx
    coef = keep.astype(dtype)
    if mode == "mean":
        counts = xp.bincount(bags[keep], minlength=num_bags)[:num_bags]
        coef = coef / xp.maximum(counts, 1)[bags].astype(dtype)
    grad_scale = None
    if scale_grad_by_freq:
        grad_scale = (1.0 / xp.bincount(idx, minlength=num)[idx]).astype(dtype)
    max_indices = _bag_maxima(weight._data, idx, bags, keep, num_bags) if mode == "max" else None
    attrs = (idx, bags, coef, num_bags, mode, max_indices, grad_scale)
    return apply_op(D.EMBEDDING_BAG, (weight, psw), attrs)


def _bag_maxima(weight, idx, bags, keep, num_bags):
    """Per bag and dimension, the row of the first maximum among the bag's kept rows (rows, columns, valid).

    The kept rows are laid out as a (bags, longest bag, D) table padded with -inf, so one argmax finds them.
    """
    xp = backend.xp_of(weight)
    dim = weight.shape[1]
    kept_idx, kept_bags = idx[keep], bags[keep]
    counts = xp.bincount(kept_bags, minlength=num_bags)[:num_bags]
    within = xp.arange(kept_idx.shape[0]) - (xp.cumsum(counts) - counts)[kept_bags]
    longest = max(int(counts.max()) if counts.size else 0, 1)
    table = xp.full((num_bags, longest, dim), -xp.inf, dtype=weight.dtype)
    table[kept_bags, within] = weight[kept_idx]
    sources = xp.zeros((num_bags, longest), dtype=idx.dtype)
    sources[kept_bags, within] = kept_idx
    rows = xp.take_along_axis(sources, table.argmax(axis=1), axis=1)
    valid = (counts > 0).astype(weight.dtype)[:, None]
    return rows, xp.arange(dim)[None, :], valid
