"""The linear-algebra rows' backward formulas longer than a line (PyTorch's FunctionsManual).

Written against the math namespace `m`, so each runs on raw arrays or, recorded, on Tensors.
"""

from __future__ import annotations

import numpy

from ...tensor import Tensor
from ..namespaces import raw

# -- reductions and products ------------------------------------------------------------------


def addmm_mat2_backward(m, g, mat1, mat2):
    """mat1^T @ g, laid out like mat2: a transposed weight (F.linear) gets a row-major weight grad."""
    data = raw(mat2)
    if data.ndim == 2 and data.flags.f_contiguous and not data.flags.c_contiguous:
        return m.transpose(m.transpose(g, 0, 1) @ mat1, 0, 1)
    return m.transpose(mat1, 0, 1) @ g


# -- linear algebra -----------------------------------------------------------------------------
# torch's FunctionsManual formulas for the matrix functions (real case). A row of several outputs
# (svd's U, S, Vh) gets `g` as a tuple, None where no gradient arrived; a formula returning None
# gives its input no gradient. Solves stand where torch solves triangular systems: the same
# values, and under create_graph they are rows of their own (LinalgSolveExBackward0).


def scaled(x, factor):
    """x * factor, skipped for 1 (torch's maybe_multiply)."""
    return x if factor == 1 else x * factor


def mT(m, x):
    return m.transpose(x, -1, -2)


def as_column(x):
    """(..., n) -> (..., n, 1): a batch of columns (of 1x1 matrices, for a batch of numbers)."""
    return x.reshape(tuple(x.shape) + (1,))


def as_row(x):
    """(..., n) -> (..., 1, n): a batch of rows."""
    return x.reshape(tuple(x.shape[:-1]) + (1, x.shape[-1]))


def diag_embed(m, v):
    return as_column(v) * m.eye(v.shape[-1], v)


def solve_right(m, b, a):
    """X with X a = b."""
    return mT(m, m.solve(mT(m, a), mT(m, b)))


def inv_backward(m, g, inverse):
    inverse_t = mT(m, inverse)
    return -(inverse_t @ (g @ inverse_t))


def det_backward(m, g, A, result):
    """g det(A) A^{-T}. Without create_graph, exactly singular matrices (det 0) get 0, as torch's
    perturbed LU solve of a zero right-hand side gives; with it, matrices near singular (|det| below
    100 eps) take the adjugate through the SVD, which stays differentiable."""
    n = A.shape[-1]
    if n == 0:
        return m.zeros(A.shape, A)
    d = as_column(as_column(g * result)) * m.eye(n, A)
    if not isinstance(A, Tensor):
        zero = result == 0
        if zero.any():
            A = m.where(as_column(as_column(zero)), m.eye(n, A), A)
        return m.solve(mT(m, A), d)
    singular = abs(raw(result)) < 100 * numpy.finfo(raw(A).dtype).eps
    if not singular.any():
        return m.solve(mT(m, A), d)
    if singular.all():
        return det_singular_backward(m, g, A)
    mask = as_column(as_column(singular))
    eye = raw(m.eye(n, A))
    spread = eye * eye.sum(0).cumsum()  # diag(1, ..., n): a stand-in with distinct singular values
    regular = m.solve(mT(m, m.where(mask, eye, A)), d)
    return m.where(mask, det_singular_backward(m, g, m.where(mask, A, spread)), regular)


def det_singular_backward(m, g, A):
    """The adjugate of A through its SVD: U diag(prod_{j != i} S_j) Vh det(U) det(Vh) g."""
    U, S, Vh = m.svd(A)
    n = S.shape[-1]
    alpha = m.det(U) * m.det(Vh) * g
    others = m.where(raw(m.eye(n, A)) == 1, 1.0, as_row(S))  # others[..., i, j]: S_j, 1 where j == i
    product = others[..., :, 0]
    for j in range(1, n):
        product = product * others[..., :, j]
    return (U * as_row(product * as_column(alpha))) @ Vh


def slogdet_backward(m, g, A, sign):
    """g_logabsdet A^{-T} (the sign of a real matrix has no gradient)."""
    g_logabsdet = g[1]
    if g_logabsdet is None:
        return None
    return m.solve(mT(m, A), as_column(as_column(g_logabsdet)) * m.eye(A.shape[-1], A))


def solve_backward(m, g, A, result, left, vector):
    """X = A^{-1} B: gB = A^{-T} gX, gA = -gB X^T (X A = B: gB = gX A^{-T}, gA = -X^T gB)."""
    if vector:
        g, result = as_column(g), as_column(result)
    if left:
        gB = m.solve(mT(m, A), g)
        gA = -(gB @ mT(m, result))
    else:
        gB = solve_right(m, g, mT(m, A))
        gA = -(mT(m, result) @ gB)
    return gA, gB[..., 0] if vector else gB


def cholesky_backward(m, g, L, upper):
    """Murray (2016): L^{-T} Phi(L^T gL) L^{-1}, symmetrized from the lower triangle."""
    if upper:
        L, g = mT(m, L), mT(m, g)
    gA = m.tril(mT(m, L) @ g)
    gA = 0.5 * (gA + mT(m, m.tril(gA, -1)))
    gA = m.solve(mT(m, L), gA)
    return solve_right(m, gA, L)


QR_R_MESSAGE = (
    "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
    "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
)


def qr_backward(m, g, Q, R, mode):
    if mode == "r":
        raise RuntimeError(QR_R_MESSAGE)
    rows, cols = Q.shape[-2], R.shape[-1]
    if mode == "complete" and rows > cols:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )
    gQ, gR = g
    if gQ is None and gR is None:
        return None
    if gQ is None:
        gA = gR @ mT(m, R)
    else:
        gA = -(mT(m, Q) @ gQ) if gR is None else gR @ mT(m, R) - mT(m, Q) @ gQ
    if rows >= cols:
        gA = Q @ (m.triu(gA) + mT(m, m.triu(gA, 1)))
        if gQ is not None:
            gA = gA + gQ
        return solve_right(m, gA, mT(m, R))
    gA = Q @ m.tril(mT(m, gA) - gA)
    gA = solve_right(m, gA, mT(m, R[..., :, :rows]))
    gA = m.index_grad(gA, tuple(R.shape[:-2]) + (rows, cols), (Ellipsis, slice(None), slice(0, rows)), True)
    return gA if gR is None else gA + Q @ gR


def svd_backward(m, g, U, S, Vh, full_matrices):
    """Townsend's real SVD derivative, gauge handled as torch does: skew parts over S_k^2 - S_j^2."""
    gU, gS, gVh = g
    if gU is None and gS is None and gVh is None:
        return None
    k = S.shape[-1]
    if full_matrices:  # the extra columns of U / rows of Vh do not enter
        U, Vh = U[..., :, :k], Vh[..., :k, :]
        gU = None if gU is None else gU[..., :, :k]
        gVh = None if gVh is None else gVh[..., :k, :]
    rows, cols = U.shape[-2], Vh.shape[-1]
    S_row, S_col = as_row(S), as_column(S)
    if gU is None and gVh is None:
        return U @ (as_column(gS) * Vh) if rows >= cols else (U * as_row(gS)) @ Vh
    UhgU = None if gU is None else mT(m, U) @ gU
    VhgV = None if gVh is None else Vh @ mT(m, gVh)
    UhgU = None if UhgU is None else UhgU - mT(m, UhgU)
    VhgV = None if VhgV is None else VhgV - mT(m, VhgV)
    S2 = S * S
    E = as_row(S2) - as_column(S2) + m.eye(k, S)
    if gVh is None:
        gA = (UhgU / E) * S_row
    elif gU is None:
        gA = S_col * (VhgV / E)
    else:
        gA = (UhgU * S_row + S_col * VhgV) / E
    if gS is not None:
        gA = gA + diag_embed(m, gS)
    if rows > cols and gU is not None:
        gA = U @ gA
        gU_Sinv = gU / S_row
        gA = gA + gU_Sinv - U @ (mT(m, U) @ gU_Sinv)
        return gA @ Vh
    if rows < cols and gVh is not None:
        gA = gA @ Vh
        Sinv_gVh = gVh / S_col
        gA = gA + Sinv_gVh - (Sinv_gVh @ mT(m, Vh)) @ Vh
        return U @ gA
    return U @ (gA @ Vh) if rows >= cols else (U @ gA) @ Vh


def eigh_backward(m, g, eigenvalues, eigenvectors, UPLO):
    """V (diag(gL) + skew(V^T gV) / 2E) V^T with E_ij = L_j - L_i (torch's linalg_eig_backward, hermitian)."""
    gL, gV = g
    L, V = eigenvalues, eigenvectors
    if gV is None:
        return None if gL is None else (V * as_row(gL)) @ mT(m, V)
    n = L.shape[-1]
    VhgV = mT(m, V) @ gV
    VhgV = 0.5 * (VhgV - mT(m, VhgV))
    gA = VhgV / (as_row(L) - as_column(L) + m.eye(n, L))
    if gL is not None:
        gA = gA + diag_embed(m, gL)
    return V @ (gA @ mT(m, V))


def cross(a, b, dim):
    """a x b along `dim`, by indexing: the forward of linalg.cross and its gradients alike."""
    lead = (slice(None),) * dim
    next1, next2 = lead + ([1, 2, 0],), lead + ([2, 0, 1],)
    return a[next1] * b[next2] - a[next2] * b[next1]
