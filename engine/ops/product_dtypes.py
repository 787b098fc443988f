"""torch's errors for a matrix product of two dtypes, which never promotes.

torch.matmul refuses operands of different dtypes, and which message it raises depends on the
ATen kernel its dispatch reaches: mm, mv (through addmv), dot, or bmm, with or without
folding a batch into the matrix dimension (`should_fold` in ATen's LinearAlgebra.cpp). The
engine decomposes matmul as ATen does (linalg/functions.py `matmul`, which asks `should_fold`
here too) but checks the dtypes once, before it, so it works out here which kernel torch would
have called, only once the dtypes are known to differ (nothing on the hot path).
"""

from __future__ import annotations

from ..tensor import Tensor


def differ(a: Tensor, b: Tensor) -> bool:
    """Whether two tensors' dtypes differ (numpy's dtype objects first: the usual answer is no)."""
    return a._data.dtype is not b._data.dtype and a.dtype is not b.dtype


def mm_error(a: Tensor, b: Tensor) -> RuntimeError:
    return RuntimeError(
        f"expected m1 and m2 to have the same dtype, but got: {a.dtype.cpp_name} != {b.dtype.cpp_name}"
    )


def mv_error(mat: Tensor, vec: Tensor) -> RuntimeError:
    """mv runs addmv into a result of the vector's dtype: torch names that result first."""
    names = (vec.dtype.scalar_type, mat.dtype.scalar_type, vec.dtype.scalar_type)
    return RuntimeError("addmv input tensors must have the same dtype, but got {}, {}, and {}".format(*names))


def dot_error(a: Tensor, b: Tensor) -> RuntimeError:
    return RuntimeError(
        f"dot : expected both vectors to have same dtype, but found {a.dtype.scalar_type} and {b.dtype.scalar_type}"
    )


def bmm_error(a: Tensor, b: Tensor) -> RuntimeError:
    return RuntimeError(f"expected scalar type {a.dtype.scalar_type} but found {b.dtype.scalar_type}")


def batched_matmul_error(input: Tensor, other: Tensor) -> RuntimeError:
    """The error of torch.matmul with a 3-D or larger operand: a folded mm or mv, else bmm."""
    if not should_fold(input, other):
        return bmm_error(input, other)
    if input.dim() >= other.dim():  # input's batch folded into its rows
        return mm_error(input, other) if other.dim() == 2 else mv_error(input, other)
    # other's transpose folded: mm(other.mT, input.t()) or mv(other.mT, input)
    return mm_error(other, input) if input.dim() == 2 else mv_error(other, input)


def should_fold(input: Tensor, other: Tensor) -> bool:
    """ATen's should_fold (without `out=`): the larger operand's batch folds into a matrix."""
    larger_first = input.dim() >= other.dim()
    big, small = (input, other) if larger_first else (other, input)
    if not (big.dim() >= 3 and small.dim() <= 2):
        return False
    if small.requires_grad:
        return True
    if input.dim() == 2:
        return False
    if big._data.size == 0:
        return True
    shape = list(big._data.shape)
    strides = [s // big._data.itemsize for s in big._data.strides]
    if not larger_first:  # the transpose of `other`
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))
