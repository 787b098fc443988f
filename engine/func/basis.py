"""The standard basis over a list of tensors: what jacrev pushes back and jacfwd pushes forward."""

from __future__ import annotations

from ..ops.creation import eye
from ..tensor import Tensor


def standard_basis(tensors: list) -> list[Tensor]:
    """One row of the identity per element of all `tensors` together, split into each tensor's shape.

    Tensor k's part has shape (total numel, *tensors[k].shape): vmap over dim 0 walks the basis.
    """
    sizes = [t.numel() for t in tensors]
    total = sum(sizes)
    parts, start = [], 0
    for t, n in zip(tensors, sizes):
        parts.append(eye(total, dtype=t.dtype)[:, start : start + n].reshape(total, *t.shape))
        start += n
    return parts
