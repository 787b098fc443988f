"""engine.func's forward-mode transforms (jvp, linearize, jacfwd, hessian) against torch.func (torch 2.13)
and finite differences: values, composition with vmap and the reverse transforms, and torch's messages."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.func import grad, hessian, jacfwd, jacrev, jvp, vmap

from .test_transforms import errors

RNG = np.random.default_rng(1)
X = RNG.standard_normal((4, 3))
Y = RNG.standard_normal(3)


def close(a, b, tol: float = 1e-10) -> None:
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=tol, atol=tol * 1e-2)


def f_two(lib):
    return lambda x, y: ((x * y).sin(), (x.exp() @ y).tanh())


def test_jvp_gives_torch_funcs_output_and_product(torch):
    tangents = RNG.standard_normal((4, 3)), RNG.standard_normal(3)
    ours = jvp(f_two(engine), (engine.tensor(X), engine.tensor(Y)), tuple(engine.tensor(t) for t in tangents))
    theirs = torch.func.jvp(
        f_two(torch), (torch.tensor(X), torch.tensor(Y)), tuple(torch.tensor(t) for t in tangents)
    )
    for a, b in zip(ours, theirs):
        for u, v in zip(a, b):
            close(u, v)
            assert not u.requires_grad


def test_jvp_with_aux_and_pytrees(torch):
    def f(lib):
        return lambda d: ({"s": d["a"].cos() * d["b"]}, d["a"].sum())

    results = [
        lib.func.jvp(
            f(lib),
            ({"a": lib.tensor(X), "b": lib.tensor(Y)},),
            ({"a": lib.ones(4, 3, dtype=lib.float64), "b": lib.tensor(Y)},),
            has_aux=True,
        )
        for lib in (engine, torch)
    ]
    (out_e, jvp_e, aux_e), (out_t, jvp_t, aux_t) = results
    close(out_e["s"], out_t["s"])
    close(jvp_e["s"], jvp_t["s"])
    close(aux_e, aux_t)


def test_jvp_agrees_with_finite_differences():
    f = lambda x: (x.sin() * x).cumsum(0).exp()  # noqa: E731
    x, v, eps = RNG.standard_normal(5), RNG.standard_normal(5), 1e-6
    _, product = jvp(f, (engine.tensor(x),), (engine.tensor(v),))
    central = (f(engine.tensor(x + eps * v)).numpy() - f(engine.tensor(x - eps * v)).numpy()) / (2 * eps)
    np.testing.assert_allclose(product.numpy(), central, rtol=1e-6, atol=1e-8)


def test_linearize_is_jvp_at_fixed_primals(torch):
    x, t1, t2 = (RNG.standard_normal(5) for _ in range(3))
    for lib in (engine, torch):
        out, jvp_fn = lib.func.linearize(lambda a: a.sin() * a, lib.tensor(x))
        if lib is engine:
            ours = out, jvp_fn(engine.tensor(t1)), jvp_fn(engine.tensor(t2))
        else:
            theirs = out, jvp_fn(torch.tensor(t1)), jvp_fn(torch.tensor(t2))
    for a, b in zip(ours, theirs):
        close(a, b)


def test_jacfwd_matches_torch_func_and_jacrev(torch):
    for argnums in (0, 1, (0, 1)):
        ours = jacfwd(f_two(engine), argnums)(engine.tensor(X), engine.tensor(Y))
        theirs = torch.func.jacfwd(f_two(torch), argnums)(torch.tensor(X), torch.tensor(Y))
        reverse = jacrev(f_two(engine), argnums)(engine.tensor(X), engine.tensor(Y))
        flat = lambda r: [t for part in r for t in (part if isinstance(part, tuple) else (part,))]  # noqa: E731
        for a, b, c in zip(flat(ours), flat(theirs), flat(reverse)):
            close(a, b)
            close(a, c)


def test_jacfwd_has_aux_gives_the_first_example_of_aux(torch):
    ours = jacfwd(lambda x: (x.sin(), x.cos()), has_aux=True)(engine.tensor(Y))
    theirs = torch.func.jacfwd(lambda x: (x.sin(), x.cos()), has_aux=True)(torch.tensor(Y))
    close(ours[0], theirs[0])
    close(ours[1], theirs[1])


def test_jacfwd_agrees_with_finite_differences():
    f = lambda x: (x @ x.T).tanh().sum(0)  # noqa: E731
    jac = jacfwd(f)(engine.tensor(X)).numpy()
    eps = 1e-6
    for k in range(X.size):
        step = np.zeros(X.size)
        step[k] = eps
        step = step.reshape(X.shape)
        column = (f(engine.tensor(X + step)).numpy() - f(engine.tensor(X - step)).numpy()) / (2 * eps)
        np.testing.assert_allclose(jac.reshape(4, -1)[:, k], column, rtol=1e-6, atol=1e-8)


def test_vmap_of_jacfwd_and_forward_over_reverse_hessians(torch):
    ours = vmap(jacfwd(engine.sin))(engine.tensor(X))
    close(ours, torch.func.vmap(torch.func.jacfwd(torch.sin))(torch.tensor(X)))
    g = lambda lib: lambda x: (x.sin() * x.exp()).sum()  # noqa: E731
    close(
        jacfwd(jacrev(g(engine)))(engine.tensor(Y)),
        torch.func.jacfwd(torch.func.jacrev(g(torch)))(torch.tensor(Y)),
    )
    close(hessian(g(engine))(engine.tensor(Y)), torch.func.hessian(g(torch))(torch.tensor(Y)))
    close(
        vmap(hessian(g(engine)))(engine.tensor(X)),
        torch.func.vmap(torch.func.hessian(g(torch)))(torch.tensor(X)),
    )


def test_jvp_of_grad_is_a_hessian_vector_product(torch):
    f = lambda x: (x.sin() * x).sum()  # noqa: E731
    v = RNG.standard_normal(3)
    ours = jvp(grad(f), (engine.tensor(Y),), (engine.tensor(v),))[1]
    close(ours, torch.func.jvp(torch.func.grad(f), (torch.tensor(Y),), (torch.tensor(v),))[1])


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 6), lib.nn.Tanh(), lib.nn.Linear(6, 2))


def test_hessian_of_an_mlp_loss_through_functional_call(torch):
    models = {lib: _mlp(lib).double() if lib is torch else _mlp(lib) for lib in (engine, torch)}
    for name, p in models[torch].named_parameters():
        dict(models[engine].named_parameters())[name].data = engine.tensor(p.detach().numpy())
    x, t = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2))
    found = {}
    for lib, model in models.items():
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, lib=lib, model=model):
            return ((lib.func.functional_call(model, p, (lib.tensor(x),)) - lib.tensor(t)) ** 2).mean()

        found[lib] = lib.func.hessian(loss)(params)
    for a in found[torch]:
        for b in found[torch][a]:
            close(found[engine][a][b], found[torch][a][b])


MISUSES = [
    lambda lib: lib.func.jvp(lib.sin, lib.ones(3), (lib.ones(3),)),
    lambda lib: lib.func.jvp(lib.sin, (), ()),
    lambda lib: lib.func.jvp(lambda a: a, (3.0,), (3.0,)),
    lambda lib: lib.func.jvp(lambda a: 3, (lib.ones(3),), (lib.ones(3),)),
    lambda lib: lib.func.jvp(lambda a: a, (lib.ones(3),), (lib.ones(3),), has_aux=True),
    lambda lib: lib.func.jvp(lambda a: lib.ones(3), (lib.ones(3),), (lib.ones(3),), strict=True),
    lambda lib: lib.func.jacfwd(lib.sin, argnums=3)(lib.ones(3)),
    lambda lib: lib.func.jacfwd(lib.sin, argnums=())(lib.ones(3)),
    lambda lib: lib.func.linearize(lib.sin, lib.ones(3))[1](lib.ones(4)),
    lambda lib: lib.func.linearize(lib.sin, lib.ones(3))[1](lib.ones(3, dtype=lib.float64)),
]


def test_forward_transforms_refuse_with_torchs_messages(torch):
    assert [m.replace("engine.", "torch.") for m in errors(engine, MISUSES)] == errors(torch, MISUSES)


def test_jvp_refuses_primals_and_tangents_of_different_structure(torch):
    for lib in (engine, torch):
        with pytest.raises(
            RuntimeError, match="Expected primals and tangents to have the same python structure"
        ):
            lib.func.jvp(lib.sin, (lib.ones(3),), (lib.ones(3), lib.ones(3)))


def test_jacrev_and_jacfwd_of_a_dict_argument_give_a_dict(torch):
    def f(lib):
        return lambda d: (d["a"].sin() * d["b"]).sum(0)

    for transform in ("jacrev", "jacfwd"):
        ours = getattr(engine.func, transform)(f(engine))({"a": engine.tensor(X), "b": engine.tensor(Y)})
        theirs = getattr(torch.func, transform)(f(torch))({"a": torch.tensor(X), "b": torch.tensor(Y)})
        assert sorted(ours) == sorted(theirs)
        for name in theirs:
            close(ours[name], theirs[name])


def test_a_nested_dual_level_is_refused_as_torch_refuses_it():
    """autograd.forward_ad opens one level at a time, as torch's; jacfwd of jacfwd still works
    (test_composed_transforms.py): its inner jvp opens none."""
    with engine.autograd.forward_ad.dual_level():
        with pytest.raises(RuntimeError, match="^Nested forward mode AD is not supported at the moment$"):
            engine.autograd.forward_ad.enter_dual_level()
