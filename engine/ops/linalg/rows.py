"""The linear-algebra rows of the derivative table (ops/derivatives.py gathers them; op.py `row`)."""

from __future__ import annotations

from ..op import ADD_PRODUCT, BILINEAR, row, with_jvp
from . import formulas as F
from . import kernels as K

# fmt: off
# --- matrix products ---------------------------------------------------------------------------
MM = row("MmBackward0", lambda xp, self, mat2: self @ mat2, inputs=("self", "mat2"), saves=("self", "mat2"),
         self=lambda m, g, self, mat2: g @ m.transpose(mat2, 0, 1),
         mat2=lambda m, g, self, mat2: m.transpose(self, 0, 1) @ g)
MV = row("MvBackward0", lambda xp, self, vec: self @ vec, inputs=("self", "vec"), saves=("self", "vec"),
         self=lambda m, g, self, vec: g.reshape((-1, 1)) * vec.reshape((1, -1)),
         vec=lambda m, g, self, vec: m.transpose(self, 0, 1) @ g)
DOT = row("DotBackward0", lambda xp, self, tensor: self @ tensor, inputs=("self", "tensor"),
          saves=("self", "tensor"),
          self=lambda m, g, self, tensor: g * tensor,
          tensor=lambda m, g, self, tensor: g * self)
BMM = row("BmmBackward0", lambda xp, self, mat2: xp.matmul(self, mat2),
          inputs=("self", "mat2"), saves=("self", "mat2"), broadcasts=True,
          self=lambda m, g, self, mat2: g @ m.transpose(mat2, -1, -2),
          mat2=lambda m, g, self, mat2: m.transpose(self, -1, -2) @ g)
ADDMM = row("AddmmBackward0", lambda xp, self, mat1, mat2: K.addmm(self, mat1, mat2),
            inputs=("self", "mat1", "mat2"), saves=("mat1", "mat2"), broadcasts=True,
            self=lambda m, g, mat1, mat2: g,
            mat1=lambda m, g, mat1, mat2: g @ m.transpose(mat2, 0, 1),
            mat2=F.addmm_mat2_backward)

# --- linear algebra ------------------------------------------------------------------------------
# Rows behind the matrix products and engine.linalg (functions.py), with torch's names for
# their saved values. A row of several outputs names them (`outputs=`) and its formula gets `g`
# as a tuple; it is applied with op.apply_multi. LAPACK's failures become torch's errors in the
# forwards (kernels.py).
ADDMM_SCALED = row("AddmmBackward0",
                   lambda xp, self, mat1, mat2, beta, alpha: K.scaled_addmm(xp, self, mat1, mat2, beta, alpha),
                   inputs=("self", "mat1", "mat2"), saves=("mat1", "mat2"), attrs=("beta", "alpha"), broadcasts=True,
                   self=lambda m, g, mat1, mat2, beta, alpha: F.scaled(g, beta),
                   mat1=lambda m, g, mat1, mat2, beta, alpha: F.scaled(g @ m.transpose(mat2, 0, 1), alpha),
                   mat2=lambda m, g, mat1, mat2, beta, alpha: F.scaled(F.addmm_mat2_backward(m, g, mat1, mat2), alpha))
ADDMV = row("AddmvBackward0", lambda xp, self, mat, vec, beta, alpha: K.scaled_addmm(xp, self, mat, vec, beta, alpha),
            inputs=("self", "mat", "vec"), saves=("mat", "vec"), attrs=("beta", "alpha"), broadcasts=True,
            self=lambda m, g, mat, vec, beta, alpha: F.scaled(g, beta),
            mat=lambda m, g, mat, vec, beta, alpha: F.scaled(F.as_column(g) * F.as_row(vec), alpha),
            vec=lambda m, g, mat, vec, beta, alpha: F.scaled(m.transpose(mat, 0, 1) @ g, alpha))
ADDR = row("AddrBackward0",
           lambda xp, self, vec1, vec2, beta, alpha: K.scaled_addmm(xp, self, vec1[:, None], vec2[None, :], beta, alpha),
           inputs=("self", "vec1", "vec2"), saves=("vec1", "vec2"), attrs=("beta", "alpha"), broadcasts=True,
           self=lambda m, g, vec1, vec2, beta, alpha: F.scaled(g, beta),
           vec1=lambda m, g, vec1, vec2, beta, alpha: F.scaled(g @ vec2, alpha),
           vec2=lambda m, g, vec1, vec2, beta, alpha: F.scaled(m.transpose(g, 0, 1) @ vec1, alpha))
BADDBMM = row("BaddbmmBackward0",
              lambda xp, self, batch1, batch2, beta, alpha: K.scaled_addmm(xp, self, batch1, batch2, beta, alpha),
              inputs=("self", "batch1", "batch2"), saves=("batch1", "batch2"), attrs=("beta", "alpha"),
              broadcasts=True,
              self=lambda m, g, batch1, batch2, beta, alpha: F.scaled(g, beta),
              batch1=lambda m, g, batch1, batch2, beta, alpha: F.scaled(g @ F.mT(m, batch2), alpha),
              batch2=lambda m, g, batch1, batch2, beta, alpha: F.scaled(F.mT(m, batch1) @ g, alpha))
ADDBMM = row("AddbmmBackward0",
             lambda xp, self, batch1, batch2, beta, alpha:
                 K.scaled_addmm(xp, self, batch1.transpose(1, 0, 2).reshape(batch1.shape[1], -1),
                         batch2.reshape(-1, batch2.shape[2]), beta, alpha),
             inputs=("self", "batch1", "batch2"), saves=("batch1", "batch2"), attrs=("beta", "alpha"),
             broadcasts=True,
             self=lambda m, g, batch1, batch2, beta, alpha: F.scaled(g, beta),
             batch1=lambda m, g, batch1, batch2, beta, alpha: F.scaled(g @ F.mT(m, batch2), alpha),
             batch2=lambda m, g, batch1, batch2, beta, alpha: F.scaled(F.mT(m, batch1) @ g, alpha))
LINALG_CROSS = row("LinalgCrossBackward0", lambda xp, self, other, dim: F.cross(self, other, dim),
                   inputs=("self", "other"), saves=("self", "other"), attrs=("dim",), broadcasts=True,
                   self=lambda m, g, self, other, dim: F.cross(other, g, dim),
                   other=lambda m, g, self, other, dim: F.cross(g, self, dim))
DET = row("LinalgDetBackward0", lambda xp, A: xp.linalg.det(A), inputs=("A",), saves=("A", "result"),
          A=F.det_backward)
SLOGDET = row("LinalgSlogdetBackward0", lambda xp, A: K.slogdet(xp, A), inputs=("A",),
              outputs=("sign", "logabsdet"), saves=("A", "sign"), A=F.slogdet_backward)
INV = row("LinalgInvExBackward0", lambda xp, A, name: K.inv(xp, A, name), inputs=("A",), attrs=("name",),
          outputs=("inverse",), saves=("inverse",), A=lambda m, g, inverse, name: F.inv_backward(m, g, inverse))
SOLVE = row("LinalgSolveExBackward0", lambda xp, A, B, left, vector: K.solve(xp, A, B, left, vector),
            inputs=("A", "B"), saves=("A", "result"), attrs=("left", "vector"), broadcasts=True,
            joint=F.solve_backward)
CHOLESKY = row("LinalgCholeskyExBackward0", lambda xp, A, upper, name: K.cholesky(xp, A, upper, name),
               inputs=("A",), attrs=("upper", "name"), outputs=("L",), saves=("L",),
               A=lambda m, g, L, upper, name: F.cholesky_backward(m, g, L, upper))
CHOLESKY_DEPRECATED = row("CholeskyBackward0", lambda xp, A, upper, name: K.cholesky(xp, A, upper, name),
                          inputs=("A",), attrs=("upper", "name"), saves=("result",),
                          A=lambda m, g, result, upper, name: F.cholesky_backward(m, g, result, upper))
QR = row("LinalgQrBackward0", lambda xp, A, mode: K.qr(xp, A, mode), inputs=("A",), attrs=("mode",),
         outputs=("Q", "R"), saves=("Q", "R"), A=F.qr_backward)
SVD = row("LinalgSvdBackward0",
          lambda xp, A, full_matrices, compute_uv: K.svd(xp, A, full_matrices, compute_uv),
          inputs=("A",), attrs=("full_matrices", "compute_uv"), outputs=("U", "S", "Vh"), saves=("U", "S", "Vh"),
          A=lambda m, g, U, S, Vh, full_matrices, compute_uv: F.svd_backward(m, g, U, S, Vh, full_matrices))
EIGH = row("LinalgEighBackward0", lambda xp, A, UPLO, compute_v: K.eigh(xp, A, UPLO, compute_v),
           inputs=("A",), attrs=("UPLO", "compute_v"), outputs=("eigenvalues", "eigenvectors"),
           saves=("eigenvalues", "eigenvectors"),
           A=lambda m, g, eigenvalues, eigenvectors, UPLO, compute_v:
               F.eigh_backward(m, g, eigenvalues, eigenvectors, UPLO))
# einsum's repeated labels take a DIAGONAL (shaping's rows); matrix_norm's orders 1, 2 and inf an
# AMAX or AMIN (reductions' rows)

# Forward AD (ops/forward_mode.py): products are bilinear; self + a @ b is affine in self, bilinear in a, b.
with_jvp(BILINEAR, MM, MV, DOT, BMM)
with_jvp(ADD_PRODUCT, ADDMM, ADDMM_SCALED, ADDMV, ADDR, BADDBMM, ADDBMM)
