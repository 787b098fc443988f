"""The linear-algebra rows' raw-array forwards, with LAPACK's failures as torch's errors.

Nothing here knows about Tensors or autograd.
"""

from __future__ import annotations

import numpy

from ... import backend


def addmm(bias, mat1, mat2):
    out = mat1 @ mat2
    out += bias
    return out


# --------------------------------------------------------------------------- linear algebra
# Forwards of the linear-algebra rows. LAPACK (numpy) refuses a singular or indefinite matrix
# without saying where; torch names the batch element and the pivot or minor, so on failure
# the matrix is factored again here, the way getrf / potrf go, to find them.


class LinAlgError(RuntimeError):
    """engine.linalg.LinAlgError: a matrix function failed on its input (singular, not positive-definite)."""


def _batch_prefix(index: int, batched: bool) -> str:
    return f"(Batch element {index}): " if batched else ""


def _host_matrices(a) -> numpy.ndarray:
    return backend.to_numpy(a).reshape((-1,) + tuple(a.shape[-2:])).astype(numpy.float64)


def lu_zero_pivot(a: numpy.ndarray) -> int:
    """getrf's info for one square matrix: the 1-based position of its first zero pivot, or 0."""
    a = a.copy()
    n = a.shape[-1]
    for k in range(n):
        p = k + int(numpy.argmax(numpy.abs(a[k:, k])))
        if a[p, k] == 0:
            return k + 1
        a[[k, p]] = a[[p, k]]
        a[k + 1 :, k] /= a[k, k]
        a[k + 1 :, k + 1 :] -= numpy.outer(a[k + 1 :, k], a[k, k + 1 :])
    return 0


def lu_solve(a, b) -> numpy.ndarray:
    """a^{-1} b as LAPACK's getrf and getrs compute it, so a singular `a` gives their inf and nan
    (a zero pivot is left unscaled; the triangular solves skip zero entries, as dtrsm does)."""
    batch = numpy.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = numpy.broadcast_to(a, batch + a.shape[-2:])
    b = numpy.broadcast_to(b, batch + b.shape[-2:])
    out = numpy.empty(b.shape, dtype=numpy.result_type(a, b))
    n = a.shape[-1]
    for index in numpy.ndindex(*batch):
        lu, x = a[index].astype(out.dtype), b[index].astype(out.dtype)
        for k in range(n):
            p = k + int(numpy.argmax(numpy.abs(lu[k:, k])))
            if lu[p, k] != 0:
                lu[[k, p]], x[[k, p]] = lu[[p, k]], x[[p, k]]
                lu[k + 1 :, k] /= lu[k, k]
            lu[k + 1 :, k + 1 :] -= numpy.outer(lu[k + 1 :, k], lu[k, k + 1 :])
        for k in range(n):  # L y = P b, L unit lower
            x[k + 1 :] -= numpy.outer(lu[k + 1 :, k], numpy.where(x[k] != 0, x[k], 0))
        for k in reversed(range(n)):  # U x = y
            nonzero = x[k] != 0
            x[k] = numpy.where(nonzero, x[k] / lu[k, k], 0)
            x[:k] -= numpy.outer(lu[:k, k], x[k])
        out[index] = x
    return out


def singular_error(a, name, message) -> LinAlgError:
    """The error torch gives for the first singular matrix of `a`: `name: (Batch element b): message(pivot)`."""
    matrices = _host_matrices(a)
    for b, matrix in enumerate(matrices):
        pivot = lu_zero_pivot(matrix)
        if pivot:
            return LinAlgError(f"{name}: {_batch_prefix(b, a.ndim > 2)}{message(pivot)}")
    worst = numpy.abs(numpy.linalg.det(matrices)).argmin()  # rounding hid the zero: the nearest to singular
    return LinAlgError(f"{name}: {_batch_prefix(int(worst), a.ndim > 2)}{message(matrices.shape[-1])}")


def _solved(xp, solve, a, error):
    """`solve()`, or `error()` raised where LAPACK found the matrix singular (CuPy answers inf or nan instead)."""
    try:
        out = solve()
    except numpy.linalg.LinAlgError:
        raise error() from None
    if xp is not numpy and out.size and not bool(xp.isfinite(out).all()) and bool(xp.isfinite(a).all()):
        if any(lu_zero_pivot(m) for m in _host_matrices(a)):
            raise error()
    return out


def inv(xp, a, name):
    def error():
        return singular_error(
            a,
            name,
            lambda k: (
                f"The diagonal element {k} is zero, the inversion could not be completed because the input "
                "matrix is singular."
            ),
        )

    return _solved(xp, lambda: xp.linalg.inv(a), a, error)


def solve(xp, a, b, left, vector):
    """linalg.solve: A X = B (or X A = B), B a batch of vectors when `vector`."""
    if vector:
        b = b[..., None]
    if not left:  # X A = B  <=>  A^T X^T = B^T
        a, b = xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2)

    def error():
        return singular_error(
            a, "engine.linalg.solve", lambda k: "The solver failed because the input matrix is singular."
        )

    out = _solved(xp, lambda: xp.linalg.solve(a, b), a, error)
    if not left:
        out = xp.swapaxes(out, -1, -2)
    return out[..., 0] if vector else out


def cholesky(xp, a, upper, name):
    """The Cholesky factor of the lower triangle of `a` (of the upper one, returned upper, when `upper`)."""
    if upper:
        a = xp.swapaxes(a, -1, -2)
    try:
        out = xp.linalg.cholesky(a)
        failed = xp is not numpy and out.size and not bool(xp.isfinite(out).all())
    except numpy.linalg.LinAlgError:
        failed = True
    if failed:
        raise cholesky_error(a, name)
    return xp.swapaxes(out, -1, -2) if upper else out


def cholesky_error(a, name) -> LinAlgError:
    """potrf's failure: the order of the first leading minor of the first failing matrix that is not positive-definite."""
    matrices = _host_matrices(a)
    for b, matrix in enumerate(matrices):
        for k in range(1, matrix.shape[-1] + 1):
            try:
                numpy.linalg.cholesky(matrix[:k, :k])
            except numpy.linalg.LinAlgError:
                return LinAlgError(
                    f"{name}: {_batch_prefix(b, a.ndim > 2)}The factorization could not be completed because the "
                    f"input is not positive-definite (the leading minor of order {k} is not positive-definite)."
                )
    return LinAlgError(
        f"{name}: The factorization could not be completed because the input is not positive-definite."
    )


def slogdet(xp, a):
    sign, logabsdet = xp.linalg.slogdet(a)
    return xp.asarray(sign, dtype=a.dtype), xp.asarray(logabsdet, dtype=a.dtype)


def qr(xp, a, mode):
    """(Q, R); mode 'r' gives an empty Q, as torch does."""
    if mode == "r":
        return xp.zeros((0,), dtype=a.dtype), xp.linalg.qr(a, mode="r")
    q, r = xp.linalg.qr(a, mode=mode)
    return q, r


def svd(xp, a, full_matrices, compute_uv):
    """(U, S, Vh); without `compute_uv`, U and Vh are empty, as torch's are."""
    if not compute_uv:
        return (
            xp.zeros((0,), dtype=a.dtype),
            xp.linalg.svd(a, compute_uv=False),
            xp.zeros((0,), dtype=a.dtype),
        )
    U, S, Vh = xp.linalg.svd(a, full_matrices=full_matrices)
    return column_major(xp, U), S, column_major(xp, Vh)


def column_major(xp, m):
    """The matrices of m laid out by columns, as LAPACK writes torch's factors: a reshape of one
    (a matmul's batch) is then an alias of a strided tensor, as in torch, not a plain view."""
    return xp.swapaxes(xp.ascontiguousarray(xp.swapaxes(m, -1, -2)), -1, -2)


def eigh(xp, a, uplo, compute_v):
    if not compute_v:
        return xp.linalg.eigvalsh(a, UPLO=uplo), xp.zeros((0,), dtype=a.dtype)
    return tuple(xp.linalg.eigh(a, UPLO=uplo))


def scaled_addmm(xp, bias, mat1, mat2, beta, alpha):
    """beta * bias + alpha * (mat1 @ mat2): the matrix products of addmm, addmv, addr, baddbmm (torch's
    rules: with beta 0 the bias is not read, nor the product with alpha 0; integers take integer scalars)."""
    product = mat1 @ mat2
    integral = product.dtype.kind in "iub"
    if integral:
        beta, alpha = int(beta), int(alpha)
    if alpha == 0:
        product = xp.zeros_like(product)
    elif alpha != 1:
        product = product * alpha
    if beta == 0:
        out = xp.broadcast_to(product, xp.broadcast_shapes(product.shape, bias.shape)).copy()
    else:
        out = product + (bias if beta == 1 else bias * beta)
    return out.astype(product.dtype, copy=False) if integral else out
