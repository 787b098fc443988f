"""The examples of PyTorch's "Jacobians, Hessians, hvp, vhp, and more: composing function transforms"
tutorial (intermediate/jacobians_hessians) that use vjp, jvp, jacrev, jacfwd and hessian, run on the
engine and on torch with the same inputs: the same results."""

import numpy as np
import pytest

import engine

pytestmark = pytest.mark.torch_parity

RNG = np.random.default_rng(5)
D, BATCH = 16, 8
WEIGHT, BIAS, X = RNG.standard_normal((D, D)), RNG.standard_normal(D), RNG.standard_normal(D)
XS, PRIMAL, TANGENT = RNG.standard_normal((BATCH, D)), RNG.standard_normal(64), RNG.standard_normal(64)


def tutorial(lib) -> dict:
    func, F = lib.func, lib.nn.functional
    weight, bias, x = lib.tensor(WEIGHT), lib.tensor(BIAS), lib.tensor(X)

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    def compute_jac(xp):
        _, vjp_fn = func.vjp(lambda x: predict(weight, bias, x), xp)
        unit_vectors = lib.eye(D, dtype=lib.float64)
        return lib.stack([vjp_fn(vec)[0] for vec in unit_vectors])

    xs = lib.tensor(XS)

    def predict_with_output_summed(weight, bias, x):
        return predict(weight, bias, x).sum(0)

    def f(x):
        return x.sin().sum()

    def hvp(f, primals, tangents):
        return func.jvp(func.grad(f), primals, tangents)[1]

    def hvp_revrev(f, primals, tangents):
        _, vjp_fn = func.vjp(func.grad(f), *primals)
        return vjp_fn(*tangents)

    primal, tangent = lib.tensor(PRIMAL), lib.tensor(TANGENT)
    return {
        "jacobian by vjp": compute_jac(x),
        "jacrev": func.jacrev(predict, argnums=2)(weight, bias, x),
        "jacrev argnums=(0, 1)": func.jacrev(predict, argnums=(0, 1))(weight, bias, x),
        "jacfwd": func.jacfwd(predict, argnums=2)(weight, bias, x),
        "hessian": func.hessian(predict, argnums=2)(weight, bias, x),
        "jacfwd of jacrev": func.jacfwd(func.jacrev(predict, argnums=2), argnums=2)(weight, bias, x),
        "jacfwd of jacfwd": func.jacfwd(func.jacfwd(predict, argnums=2), argnums=2)(weight, bias, x),
        "jacrev of jacrev": func.jacrev(func.jacrev(predict, argnums=2), argnums=2)(weight, bias, x),
        "batched jacrev": func.vmap(func.jacrev(predict, argnums=2), in_dims=(None, None, 0))(
            weight, bias, xs
        ),
        "batched jacfwd": func.vmap(func.jacfwd(predict, argnums=2), in_dims=(None, None, 0))(
            weight, bias, xs
        ),
        "jacrev of the summed output": func.jacrev(predict_with_output_summed, argnums=2)(
            weight, bias, xs
        ).movedim(1, 0),
        "batched hessian": func.vmap(func.hessian(predict, argnums=2), in_dims=(None, None, 0))(
            weight, bias, xs
        ),
        "hvp": hvp(f, (primal,), (tangent,)),
        "hvp rev rev": hvp_revrev(f, (primal,), (tangent,))[0],
    }


def _leaves(value) -> list:
    return [x for v in value for x in _leaves(v)] if isinstance(value, (tuple, list)) else [value]


def test_the_tutorials_transforms_give_torchs_results(torch):
    ours, theirs = tutorial(engine), tutorial(torch)
    assert list(ours) == list(theirs)
    for name in theirs:
        for a, b in zip(_leaves(ours[name]), _leaves(theirs[name]), strict=True):
            assert tuple(a.shape) == tuple(b.shape), name
            np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-9, atol=1e-11, err_msg=name)


def test_the_tutorials_hvp_is_the_diagonal_hessian_of_a_sum_of_sines():
    found = tutorial(engine)
    np.testing.assert_allclose(found["hvp"].numpy(), -np.sin(PRIMAL) * TANGENT, rtol=1e-12)
    np.testing.assert_allclose(found["jacfwd"].numpy(), found["jacrev"].numpy(), rtol=1e-12, atol=1e-14)
