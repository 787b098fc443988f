"""F.linear, with PyTorch's graph: addmm(bias, x, weight.t()) for 2-D input, views around it otherwise."""

from __future__ import annotations

from ...ops import derivatives as D
from ...ops.linalg import functions as linalg_functions
from ...ops.op import apply_op
from ...ops.shaping import core as shaping_core
from ...tensor import Tensor


def _check(input: Tensor, weight: Tensor) -> None:
    if input.dtype is not weight.dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{input.dtype.cpp_name} != {weight.dtype.cpp_name}"
        )


def _addmm(bias: Tensor, x2d: Tensor, wt: Tensor) -> Tensor:
    for first, name in ((bias, "self"), (x2d, "mat1")):
        if first.dtype is not wt.dtype:
            raise RuntimeError(
                f"{name} and mat2 must have the same dtype, but got {first.dtype.scalar_type} and "
                f"{wt.dtype.scalar_type}"
            )
    linalg_functions._check_mm(x2d.shape, wt.shape)
    return apply_op(D.ADDMM, (bias, x2d, wt))


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x W^T + b. Node names follow PyTorch (AddmmBackward0 for 2-D input with a bias); with a
    bias, dtypes are addmm's to check, as in torch (its messages differ)."""
    wt = shaping_core.t(weight)
    ndim = input.dim()
    if bias is None:
        _check(input, weight)
        if ndim <= 2:
            return linalg_functions.matmul(input, wt)
        flat = shaping_core.reshape(input, -1, input.shape[-1])
        linalg_functions._check_mm(flat.shape, wt.shape)
        out = apply_op(D.MM, (flat, wt))
        return apply_op(D.UNSAFE_VIEW, (out,), (out.shape, input.shape[:-1] + (wt.shape[1],)))
    if ndim == 2:
        return _addmm(bias, input, wt)
    flat = shaping_core.view(input, 1, -1) if ndim == 1 else shaping_core.reshape(input, -1, input.shape[-1])
    out = _addmm(bias, flat, wt)
    return shaping_core.view(out, input.shape[:-1] + (wt.shape[1],))
