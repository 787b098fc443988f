"""Argument handling shared by the functional API: int-or-tuple sizes, reductions, dtype names."""

from __future__ import annotations

import warnings

REDUCTIONS = ("none", "mean", "sum")


def ntuple(value, n: int) -> tuple:
    """`3` -> (3, 3); a tuple or list passes through (as torch's _pair does)."""
    if isinstance(value, (tuple, list)):
        return tuple(int(v) for v in value)
    return (int(value),) * n


def check_reduction(reduction: str) -> str:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def legacy_reduction(size_average, reduce, reduction: str) -> str:
    """The reduction named by the deprecated size_average / reduce pair, as torch maps it."""
    if size_average is None and reduce is None:
        return check_reduction(reduction)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    chosen = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{chosen}' instead.",
        stacklevel=3,
    )
    return chosen


def check_floating(name: str, x) -> None:
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"\"{name}\" not implemented for '{x.dtype.scalar_type}'")


def check_kernel_dtype(kernel: str, x) -> None:
    """PyTorch's refusal of a floating-point kernel on integer or bool input ("silu_cpu" ...)."""
    if not x.dtype.is_floating_point:
        device = "cuda" if x.device.type == "cuda" else "cpu"
        raise NotImplementedError(f"\"{kernel}_{device}\" not implemented for '{x.dtype.scalar_type}'")
