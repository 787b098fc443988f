"""Linear algebra: the matrix products and the matrix functions behind `engine.linalg`.

The products (addmm, addmv, addr, baddbmm, addbmm, bmm) are rows of their own; outer, inner,
kron, tensordot, einsum, multi_dot and vecdot are composed of rows the way ATen composes them,
so their graphs read node for node like torch's. The matrix functions (det, slogdet, inv,
solve, cholesky, qr, svd, eigh) are rows with torch's backward formulas (formulas.py);
those of several outputs are applied with `op.apply_multi`. Functions named `linalg_*` here are `engine.linalg.*`
(engine/linalg.py), not `engine.*`.
"""

from __future__ import annotations

import builtins
import inspect
import math
import string

from ... import backend, return_types
from ...autograd.thread_local import this_thread
from ...tensor import Tensor, wrap
from ...warn_once import warn_once
from .. import derivatives as D
from .. import inplace as I
from .. import product_dtypes
from ..api import exported, public
from ..op import apply_multi, apply_op, check_same_device
from ..operands import as_operand, broadcast_check, norm_dim
from ..pointwise import core as pointwise_core
from ..promotion import promote_types
from ..reductions import core as reductions_core
from ..reductions.core import unique_dims
from ..shaping import core as shaping_core
from ..shaping.core import squeeze, unsqueeze
from ..shaping.functions import broadcast_shapes, where
from .kernels import LinAlgError  # noqa: F401  (engine.linalg.LinAlgError)

CHOLESKY_DEPRECATION = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch "
    "release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
    "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
    "This transform will produce equivalent results for all valid (symmetric positive definite) inputs."
).replace("torch", "engine")
QR_DEPRECATION = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
    "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, some)\n"
    "should be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')"
).replace("torch", "engine")
CROSS_DEPRECATION = (
    "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim explicitly or "
    "simply use torch.linalg.cross.\nThe default value of dim will change to agree with that of linalg.cross in "
    "a future release."
).replace("torch", "engine")


def _grad_recorded(*tensors) -> bool:
    return this_thread.grad_enabled and builtins.any(t._rg for t in tensors)


# ----------------------------------------------------------------------------- checks


def _not_implemented(kernel: str, A: Tensor) -> NotImplementedError:
    return NotImplementedError(f"\"{kernel}_{A.device.type}\" not implemented for '{A.dtype.scalar_type}'")


def _check_floating(name: str, A: Tensor) -> None:
    if not A.dtype.is_floating_point:
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {A.dtype.scalar_type}"
        )


def _check_matrix(name: str, A: Tensor, what: str = "A") -> None:
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")


def _check_square(name: str, A: Tensor) -> None:
    m, n = A.shape[-2:]
    if m != n:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {m} by {n} matrices")


def _check(name, A, kernel, *, square=True, low_precision=False, integers_unimplemented=False) -> None:
    """A matrix function's checks in torch's order: dimensions, squareness, dtype. Integers are refused
    by name, or (`integers_unimplemented`) as the kernel's NotImplementedError; half precision by name
    (`low_precision`) or as the kernel's."""
    _check_matrix(name, A)
    if square:
        _check_square(name, A)
    if not A.dtype.is_floating_point:
        if integers_unimplemented:
            raise _not_implemented(kernel, A)
        _check_floating(name, A)
    if A.dtype is backend.float16:
        if low_precision:
            raise RuntimeError(f"{name}: Low precision dtypes not supported. Got Half")
        raise _not_implemented(kernel, A)


def _expand_to(x: Tensor, shape: tuple) -> None:
    """torch's error when `x` does not expand to `shape` (the bias of addmm and friends)."""
    shaping_core.expand(x.detach(), shape)


# --------------------------------------------------------------------- matrix products


@public
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    _check_addmm(input, mat1, mat2, beta, alpha)
    return apply_op(D.ADDMM_SCALED, (input, mat1, mat2), (beta, alpha))


def _check_dtypes_as_mat2(input, mat1, mat2) -> None:
    for first, name in ((input, "self"), (mat1, "mat1")):
        if first.dtype is not mat2.dtype:
            raise RuntimeError(
                f"{name} and mat2 must have the same dtype, but got {first.dtype.scalar_type} and "
                f"{mat2.dtype.scalar_type}"
            )


def _check_addmm(input, mat1, mat2, beta, alpha) -> None:
    _check_dtypes_as_mat2(input, mat1, mat2)
    for t, name in ((mat1, "mat1"), (mat2, "mat2")):
        if t.dim() != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t.dim()}-D tensor")
    _check_mm(mat1.shape, mat2.shape)
    _expand_to(input, (mat1.shape[0], mat2.shape[1]))


@public
def addmv(input, mat, vec, *, beta=1, alpha=1):
    _check_addmv(input, mat, vec, beta, alpha)
    return apply_op(D.ADDMV, (input, mat, vec), (beta, alpha))


def _check_addmv(input, mat, vec, beta, alpha) -> None:
    if mat.dim() != 2 or vec.dim() != 1 or input.dim() > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, {vec.dim()}")
    rows = input.shape[0] if input.dim() else mat.shape[0]
    if mat.shape[1] != vec.shape[0] or not (rows == mat.shape[0] or rows == 1):
        raise RuntimeError(
            f"size mismatch, got input ({rows}), mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})"
        )
    if not input.dtype is mat.dtype is vec.dtype:
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{input.dtype.scalar_type}, {mat.dtype.scalar_type}, and {vec.dtype.scalar_type}"
        )


@public
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    _check_addr(input, vec1, vec2, beta, alpha)
    return apply_op(D.ADDR, (input, vec1, vec2), (beta, alpha))


def _check_addr(input, vec1, vec2, beta, alpha) -> None:
    for t, name in ((vec1, "vec1"), (vec2, "vec2")):
        if t.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {t.dim()}-D")
    dtype = pointwise_core.result_type((input, vec1, vec2))
    for value, name in ((beta, "beta"), (alpha, "alpha")):
        if dtype.kind in "iu" and isinstance(value, float):
            raise RuntimeError(
                f"For integral input tensors, argument {name} must not be a floating point number."
            )
        if dtype.kind != "b" and isinstance(value, bool):
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
    _expand_to(input, (vec1.shape[0], vec2.shape[0]))


def _check_3d(batch1, batch2) -> None:
    for t, name in ((batch1, "batch1"), (batch2, "batch2")):
        if t.dim() != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")


def _check_batches(batch1, batch2) -> None:
    _check_3d(batch1, batch2)
    if batch2.shape[:2] != (batch1.shape[0], batch1.shape[2]):
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: [{batch2.shape[0]}, {batch2.shape[1]}]."
        )


@public
def bmm(input, mat2):
    _check_batches(input, mat2)
    if input.dtype is not mat2.dtype:
        raise RuntimeError(
            f"expected scalar type {input.dtype.scalar_type} but found {mat2.dtype.scalar_type}"
        )
    return apply_op(D.BMM, (input, mat2))


@public
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _check_baddbmm(input, batch1, batch2, beta, alpha)
    return apply_op(D.BADDBMM, (input, batch1, batch2), (beta, alpha))


def _check_baddbmm(input, batch1, batch2, beta, alpha) -> None:
    _check_batches(batch1, batch2)
    if input.dtype is not batch1.dtype:  # torch's check here compares only these two
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {input.dtype.cpp_name}, batch1: {batch1.dtype.cpp_name}, "
            f"batch2: {batch2.dtype.cpp_name}"
        )
    if batch2.dtype is not input.dtype:  # the kernel's
        raise RuntimeError(
            f"expected scalar type {input.dtype.scalar_type} but found {batch2.dtype.scalar_type}"
        )
    _expand_to(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))


@public
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _check_addbmm(input, batch1, batch2, beta, alpha)
    return apply_op(D.ADDBMM, (input, batch1, batch2), (beta, alpha))


def _check_addbmm(input, batch1, batch2, beta, alpha) -> None:
    _check_3d(batch1, batch2)
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and {batch2.shape[0]}"
        )
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
            f"{batch2.shape[1]}x{batch2.shape[2]})"
        )
    _check_dtypes_as_mat2(input, batch1, batch2)
    _expand_to(input, (batch1.shape[1], batch2.shape[2]))


def _in_place(product, op, check):
    """`Tensor.<product>_`: the product written into the tensor, with the product's argument names."""
    signature = inspect.signature(product)

    def method(t, *args, **kwargs):
        bound = signature.bind(t, *args, **kwargs)
        bound.apply_defaults()
        _, a, b, beta, alpha = bound.arguments.values()
        check(t, a, b, beta, alpha)
        return I.apply_inplace(t, op, (a, b), (beta, alpha))

    method.__name__ = method.__qualname__ = product.__name__ + "_"
    method.__signature__ = signature  # what it accepts: the product's names, as keywords too
    return public(method, function=False)


addmm_ = _in_place(addmm, D.ADDMM_SCALED, _check_addmm)
addmv_ = _in_place(addmv, D.ADDMV, _check_addmv)
addr_ = _in_place(addr, D.ADDR, _check_addr)
baddbmm_ = _in_place(baddbmm, D.BADDBMM, _check_baddbmm)
addbmm_ = _in_place(addbmm, D.ADDBMM, _check_addbmm)


# ------------------------------------------------------------ products built from rows


@public
def outer(input, vec2):
    for t, name in ((input, "self"), (vec2, "vec2")):
        if t.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.dim()}-D")
    return pointwise_core.mul(shaping_core.reshape(input, input.shape[0], 1), vec2)


ger = public(outer, name="ger")


@public
def inner(input, other):
    if input.dim() == 0 or other.dim() == 0:
        return pointwise_core.mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input.shape)} and {list(other.shape)}"
        )
    return tensordot(input, other, ([-1], [-1]))


@public
def kron(input, other):
    """The two operands interleaved with ones, multiplied, and flattened pairwise (ATen's KronImpl)."""
    ndim = builtins.max(input.dim(), other.dim())
    a = (1,) * (ndim - input.dim()) + tuple(input.shape)
    b = (1,) * (ndim - other.dim()) + tuple(other.shape)
    a_shape = tuple(n for d in a for n in (d, 1))
    b_shape = tuple(n for d in b for n in (1, d))
    left = apply_op(D.UNSAFE_VIEW, (input,), (input.shape, a_shape))
    right = apply_op(D.UNSAFE_VIEW, (other,), (other.shape, b_shape))
    product = pointwise_core.mul(left, right)
    return apply_op(D.UNSAFE_VIEW, (product,), (product.shape, tuple(x * y for x, y in zip(a, b))))


@public(method=False)
def tensordot(a, b, dims=2):
    """Contraction over `dims`: permuted and flattened to one mm (one dot when nothing is left over)."""
    dims_a, dims_b = _tensordot_dims(a, b, dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    t1, t2, csize = a, b, 1
    for da, db in zip(dims_a, dims_b):
        s1, s2 = a.shape[norm_dim(da, a.dim())], b.shape[norm_dim(db, b.dim())]
        if s2 == 1:  # broadcast dimensions are summed right away
            t1 = reductions_core.sum(t1, da, True)
        elif s1 == 1:
            t2 = reductions_core.sum(t2, db, True)
        elif s1 != s2:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {s1} in dim {da} and second has "
                f"size {s2} in dim {db}"
            )
        else:
            csize *= s1
    contracted_a, contracted_b = unique_dims(dims_a, a.dim()), unique_dims(dims_b, b.dim())
    free_a = [d for d in range(a.dim()) if d not in contracted_a]
    free_b = [d for d in range(b.dim()) if d not in contracted_b]
    sizes = [t1.shape[d] for d in free_a] + [t2.shape[d] for d in free_b]
    t1 = shaping_core.permute(t1, free_a + list(dims_a))
    t2 = shaping_core.permute(t2, list(dims_b) + free_b)
    if not free_a and not free_b:
        t1 = t1 if t1.dim() == 1 else shaping_core.reshape(t1, csize)
        t2 = t2 if t2.dim() == 1 else shaping_core.reshape(t2, csize)
        return shaping_core.view(matmul(t1, t2), sizes)
    left = shaping_core.reshape(t1, math.prod(t1.shape[d] for d in range(len(free_a))), csize)
    right = shaping_core.reshape(t2, csize, math.prod(t2.shape[len(dims_b) :]))
    return shaping_core.view(mm(left, right), sizes)


def _tensordot_dims(a, b, dims) -> tuple:
    if isinstance(dims, Tensor):
        dims = dims.item() if dims.numel() == 1 else dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > builtins.min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    dims_a, dims_b = dims
    for value, position, name in ((dims_a, 3, "dims_self"), (dims_b, 4, "dims_other")):
        if not isinstance(value, (list, tuple)):
            raise TypeError(
                f"tensordot(): argument '{name}' (position {position}) must be tuple of ints, not "
                f"{type(value).__name__}"
            )
    return list(dims_a), list(dims_b)


@public(method=False)
def einsum(*args):
    """ATen's einsum: operands aligned (diagonals for repeated labels, unsqueezed, permuted), then
    contracted left to right, each pair by one bmm (sumproduct_pair); the summed dims dropped last."""
    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, or at least one operand "
            "and its subscripts list"
        )
    if isinstance(args[0], Tensor):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = operands[0]
    if not operands:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, or at least one operand "
            "and its subscripts list"
        )
    return _Einsum(equation, [as_operand(x) for x in operands]).result()


def _sublist_equation(args) -> tuple:
    def subscript(n) -> str:
        if n is Ellipsis:
            return "..."
        if 0 <= n < 26:
            return chr(ord("A") + n)
        if 26 <= n < 52:
            return chr(ord("a") + n - 26)
        raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")

    equation = ",".join("".join(subscript(s) for s in sub) for sub in args[1::2])
    if len(args) % 2 == 1:
        return equation + "->" + "".join(subscript(s) for s in args[-1]), args[:-1:2]
    return equation, args[::2]


ELLIPSIS = 52


def _label(subscript: int) -> str:
    return chr(ord("A") + subscript) if subscript < 26 else chr(ord("a") + subscript - 26)


def _subscript(label: str) -> int:
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + 26


class _Einsum:
    """One einsum call, following ATen's einsum step by step (torch/aten Linear.cpp), errors included."""

    def __init__(self, equation: str, operands: list):
        self.operands = operands
        arrow = equation.find("->")
        self.lhs = equation if arrow < 0 else equation[:arrow]
        self.rhs = None if arrow < 0 else equation[arrow + 2 :]
        self.op_labels = self._parse_inputs()
        self._count_labels()
        self._place_labels()

    def _parse_inputs(self) -> list:
        lhs, labels = self.lhs, [[] for _ in self.operands]
        current, ellipsis, i = 0, False, 0
        while i < len(lhs):
            c = lhs[i]
            if c == ".":
                if ellipsis:
                    raise RuntimeError(
                        f"einsum(): found '.' for operand {current} for which an ellipsis was already found"
                    )
                if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                    raise RuntimeError(
                        f"einsum(): found '.' for operand {current} that is not part of any ellipsis"
                    )
                labels[current].append(ELLIPSIS)
                ellipsis, i = True, i + 2
            elif c == ",":
                current += 1
                if current >= len(self.operands):
                    raise RuntimeError(
                        "einsum(): fewer operands were provided than specified in the equation"
                    )
                ellipsis = False
            elif c != " ":
                if c not in string.ascii_letters:
                    raise RuntimeError(
                        f"einsum(): invalid subscript given at index {i} in the equation string, subscripts must "
                        "be in [a-zA-Z]"
                    )
                labels[current].append(_subscript(c))
            i += 1
        if current != len(self.operands) - 1:
            raise RuntimeError("einsum(): more operands were provided than specified in the equation")
        return labels

    def _count_labels(self) -> None:
        self.label_count = [0] * 52
        self.ell_num_dim = 0
        for i, (op, labels) in enumerate(zip(self.operands, self.op_labels)):
            nlabels, has_ellipsis = len(labels), False
            for label in labels:
                if label == ELLIPSIS:
                    nlabels -= 1
                    has_ellipsis = True
                    self.ell_num_dim = builtins.max(self.ell_num_dim, op.dim() - nlabels)
                else:
                    self.label_count[label] += 1
            if (nlabels > op.dim()) if has_ellipsis else (nlabels != op.dim()):
                how = "is more than" if has_ellipsis else "does not match"
                tail = "" if has_ellipsis else " and no ellipsis was given"
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({nlabels}) {how} the number of "
                    f"dimensions ({op.dim()}) for operand {i}{tail}"
                )

    def _place_labels(self) -> None:
        """Where each label goes in the aligned shape: the output's first, then the summed ones."""
        perm = [-1] * 52
        index = ell_index = 0
        ell_in_output = False
        if self.rhs is None:  # implicit output: the ellipsis, then the labels seen once, in order
            index, ell_in_output = self.ell_num_dim, True
            for label in range(52):
                if self.label_count[label] == 1:
                    perm[label], index = index, index + 1
        else:
            rhs, i = self.rhs, 0
            while i < len(rhs):
                c = rhs[i]
                if c == ".":
                    if ell_in_output:
                        raise RuntimeError(
                            "einsum(): found '.' for output but an ellipsis (...) was already found"
                        )
                    if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                        raise RuntimeError(
                            "einsum(): found '.' for output that is not part of any ellipsis (...)"
                        )
                    i += 2
                    ell_index, index, ell_in_output = index, index + self.ell_num_dim, True
                elif c != " ":
                    if c not in string.ascii_letters:
                        raise RuntimeError(
                            f"einsum(): invalid subscript given at index {len(self.lhs) + 2 + i} in the equation "
                            "string, subscripts must be in [a-zA-Z]"
                        )
                    label = _subscript(c)
                    if not (self.label_count[label] > 0 and perm[label] == -1):
                        why = (
                            "appears more than once in the output"
                            if perm[label] > -1
                            else "does not appear in the equation for any input operand"
                        )
                        raise RuntimeError(f"einsum(): output subscript {c} {why}")
                    perm[label], index = index, index + 1
                i += 1
        self.out_num_dim = index
        if not ell_in_output:
            ell_index, index = index, index + self.ell_num_dim
        for label in range(52):
            if self.label_count[label] > 0 and perm[label] == -1:
                perm[label], index = index, index + 1
        self.label_perm_index, self.perm_index, self.ell_index = perm, index, ell_index

    def _aligned(self) -> list:
        """Each operand with repeated labels' diagonals taken, missing dims unsqueezed, permuted to align."""
        label_size = [1] * 52
        ell_sizes = [1] * self.ell_num_dim
        self.dim_counts = [0] * self.perm_index
        ops = []
        for i, (operand, labels) in enumerate(zip(self.operands, self.op_labels)):
            op, permutation, dim = operand, [-1] * self.perm_index, 0
            for s in labels:
                if s == ELLIPSIS:
                    ndim = operand.dim() - (len(labels) - 1)
                    for j in range(self.ell_num_dim - ndim, self.ell_num_dim):
                        size = op.shape[dim]
                        if size != 1:
                            if ell_sizes[j] not in (1, size):
                                raise RuntimeError(
                                    f"einsum(): dimension {dim} covered by ellipsis in operand {i}has size {size} "
                                    f"which does not broadcast with previously seen ellipsis with size {ell_sizes[j]} "
                                    "for the respective dimension"
                                )
                            ell_sizes[j] = size
                            self.dim_counts[self.ell_index + j] += 1
                        permutation[self.ell_index + j], dim = dim, dim + 1
                elif permutation[self.label_perm_index[s]] == -1:
                    size = op.shape[dim]
                    if size != 1:
                        if label_size[s] not in (1, size):
                            raise RuntimeError(
                                f"einsum(): subscript {_label(s)} has size {size} for operand {i} which does not "
                                f"broadcast with previously seen size {label_size[s]}"
                            )
                        label_size[s] = size
                        self.dim_counts[self.label_perm_index[s]] += 1
                    permutation[self.label_perm_index[s]], dim = dim, dim + 1
                else:  # a repeated label: its diagonal, moved to where the label first stood
                    prev = permutation[self.label_perm_index[s]]
                    if op.shape[dim] != op.shape[prev]:
                        raise RuntimeError(
                            f"einsum(): subscript {_label(s)} is repeated for operand {i} but the sizes don't "
                            f"match, {op.shape[dim]} != {op.shape[prev]}"
                        )
                    op = _movedim_last_to(_diagonal(op, prev, dim), prev)
            for k in range(self.perm_index):
                if permutation[k] == -1:
                    op = shaping_core.unsqueeze(op, dim)
                    permutation[k], dim = dim, dim + 1
            ops.append(shaping_core.permute(op, permutation))
        return ops

    def result(self) -> Tensor:
        ops = self._aligned()
        counts = self.dim_counts
        while len(ops) > 1:
            a, b = ops.pop(0), ops.pop(0)
            sum_dims, a_sums, b_sums = [], [], []
            for dim in range(self.out_num_dim, self.perm_index):
                if a.shape[dim] != 1 and b.shape[dim] != 1:
                    counts[dim] -= 1
                    if counts[dim] == 1:
                        sum_dims.append(dim)
                        counts[dim] = 0
                elif counts[dim] == 1:
                    if a.shape[dim] != 1:
                        a_sums.append(dim)
                        counts[dim] = 0
                    elif b.shape[dim] != 1:
                        b_sums.append(dim)
                        counts[dim] = 0
            if a_sums:
                a = reductions_core.sum(a, a_sums, True)
            if b_sums:
                b = reductions_core.sum(b, b_sums, True)
            ops.insert(0, _sumproduct_pair(a, b, sum_dims))
        out = ops[0]
        if self.perm_index > self.out_num_dim:
            if (
                len(self.operands) > 1
            ):  # the summed dims are all 1 by now: always a view, whatever the strides
                return shaping_core._view(D.VIEW, out, (out.shape, out.shape[: self.out_num_dim]))
            return reductions_core.sum(out, list(range(self.out_num_dim, self.perm_index)))
        return out


def _diagonal(a, dim1, dim2):
    """The diagonal of dims (dim1, dim2) as the last dimension (DiagonalBackward0, a view)."""
    return shaping_core._view(D.DIAGONAL, a, (a.shape, 0, dim1, dim2))


def _movedim_last_to(a, dim):
    order = list(range(a.dim() - 1))
    order.insert(dim, a.dim() - 1)
    return shaping_core.permute(a, order)


def _sumproduct_pair(left, right, sum_dims):
    """(left * right).sum(sum_dims, keepdim=True) as one bmm: dims in both, in left only, summed, in right only."""
    if not sum_dims:
        return pointwise_core.mul(left, right)
    if left.dtype is not right.dtype:
        raise RuntimeError(
            f"expected scalar type {left.dtype.scalar_type} but found {right.dtype.scalar_type}"
        )
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.dim()):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = reductions_core.sum(left, i, True)
            elif sr:
                right = reductions_core.sum(right, i, True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = [left.shape[d] for d in lro + lo] + [1] * len(sum_dims) + [right.shape[d] for d in ro]
    order = lro + lo + list(sum_dims) + ro
    inverse = [order.index(d) for d in range(len(order))]
    left = shaping_core.reshape(shaping_core.permute(left, order), lro_size, lo_size, sum_size)
    right = shaping_core.reshape(
        shaping_core.permute(right, lro + list(sum_dims) + ro + lo), lro_size, sum_size, ro_size
    )
    out = apply_op(D.BMM, (left, right))
    return shaping_core.permute(shaping_core.view(out, out_size), inverse)


# ------------------------------------------------------------------- determinants


@public
def det(input):
    return linalg_det(input)


def linalg_det(A):
    _check("linalg.det", A, "lu")
    return apply_op(D.DET, (A,))


def _slogdet(name: str, A):
    _check(name, A, "lu", low_precision=True)
    return apply_multi(D.SLOGDET, (A,))


def linalg_slogdet(A):
    return return_types.linalg_slogdet(*_slogdet("linalg.slogdet", A))


@public
def slogdet(input):
    return return_types.slogdet(*_slogdet("linalg.slogdet", input))


@public
def logdet(input):
    """log det: the log of |det| where det > 0, nan where it is negative (torch's where over slogdet)."""
    sign, logabsdet = _slogdet("logdet", input)
    return where(pointwise_core.eq(sign, -1), math.nan, logabsdet)


# ---------------------------------------------------------------------- inverse, solve


@public
def inverse(input):
    return linalg_inv(input)


def linalg_inv(A):
    _check("linalg.inv", A, "lu", low_precision=True)
    return apply_op(D.INV, (A,), ("linalg.inv",))


def linalg_solve(A, B, *, left=True):
    name = "linalg.solve"
    _check_floating(name, A)
    if A.dtype is not B.dtype:
        raise RuntimeError(
            f"{name}: Expected A and B to have the same dtype, but found A of type {A.dtype.scalar_type} and B of "
            f"type {B.dtype.scalar_type} instead"
        )
    _check_matrix(name, A)
    if B.dim() < 1:
        _check_matrix(name, B, "B")
    _check_square(name, A)
    n = A.shape[-1]
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and B.shape == A.shape[:-1])
    rows, cols = (B.shape[-1], 1) if vector else B.shape[-2:]
    if (rows if left else cols) != n:
        raise RuntimeError(
            f"{name}: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'} "
            f"({n}x{n} and {rows}x{cols})"
        )
    if vector and not left:
        raise RuntimeError(
            f"{name}: Vector broadcasting of the left hand side is not supported for left=False. In this case "
            "linalg.solve is equivalent to B / A.squeeze(-1)"
        )
    if A.dtype is backend.float16:
        raise _not_implemented("lu", A)
    return apply_op(D.SOLVE, (A, B), (left, vector))


# ---------------------------------------------------------------- factorizations


def linalg_cholesky(A, *, upper=False):
    _check("linalg.cholesky", A, "cholesky")
    return apply_op(D.CHOLESKY, (A,), (upper, "linalg.cholesky"))


@public
def cholesky(input, upper=False):
    """The deprecated torch.cholesky (CholeskyBackward0); linalg.cholesky is the one to use."""
    warn_once(CHOLESKY_DEPRECATION)
    _check("cholesky", input, "cholesky", integers_unimplemented=True)
    return apply_op(D.CHOLESKY_DEPRECATED, (input,), (upper, "cholesky"))


def linalg_qr(A, mode="reduced"):
    return return_types.linalg_qr(*_qr(A, mode))


def _qr(A, mode):
    _check("linalg.qr", A, "geqrf", square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
        )
    return apply_multi(D.QR, (A,), (mode,))


@public
def qr(input, some=True):
    """The deprecated torch.qr: `some` for mode 'reduced', else 'complete'."""
    warn_once(QR_DEPRECATION)
    return return_types.qr(*_qr(input, "reduced" if some else "complete"))


def _svd(A, full_matrices, driver, compute_uv=True):
    if driver is not None and A.device.type == "cpu":
        raise RuntimeError(
            "engine.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend."
        )
    _check("linalg.svd", A, "linalg_svd", square=False)
    return apply_multi(D.SVD, (A,), (full_matrices, compute_uv))


def linalg_svd(A, full_matrices=True, *, driver=None):
    return return_types.linalg_svd(*_svd(A, full_matrices, driver))


def svdvals(A, *, driver=None):
    """The singular values; with grad, the whole SVD is computed, as its backward needs U and Vh."""
    return _svd(A, False, driver, _grad_recorded(A))[1]


def reduced_svd(A):
    """U, S, Vh of a reduced SVD (formulas.det_singular_backward, under create_graph)."""
    return tuple(apply_multi(D.SVD, (A,), (False, True)))


@public
def svd(input, some=True, compute_uv=True):
    """torch.svd: V rather than Vh (a transpose of linalg.svd's); without compute_uv, U and V are zeros."""
    if input.dim() < 2:
        raise RuntimeError(
            f"linalg.svd: input should have at least 2 dimensions, but has {input.dim()} dimensions instead"
        )
    if compute_uv:
        U, S, Vh = _svd(input, not some, None)
        return return_types.svd(U, S, shaping_core.transpose(Vh, -2, -1))
    S = svdvals(input)
    m, n = input.shape[-2:]
    batch = tuple(input.shape[:-2])
    zeros = backend.xp_of(input._data).zeros
    return return_types.svd(
        wrap(zeros(batch + (m, m), input._data.dtype)), S, wrap(zeros(batch + (n, n), input._data.dtype))
    )


def _eigh(A, UPLO, compute_v):
    name = "linalg.eigh"
    _check_matrix(name, A)
    _check_square(name, A)
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _check(name, A, "linalg_eigh", integers_unimplemented=True)
    return apply_multi(D.EIGH, (A,), (UPLO.upper(), compute_v))


def linalg_eigh(A, UPLO="L"):
    return return_types.linalg_eigh(*_eigh(A, UPLO, True))


def eigvalsh(A, UPLO="L"):
    """The eigenvalues; with grad, the eigenvectors too, as the backward needs them."""
    return _eigh(A, UPLO, _grad_recorded(A))[0]


# ------------------------------------------------------------------------------ norms


def _order_name(ord) -> str:
    return str(int(ord)) if isinstance(ord, float) and ord.is_integer() else str(ord)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """fro: a vector norm; nuc and +-2: the sum, max or min of the singular values; +-1 and +-inf: the max
    or min of the column (row) sums of |A| (torch's decompositions, so the graphs are torch's)."""
    name = "linalg.matrix_norm"
    _check_matrix(name, A)
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = norm_dim(dim[0], A.dim()), norm_dim(dim[1], A.dim())
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({d0}, {d1})")
    if dtype is not None:
        if not dtype.is_floating_point:
            raise RuntimeError(
                f"{name}: dtype should be floating point or complex, but got {dtype.scalar_type}"
            )
        if promote_types(A.dtype.np, dtype.np) != dtype.np:
            raise RuntimeError(
                f"{name}: the dtype of the input ({A.dtype.scalar_type}) should be convertible without narrowing "
                f"to the specified dtype ({dtype.scalar_type})"
            )
    spectral = ord == "nuc" or (not isinstance(ord, str) and builtins.abs(ord) == 2)
    if isinstance(ord, str) and ord not in ("fro", "nuc"):
        raise RuntimeError(f"{name}: Order {ord} not supported.")
    if not isinstance(ord, str) and builtins.abs(ord) not in (1, 2, math.inf):
        raise RuntimeError(f"{name}: Order {_order_name(ord)} not supported.")
    _check_floating(name, A)
    if spectral and A.dtype is backend.float16:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got Half")
    if dtype is not None and dtype is not A.dtype:
        A = A.to(dtype)
    if ord == "fro":
        return reductions_core.norm(A, 2, (d0, d1), keepdim)
    if spectral:
        order = [d for d in range(A.dim()) if d not in (d0, d1)] + [d0, d1]
        values = svdvals(shaping_core.permute(A, order))
        if ord == "nuc":
            out = reductions_core.sum(values, -1, keepdim)
        else:
            out = _extreme(ord > 0, values, -1, keepdim)
        if keepdim:
            out = shaping_core.permute(
                shaping_core.unsqueeze(out, -1), [order.index(d) for d in range(A.dim())]
            )
        return out
    first, second = (d1, d0) if builtins.abs(ord) == math.inf else (d0, d1)
    if not keepdim and first < second:
        second -= 1
    return _extreme(ord > 0, reductions_core.norm(A, 1, first, keepdim), second, keepdim)


def _extreme(largest: bool, x, dim, keepdim):
    """amax / amin over one dim (AmaxBackward0 / AminBackward0: ties share the gradient)."""
    return apply_op(D.AMAX if largest else D.AMIN, (x,), ((norm_dim(dim, x.dim()),), keepdim))


# ------------------------------------------------------------------ products of linalg


def linalg_matmul(input, other):
    return matmul(input, other)


def multi_dot(tensors):
    """The chain multiplied in the cheapest order (torch's matrix-chain order), 1-D ends as vectors."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0].dim(), tensors[-1].dim()
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError(
                f"multi_dot(): all tensors must have be the same dtype but tensor 0 is {tensors[0].dtype.cpp_name} "
                f"and tensor {i} {t.dtype.cpp_name}"
            )
    check_same_device(*tensors)
    matrices = list(tensors)
    if first == 1:
        matrices[0] = shaping_core.unsqueeze(matrices[0], 0)
    if last == 1:
        matrices[-1] = shaping_core.unsqueeze(matrices[-1], -1)
    for i in range(n - 1):
        a, b = matrices[i].shape, matrices[i + 1].shape
        if a[1] != b[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                f"{list(tensors[i + 1].shape)} cannot be multiplied"
            )
    order = _chain_order(matrices)
    if n == 3:  # torch compares the two costs, the first order winning a tie
        p = [matrices[0].shape[0], matrices[1].shape[0], matrices[2].shape[0], matrices[2].shape[1]]
        order[0][2] = 1 if p[0] * p[2] * (p[1] + p[3]) <= p[1] * p[3] * (p[0] + p[2]) else 0
    out = _chain(matrices, order, 0, n - 1)
    shape = tuple(out.shape)[1 if first == 1 else 0 : 1 if last == 1 else 2]
    return shaping_core.view(out, shape)


def _chain_order(matrices) -> list:
    """order[i][j]: where the product of matrices i..j splits in the cheapest order (for 3, torch's cost
    comparison; for more, the classic dynamic programme)."""
    n = len(matrices)
    p = [m.shape[0] for m in matrices] + [matrices[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    order = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], order[i][j] = q, k
    return order


def _chain(matrices, order, i, j):
    if i == j:
        return matrices[i]
    k = order[i][j]
    return mm(_chain(matrices, order, i, k), _chain(matrices, order, k + 1, j))


def vecdot(x, y, *, dim=-1):
    name = "linalg.vecdot"
    _check_floating(name, x)
    if x.dtype is not y.dtype:
        raise RuntimeError(
            f"{name}: Expected x and y to have the same dtype, but found x of type {x.dtype.scalar_type} and y of "
            f"type {y.dtype.scalar_type} instead"
        )
    return reductions_core.sum(pointwise_core.mul(x, y), dim)


def linalg_cross(input, other, *, dim=-1):
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = norm_dim(dim, input.dim())
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and {other.shape[d]}"
        )
    if input.dtype is not other.dtype:
        raise RuntimeError(
            f"expected scalar type {input.dtype.scalar_type} but found {other.dtype.scalar_type}"
        )
    broadcast_check(input, other)
    return apply_op(D.LINALG_CROSS, (input, other), (d,))


@public
def cross(input, other, dim=None):
    """torch.cross: linalg.cross, along the first dimension of size 3 when `dim` is not given (deprecated)."""
    if dim is None:
        warn_once(CROSS_DEPRECATION)
        dim = next((d for d, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


@public
def matmul(input, other):
    """ATen's `_matmul_impl`: mm, mv or dot for matrices and vectors; a batch folded into one mm or
    mv where `should_fold` says so; else both batches broadcast, flattened and multiplied by bmm;
    so the graph behind the result is torch's, node for node. With no graph to record, one
    broadcasting product is as fast and gives the same values."""
    if other.__class__ is not Tensor:
        other = as_operand(other)
    sa, sb = input._data.shape, other._data.shape
    na, nb = len(sa), len(sb)
    if na == 2 and nb == 2:  # the common case first
        if input._data.__class__ is not other._data.__class__:
            check_same_device(input, other)
        _check_mm(sa, sb)
        if input._data.dtype is not other._data.dtype and input.dtype is not other.dtype:
            raise product_dtypes.mm_error(input, other)
        return apply_op(D.MM, (input, other))
    check_same_device(input, other)
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D")
    if na == 1 and nb == 1:
        if product_dtypes.differ(input, other):
            raise product_dtypes.dot_error(input, other)
        if input.shape != other.shape:
            n, k = input.shape[0], other.shape[0]
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{n}] and src [{k}] to have the same "
                f"number of elements, but got {n} and {k} elements respectively"
            )
        return apply_op(D.DOT, (input, other))
    if na == 2 and nb == 1:
        if product_dtypes.differ(input, other):
            raise product_dtypes.mv_error(input, other)
        return _mv(input, other)
    if na == 1 and nb == 2:
        return squeeze(mm(unsqueeze(input, 0), other), 0, _name="SqueezeBackward4")
    if product_dtypes.differ(input, other):
        raise product_dtypes.batched_matmul_error(input, other)
    if not _grad_recorded(input, other) and input.shape[-1] == other.shape[-2 if nb > 1 else 0]:
        broadcast_shapes(input.shape[:-2], other.shape[:-2])  # torch's message where batches differ
        return apply_op(D.BMM, (input, other))  # no graph to match: one broadcasting product
    if product_dtypes.should_fold(input, other):
        return _folded_matmul(input, other)
    return _batched_matmul(input, other)


def _unsafe_view(t, shape):
    """A reshape of a fresh product: a new tensor, not a view (ATen's `_unsafe_view`)."""
    return apply_op(D.UNSAFE_VIEW, (t,), (t.shape, shape))


def _mv(mat, vec):
    n, k = mat.shape
    _check_mm(
        mat.shape, (vec.shape[0], 1), f"size mismatch, got input ({n}), mat ({n}x{k}), vec ({vec.shape[0]})"
    )
    return apply_op(D.MV, (mat, vec))


def _folded_matmul(input, other):
    """The larger operand's batch folded into the rows of one mm or mv (other's transpose when
    other is the larger, the product transposed back into a contiguous result)."""
    transpose = other.dim() > input.dim()
    big = shaping_core.transpose(other, -2, -1) if transpose else input
    small = (shaping_core.t(input) if input.dim() == 2 else input) if transpose else other
    rows = big.shape[:-1]
    folded = shaping_core.reshape(big, (math.prod(rows), big.shape[-1]))
    if small.dim() == 1:
        return _unsafe_view(_mv(folded, small), rows)
    out = _unsafe_view(mm(folded, small), rows + (small.shape[1],))
    return shaping_core.transpose(out, -2, -1).contiguous() if transpose else out


def _batched_matmul(input, other):
    """Both batches broadcast to one, each operand flattened to a 3-D batch, one bmm."""
    na, nb = input.dim(), other.dim()
    n, m1 = (input.shape[-2] if na > 1 else 1), input.shape[-1]
    m2, p = (other.shape[-2], other.shape[-1]) if nb > 1 else (other.shape[0], 1)
    batch1, batch2 = input.shape[: max(na - 2, 0)], other.shape[: max(nb - 2, 0)]
    if na == 3 and nb == 3 and batch1[0] != batch2[0]:  # a batch of one that requires grad: squeezed
        if batch1[0] == 1 and input.requires_grad:
            return matmul(squeeze(input, 0), other)
        if batch2[0] == 1 and other.requires_grad:
            return matmul(input, squeeze(other, 0))
    batch = broadcast_shapes(batch1, batch2)
    size = math.prod(batch)
    left = shaping_core.reshape(shaping_core.expand(input, batch + (n, m1)), (size, n, m1))
    if nb == 1:
        right = shaping_core.expand(other, batch + (m2,))
        right = unsqueeze(shaping_core.reshape(right, (size, m2)), 2)
    else:
        right = shaping_core.reshape(shaping_core.expand(other, batch + (m2, p)), (size, m2, p))
    out = bmm(left, right)
    if nb == 1:
        out = squeeze(out, -1)
    return _unsafe_view(out, batch + ((n,) if na > 1 else ()) + ((p,) if nb > 1 else ()))


def _check_mm(sa, sb, message=None):
    if sa[1] != sb[0]:
        raise RuntimeError(
            message or f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})"
        )


@public
def mm(input, mat2):
    if input.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError("self must be a matrix" if input.dim() != 2 else "mat2 must be a matrix")
    return matmul(input, mat2)


@public
def dot(input, tensor):
    if input.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {tensor.dim()}D tensors")
    return matmul(input, tensor)


@public
def mv(input, vec):
    return matmul(input, vec)


__all__ = exported(__name__)  # what `engine` exports from here (api.public)
