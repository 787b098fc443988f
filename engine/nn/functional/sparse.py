"""F.embedding: rows of a weight looked up by index (EmbeddingBackward0)."""

from __future__ import annotations

from ... import backend
from ...backend import tensor_type_name
from ...ops import derivatives as D
from ...ops.op import apply_op
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
