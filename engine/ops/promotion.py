"""PyTorch's type promotion for elementwise ops, where numpy's differs.

numpy promotes by value range (float32 + int64 -> float64); torch by category (bool < int
< float: the higher category's dtype wins, float32 + int64 -> float32), and it lets a
0-dim tensor or a Python number raise the category but not the width within it
(float32 * tensor(2., dtype=float64) -> float32). As in c10's ResultTypeState, operands
are ranked in three tiers: tensors with dimensions, 0-dim tensors, Python numbers.
"""

from __future__ import annotations

import numpy

from .. import backend
from ..tensor import Tensor

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}


def _category(dtype) -> int:
    return _CATEGORY.get(dtype.kind, 3)


def promote_types(a, b):
    """torch.promote_types: the higher category's dtype; within one category, numpy's rule."""
    if a is None:
        return b
    if b is None:
        return a
    if a.metadata is not None or b.metadata is not None:  # bfloat16's storage is a tagged float32
        bf_a, bf_b = backend.is_bfloat16(a), backend.is_bfloat16(b)
        if bf_a or bf_b:
            return _promote_bfloat16(a if bf_a else b, b if bf_a else a, bf_a and bf_b)
    if a == b:
        return b
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    return numpy.promote_types(a, b)


def _promote_bfloat16(bf, other, both: bool):
    """bfloat16 with another dtype, as torch: ints and bools give bfloat16, float16 float32,
    and a wider float itself."""
    if both or _category(other) < 2:
        return bf
    if other.itemsize >= 4:
        return other
    return numpy.dtype(numpy.float32)


def _combine(higher, lower):
    """c10::combine_categories: a lower tier only raises the category."""
    if higher is None:
        return lower
    if lower is None or _category(higher) == 2:
        return higher
    if _category(higher) == 0 or _category(lower) == 2:
        return promote_types(higher, lower)
    return higher


def _number_dtype(x):
    if isinstance(x, bool):
        return numpy.dtype(bool)
    if isinstance(x, int):
        return numpy.dtype(numpy.int64)
    return backend.get_default_dtype().np


def result_type(inputs):
    """The dtype torch computes for an elementwise op on `inputs` (Tensors and Python numbers)."""
    dims = zeros = numbers = None
    for x in inputs:
        if isinstance(x, Tensor):
            if x._data.ndim:
                dims = promote_types(dims, x._data.dtype)
            else:
                zeros = promote_types(zeros, x._data.dtype)
        elif x is not None:
            numbers = promote_types(numbers, _number_dtype(x))
    return _combine(dims, _combine(zeros, numbers))


def promoted(inputs, datas) -> list:
    """The operands' arrays cast to torch's result dtype (numbers stay numbers: numpy treats
    them as weak, so they take the arrays' dtype)."""
    dtype = result_type(inputs)
    bf = backend.is_bfloat16(dtype)
    return [
        d.astype(dtype)
        if isinstance(x, Tensor) and (d.dtype != dtype or backend.is_bfloat16(d.dtype) != bf)
        else d
        for x, d in zip(inputs, datas)
    ]
