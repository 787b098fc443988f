"""engine.func's transforms against torch.func (torch 2.13): values, composition, and torch's messages."""

from __future__ import annotations

import numpy as np
import pytest

import engine
import engine.nn.functional as F
from engine import nn
from engine.autograd.functional import hessian, jacobian
from engine.func import functional_call, grad, grad_and_value, jacrev, vjp, vmap

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
Y = RNG.standard_normal(3)


def close(a, b) -> None:
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def both(torch, array):
    return engine.tensor(array), torch.tensor(array)


def test_vmap_matches_torch_func_on_batched_dot_matmul_and_nested(torch):
    (ex, tx), (ey, ty) = both(torch, X), both(torch, Y)
    close(vmap(engine.dot, in_dims=(0, None))(ex, ey), torch.func.vmap(torch.dot, in_dims=(0, None))(tx, ty))
    close(
        vmap(engine.mv, in_dims=(None, 0))(ex.T @ ex, ex),
        torch.func.vmap(torch.mv, in_dims=(None, 0))(tx.T @ tx, tx),
    )
    nested = lambda lib: lib.func.vmap(lib.func.vmap(lambda a, b: (a * b).sin()), in_dims=(0, None))  # noqa: E731
    close(nested(engine)(ex, ey), nested(torch)(tx, ty))


def test_vmap_moves_batch_dims_as_in_dims_and_out_dims_say(torch):
    (ex, tx) = both(torch, RNG.standard_normal((3, 5, 2)))
    for in_dims, out_dims in ((1, 0), (-1, 2), (0, -1)):
        e = vmap(lambda a: a.softmax(0) * 2, in_dims=in_dims, out_dims=out_dims)(ex)
        close(e, torch.func.vmap(lambda a: a.softmax(0) * 2, in_dims=in_dims, out_dims=out_dims)(tx))


def test_vmap_takes_pytrees_and_none_in_dims(torch):
    (ex, tx), (ey, ty) = both(torch, X), both(torch, Y)

    def f(lib):
        return lib.func.vmap(
            lambda d, s: {"out": (d["a"] + s).tanh(), "n": d["b"]}, in_dims=({"a": 0, "b": None}, None)
        )

    e, t = f(engine)({"a": ex, "b": ey}, ey), f(torch)({"a": tx, "b": ty}, ty)
    close(e["out"], t["out"])
    close(e["n"], t["n"])


def errors(lib, calls) -> list[str]:
    out = []
    for call in calls:
        with pytest.raises(Exception) as info:
            call(lib)
        out.append(f"{type(info.value).__name__}: {info.value}")
    return out


VMAP_MISUSES = [
    lambda lib: lib.func.vmap(lambda a, b: a + b)(lib.ones(3, 2), lib.ones(4, 2)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=(0, 0))(lib.ones(3, 2)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=5)(lib.ones(3, 2)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=0)(3.0),
    lambda lib: lib.func.vmap(lambda a: a, in_dims="x")(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a: a, randomness="x")(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a: a, out_dims=(0, 1))(lib.ones(3, 2)),
    lambda lib: lib.func.vmap(lambda a: 3)(lib.ones(3, 2)),
    lambda lib: lib.func.vmap(lambda a: a)(),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=None)(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a: a.sum().item())(lib.ones(3, 2)),
    lambda lib: lib.func.vmap(lambda a: 1 if a.sum() > 0 else 0)(lib.ones(3, 2)),
    lambda lib: lib.func.vmap(lambda a: lib.rand(2) + a)(lib.ones(3, 2)),
    lambda lib: lib.func.vmap(lambda a: a, out_dims=None)(lib.ones(3, 2)),
]


def test_vmap_refuses_with_torchs_messages(torch):
    assert errors(engine, VMAP_MISUSES) == errors(torch, VMAP_MISUSES)


GRAD_MISUSES = [
    lambda lib: lib.func.grad(lambda a: (a.sum(), 4), has_aux=True)(lib.ones(3)),
    lambda lib: lib.func.grad(lambda a: a)(lib.ones(3)),
    lambda lib: lib.func.grad(lambda a: (a * a).sum(), argnums=3)(lib.ones(3)),
    lambda lib: lib.func.grad(lambda a: 3)(lib.ones(3)),
    lambda lib: lib.func.grad(lambda a: a.sum(), has_aux=True)(lib.ones(3)),
]


def test_grad_refuses_with_torchs_messages(torch):
    assert errors(engine, GRAD_MISUSES) == errors(torch, GRAD_MISUSES)


def test_a_row_without_a_rule_runs_per_element_as_torchs_fallback_loop(torch):
    ex, tx = both(torch, RNG.standard_normal((4, 3, 2)))
    close(vmap(lambda a: engine.max(a, 0).values)(ex), torch.func.vmap(lambda a: torch.max(a, 0).values)(tx))


def test_ops_whose_shape_depends_on_values_are_refused_as_torch_refuses_them(torch):
    def outcomes(lib):
        x = lib.tensor(RNG.standard_normal((4, 6)))
        found = []
        for f in (
            lambda a: a.unique(),
            lambda a: a.nonzero(),
            lambda a: a.nonzero(as_tuple=True)[0],
            lambda a: lib.masked_select(a, a > 0),
            lambda a: x[0][a > 0],
        ):
            with pytest.raises(RuntimeError) as error:
                lib.func.vmap(f)(x)
            found.append(str(error.value))
        return found

    assert outcomes(engine) == outcomes(torch)


def test_ops_that_read_the_storage_are_refused_not_wrong():
    x = engine.tensor(RNG.standard_normal((3, 9)))
    for inputs in (x, x.clone().requires_grad_()):  # the batched run, and the per-example one
        with pytest.raises(RuntimeError, match=r"^vmap: no batching rule for engine\.as_strided "):
            vmap(lambda a: a.as_strided((2, 2), (1, 1), 1))(inputs)


def test_randomness_same_draws_once_for_the_batch():
    out = vmap(lambda a: engine.rand(2) + a * 0, randomness="same")(engine.zeros(3, 2))
    assert np.all(out.numpy() == out.numpy()[0])


def test_grad_grad_and_value_vjp_jacrev_match_torch_func(torch):
    (ey, ty) = both(torch, Y)

    def f(lib):
        return lambda a: (a.sin() * a.exp()).sum()

    close(grad(f(engine))(ey), torch.func.grad(f(torch))(ty))
    (eg, ev), (tg, tv) = grad_and_value(f(engine))(ey), torch.func.grad_and_value(f(torch))(ty)
    close(eg, tg)
    close(ev, tv)
    close(
        grad(grad(lambda a: a.sin().sum() * a.sum()))(ey[0]),
        torch.func.grad(torch.func.grad(lambda a: a.sin().sum() * a.sum()))(ty[0]),
    )
    eo, efn = vjp(lambda a: a.tanh() * 2, ey)
    to, tfn = torch.func.vjp(lambda a: a.tanh() * 2, ty)
    close(eo, to)
    close(efn(engine.ones(3))[0], tfn(torch.ones(3))[0])
    (ex, tx) = both(torch, X)
    close(
        jacrev(lambda a, b: a @ b, argnums=1)(ex, ey),
        torch.func.jacrev(lambda a, b: a @ b, argnums=1)(tx, ty),
    )
    ej = jacrev(lambda a, b: (a @ b).sin(), argnums=(0, 1))(ex, ey)
    tj = torch.func.jacrev(lambda a, b: (a @ b).sin(), argnums=(0, 1))(tx, ty)
    close(ej[0], tj[0])
    close(ej[1], tj[1])


def test_grad_with_aux_and_argnums_tuples(torch):
    (ex, tx), (ey, ty) = both(torch, X), both(torch, Y)

    def f(lib):
        return lambda a, b: ((a @ b).square().sum(), {"norm": b.norm()})

    eg, eaux = grad(f(engine), argnums=(0, 1), has_aux=True)(ex, ey)
    tg, taux = torch.func.grad(f(torch), argnums=(0, 1), has_aux=True)(tx, ty)
    close(eaux["norm"], taux["norm"])
    assert not eaux["norm"].requires_grad
    close(eg[0], tg[0])
    close(eg[1], tg[1])
    assert not eg[0].requires_grad


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))


def test_per_sample_gradients_of_an_mlp_match_torch_func(torch):
    models = {lib: _mlp(lib) for lib in (engine, torch)}
    for name, p in models[torch].named_parameters():  # the same weights
        dict(models[engine].named_parameters())[name].data = engine.tensor(
            p.detach().numpy().astype(np.float64)
        )
    x = RNG.standard_normal((6, 5))
    t = RNG.integers(0, 3, 6)
    grads = {}
    for lib, model in models.items():
        params = {k: v.detach().double() if lib is torch else v.detach() for k, v in model.named_parameters()}
        if lib is torch:
            model.double()

        def loss(p, xi, ti, lib=lib, model=model):
            return lib.nn.functional.cross_entropy(
                lib.func.functional_call(model, p, (xi.unsqueeze(0),)), ti.unsqueeze(0)
            )

        grads[lib] = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            params, lib.tensor(x), lib.tensor(t)
        )
    for name in grads[torch]:
        close(grads[engine][name], grads[torch][name])


def test_per_sample_gradients_of_a_cnn_equal_one_gradient_per_example():
    engine.manual_seed(0)
    cnn = nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(3 * 3 * 3, 2))
    params = {k: v.detach() for k, v in cnn.named_parameters()}

    def loss(p, x, t):
        return F.cross_entropy(functional_call(cnn, p, (x.unsqueeze(0),)), t.unsqueeze(0))

    x, t = engine.randn(4, 1, 8, 8), engine.tensor([0, 1, 1, 0])
    batched = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, t)
    for i in range(4):
        one = grad(loss)(params, x[i], t[i])
        for name in params:
            close(batched[name][i], one[name])


def test_functional_call_swaps_parameters_for_one_call_and_ties_weights(torch):
    for lib in (engine, torch):
        lin = lib.nn.Linear(2, 2, bias=False)
        original = lin.weight
        out = lib.func.functional_call(lin, {"weight": lib.eye(2)}, (lib.ones(1, 2),))
        assert out.tolist() == [[1.0, 1.0]]
        assert lin.weight is original
        with pytest.raises(RuntimeError, match="Unexpected key"):
            lib.func.functional_call(
                lin, {"weight": lib.eye(2), "nope": lib.eye(2)}, (lib.ones(1, 2),), strict=True
            )


def test_vectorized_jacobian_and_hessian_equal_the_row_by_row_ones():
    x = engine.tensor(X)

    def f(a):
        return (a.sin() @ a.T).tanh()

    close(jacobian(f, x, vectorize=True), jacobian(f, x))
    close(
        hessian(lambda a: (a.exp() * a).sum(), engine.tensor(Y), vectorize=True),
        hessian(lambda a: (a.exp() * a).sum(), engine.tensor(Y)),
    )


def test_chunked_vmap_and_jacrev_equal_the_whole_batch():
    x = engine.tensor(X)
    close(vmap(lambda a: a.exp().sum(), chunk_size=3)(x), vmap(lambda a: a.exp().sum())(x))
    close(jacrev(lambda a: a.sin().sum(0), chunk_size=2)(x), jacrev(lambda a: a.sin().sum(0))(x))


def _docstring_examples(lib, arrays):
    """torch.func's docstring examples (vmap, grad, jacrev), on `lib`, with the given inputs."""
    x, y, w, examples, targets = (lib.tensor(a) for a in arrays)
    func = lib.func

    def model(weights, feature_vec):
        assert feature_vec.dim() == 1
        return feature_vec.dot(weights).relu()

    def compute_loss(weights, example, target):
        return ((model(weights, example) - target) ** 2).mean()

    return {
        "batched_dot": func.vmap(lib.dot)(x, y),
        "batched_mv": func.vmap(lib.mv, in_dims=(None, 0))(x.T @ x, y),
        "cos_x": func.grad(lambda t: lib.sin(t))(x[0, 0]),
        "neg_sin_x": func.grad(func.grad(lambda t: lib.sin(t)))(x[0, 0]),
        "per_example": func.vmap(func.grad(compute_loss), in_dims=(None, 0, 0))(w, examples, targets),
        "jacobian": func.jacrev(lib.sin)(y[0]),
        "per_sample_jacobian": func.vmap(func.jacrev(lib.sin))(x),
    }


def test_torch_func_docstring_examples_give_torchs_results(torch):
    arrays = [RNG.standard_normal(s) for s in ((2, 5), (2, 5), (5,), (4, 5), (4,))]
    ours, theirs = _docstring_examples(engine, arrays), _docstring_examples(torch, arrays)
    for name in theirs:
        close(ours[name], theirs[name])
