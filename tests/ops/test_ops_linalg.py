"""Linear algebra: the matrix products, einsum and friends, and engine.linalg's matrix functions.

Each op's values, node names, first and second derivatives and torch's values and gradients are
the registry's (tests/ops/linalg.py); here, what those checks cannot see. Decompositions are
checked through functions of them that do not depend on the signs LAPACK picks for singular
vectors and eigenvectors (numpy's and torch's LAPACK may pick differently); the formulas'
handling of sign-dependent losses is checked against torch's with the signs aligned.
"""

import math
import warnings

import numpy as np
import pytest
from opcheck import check_error, check_op, make_arrays

import engine
from engine import warn_once
from engine.ops.linalg import functions as linalg_ops
from ops.support import spd, sym

try:
    import torch
except ImportError:
    torch = None

INF = math.inf


def case(name, fn, node, *shapes, domain="r"):
    """One op to check: `fn(lib, *tensors)` on tensors of `shapes` (values of `domain`), its node."""
    return pytest.param(fn, [(domain, shape) for shape in shapes], node, id=name)


# --------------------------------------------------------------------------- products


def test_addmm_saves_what_torch_saves():
    s, a, b = (engine.randn(*shape, requires_grad=True) for shape in ((2, 3), (2, 4), (4, 3)))
    node = engine.addmm(s, a, b, beta=2, alpha=3).grad_fn
    assert (node._saved_beta, node._saved_alpha) == (2, 3)
    assert node._saved_mat1 is not None and node._saved_mat2 is not None


# ------------------------------------------------------------------------- determinants


def test_slogdet_returns_torchs_named_tuples():
    x = engine.randn(3, 3)
    assert type(engine.linalg.slogdet(x)).__name__ == "linalg_slogdet"
    assert type(engine.slogdet(x)).__name__ == "slogdet"
    sign, logabsdet = engine.linalg.slogdet(x)
    assert sign.grad_fn is None and logabsdet.dtype is engine.float32


SINGULAR = [[1.0, 2.0], [2.0, 4.0]]


@pytest.mark.torch_parity
@pytest.mark.parametrize("create_graph", [False, True])
def test_det_of_a_singular_matrix_has_torchs_gradient(create_graph):
    """Without create_graph torch's gradient at an exactly singular matrix is zero; with it, the adjugate."""
    grads = []
    for lib in (engine, torch):
        a = lib.tensor(SINGULAR, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.linalg.det(a), a, create_graph=create_graph)
        grads.append(g.detach().numpy())
        if create_graph:
            (gg,) = lib.autograd.grad(g.sum(), a)
            grads.append(gg.numpy())
    np.testing.assert_allclose(grads[0], grads[len(grads) // 2], atol=1e-12)
    if create_graph:
        np.testing.assert_allclose(grads[1], grads[3], atol=1e-12)


@pytest.mark.torch_parity
def test_det_of_a_batch_with_one_singular_matrix_under_create_graph():
    arrays = np.stack([np.array(SINGULAR), np.array([[2.0, 1.0], [0.5, 3.0]])])
    grads = []
    for lib in (engine, torch):
        a = lib.tensor(arrays, requires_grad=True)
        (g,) = lib.autograd.grad(lib.linalg.det(a).sum(), a, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), a)
        grads.append((g.detach().numpy(), gg.numpy()))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.torch_parity
def test_slogdet_of_a_singular_matrix_gives_lapacks_infinities():
    results = []
    for lib in (engine, torch):
        a = lib.tensor(SINGULAR, dtype=lib.float64, requires_grad=True)
        sign, logabsdet = lib.linalg.slogdet(a)
        (g,) = lib.autograd.grad(logabsdet, a)
        results.append([sign.item(), logabsdet.item(), g.numpy()])
    assert results[0][:2] == results[1][:2] == [0.0, -INF]
    np.testing.assert_array_equal(results[0][2], results[1][2])


def test_logdet_of_a_negative_determinant_is_nan():
    x = engine.tensor([[0.0, 1.0], [1.0, 0.0]], requires_grad=True)
    out = engine.logdet(x)
    assert math.isnan(out.item()) and out.grad_fn.name() == "WhereBackward0"
    out.backward()
    assert not x.grad.any()  # where's gradient goes to the nan branch


# --------------------------------------------------------------------- inverse, solve


@pytest.mark.parametrize("requires", [(True, False), (False, True)], ids=["A", "B"])
def test_solve_gives_a_gradient_to_whichever_input_requires_it(requires):
    arrays = make_arrays([("r", (3, 3)), ("r", (3, 2))])
    a, b = (engine.tensor(x, requires_grad=r) for x, r in zip(arrays, requires))
    out = engine.linalg.solve(a, b)
    out.sum().backward()
    assert (a.grad is not None, b.grad is not None) == requires


# ------------------------------------------------------------------------ factorizations


def test_cholesky_reads_one_triangle():
    a = engine.tensor([[4.0, 2.0], [1.0, 3.0]])
    np.testing.assert_allclose(engine.linalg.cholesky(a).numpy(), [[2.0, 0.0], [0.5, math.sqrt(2.75)]])
    np.testing.assert_allclose(
        engine.linalg.cholesky(a, upper=True).numpy(), [[2.0, 1.0], [0.0, math.sqrt(2.0)]]
    )


@pytest.mark.torch_parity
@pytest.mark.parametrize(
    "shape, full", [((4, 3), False), ((3, 5), False), ((2, 3, 3), False), ((4, 3), True), ((3, 4), True)]
)
def test_svd_of_a_sign_dependent_loss_is_torchs_formula(shape, full):
    """A loss that depends on the singular vectors' signs: torch's gradient, once LAPACK's signs are aligned.

    With U = U_t D and Vh = D Vh_t (D diagonal signs), the engine's loss sum(W * U) is torch's
    sum((W D) * U_t); svd_backward is equivariant under D, so the two gradients must agree.
    """
    (a,) = make_arrays([("r", shape)], seed=3)
    rng = np.random.default_rng(1)
    ours = engine.linalg.svd(engine.tensor(a, requires_grad=True), full_matrices=full)
    theirs = torch.linalg.svd(torch.tensor(a, requires_grad=True), full_matrices=full)
    k = ours.S.shape[-1]
    signs = np.sign(
        np.einsum("...ik,...ik->...k", ours.U.detach().numpy()[..., :k], theirs.U.detach().numpy()[..., :k])
    )
    w_u, w_s, w_vh = (rng.standard_normal(tuple(t.shape)) for t in theirs)
    d_u = np.ones(w_u.shape[:-2] + (1, w_u.shape[-1]))
    d_u[..., 0, :k] = signs
    d_vh = np.ones(w_vh.shape[:-1] + (1,))
    d_vh[..., :k, 0] = signs
    for out, (wu, wvh) in ((ours, (w_u, w_vh)), (theirs, (w_u * d_u, w_vh * d_vh))):
        lib = engine if out is ours else torch
        loss = (
            (out.U * lib.tensor(wu)).sum()
            + (out.S * lib.tensor(w_s)).sum()
            + (out.Vh * lib.tensor(wvh)).sum()
        )
        loss.backward()
    np.testing.assert_allclose(
        ours.U.grad_fn.next_functions[0][0].variable.grad.numpy(),
        theirs.U.grad_fn.next_functions[0][0].variable.grad.numpy(),
        rtol=1e-8,
        atol=1e-10,
    )


@pytest.mark.torch_parity
@pytest.mark.parametrize("gradients", ["vectors", "both"])
def test_eigh_of_a_sign_dependent_loss_is_torchs_formula(gradients):
    (a,) = make_arrays([("r", (2, 4, 4))], seed=5)
    a = a + np.swapaxes(a, -1, -2)
    rng = np.random.default_rng(2)
    x_e, x_t = engine.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ours, theirs = engine.linalg.eigh(x_e), torch.linalg.eigh(x_t)
    signs = np.sign(
        np.einsum(
            "...ik,...ik->...k", ours.eigenvectors.detach().numpy(), theirs.eigenvectors.detach().numpy()
        )
    )
    w_l, w_v = rng.standard_normal((2, 4)), rng.standard_normal((2, 4, 4))
    loss_e = (ours.eigenvectors * engine.tensor(w_v)).sum()
    loss_t = (theirs.eigenvectors * torch.tensor(w_v * signs[..., None, :])).sum()
    if gradients == "both":
        loss_e = loss_e + (ours.eigenvalues * engine.tensor(w_l)).sum()
        loss_t = loss_t + (theirs.eigenvalues * torch.tensor(w_l)).sum()
    loss_e.backward()
    loss_t.backward()
    np.testing.assert_allclose(x_e.grad.numpy(), x_t.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_a_decomposition_is_one_node_of_several_outputs():
    x = engine.randn(4, 3, dtype=engine.float64, requires_grad=True)
    U, S, Vh = engine.linalg.svd(x, full_matrices=False)
    assert U.grad_fn is S.grad_fn is Vh.grad_fn
    assert [t.output_nr for t in (U, S, Vh)] == [0, 1, 2]
    node = U.grad_fn
    assert node._saved_full_matrices is False
    np.testing.assert_array_equal(node._saved_U.detach().numpy(), U.detach().numpy())
    assert node._saved_S.grad_fn is node
    Q, R = engine.linalg.qr(x)
    assert Q.grad_fn is R.grad_fn and Q.grad_fn._saved_mode == "reduced"
    L, V = engine.linalg.eigh(x[:3] @ x[:3].mT)
    assert L.grad_fn.name() == "LinalgEighBackward0" and V.output_nr == 1


def test_an_output_changed_in_place_before_backward_is_caught():
    def fn(lib):
        U, S, Vh = lib.linalg.svd(lib.randn(3, 3, dtype=lib.float64, requires_grad=True))
        S.mul_(2)
        (U.sum() + S.sum()).backward()

    check_error(
        fn, "[engine.DoubleTensor [3]], which is output 1 of LinalgSvd, is at version 1; expected version 0"
    )


def test_a_decomposition_frees_its_saved_outputs_after_backward():
    x = engine.randn(3, 3, dtype=engine.float64, requires_grad=True)
    Q, R = engine.linalg.qr(x)
    (Q.sum() + R.sum()).backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        R.sum().backward()


@pytest.mark.torch_parity
@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: lib.linalg.qr(x, mode="r")[1].sum(),
        lambda lib, x: lib.linalg.qr(x, mode="complete")[0].sum(),
    ],
    ids=["mode-r", "complete-tall"],
)
def test_qr_refuses_the_backward_torch_refuses(fn):
    check_error(lambda lib: fn(lib, lib.randn(4, 3, requires_grad=True)).backward())


def test_svd_without_grad_computes_no_vectors_for_svdvals():
    x = engine.randn(4, 3)
    assert engine.linalg.svdvals(x).grad_fn is None
    U, S, V = engine.svd(x, compute_uv=False)
    assert U.shape == (4, 4) and V.shape == (3, 3) and not U.any() and S.shape == (3,)


def test_float32_stays_float32():
    x = engine.randn(3, 3)
    a = x @ x.mT + 3 * engine.eye(3)
    outs = [
        engine.linalg.det(x),
        engine.linalg.inv(x),
        engine.linalg.cholesky(a),
        engine.linalg.svdvals(x),
        *engine.linalg.qr(x),
        *engine.linalg.eigh(a),
        *engine.linalg.slogdet(x),
        engine.linalg.matrix_norm(x, 2),
    ]
    assert all(o.dtype is engine.float32 for o in outs)


# ------------------------------------------------------------------------------- norms


@pytest.mark.parametrize("ord", [1, -1, INF])
def test_matrix_norm_shares_the_gradient_of_tied_extremes(ord):
    x = engine.tensor([[1.0, -2.0], [-1.0, 0.0]], requires_grad=True)
    engine.linalg.matrix_norm(x, ord).backward()  # both columns sum to 2 (rows: 3 and 1)
    if ord != INF:
        np.testing.assert_allclose(x.grad.numpy(), [[0.5, -0.5], [-0.5, 0.0]])
    if torch is not None:
        t = torch.tensor([[1.0, -2.0], [-1.0, 0.0]], requires_grad=True)
        torch.linalg.matrix_norm(t, ord).backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


# ------------------------------------------------------------------------------ errors

LONG, HALF = "int64", "float16"


def _t(lib, shape, dtype="float32", fill=1.0):
    return lib.full(shape, fill, dtype=getattr(lib, dtype))


# fmt: off
ERRORS = [
    ("addmm-self-dtype", lambda lib: lib.addmm(_t(lib, (2, 2), "float64"), _t(lib, (2, 3)), _t(lib, (3, 2)))),
    ("addmm-mat1-dtype", lambda lib: lib.addmm(_t(lib, (2, 2)), _t(lib, (2, 3), "float64"), _t(lib, (3, 2)))),
    ("addmm-mat2-dtype", lambda lib: lib.addmm(_t(lib, (2, 2)), _t(lib, (2, 3)), _t(lib, (3, 2), "float64"))),
    ("addmm-1d", lambda lib: lib.addmm(_t(lib, (2, 2)), _t(lib, (3,)), _t(lib, (3, 2)))),
    ("addmm-shapes", lambda lib: lib.addmm(_t(lib, (2, 2)), _t(lib, (2, 3)), _t(lib, (4, 2)))),
    ("addmm-self", lambda lib: lib.addmm(_t(lib, (3,)), _t(lib, (2, 3)), _t(lib, (3, 2)))),
    ("addmv-dims", lambda lib: lib.addmv(_t(lib, (2,)), _t(lib, (2, 3)), _t(lib, (3, 1)))),
    ("addmv-sizes", lambda lib: lib.addmv(_t(lib, (3,)), _t(lib, (2, 3)), _t(lib, (3,)))),
    ("addmv-dtype", lambda lib: lib.addmv(_t(lib, (2,)), _t(lib, (2, 3), "float64"), _t(lib, (3,)))),
    ("addr-dims", lambda lib: lib.addr(_t(lib, (2, 3)), _t(lib, (2, 1)), _t(lib, (3,)))),
    ("addr-self", lambda lib: lib.addr(_t(lib, (2, 4)), _t(lib, (2,)), _t(lib, (3,)))),
    ("addr-int-alpha",
     lambda lib: lib.addr(_t(lib, (2, 3), LONG), _t(lib, (2,), LONG), _t(lib, (3,), LONG), alpha=0.5)),
    ("addr-bool-beta", lambda lib: lib.addr(_t(lib, (2, 3)), _t(lib, (2,)), _t(lib, (3,)), beta=True)),
    ("bmm-2d", lambda lib: lib.bmm(_t(lib, (2, 3)), _t(lib, (3, 2)))),
    ("bmm-sizes", lambda lib: lib.bmm(_t(lib, (2, 2, 3)), _t(lib, (3, 3, 2)))),
    ("bmm-dtype", lambda lib: lib.bmm(_t(lib, (2, 2, 3)), _t(lib, (2, 3, 2), "float64"))),
    ("baddbmm-dtype",
     lambda lib: lib.baddbmm(_t(lib, (2, 2, 2), "float64"), _t(lib, (2, 2, 3)), _t(lib, (2, 3, 2)))),
    ("baddbmm-self", lambda lib: lib.baddbmm(_t(lib, (2, 3)), _t(lib, (3, 2, 3)), _t(lib, (3, 3, 2)))),
    ("addbmm-batches", lambda lib: lib.addbmm(_t(lib, (2, 2)), _t(lib, (3, 2, 3)), _t(lib, (2, 3, 2)))),
    ("addbmm-sizes", lambda lib: lib.addbmm(_t(lib, (2, 2)), _t(lib, (3, 2, 3)), _t(lib, (3, 4, 2)))),
    ("addbmm-dtype",
     lambda lib: lib.addbmm(_t(lib, (2, 2), "float64"), _t(lib, (3, 2, 3)), _t(lib, (3, 3, 2)))),
    ("outer-self", lambda lib: lib.outer(_t(lib, (2, 2)), _t(lib, (3,)))),
    ("ger-vec2", lambda lib: lib.ger(_t(lib, (2,)), _t(lib, ()))),
    ("inner-sizes", lambda lib: lib.inner(_t(lib, (2, 3)), _t(lib, (4,)))),
    ("inner-dtype", lambda lib: lib.inner(_t(lib, (3,), LONG), _t(lib, (3,)))),
    ("tensordot-negative", lambda lib: lib.tensordot(_t(lib, (3, 2)), _t(lib, (2, 4)), dims=-1)),
    ("tensordot-too-many", lambda lib: lib.tensordot(_t(lib, (3, 2)), _t(lib, (2, 4)), dims=3)),
    ("tensordot-lengths", lambda lib: lib.tensordot(_t(lib, (3, 2)), _t(lib, (2, 4)), dims=([1, 0], [0]))),
    ("tensordot-sizes", lambda lib: lib.tensordot(_t(lib, (3, 2)), _t(lib, (3, 4)), 1)),
    ("tensordot-repeated",
     lambda lib: lib.tensordot(_t(lib, (3, 3)), _t(lib, (3, 3)), dims=([0, 0], [0, 1]))),
    ("tensordot-dtype", lambda lib: lib.tensordot(_t(lib, (3,), "float64"), _t(lib, (3,)), 1)),
    ("multi_dot-one", lambda lib: lib.linalg.multi_dot([_t(lib, (2, 2))])),
    ("multi_dot-first", lambda lib: lib.linalg.multi_dot([_t(lib, (2, 2, 2)), _t(lib, (2, 2))])),
    ("multi_dot-last", lambda lib: lib.linalg.multi_dot([_t(lib, (2, 2)), _t(lib, (2, 2, 2))])),
    ("multi_dot-middle", lambda lib: lib.linalg.multi_dot([_t(lib, (2, 2)), _t(lib, (2,)), _t(lib, (2, 2))])),
    ("multi_dot-dtype", lambda lib: lib.linalg.multi_dot([_t(lib, (2, 2)), _t(lib, (2, 2), "float64")])),
    ("multi_dot-shapes",
     lambda lib: lib.linalg.multi_dot([_t(lib, (2, 3)), _t(lib, (3, 2)), _t(lib, (4, 2))])),
    ("vecdot-int", lambda lib: lib.linalg.vecdot(_t(lib, (3,), LONG), _t(lib, (3,)))),
    ("vecdot-dtype", lambda lib: lib.linalg.vecdot(_t(lib, (3,)), _t(lib, (3,), LONG))),
    ("cross-length", lambda lib: lib.linalg.cross(_t(lib, (2, 2)), _t(lib, (2, 2)))),
    ("cross-ndim", lambda lib: lib.linalg.cross(_t(lib, (2, 3)), _t(lib, (3,)))),
    ("cross-dtype", lambda lib: lib.linalg.cross(_t(lib, (3,)), _t(lib, (3,), "float64"))),
    ("cross-no-3", lambda lib: lib.cross(_t(lib, (2, 2)), _t(lib, (2, 2)))),
    ("einsum-fewer", lambda lib: lib.einsum("ij,jk", _t(lib, (2, 2)))),
    ("einsum-more", lambda lib: lib.einsum("ij", _t(lib, (2, 2)), _t(lib, (2, 2)))),
    ("einsum-ndim", lambda lib: lib.einsum("ijk", _t(lib, (2, 2)))),
    ("einsum-ndim-ellipsis", lambda lib: lib.einsum("ijk...", _t(lib, (2, 2)))),
    ("einsum-subscript", lambda lib: lib.einsum("i1", _t(lib, (2, 2)))),
    ("einsum-output-subscript", lambda lib: lib.einsum("ij->i1", _t(lib, (2, 2)))),
    ("einsum-output-twice", lambda lib: lib.einsum("ij->ii", _t(lib, (2, 2)))),
    ("einsum-output-unknown", lambda lib: lib.einsum("ij->k", _t(lib, (2, 2)))),
    ("einsum-sizes", lambda lib: lib.einsum("ij,jk->ik", _t(lib, (2, 3)), _t(lib, (4, 2)))),
    ("einsum-diagonal-sizes", lambda lib: lib.einsum("ii->i", _t(lib, (2, 3)))),
    ("einsum-ellipsis-sizes", lambda lib: lib.einsum("...i,...i->...", _t(lib, (2, 3)), _t(lib, (4, 3)))),
    ("einsum-dots", lambda lib: lib.einsum("i..j", _t(lib, (2, 3)))),
    ("einsum-two-ellipses", lambda lib: lib.einsum("...i...", _t(lib, (2, 3)))),
    ("einsum-output-dots", lambda lib: lib.einsum("...i->..", _t(lib, (2, 3)))),
    ("einsum-output-two-ellipses", lambda lib: lib.einsum("...i->......", _t(lib, (2, 3)))),
    ("einsum-dtype", lambda lib: lib.einsum("ij,jk->ik", _t(lib, (2, 3)), _t(lib, (3, 2), "float64"))),
    ("det-1d", lambda lib: lib.linalg.det(_t(lib, (3,)))),
    ("det-square", lambda lib: lib.det(_t(lib, (2, 3), LONG))),
    ("det-int", lambda lib: lib.linalg.det(_t(lib, (2, 2), LONG))),
    ("det-bool", lambda lib: lib.linalg.det(_t(lib, (2, 2), "bool"))),
    ("slogdet-half", lambda lib: lib.linalg.slogdet(_t(lib, (2, 2), HALF))),
    ("logdet-square", lambda lib: lib.logdet(_t(lib, (2, 3)))),
    ("logdet-int", lambda lib: lib.logdet(_t(lib, (2, 2), LONG))),
    ("inv-0d", lambda lib: lib.linalg.inv(_t(lib, ()))),
    ("inv-square", lambda lib: lib.inverse(_t(lib, (2, 3)))),
    ("inv-half", lambda lib: lib.linalg.inv(_t(lib, (2, 2), HALF))),
    ("inv-int", lambda lib: _t(lib, (2, 2), LONG).inverse()),
    ("solve-int", lambda lib: lib.linalg.solve(_t(lib, (2, 3), LONG), _t(lib, (2,), LONG))),
    ("solve-dtype", lambda lib: lib.linalg.solve(_t(lib, (3, 3)), _t(lib, (3,), "float64"))),
    ("solve-B-0d", lambda lib: lib.linalg.solve(_t(lib, (3, 3)), _t(lib, ()))),
    ("solve-square", lambda lib: lib.linalg.solve(_t(lib, (2, 3)), _t(lib, (2,)))),
    ("solve-shapes", lambda lib: lib.linalg.solve(_t(lib, (3, 3)), _t(lib, (2, 2)))),
    ("solve-vector-shapes", lambda lib: lib.linalg.solve(_t(lib, (3, 3)), _t(lib, (2,)))),
    ("solve-right-vector", lambda lib: lib.linalg.solve(_t(lib, (3, 3)), _t(lib, (3,)), left=False)),
    ("cholesky-square", lambda lib: lib.linalg.cholesky(_t(lib, (2, 3)))),
    ("cholesky-int", lambda lib: lib.linalg.cholesky(_t(lib, (2, 2), LONG))),
    ("qr-1d", lambda lib: lib.linalg.qr(_t(lib, (3,)))),
    ("qr-int", lambda lib: lib.linalg.qr(_t(lib, (3, 2), LONG))),
    ("qr-mode", lambda lib: lib.linalg.qr(_t(lib, (3, 3)), mode="bad")),
    ("qr-mode-int", lambda lib: lib.linalg.qr(_t(lib, (3, 3), LONG), mode="bad")),
    ("svd-0d", lambda lib: lib.linalg.svd(_t(lib, ()))),
    ("svd-int", lambda lib: lib.linalg.svd(_t(lib, (2, 3), LONG))),
    ("svdvals-bool", lambda lib: lib.linalg.svdvals(_t(lib, (2, 3), "bool"))),
    ("svd-driver", lambda lib: lib.linalg.svd(_t(lib, (2, 2)), driver="gesvd")),
    ("torch.svd-1d", lambda lib: lib.svd(_t(lib, (3,)))),
    ("eigh-square", lambda lib: lib.linalg.eigh(_t(lib, (2, 3)))),
    ("eigh-UPLO", lambda lib: lib.linalg.eigh(_t(lib, (2, 2), LONG), UPLO="X")),
    ("eigvalsh-1d", lambda lib: lib.linalg.eigvalsh(_t(lib, (2,)))),
    ("matrix_norm-1d", lambda lib: lib.linalg.matrix_norm(_t(lib, (3,)))),
    ("matrix_norm-dim", lambda lib: lib.linalg.matrix_norm(_t(lib, (3, 3)), dim=(0, 1, 1))),
    ("matrix_norm-same-dims", lambda lib: lib.linalg.matrix_norm(_t(lib, (3, 3)), dim=(0, -2))),
    ("matrix_norm-ord", lambda lib: lib.linalg.matrix_norm(_t(lib, (3, 3)), ord=3)),
    ("matrix_norm-ord-0", lambda lib: lib.linalg.matrix_norm(_t(lib, (3, 3)), 0)),
    ("matrix_norm-ord-str", lambda lib: lib.linalg.matrix_norm(_t(lib, (3, 3)), ord="foo")),
    ("matrix_norm-int", lambda lib: lib.linalg.matrix_norm(_t(lib, (3, 3), LONG), 1)),
    ("matrix_norm-half-nuc", lambda lib: lib.linalg.matrix_norm(_t(lib, (3, 3), HALF), "nuc")),
    ("matrix_norm-half-2", lambda lib: lib.linalg.matrix_norm(_t(lib, (3, 3), HALF), -2)),
    ("matrix_norm-dtype", lambda lib: lib.linalg.matrix_norm(_t(lib, (3, 3), "float64"), dtype=lib.float32)),
    ("matrix_norm-int-dtype", lambda lib: lib.linalg.matrix_norm(_t(lib, (3, 3)), dtype=lib.int64)),
    ("inv-singular", lambda lib: lib.linalg.inv(lib.tensor(SINGULAR))),
    ("inv-singular-first-pivot", lambda lib: lib.linalg.inv(lib.zeros(3, 3))),
    ("inv-singular-batch", lambda lib: lib.inverse(lib.stack([lib.eye(2), lib.tensor(SINGULAR)]))),
    ("solve-singular", lambda lib: lib.linalg.solve(lib.tensor(SINGULAR), lib.ones(2))),
    ("solve-singular-batch",
     lambda lib: lib.linalg.solve(lib.stack([lib.eye(2), lib.tensor(SINGULAR)]), lib.ones(2, 2))),
    ("cholesky-indefinite", lambda lib: lib.linalg.cholesky(lib.tensor([[1.0, 2.0], [2.0, 1.0]]))),
    ("cholesky-indefinite-batch",
     lambda lib: lib.linalg.cholesky(lib.stack([lib.eye(3), lib.tensor([[1.0, 0, 0], [0, 1, 0], [0, 0, -1]])]))),
    ("cholesky-upper-indefinite",
     lambda lib: lib.linalg.cholesky(lib.tensor([[1.0, 0.0], [3.0, -1.0]]), upper=True)),
]
# fmt: on


@pytest.mark.filterwarnings("ignore:Using (torch|engine).cross without specifying the dim")
@pytest.mark.parametrize("name, fn", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_are_torchs(name, fn):
    check_error(fn)


# fmt: off
NOT_IMPLEMENTED = [
    ("det-half", lambda lib: lib.linalg.det(_t(lib, (2, 2), HALF))),
    ("solve-half", lambda lib: lib.linalg.solve(_t(lib, (2, 2), HALF), _t(lib, (2,), HALF))),
    ("cholesky-half", lambda lib: lib.linalg.cholesky(_t(lib, (2, 2), HALF))),
    ("qr-half", lambda lib: lib.linalg.qr(_t(lib, (2, 3), HALF))),
    ("svdvals-half", lambda lib: lib.linalg.svdvals(_t(lib, (2, 2), HALF))),
    ("eigh-int", lambda lib: lib.linalg.eigh(_t(lib, (2, 2), LONG))),
    ("eigvalsh-half", lambda lib: lib.linalg.eigvalsh(_t(lib, (2, 2), HALF))),
]
# fmt: on


@pytest.mark.parametrize("name, fn", NOT_IMPLEMENTED, ids=[c[0] for c in NOT_IMPLEMENTED])
def test_dtypes_without_a_kernel_are_not_implemented(name, fn):
    check_error(fn, exception=NotImplementedError)


def test_einsum_argument_errors_are_value_errors():
    check_error(lambda lib: lib.einsum("ij"), exception=ValueError)
    check_error(lambda lib: lib.einsum(lib.ones(2), [60]), exception=ValueError)


def test_singular_matrices_raise_linalg_error():
    with pytest.raises(engine.linalg.LinAlgError, match="The diagonal element 2 is zero"):
        engine.linalg.inv(engine.tensor(SINGULAR))
    assert issubclass(engine.linalg.LinAlgError, RuntimeError)


DEPRECATED_FORMS = pytest.mark.parametrize(
    "call, message",
    [
        (lambda: engine.cholesky(spd(engine, engine.randn(2, 2))), linalg_ops.CHOLESKY_DEPRECATION),
        (lambda: engine.qr(engine.randn(2, 2)), linalg_ops.QR_DEPRECATION),
        (lambda: engine.cross(engine.randn(3, 2), engine.randn(3, 2)), linalg_ops.CROSS_DEPRECATION),
    ],
    ids=["cholesky", "qr", "cross"],
)


def _twice(call) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
        call()
    return [str(w.message) for w in caught]


@DEPRECATED_FORMS
def test_deprecated_forms_warn_once(monkeypatch, call, message):
    monkeypatch.setattr(warn_once, "_given", set())
    assert _twice(call) == [message]
    assert message.startswith("engine.") or message.startswith("Using engine.cross")


@DEPRECATED_FORMS
def test_deprecated_forms_warn_every_time_under_set_warn_always(call, message):
    engine.set_warn_always(True)
    try:
        assert _twice(call) == [message, message]  # torch's TORCH_WARN_ONCE, as torch.set_warn_always asks
    finally:
        engine.set_warn_always(False)


def test_deprecated_forms_compute_what_torch_does():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_op(
            lambda lib, x: lib.cholesky(spd(lib, x), upper=True), [("r", (2, 3, 3))], node="CholeskyBackward0"
        )
        check_op(lambda lib, x: x.qr(some=False).R, [("r", (3, 3))], node="LinalgQrBackward0")
        check_op(
            lambda lib, a, b: lib.cross(a, b), [("r", (2, 3)), ("r", (2, 3))], node="LinalgCrossBackward0"
        )


# fmt: off
SECOND_ORDER = [
    case("det", lambda lib, x: lib.linalg.det(x), None, (3, 3)),
    case("slogdet", lambda lib, x: lib.linalg.slogdet(x)[1], None, (2, 3, 3)),
    case("inv", lambda lib, x: lib.linalg.inv(x), None, (3, 3)),
    case("solve", lambda lib, a, b: lib.linalg.solve(a, b), None, (3, 3), (3, 2)),
    case("solve-right", lambda lib, a, b: lib.linalg.solve(a, b, left=False), None, (3, 3), (2, 3)),
    case("cholesky-upper", lambda lib, x: lib.linalg.cholesky(spd(lib, x), upper=True), None, (2, 3, 3)),
    case("qr-Q", lambda lib, x: lib.linalg.qr(x)[0] ** 2, None, (4, 3)),
    case("qr-wide-R", lambda lib, x: lib.linalg.qr(x)[1] ** 2, None, (3, 5)),
    case("svd-U", lambda lib, x: lib.linalg.svd(x, full_matrices=False)[0] ** 2, None, (4, 3)),
    case("svd-Vh", lambda lib, x: lib.linalg.svd(x, full_matrices=False)[2] ** 2, None, (3, 4)),
    case("eigh-vectors", lambda lib, x: lib.linalg.eigh(sym(lib, x))[1] ** 2, None, (3, 3)),
    case("matrix_norm-2", lambda lib, x: lib.linalg.matrix_norm(x, 2), None, (3, 4)),
    case("addmm", lambda lib, s, a, b: lib.addmm(s, a, b, beta=0.5, alpha=2) ** 2, None, (2, 3), (2, 4), (4, 3)),
    case("einsum", lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b) ** 2, None, (2, 2, 3), (2, 3, 4)),
]
# fmt: on


def _hessian_vector(lib, fn, arrays):
    """d(<w, f(x)>)/dx with create_graph, then the derivative of its product with v: a Hessian-vector product."""
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *xs)
    w = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
    grads = lib.autograd.grad((out * w).sum(), xs, create_graph=True)
    vs = [lib.tensor(np.random.default_rng(2 + i).standard_normal(tuple(x.shape))) for i, x in enumerate(xs)]
    hvp = lib.autograd.grad(sum((g * v).sum() for g, v in zip(grads, vs)), xs)
    return [g.detach().numpy() for g in grads + hvp]


@pytest.mark.torch_parity
@pytest.mark.parametrize("fn, kinds, node", SECOND_ORDER)
def test_second_derivatives_are_torchs(fn, kinds, node):
    """Under create_graph the formulas run on Tensors: their own derivatives are torch's too."""
    arrays = make_arrays(kinds, seed=4)
    for ours, theirs in zip(_hessian_vector(engine, fn, arrays), _hessian_vector(torch, fn, arrays)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-11)


@pytest.mark.parametrize("ord", [2, -2, "nuc", 1, -1, math.inf, -math.inf, "fro", None])
def test_linalg_norm_of_a_matrix_takes_every_matrix_order(ord):
    check_op(lambda lib, a: lib.linalg.norm(a, ord), [("d", (3, 4))])
    check_op(lambda lib, a: lib.linalg.norm(a, ord, dim=(0, 2), keepdim=True), [("d", (3, 2, 4))])
