"""The backward formulas too long for one line of the table (PyTorch keeps its in FunctionsManual).

Each is written against the math namespace `m`, so it runs on raw arrays or, recorded, on
Tensors. Those used directly as a row's formula take that row's argument names, in the
row's order: `(m, g, *saves, *attrs)`, which the table checks when it is built.
"""

from __future__ import annotations

import math

import numpy

from ..tensor import Tensor
from . import kernels as K
from .namespaces import reduced_shape


def unreduce(g, shape, dims, keepdim):
    """A reduction's incoming gradient, reshaped so it broadcasts against the input."""
    return g if keepdim else g.reshape(reduced_shape(shape, dims))


def count(shape, dims) -> int:
    return math.prod(shape[d] for d in dims)


def raw(x):
    return x._data if isinstance(x, Tensor) else x


# -- pointwise --------------------------------------------------------------------------------


def clamp_mask(self, min, max):
    if min is None:
        return self <= max
    if max is None:
        return self >= min
    return (self >= min) & (self <= max)


def clamp_min_grad(m, g, self, min, max):
    """clamp.Tensor's gradient for `min`: where it clamped (and, given `max`, where min < max)."""
    below = self < min
    return m.where(below if max is None else below & (min < max), g, 0.0)


def clamp_max_grad(m, g, self, min, max):
    """For `max`: where it clamped, and everywhere min > max (the result is then `max`)."""
    above = self > max
    return m.where(above if min is None else above | (max < min), g, 0.0)


def pairwise_grad(m, g, tie, loses):
    """maximum/minimum: all of g to the winner, half to each side of a tie (as torch splits it)."""
    return m.where(loses, 0.0, m.where(tie, g / 2, g))


def gelu_backward(m, g, self, approximate):
    if approximate == "tanh":
        beta, kappa = math.sqrt(2.0 / math.pi), 0.044715
        x_sq = self * self
        t = m.tanh(beta * (self + kappa * x_sq * self))
        left = 0.5 * self
        return g * (0.5 * (1 + t) + left * (1 - t * t) * beta * (1 + 3 * kappa * x_sq))
    cdf = 0.5 * (1 + m.erf(self * (1 / math.sqrt(2.0))))
    pdf = m.exp(-0.5 * self * self) * (1 / math.sqrt(2.0 * math.pi))
    return g * (cdf + self * pdf)


# -- reductions and products ------------------------------------------------------------------


def norm_backward(m, g, self, result, ord, dim, keepdim):
    gk = unreduce(g, self.shape, dim, keepdim)
    rk = unreduce(result, self.shape, dim, keepdim)
    if ord == 1:
        return gk * m.sign(self)
    scale = m.where(rk == 0, 0.0, gk / rk if ord == 2 else gk / rk ** (ord - 1))
    return self * scale if ord == 2 else self * abs(self) ** (ord - 2) * scale


def addmm_mat2_backward(m, g, mat1, mat2):
    """mat1^T @ g, laid out like mat2: a transposed weight (F.linear) gets a row-major weight grad."""
    data = raw(mat2)
    if data.ndim == 2 and data.flags.f_contiguous and not data.flags.c_contiguous:
        return m.transpose(m.transpose(g, 0, 1) @ mat1, 0, 1)
    return m.transpose(mat1, 0, 1) @ g


def split_backward(g, dim, sizes):
    out, start = [], 0
    for n in sizes:
        out.append(g[(slice(None),) * dim + (slice(start, start + n),)])
        start += n
    return out


# -- convolution: im2col, a batched matmul per group; the grads are the adjoint steps ---------


def _conv_parts(g, weight, groups):
    n, o = g.shape[0], weight.shape[0]
    length = math.prod(g.shape[2:])
    g4 = g.reshape((n, groups, o // groups, length))
    w3 = weight.reshape((groups, o // groups, -1))  # (G, O/G, C/G * K)
    return n, length, g4, w3


def conv_input_backward(m, g, input, weight, stride, padding, dilation, groups, columns):
    if not isinstance(g, Tensor) and all(s == 1 for s in stride):  # raw and unstrided: the fast kernel
        return K.conv_input_grad(m.xp, g, weight, input.shape, padding, dilation, groups)
    n, length, g4, w3 = _conv_parts(g, weight, groups)
    cols = m.transpose(w3, 1, 2) @ g4  # (N, G, C/G * K, L)
    return m.fold(
        cols.reshape((n, -1, length)), input.shape, weight.shape[2:], stride, K.symmetric(padding), dilation
    )


def conv_weight_backward(m, g, input, weight, stride, padding, dilation, groups, columns):
    """sum_n g[n] @ cols[n]^T; a raw backward takes the forward's columns (once), a recorded one re-unfolds."""
    n, length, g4, w3 = _conv_parts(g, weight, groups)
    cols = None
    if columns is not None and not isinstance(g, Tensor):
        cols, columns[0] = columns[0], None
    if cols is None:
        cols = m.unfold(input, weight.shape[2:], stride, K.symmetric(padding), dilation)
    cols = cols.reshape((n, groups, -1, length))
    return m.sum(g4 @ m.transpose(cols, 2, 3), (0,), False).reshape(weight.shape)


def channel_dims(x) -> tuple:
    return (0,) + tuple(range(2, x.ndim))


# -- pooling ------------------------------------------------------------------------------------


def scatter_flat(m, g, shape, flat, unique):
    """Zeros of `shape` with g added at flat indices (one op, so it has a backward too)."""
    numel = math.prod(shape)
    return m.index_grad(g.reshape((-1,)), (numel,), flat.reshape(-1), unique).reshape(shape)


def avg_pool_backward(m, g, shape, kernel, stride, pads, divisor):
    """Each output's gradient / divisor, spread over its window (fold); batched or not alike."""
    nd = len(kernel)
    planes, spatial = math.prod(shape[:-nd]), tuple(shape[-nd:])
    length, k = math.prod(g.shape[-nd:]), math.prod(kernel)
    spread = m.expand((g / divisor).reshape((1, planes, 1, length)), (1, planes, k, length))
    cols = spread.reshape((1, planes * k, length))
    return m.fold(cols, (1, planes) + spatial, kernel, stride, pads, (1,) * nd).reshape(shape)


# -- normalization: raw backwards reuse the forward's statistics; recorded ones recompute
# them from the input, so the statistics are differentiated too (double backward) ------------


def batch_norm_backward(m, g, input, weight, training, eps, result1, result2):
    """`result1`, `result2`: the forward's batch mean and inverse standard deviation."""
    dims = channel_dims(input)
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if training and isinstance(input, Tensor):
        mean = m.mean(input, dims, True)
        centred = input - mean
        invstd = (m.mean(centred * centred, dims, True) + eps) ** -0.5
    else:
        mean, invstd = result1.reshape(shape), result2.reshape(shape)
        centred = input - mean
    xhat = centred * invstd
    gw = g if weight is None else g * weight.reshape(shape)
    if training:
        gx = (gw - m.mean(gw, dims, True) - xhat * m.mean(gw * xhat, dims, True)) * invstd
    else:
        gx = gw * invstd
    gweight = None if weight is None else m.sum(g * xhat, dims, False)
    return gx, gweight, m.sum(g, dims, False)


def layer_norm_backward(m, g, input, weight, normalized_shape, eps, result1, result2):
    """`result1`, `result2`: the forward's mean and reciprocal standard deviation."""
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    if isinstance(input, Tensor):
        mean = m.mean(input, dims, True)
        centred = input - mean
        rstd = (m.mean(centred * centred, dims, True) + eps) ** -0.5
    else:
        centred, rstd = input - result1, result2
    xhat = centred * rstd
    gw = g if weight is None else g * weight
    gx = (gw - m.mean(gw, dims, True) - xhat * m.mean(gw * xhat, dims, True)) * rstd
    gweight = None if weight is None else m.sum_to(g * xhat, tuple(weight.shape))
    return gx, gweight, m.sum_to(g, tuple(normalized_shape))


# -- losses -------------------------------------------------------------------------------------


def reduced_grad(g, like, reduction):
    """The incoming loss gradient per element: g (none, sum) or g / numel (mean)."""
    return g / math.prod(like.shape) if reduction == "mean" else g


def smooth_l1_backward(m, g, self, target, reduction, beta):
    d = self - target
    return m.where(abs(d) < beta, d / beta, m.sign(d)) * reduced_grad(g, d, reduction)


def smooth_l1_target_backward(m, g, self, target, reduction, beta):
    return -smooth_l1_backward(m, g, self, target, reduction, beta)


def binary_cross_entropy_backward(m, g, self, target, weight, reduction):
    denom = (1 - self) * self
    out = (self - target) / m.where(denom < 1e-12, 1e-12, denom) * reduced_grad(g, self, reduction)
    return out if weight is None else out * weight


def binary_cross_entropy_target_backward(m, g, self, target, weight, reduction):
    out = (m.log(1 - self) - m.log(self)) * reduced_grad(g, self, reduction)
    return out if weight is None else out * weight


def _log_sigmoid(m, x):
    return m.where(x < 0, x, 0.0) - m.log(1 + m.exp(-abs(x)))


def binary_cross_entropy_with_logits_backward(m, g, self, target, weight, pos_weight, reduction):
    s = m.sigmoid(self)
    if pos_weight is None:
        out = s - target
    else:
        pt = target * pos_weight
        out = (pt + 1 - target) * s - pt
    out = out * reduced_grad(g, self, reduction)
    return out if weight is None else out * weight


def binary_cross_entropy_with_logits_target_backward(m, g, self, target, weight, pos_weight, reduction):
    if pos_weight is None:
        out = -self
    else:
        out = _log_sigmoid(m, -self) - _log_sigmoid(m, self) * pos_weight
    out = out * reduced_grad(g, self, reduction)
    return out if weight is None else out * weight


# -- padding ------------------------------------------------------------------------------------


def constant_pad_backward(m, g, pad, value, result_sym_sizes, out_key, in_key, self_sym_sizes):
    piece = g[out_key]
    if tuple(piece.shape) == self_sym_sizes:
        return piece
    return m.index_grad(piece, self_sym_sizes, in_key, True)


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


def amax_backward(m, g, self, result, dim, keepdim):
    """The gradient shared evenly by the elements equal to the extreme (torch's scale_grad_by_count)."""
    mask = self == unreduce(result, self.shape, dim, keepdim)
    return unreduce(g, self.shape, dim, keepdim) / m.sum(mask, dim, True) * mask
