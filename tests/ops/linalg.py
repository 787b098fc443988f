"""Registry entries of linear algebra: matrix products, einsum, determinants, solves, factorizations
(through functions of them that do not depend on LAPACK's signs), matrix norms."""

from ops.opinfo import NUMPY, OpInfo, Sample
from ops.support import (
    R34,
    eigh_reconstruct,
    in_place_product,
    inf,
    matrix_norm,
    spd,
    svd_product,
    svd_projectors,
    svd_reconstruct,
    sym,
)

OPS = [
    OpInfo(
        "matmul",
        [
            Sample("1d_1d", lambda lib, x, y: x @ y, [("r", (4,)), ("r", (4,))], squared=True, ref=NUMPY),
            Sample("2d_1d", lambda lib, x, y: x @ y, [R34, ("r", (4,))], squared=True, ref=NUMPY),
            Sample("1d_2d", lambda lib, x, y: x @ y, [("r", (3,)), R34], squared=True, ref=NUMPY),
            Sample("2d_2d", lambda lib, x, y: x @ y, [R34, ("r", (4, 5))], squared=True, ref=NUMPY),
            Sample(
                "3d_3d",
                lambda lib, x, y: x @ y,
                [("r", (2, 3, 4)), ("r", (2, 4, 5))],
                squared=True,
                ref=NUMPY,
            ),
            Sample(
                "3d_2d",
                lambda lib, x, y: x @ y,
                [("r", (2, 3, 4)), ("r", (4, 5))],
                squared=True,
                ref=NUMPY,
            ),
            Sample(
                "2d_3d",
                lambda lib, x, y: x @ y,
                [R34, ("r", (2, 4, 5))],
                squared=True,
                ref=NUMPY,
            ),
            Sample(
                "bcast_batch",
                lambda lib, x, y: x @ y,
                [("r", (2, 1, 3, 4)), ("r", (3, 4, 2))],
                squared=True,
                ref=NUMPY,
            ),
            Sample(
                "1d_3d",
                lambda lib, x, y: x @ y,
                [("r", (4,)), ("r", (2, 4, 5))],
                squared=True,
                ref=NUMPY,
            ),
            Sample(
                "method",
                lambda lib, x, y: x.matmul(y),
                [R34, ("r", (4, 2))],
                ref=lambda x, y: x @ y,
                squared=True,
            ),
            Sample(
                "func",
                lambda lib, x, y: lib.matmul(x, y),
                [("r", (2, 3, 4)), ("r", (4,))],
                ref=lambda x, y: x @ y,
                squared=True,
            ),
            Sample("self", lambda lib, x: x @ x.t(), [R34], ref=lambda x: x @ x.T, squared=True),
        ],
    ),
    OpInfo(
        "mm",
        [
            Sample(
                "method",
                lambda lib, x, y: x.mm(y),
                [R34, ("r", (4, 2))],
                ref=lambda x, y: x @ y,
                squared=True,
            ),
            Sample(
                "func",
                lambda lib, x, y: lib.mm(x, y),
                [R34, ("r", (4, 2))],
                ref=lambda x, y: x @ y,
                squared=True,
            ),
        ],
    ),
    OpInfo(
        "addmm",
        [
            Sample(
                "",
                lambda lib, s, a, b: lib.addmm(s, a, b),
                [("r", (2, 3)), ("r", (2, 4)), ("r", (4, 3))],
                node="AddmmBackward0",
            ),
            Sample(
                "scaled",
                lambda lib, s, a, b: lib.addmm(s, a, b, beta=0.5, alpha=-2),
                [("r", (3,)), ("r", (2, 4)), ("r", (4, 3))],
                node="AddmmBackward0",
            ),
            Sample(
                "0d-self",
                lambda lib, s, a, b: lib.addmm(s, a, b, alpha=3),
                [("r", ()), ("r", (2, 4)), ("r", (4, 3))],
                node="AddmmBackward0",
            ),
            Sample(
                "beta0",
                lambda lib, s, a, b: lib.addmm(s, a, b, beta=0),
                [("r", (2, 3)), ("r", (2, 4)), ("r", (4, 3))],
                node="AddmmBackward0",
            ),
            Sample(
                "alpha0",
                lambda lib, s, a, b: lib.addmm(s, a, b, alpha=0),
                [("r", (2, 3)), ("r", (2, 4)), ("r", (4, 3))],
                node="AddmmBackward0",
            ),
            Sample(
                "keywords",
                lambda lib, s, a, b: lib.addmm(input=s, mat1=a, mat2=b),
                [("r", (1, 3)), ("r", (2, 4)), ("r", (4, 3))],
                node="AddmmBackward0",
            ),
            Sample(
                "method",
                lambda lib, s, a, b: s.addmm(a, b, beta=2),
                [("r", (2, 3)), ("r", (2, 4)), ("r", (4, 3))],
                node="AddmmBackward0",
            ),
            Sample(
                "",
                lambda lib, s, a, b: lib.addmm(s, a, b, beta=2, alpha=3),
                [("int", (2, 2)), ("int", (2, 3)), ("int", (3, 2))],
            ),
            Sample(
                "float-alpha",
                lambda lib, s, a, b: lib.addmm(s, a, b, alpha=0.5),
                [("int", (2, 2)), ("int", (2, 3)), ("int", (3, 2))],
            ),
        ],
    ),
    OpInfo(
        "addmv",
        [
            Sample(
                "",
                lambda lib, s, a, v: lib.addmv(s, a, v, beta=0.5, alpha=2),
                [("r", (2,)), ("r", (2, 4)), ("r", (4,))],
                node="AddmvBackward0",
            ),
            Sample(
                "0d-self",
                lambda lib, s, a, v: lib.addmv(s, a, v),
                [("r", ()), ("r", (2, 4)), ("r", (4,))],
                node="AddmvBackward0",
            ),
            Sample(
                "",
                lambda lib, s, a, v: lib.addmv(s, a, v),
                [("int", (2,)), ("int", (2, 3)), ("int", (3,))],
            ),
        ],
    ),
    OpInfo(
        "addr",
        [
            # torch's own addr backward refuses mixed dtypes: its values only
            Sample(
                "promotes",
                lambda lib, a, b: lib.addr(a.outer(a), a, b[:2]),
                [("int", (2,)), ("r", (3,))],
                grad=False,
            ),
            Sample(
                "",
                lambda lib, s, a, b: lib.addr(s, a, b, beta=0.5, alpha=2),
                [("r", (2, 3)), ("r", (2,)), ("r", (3,))],
                node="AddrBackward0",
            ),
            Sample(
                "broadcast",
                lambda lib, s, a, b: s.addr(a, b),
                [("r", (3,)), ("r", (2,)), ("r", (3,))],
                node="AddrBackward0",
            ),
            Sample(
                "0d-self",
                lambda lib, s, a, b: lib.addr(s, a, b, alpha=0.5),
                [("r", ()), ("r", (2,)), ("r", (3,))],
                node="AddrBackward0",
            ),
            Sample(
                "",
                lambda lib, s, a, b: lib.addr(s, a, b, alpha=2),
                [("int", (2, 3)), ("int", (2,)), ("int", (3,))],
            ),
        ],
    ),
    OpInfo(
        "baddbmm",
        [
            Sample(
                "",
                lambda lib, s, a, b: lib.baddbmm(s, a, b, beta=0.5, alpha=2),
                [("r", (2, 2, 3)), ("r", (2, 2, 4)), ("r", (2, 4, 3))],
                node="BaddbmmBackward0",
            ),
            Sample(
                "broadcast",
                lambda lib, s, a, b: s.baddbmm(a, b),
                [("r", (3,)), ("r", (2, 2, 4)), ("r", (2, 4, 3))],
                node="BaddbmmBackward0",
            ),
            Sample(
                "",
                lambda lib, s, a, b: lib.baddbmm(s, a, b),
                [("int", (2, 2, 2)), ("int", (2, 2, 3)), ("int", (2, 3, 2))],
            ),
        ],
    ),
    OpInfo(
        "addbmm",
        [
            Sample(
                "",
                lambda lib, s, a, b: lib.addbmm(s, a, b, beta=0.5, alpha=2),
                [("r", (2, 3)), ("r", (3, 2, 4)), ("r", (3, 4, 3))],
                node="AddbmmBackward0",
            ),
            Sample(
                "broadcast",
                lambda lib, s, a, b: s.addbmm(a, b),
                [("r", (1,)), ("r", (3, 2, 4)), ("r", (3, 4, 3))],
                node="AddbmmBackward0",
            ),
            Sample(
                "",
                lambda lib, s, a, b: lib.addbmm(s, a, b),
                [("int", (2, 2)), ("int", (3, 2, 3)), ("int", (3, 3, 2))],
            ),
        ],
    ),
    OpInfo(
        "bmm",
        [
            Sample(
                "",
                lambda lib, a, b: lib.bmm(a, b),
                [("r", (2, 2, 4)), ("r", (2, 4, 3))],
                node="BmmBackward0",
            ),
            Sample(
                "method",
                lambda lib, a, b: a.bmm(b),
                [("r", (1, 3, 4)), ("r", (1, 4, 1))],
                node="BmmBackward0",
            ),
            Sample("", lambda lib, a, b: lib.bmm(a, b), [("int", (2, 2, 3)), ("int", (2, 3, 2))]),
        ],
    ),
    OpInfo(
        "outer",
        [
            Sample("promotes", lambda lib, a, b: lib.outer(a, b), [("int", (2,)), ("r", (3,))]),
            Sample(
                "",
                lambda lib, a, b: lib.outer(a, b),
                [("r", (2,)), ("r", (3,))],
                node="MulBackward0",
            ),
            Sample("", lambda lib, a, b: lib.outer(a, b), [("int", (2,)), ("int", (3,))]),
        ],
    ),
    OpInfo(
        "ger",
        [
            Sample("", lambda lib, a, b: a.ger(b), [("r", (2,)), ("r", (3,))], node="MulBackward0"),
        ],
    ),
    OpInfo(
        "inner",
        [
            Sample(
                "1d",
                lambda lib, a, b: lib.inner(a, b),
                [("r", (3,)), ("r", (3,))],
                node="ViewBackward0",
            ),
            Sample(
                "2d",
                lambda lib, a, b: lib.inner(a, b),
                [("r", (2, 3)), ("r", (4, 3))],
                node="ViewBackward0",
            ),
            Sample(
                "3d-1d",
                lambda lib, a, b: a.inner(b),
                [("r", (2, 2, 3)), ("r", (3,))],
                node="ViewBackward0",
            ),
            Sample(
                "0d",
                lambda lib, a, b: lib.inner(a, b),
                [("r", ()), ("r", (2, 3))],
                node="MulBackward0",
            ),
        ],
    ),
    OpInfo(
        "kron",
        [
            Sample("promotes", lambda lib, a, b: lib.kron(a, b), [("int", (2,)), ("r", (3,))]),
            Sample(
                "",
                lambda lib, a, b: lib.kron(a, b),
                [("r", (2, 3)), ("r", (3, 2))],
                node="UnsafeViewBackward0",
            ),
            Sample(
                "ranks",
                lambda lib, a, b: a.kron(b),
                [("r", (2, 1, 2)), ("r", (3,))],
                node="UnsafeViewBackward0",
            ),
            Sample(
                "0d",
                lambda lib, a, b: lib.kron(a, b),
                [("r", ()), ("r", ())],
                node="UnsafeViewBackward0",
            ),
            Sample("", lambda lib, a, b: lib.kron(a, b), [("int", (2, 2)), ("int", (2,))]),
        ],
    ),
    OpInfo(
        "tensordot",
        [
            Sample(
                "int",
                lambda lib, a, b: lib.tensordot(a, b),
                [("r", (2, 3, 4)), ("r", (3, 4, 2))],
                node="ViewBackward0",
            ),
            Sample(
                "0",
                lambda lib, a, b: lib.tensordot(a, b, dims=0),
                [("r", (2,)), ("r", (3,))],
                node="ViewBackward0",
            ),
            Sample(
                "all",
                lambda lib, a, b: lib.tensordot(a, b, 2),
                [("r", (2, 3)), ("r", (2, 3))],
                node="ViewBackward0",
            ),
            Sample(
                "lists",
                lambda lib, a, b: lib.tensordot(a, b, dims=([0, -1], [2, 0])),
                [("r", (3, 2, 4)), ("r", (4, 5, 3))],
                node="ViewBackward0",
            ),
            Sample(
                "broadcast-dim",
                lambda lib, a, b: lib.tensordot(a, b, dims=([1], [0])),
                [("r", (3, 1)), ("r", (2, 4))],
                node="ViewBackward0",
            ),
            Sample(
                "tensor-dims",
                lambda lib, a, b: lib.tensordot(a, b, dims=lib.tensor([[1], [0]])),
                [("r", (3, 2)), ("r", (2, 4))],
                node="ViewBackward0",
            ),
            Sample("", lambda lib, a, b: lib.tensordot(a, b, 1), [("int", (2, 3)), ("int", (3, 2))]),
        ],
    ),
    OpInfo(
        "linalg.matmul",
        [
            Sample(
                "",
                lambda lib, a, b: lib.linalg.matmul(a, b),
                [("r", (2, 3, 4)), ("r", (4,))],
                node="UnsafeViewBackward0",
            ),
        ],
    ),
    OpInfo(
        "multi_dot",
        [
            Sample(
                "2",
                lambda lib, a, b: lib.linalg.multi_dot([a, b]),
                [("r", (2, 3)), ("r", (3, 4))],
                node="ViewBackward0",
            ),
            Sample(
                "3",
                lambda lib, a, b, c: lib.linalg.multi_dot((a, b, c)),
                [("r", (5, 2)), ("r", (2, 4)), ("r", (4, 3))],
                node="ViewBackward0",
            ),
            Sample(
                "4",
                lambda lib, a, b, c, d: lib.linalg.multi_dot([a, b, c, d]),
                [("r", (2, 3)), ("r", (3, 4)), ("r", (4, 5)), ("r", (5, 2))],
                node="ViewBackward0",
            ),
            Sample(
                "vectors",
                lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]),
                [("r", (3,)), ("r", (3, 4)), ("r", (4,))],
                node="ViewBackward0",
            ),
            Sample(
                "",
                lambda lib, a, b: lib.linalg.multi_dot([a, b]),
                [("int", (2, 3)), ("int", (3, 2))],
            ),
        ],
    ),
    OpInfo(
        "vecdot",
        [
            Sample(
                "",
                lambda lib, a, b: lib.linalg.vecdot(a, b),
                [("r", (2, 3)), ("r", (3,))],
                node="SumBackward1",
            ),
            Sample(
                "dim",
                lambda lib, a, b: lib.linalg.vecdot(a, b, dim=0),
                [("r", (3, 4)), ("r", (3, 4))],
                node="SumBackward1",
            ),
        ],
    ),
    OpInfo(
        "linalg.cross",
        [
            Sample(
                "",
                lambda lib, a, b: lib.linalg.cross(a, b),
                [("r", (2, 3)), ("r", (1, 3))],
                node="LinalgCrossBackward0",
            ),
            Sample(
                "dim",
                lambda lib, a, b: lib.linalg.cross(a, b, dim=-2),
                [("r", (3, 2)), ("r", (3, 2))],
                node="LinalgCrossBackward0",
            ),
        ],
    ),
    OpInfo(
        "cross",
        [
            Sample(
                "",
                lambda lib, a, b: lib.cross(a, b, dim=0),
                [("r", (3, 3)), ("r", (3, 1))],
                node="LinalgCrossBackward0",
            ),
            Sample(
                "method",
                lambda lib, a, b: a.cross(b, dim=1),
                [("r", (2, 3)), ("r", (2, 3))],
                node="LinalgCrossBackward0",
            ),
            Sample("", lambda lib, a, b: lib.linalg.cross(a, b), [("int", (2, 3)), ("int", (2, 3))]),
        ],
    ),
    OpInfo(
        "linalg.det",
        [
            Sample("", lambda lib, x: lib.linalg.det(x), [("r", (3, 3))], node="LinalgDetBackward0"),
        ],
    ),
    OpInfo(
        "det",
        [
            Sample(
                "batch",
                lambda lib, x: lib.det(x),
                [("r", (2, 3, 3))],
                node="LinalgDetBackward0",
            ),
            Sample("method", lambda lib, x: x.det(), [("r", (1, 1))], node="LinalgDetBackward0"),
        ],
    ),
    OpInfo(
        "slogdet",
        [
            Sample(
                "",
                lambda lib, x: lib.linalg.slogdet(x)[1],
                [("r", (3, 3))],
                node="LinalgSlogdetBackward0",
            ),
            Sample(
                "batch",
                lambda lib, x: lib.slogdet(x).logabsdet,
                [("r", (2, 3, 3))],
                node="LinalgSlogdetBackward0",
            ),
            Sample(
                "sign",
                lambda lib, x: x.slogdet().sign,
                [("r", (2, 3, 3))],
                node="LinalgSlogdetBackward0",
            ),
        ],
    ),
    OpInfo(
        "logdet",
        [
            Sample(
                "",
                lambda lib, x: lib.logdet(spd(lib, x)),
                [("r", (2, 3, 3))],
                node="WhereBackward0",
            ),
            Sample(
                "method",
                lambda lib, x: spd(lib, x).logdet(),
                [("r", (3, 3))],
                node="WhereBackward0",
            ),
        ],
    ),
    OpInfo(
        "linalg.inv",
        [
            Sample(
                "",
                lambda lib, x: lib.linalg.inv(x),
                [("r", (3, 3))],
                node="LinalgInvExBackward0",
            ),
        ],
    ),
    OpInfo(
        "inverse",
        [
            Sample(
                "batch",
                lambda lib, x: lib.inverse(x),
                [("r", (2, 3, 3))],
                node="LinalgInvExBackward0",
            ),
            Sample(
                "method",
                lambda lib, x: x.inverse(),
                [("r", (1, 1))],
                node="LinalgInvExBackward0",
            ),
        ],
    ),
    OpInfo(
        "solve",
        [
            Sample(
                "",
                lambda lib, a, b: lib.linalg.solve(a, b),
                [("r", (3, 3)), ("r", (3, 2))],
                node="LinalgSolveExBackward0",
            ),
            Sample(
                "vector",
                lambda lib, a, b: lib.linalg.solve(a, b),
                [("r", (3, 3)), ("r", (3,))],
                node="LinalgSolveExBackward0",
            ),
            Sample(
                "batch-vector",
                lambda lib, a, b: lib.linalg.solve(a, b),
                [("r", (2, 3, 3)), ("r", (2, 3))],
                node="LinalgSolveExBackward0",
            ),
            Sample(
                "broadcast-vector",
                lambda lib, a, b: lib.linalg.solve(a, b),
                [("r", (2, 3, 3)), ("r", (3,))],
                node="LinalgSolveExBackward0",
            ),
            Sample(
                "broadcast-A",
                lambda lib, a, b: lib.linalg.solve(a, b),
                [("r", (3, 3)), ("r", (2, 3, 1))],
                node="LinalgSolveExBackward0",
            ),
            Sample(
                "broadcast-B",
                lambda lib, a, b: lib.linalg.solve(a, b),
                [("r", (2, 1, 3, 3)), ("r", (3, 3, 2))],
                node="LinalgSolveExBackward0",
            ),
            Sample(
                "right",
                lambda lib, a, b: lib.linalg.solve(a, b, left=False),
                [("r", (3, 3)), ("r", (2, 3))],
                node="LinalgSolveExBackward0",
            ),
        ],
    ),
    OpInfo(
        "cholesky",
        [
            Sample(
                "",
                lambda lib, x: lib.linalg.cholesky(spd(lib, x)),
                [("r", (3, 3))],
                node="LinalgCholeskyExBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "upper-batch",
                lambda lib, x: lib.linalg.cholesky(spd(lib, x), upper=True),
                [("r", (2, 3, 3))],
                node="LinalgCholeskyExBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
        ],
    ),
    OpInfo(
        "qr",
        [
            Sample(
                "tall",
                lambda lib, x: lib.linalg.qr(x),
                [("r", (4, 3))],
                node="LinalgQrBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "R",
                lambda lib, x: lib.linalg.qr(x).R,
                [("r", (2, 3, 3))],
                node="LinalgQrBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "wide",
                lambda lib, x: lib.linalg.qr(x),
                [("r", (3, 5))],
                node="LinalgQrBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "wide-R",
                lambda lib, x: lib.linalg.qr(x)[1],
                [("r", (3, 5))],
                node="LinalgQrBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "complete-wide",
                lambda lib, x: lib.linalg.qr(x, mode="complete"),
                [("r", (2, 4))],
                node="LinalgQrBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "complete-square",
                lambda lib, x: lib.linalg.qr(x, "complete").R,
                [("r", (3, 3))],
                node="LinalgQrBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
        ],
    ),
    OpInfo(
        "svdvals",
        [
            Sample(
                "",
                lambda lib, x: lib.linalg.svdvals(x),
                [("r", (4, 3))],
                node="LinalgSvdBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "wide-batch",
                lambda lib, x: lib.linalg.svdvals(x),
                [("r", (2, 2, 4))],
                node="LinalgSvdBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
        ],
    ),
    OpInfo(
        "svd",
        [
            Sample(
                "S",
                lambda lib, x: lib.linalg.svd(x).S,
                [("r", (3, 3))],
                node="LinalgSvdBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "reconstruct",
                lambda lib, x: svd_reconstruct(lib.linalg.svd(x, False)),
                [("r", (4, 3))],
                node="MmBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "projectors",
                lambda lib, x: svd_projectors(lib.linalg.svd(x, False)),
                [("r", (2, 3, 3))],
                node="AddBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "UVh-tall",
                lambda lib, x: svd_product(lib.linalg.svd(x, full_matrices=False)),
                [("r", (4, 3))],
                node="MmBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "UVh-wide",
                lambda lib, x: svd_product(lib.linalg.svd(x, full_matrices=False)),
                [("r", (2, 4))],
                node="MmBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "full-tall",
                lambda lib, x: svd_product(lib.linalg.svd(x)),
                [("r", (4, 3))],
                node="MmBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "full-wide",
                lambda lib, x: svd_product(lib.linalg.svd(x)),
                [("r", (2, 3))],
                node="MmBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "torch-form",
                lambda lib, x: (lambda r: r.U @ r.V.mT)(lib.svd(x)),
                [("r", (4, 3))],
                node="MmBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "torch-form-S",
                lambda lib, x: lib.svd(x, compute_uv=False).S,
                [("r", (3, 4))],
                node="LinalgSvdBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
        ],
    ),
    OpInfo(
        "eigvalsh",
        [
            # A's lower triangle alone is read; torch's gradient is not projected on it: values only
            Sample("one-triangle", lambda lib, x: lib.linalg.eigvalsh(x), [("r", (3, 3))], grad=False),
            Sample(
                "",
                lambda lib, x: lib.linalg.eigvalsh(sym(lib, x)),
                [("r", (3, 3))],
                node="LinalgEighBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "U",
                lambda lib, x: lib.linalg.eigvalsh(sym(lib, x), UPLO="U"),
                [("r", (2, 3, 3))],
                node="LinalgEighBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
        ],
    ),
    OpInfo(
        "eigh",
        [
            Sample(
                "eigenvalues",
                lambda lib, x: lib.linalg.eigh(sym(lib, x)).eigenvalues,
                [("r", (3, 3))],
                node="LinalgEighBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "squares",
                lambda lib, x: lib.linalg.eigh(sym(lib, x)).eigenvectors ** 2,
                [("r", (2, 3, 3))],
                node="PowBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
            Sample(
                "reconstruct",
                lambda lib, x: eigh_reconstruct(lib.linalg.eigh(sym(lib, x), UPLO="U")),
                [("r", (3, 3))],
                node="MmBackward0",
                torch_tol=(1e-6, 1e-9),
            ),
        ],
    ),
    OpInfo(
        "einsum",
        [
            Sample(
                "operand-list",
                lambda lib, a, b: lib.einsum("ij,jk->ik", [a, b]),
                [("r", (2, 3)), ("r", (3, 4))],
                node="ViewBackward0",
            ),
            Sample(
                "sublist",
                lambda lib, a, b: lib.einsum(a, [0, 1], b, [1, 2], [0, 2]),
                [("r", (2, 3)), ("r", (3, 4))],
            ),
            Sample(
                "sublist-ellipsis",
                lambda lib, a, b: lib.einsum(a, [..., 0, 1], b, [1, 27]),
                [("r", (4, 2, 3)), ("r", (3, 2))],
            ),
            # an int and a float64 tensor: promoted as torch promotes them
            Sample("promotes", lambda lib, a, b: lib.einsum("i,j->ij", a, b), [("int", (2,)), ("r", (3,))]),
            Sample(
                "ij,jk->ik",
                lambda lib, *xs: lib.einsum("ij,jk->ik", *xs),
                [("r", (2, 3)), ("r", (3, 4))],
                node="ViewBackward0",
            ),
            Sample(
                "ij,jk",
                lambda lib, *xs: lib.einsum("ij,jk", *xs),
                [("r", (2, 3)), ("r", (3, 4))],
                node="ViewBackward0",
            ),
            Sample(
                "bij,bjk->bik",
                lambda lib, *xs: lib.einsum("bij,bjk->bik", *xs),
                [("r", (2, 2, 3)), ("r", (2, 3, 4))],
                node="ViewBackward0",
            ),
            Sample(
                "i,j->ij",
                lambda lib, *xs: lib.einsum("i,j->ij", *xs),
                [("r", (2,)), ("r", (3,))],
                node="MulBackward0",
            ),
            Sample(
                "i,i->",
                lambda lib, *xs: lib.einsum("i,i->", *xs),
                [("r", (3,)), ("r", (3,))],
                node="ViewBackward0",
            ),
            Sample(
                "ij,ij->ij",
                lambda lib, *xs: lib.einsum("ij,ij->ij", *xs),
                [("r", (2, 3)), ("r", (1, 3))],
                node="MulBackward0",
            ),
            Sample(
                "ij->ji",
                lambda lib, *xs: lib.einsum("ij->ji", *xs),
                [("r", (2, 3))],
                node="PermuteBackward0",
            ),
            Sample(
                "ij->",
                lambda lib, *xs: lib.einsum("ij->", *xs),
                [("r", (2, 3))],
                node="SumBackward1",
            ),
            Sample(
                "ii",
                lambda lib, *xs: lib.einsum("ii", *xs),
                [("r", (3, 3))],
                node="SumBackward1",
            ),
            Sample(
                "ii->i",
                lambda lib, *xs: lib.einsum("ii->i", *xs),
                [("r", (3, 3))],
                node="PermuteBackward0",
            ),
            Sample(
                "iij->ji",
                lambda lib, *xs: lib.einsum("iij->ji", *xs),
                [("r", (3, 3, 2))],
                node="PermuteBackward0",
            ),
            Sample(
                "bii,bj->bij",
                lambda lib, *xs: lib.einsum("bii,bj->bij", *xs),
                [("r", (2, 3, 3)), ("r", (2, 4))],
                node="MulBackward0",
            ),
            Sample(
                "...ij,...jk->...ik",
                lambda lib, *xs: lib.einsum("...ij,...jk->...ik", *xs),
                [("r", (5, 2, 3)), ("r", (3, 2))],
                node="ViewBackward0",
            ),
            Sample(
                "b...,b...->...",
                lambda lib, *xs: lib.einsum("b...,b...->...", *xs),
                [("r", (2, 3, 4)), ("r", (2, 1, 4))],
                node="ViewBackward0",
            ),
            Sample(
                "i...->...",
                lambda lib, *xs: lib.einsum("i...->...", *xs),
                [("r", (3, 2))],
                node="SumBackward1",
            ),
            Sample(
                "ij,jk,kl->il",
                lambda lib, *xs: lib.einsum("ij,jk,kl->il", *xs),
                [("r", (2, 3)), ("r", (3, 4)), ("r", (4, 2))],
                node="ViewBackward0",
            ),
            Sample(
                "bij,bjk,k->bi",
                lambda lib, *xs: lib.einsum("bij,bjk,k->bi", *xs),
                [("r", (2, 2, 3)), ("r", (2, 3, 4)), ("r", (4,))],
                node="ViewBackward0",
            ),
            Sample(
                "Ab,bC->AC",
                lambda lib, *xs: lib.einsum("Ab,bC->AC", *xs),
                [("r", (2, 3)), ("r", (3, 2))],
                node="ViewBackward0",
            ),
            Sample(
                " i j , j k -> i k ",
                lambda lib, *xs: lib.einsum(" i j , j k -> i k ", *xs),
                [("r", (2, 3)), ("r", (3, 4))],
                node="ViewBackward0",
            ),
            Sample(
                "->",
                lambda lib, *xs: lib.einsum("->", *xs),
                [("r", ())],
                node="PermuteBackward0",
            ),
            Sample(
                ",i->i",
                lambda lib, *xs: lib.einsum(",i->i", *xs),
                [("r", ()), ("r", (3,))],
                node="MulBackward0",
            ),
            Sample(
                "",
                lambda lib, a, b: lib.einsum("ij,jk->ik", a, b),
                [("int", (2, 3)), ("int", (3, 2))],
            ),
        ],
    ),
    OpInfo(
        "addmm_",
        [
            Sample(
                "",
                in_place_product("addmm_", beta=0.5, alpha=2),
                [("r", (2, 3)), ("r", (2, 4)), ("r", (4, 3))],
                node="AddmmBackward0",
            ),
        ],
    ),
    OpInfo(
        "addmv_",
        [
            Sample(
                "",
                in_place_product("addmv_", alpha=-1),
                [("r", (2,)), ("r", (2, 4)), ("r", (4,))],
                node="AddmvBackward0",
            ),
        ],
    ),
    OpInfo(
        "addr_",
        [
            Sample(
                "",
                in_place_product("addr_", beta=2),
                [("r", (2, 3)), ("r", (2,)), ("r", (3,))],
                node="AddrBackward0",
            ),
        ],
    ),
    OpInfo(
        "baddbmm_",
        [
            Sample(
                "",
                in_place_product("baddbmm_"),
                [("r", (2, 2, 3)), ("r", (2, 2, 4)), ("r", (2, 4, 3))],
                node="BaddbmmBackward0",
            ),
        ],
    ),
    OpInfo(
        "addbmm_",
        [
            Sample(
                "",
                in_place_product("addbmm_", alpha=0.5),
                [("r", (2, 3)), ("r", (3, 2, 4)), ("r", (3, 4, 3))],
                node="AddbmmBackward0",
            ),
        ],
    ),
    OpInfo(
        "linalg.matrix_norm",
        [
            Sample("fro", matrix_norm({}), [("d", (3, 4))], node="LinalgVectorNormBackward0"),
            Sample(
                "fro-keepdim",
                matrix_norm({"ord": "fro", "keepdim": True}),
                [("d", (2, 3, 4))],
                node="LinalgVectorNormBackward0",
            ),
            Sample("nuc", matrix_norm({"ord": "nuc"}), [("d", (3, 4))], node="SumBackward1"),
            Sample(
                "nuc-keepdim-dims",
                matrix_norm({"ord": "nuc", "dim": (0, 2), "keepdim": True}),
                [("d", (2, 3, 4))],
                node="PermuteBackward0",
            ),
            Sample("2", matrix_norm({"ord": 2}), [("d", (2, 3, 4))], node="AmaxBackward0"),
            Sample(
                "-2",
                matrix_norm({"ord": -2, "keepdim": True}),
                [("d", (2, 3, 4))],
                node="PermuteBackward0",
            ),
            Sample("1", matrix_norm({"ord": 1}), [("d", (3, 4))], node="AmaxBackward0"),
            Sample(
                "-1",
                matrix_norm({"ord": -1, "dim": (-1, 0)}),
                [("d", (3, 2, 4))],
                node="AminBackward0",
            ),
            Sample(
                "inf",
                matrix_norm({"ord": inf, "keepdim": True}),
                [("d", (2, 3, 4))],
                node="AmaxBackward0",
            ),
            Sample(
                "-inf",
                matrix_norm({"ord": -inf, "dim": (0, 2)}),
                [("d", (3, 4, 2))],
                node="AminBackward0",
            ),
            Sample(
                "dtype",
                matrix_norm({"ord": 1, "dtype": "float64"}),
                [("d", (3, 4))],
                node="AmaxBackward0",
            ),
        ],
    ),
]
