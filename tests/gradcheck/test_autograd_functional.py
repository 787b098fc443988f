"""engine.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp against torch and finite differences.

Each call runs on the engine and (where installed) on torch with the same inputs: the nesting of
the result, values, dtypes, shapes and whether results require grad must agree, and with
create_graph=True a second derivative through the results must too. strict mode's errors and
the argument errors are compared word for word. Without torch, the values are checked against
central finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.autograd import functional as AF

try:
    import torch
except ImportError:
    torch = None

RNG = np.random.default_rng(3)
A = RNG.uniform(-1, 1, (2, 3))
B = RNG.uniform(0.5, 1.5, (3,))
S = np.array(0.7)
M = RNG.uniform(-1, 1, (3, 3))


# Functions written once for both libraries: (lib) -> f(*tensors).
FUNCTIONS = {
    "elementwise": lambda lib: lambda x: x.sin() * x.exp(),
    "matrix": lambda lib: lambda x: lib.matmul(x, x.t()).tanh(),
    "two in, one out": lambda lib: lambda x, y: (x * y).sigmoid() + y.log(),
    "two in, two out": lambda lib: lambda x, y: (x.exp() * y, (x * x).sum(dim=0) / y),
    "one in, tuple out": lambda lib: lambda x: (x.sqrt(), x.cos().sum()),
    "0-dim": lambda lib: lambda s: s.exp() * s * s,
    "unused input": lambda lib: lambda x, y: x.sin() * 2,
}
SCALAR_FUNCTIONS = {
    "cubic": lambda lib: lambda x: (x**3).sum(),
    "mixed": lambda lib: lambda x, y: (x.sin() * y).sum() + (x * x).mean() * y.sum(),
    "quadratic form": lambda lib: lambda x, m: lib.matmul(lib.matmul(x, m), x).exp(),
    "0-dim": lambda lib: lambda s: s.exp() * s.sin(),
    "unused input": lambda lib: lambda x, y: (x**3).sum(),
    "linear": lambda lib: lambda x: (x * 3.0).sum(),
}

INPUTS = {
    "elementwise": (A,),
    "matrix": (A,),
    "two in, one out": (A, B),
    "two in, two out": (A, B),
    "one in, tuple out": (B,),
    "0-dim": (S,),
    "unused input": (A, B),
}
SCALAR_INPUTS = {
    "cubic": (B,),
    "mixed": (B, B[::-1].copy()),
    "quadratic form": (B * 0.3, M),
    "0-dim": (S,),
    "unused input": (B, A),
    "linear": (B,),
}


def _tensors(lib, arrays, as_tuple, requires_grad=False):
    out = tuple(lib.tensor(a, dtype=lib.float64, requires_grad=requires_grad) for a in arrays)
    return out if as_tuple or len(out) > 1 else out[0]


def _same(e, t, *, graph_names=False) -> None:
    """The same nesting, values, dtypes, shapes and requires_grad (and grad_fn names when asked)."""
    if isinstance(t, (tuple, list)):
        assert type(e) is type(t) and len(e) == len(t)
        for a, b in zip(e, t):
            _same(a, b, graph_names=graph_names)
        return
    assert isinstance(e, engine.Tensor) and not isinstance(e, tuple)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert e.requires_grad == t.requires_grad
    assert (e.grad_fn is None) == (t.grad_fn is None)
    if graph_names and t.grad_fn is not None:
        assert e.grad_fn.name() == t.grad_fn.name()


def _flat(result) -> list:
    if isinstance(result, (tuple, list)):
        return [x for r in result for x in _flat(r)]
    return [result]


def _both(call, *, second_order=False, graph_names=False):
    """call(lib, AF_of_lib) on the engine, then on torch: results compared; with second_order, the
    gradient of the sum of every result that requires grad, with respect to the inputs, too."""
    inputs_e: list = []
    ours = call(engine, AF, inputs_e)
    if torch is None:
        return ours
    inputs_t: list = []
    theirs = call(torch, torch.autograd.functional, inputs_t)
    _same(ours, theirs, graph_names=graph_names)
    if second_order:
        grads_e, grads_t = (
            _gradient_of_results(engine, ours, inputs_e),
            _gradient_of_results(torch, theirs, inputs_t),
        )
        assert len(grads_e) == len(grads_t)
        for ge, gt in zip(grads_e, grads_t):
            if gt is None:
                assert ge is None or not ge.detach().numpy().any()
            else:
                np.testing.assert_allclose(ge.detach().numpy(), gt.detach().numpy(), rtol=1e-10, atol=1e-12)
    return ours


def _gradient_of_results(lib, result, inputs) -> list:
    """d(sum of every result that requires grad) / d(inputs that require grad): through create_graph's graph."""
    parts = [r.sum() for r in _flat(result) if r.requires_grad]
    wrt = [t for t in inputs if t.requires_grad]
    if not parts or not wrt:
        return []
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return list(lib.autograd.grad(total, wrt, allow_unused=True))


def _caller(api, fn_name, *, scalar=False, as_tuple=False, with_v=True, requires_grad=False, **kwargs):
    table, inputs = (SCALAR_FUNCTIONS, SCALAR_INPUTS) if scalar else (FUNCTIONS, INPUTS)

    def call(lib, F, keep):
        xs = _tensors(lib, inputs[fn_name], as_tuple, requires_grad)
        keep.extend(xs if isinstance(xs, tuple) else [xs])
        args = [table[fn_name](lib), xs]
        if api in ("vjp", "jvp", "hvp", "vhp") and with_v:
            args.append(_vector(lib, api, fn_name, table, xs))
        return getattr(F, api)(*args, **kwargs)

    return call


def _vector(lib, api, fn_name, table, xs):
    """A v shaped like the outputs (vjp) or the inputs (jvp, hvp, vhp), in the same nesting."""
    if api == "vjp":
        with lib.no_grad():
            outs = table[fn_name](lib)(*(xs if isinstance(xs, tuple) else (xs,)))
        shaped = outs
    else:
        shaped = xs
    if isinstance(shaped, tuple):
        return tuple(lib.tensor(np.linspace(-1, 1, t.numel()).reshape(tuple(t.shape))) for t in shaped)
    return lib.tensor(np.linspace(-1, 1, shaped.numel()).reshape(tuple(shaped.shape)))


# ------------------------------------------------------------------------------- jacobian


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("as_tuple", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian(name, as_tuple, create_graph):
    result = _both(
        _caller("jacobian", name, as_tuple=as_tuple, requires_grad=create_graph, create_graph=create_graph),
        second_order=create_graph,
        graph_names=True,
    )
    if name == "elementwise" and not as_tuple:
        x = A
        np.testing.assert_allclose(
            result.detach().numpy().reshape(6, 6), np.diag(((np.cos(x) + np.sin(x)) * np.exp(x)).ravel())
        )


def test_jacobian_matches_finite_differences():
    """Without torch too: every (output, input) block against central differences."""
    fn = FUNCTIONS["two in, two out"](engine)
    xs = [engine.tensor(a, dtype=engine.float64) for a in INPUTS["two in, two out"]]
    jac = AF.jacobian(fn, tuple(xs))
    eps = 1e-6
    for j, x in enumerate(xs):
        base = x.numpy().copy()
        for k in range(base.size):
            shifted = []
            for sign in (1, -1):
                data = base.copy()
                data.flat[k] += sign * eps
                args = list(xs)
                args[j] = engine.tensor(data)
                shifted.append([o.numpy() for o in fn(*args)])
            for i in range(2):
                column = (shifted[0][i] - shifted[1][i]) / (2 * eps)
                block = jac[i][j].numpy().reshape(column.shape + (-1,))
                np.testing.assert_allclose(block[..., k], column, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", ["matrix", "two in, two out", "unused input"])
def test_jacobian_vectorize_gives_the_same(name, create_graph):
    _both(
        _caller("jacobian", name, vectorize=True, requires_grad=create_graph, create_graph=create_graph),
        second_order=create_graph,
        graph_names=True,
    )


@pytest.mark.parametrize("as_tuple", [False, True])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_forward_mode_jacobian_is_the_reverse_mode_one_and_torchs(name, as_tuple):
    ours = _both(_caller("jacobian", name, as_tuple=as_tuple, vectorize=True, strategy="forward-mode"))
    reverse = _caller("jacobian", name, as_tuple=as_tuple)(engine, AF, [])
    for a, b in zip(_flat(ours), _flat(reverse)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", sorted(SCALAR_FUNCTIONS))
def test_forward_over_reverse_hessian_is_the_reverse_mode_one(name):
    """Values as torch's (whose forward-mode Hessian leaks its inner graph: its result requires grad; and which
    fails on the quadratic form, its batched dot refusing the batched vector-matrix product)."""
    ours = _caller("hessian", name, scalar=True, vectorize=True, outer_jacobian_strategy="forward-mode")(
        engine, AF, []
    )
    reverse = _caller("hessian", name, scalar=True)(engine, AF, [])
    for a, b in zip(_flat(ours), _flat(reverse)):
        assert not a.requires_grad
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
    if torch is not None and name != "quadratic form":
        theirs = _caller(
            "hessian", name, scalar=True, vectorize=True, outer_jacobian_strategy="forward-mode"
        )(torch, torch.autograd.functional, [])
        for a, b in zip(_flat(ours), _flat(theirs)):
            np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_jacobian_of_inputs_that_require_grad_without_create_graph_is_detached():
    ours = _both(_caller("jacobian", "matrix", requires_grad=True))
    assert not ours.requires_grad


# -------------------------------------------------------------------------------- hessian


@pytest.mark.parametrize("name", sorted(SCALAR_FUNCTIONS))
@pytest.mark.parametrize("as_tuple", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian(name, as_tuple, create_graph):
    result = _both(
        _caller(
            "hessian",
            name,
            scalar=True,
            as_tuple=as_tuple,
            requires_grad=create_graph,
            create_graph=create_graph,
        ),
        second_order=create_graph and name != "linear",
    )
    if name == "cubic" and not as_tuple:
        np.testing.assert_allclose(result.detach().numpy(), np.diag(6 * B))


@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian_vectorize_gives_the_same(create_graph):
    _both(
        _caller(
            "hessian",
            "mixed",
            scalar=True,
            vectorize=True,
            requires_grad=create_graph,
            create_graph=create_graph,
        ),
        second_order=create_graph,
    )


# ------------------------------------------------------------------------------- products

PRODUCT_CASES = (
    [("vjp", name, False) for name in sorted(FUNCTIONS)]
    + [("jvp", name, False) for name in sorted(FUNCTIONS)]
    + [(api, name, True) for api in ("hvp", "vhp") for name in sorted(SCALAR_FUNCTIONS)]
)


@pytest.mark.parametrize("api, name, scalar", PRODUCT_CASES, ids=lambda v: str(v))
@pytest.mark.parametrize("create_graph", [False, True])
def test_products(api, name, scalar, create_graph):
    _both(
        _caller(api, name, scalar=scalar, requires_grad=create_graph, create_graph=create_graph),
        second_order=create_graph and name != "linear",
    )


@pytest.mark.parametrize("api", ["vjp", "jvp", "hvp", "vhp"])
def test_products_take_a_tuple_of_one(api):
    scalar = api in ("hvp", "vhp")
    _both(_caller(api, "cubic" if scalar else "elementwise", scalar=scalar, as_tuple=True))


@pytest.mark.parametrize("api", ["vjp", "jvp", "hvp", "vhp"])
def test_v_may_be_left_out_for_one_element(api):
    _both(_caller(api, "0-dim", scalar=api in ("hvp", "vhp"), with_v=False))


def test_hvp_equals_vhp_for_a_symmetric_hessian():
    fn = SCALAR_FUNCTIONS["mixed"](engine)
    xs = _tensors(engine, SCALAR_INPUTS["mixed"], True)
    v = (
        engine.tensor([1.0, -2.0, 0.5], dtype=engine.float64),
        engine.tensor([0.3, 0.1, -1.0], dtype=engine.float64),
    )
    _, hv = AF.hvp(fn, xs, v)
    _, vh = AF.vhp(fn, xs, v)
    for a, b in zip(hv, vh):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    full = AF.hessian(fn, xs)
    expected = [sum(full[i][j].numpy().reshape(3, 3) @ v[j].numpy() for j in range(2)) for i in range(2)]
    for a, b in zip(hv, expected):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-10)


@pytest.mark.parametrize("grad_enabled", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
def test_products_under_no_grad(grad_enabled, create_graph):
    def call(lib, F, keep):
        x = lib.tensor(B, requires_grad=True)
        keep.append(x)
        with lib.set_grad_enabled(grad_enabled):
            out, vj = F.vjp(lambda t: t.exp(), x, lib.ones(3, dtype=lib.float64), create_graph=create_graph)
        return out, vj

    _both(call)


# ---------------------------------------------------------------------------- strict mode

STRICT_CASES = {
    "vjp unused": lambda lib, F: F.vjp(
        lambda x, y: x * 2, (_t(lib, A), _t(lib, A)), (_t(lib, A),), strict=True
    ),
    "vjp constant": lambda lib, F: F.vjp(lambda x: lib.ones(2), _t(lib, B[:2]), _t(lib, B[:2]), strict=True),
    "vjp create_graph linear": lambda lib, F: F.vjp(
        lambda x: x * 2, _t(lib, B), _t(lib, B), create_graph=True, strict=True
    ),
    "jvp unused": lambda lib, F: F.jvp(
        lambda x, y: x * 2, (_t(lib, A), _t(lib, A)), (_t(lib, A),) * 2, strict=True
    ),
    "jvp constant": lambda lib, F: F.jvp(lambda x: lib.ones(2), _t(lib, B[:2]), _t(lib, B[:2]), strict=True),
    "jacobian constant": lambda lib, F: F.jacobian(lambda x: lib.ones(2), _t(lib, B), strict=True),
    "jacobian unused": lambda lib, F: F.jacobian(lambda x, y: x.exp(), (_t(lib, B), _t(lib, B)), strict=True),
    "jacobian create_graph linear": lambda lib, F: F.jacobian(
        lambda x: x * 3, _t(lib, B), create_graph=True, strict=True
    ),
    "jacobian vectorized": lambda lib, F: F.jacobian(
        lambda x: x.exp(), _t(lib, B), strict=True, vectorize=True
    ),
    "jacobian forward-mode": lambda lib, F: F.jacobian(
        lambda x: x.exp(), _t(lib, B), strict=True, strategy="forward-mode", vectorize=True
    ),
    "hessian linear": lambda lib, F: F.hessian(lambda x: (x * 3).sum(), _t(lib, B), strict=True),
    "hessian unused": lambda lib, F: F.hessian(
        lambda x, y: (x**3).sum(), (_t(lib, B), _t(lib, B)), strict=True
    ),
    "hvp linear": lambda lib, F: F.hvp(lambda x: (x * 3).sum(), _t(lib, B), _t(lib, B), strict=True),
    "vhp linear": lambda lib, F: F.vhp(lambda x: (x * 3).sum(), _t(lib, B), _t(lib, B), strict=True),
    "vhp quadratic, unused": lambda lib, F: F.vhp(
        lambda x, y: (x * x).sum(), (_t(lib, B), _t(lib, B)), (_t(lib, B), _t(lib, B)), strict=True
    ),
    "hvp create_graph quadratic": lambda lib, F: F.hvp(
        lambda x: (x * x).sum(), _t(lib, B), _t(lib, B), create_graph=True, strict=True
    ),
}


def _t(lib, array):
    return lib.tensor(array, dtype=lib.float64)


def _error(call, exception):
    with pytest.raises(exception) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize("case", sorted(STRICT_CASES))
def test_strict_mode_errors(case):
    ours = _error(lambda: STRICT_CASES[case](engine, AF), RuntimeError)
    assert "strict" in ours
    if torch is not None:
        assert ours == _error(
            lambda: STRICT_CASES[case](torch, torch.autograd.functional), RuntimeError
        ).replace("torch.", "engine.")


def test_strict_mode_passes_where_every_result_depends_on_the_inputs():
    _both(_caller("jacobian", "two in, two out", strict=True))
    _both(_caller("hvp", "mixed", scalar=True, strict=True))
    _both(_caller("vjp", "two in, one out", strict=True))


# ------------------------------------------------------------------------- argument errors

ARGUMENT_ERRORS = [
    (lambda lib, F: F.vjp(lambda x: x, [_t(lib, B)], _t(lib, B)), TypeError),
    (lambda lib, F: F.vjp(lambda x: x, (_t(lib, B), 3.0), _t(lib, B)), TypeError),
    (lambda lib, F: F.jacobian(lambda x: 3.0, _t(lib, B)), TypeError),
    (lambda lib, F: F.jvp(lambda x: x, _t(lib, B), 1.0), TypeError),
    (lambda lib, F: F.vjp(lambda x: x * 2, _t(lib, B)), RuntimeError),
    (lambda lib, F: F.jvp(lambda x: x * 2, _t(lib, B)), RuntimeError),
    (lambda lib, F: F.vjp(lambda x: x * 2, _t(lib, B), (_t(lib, B), _t(lib, B))), RuntimeError),
    (lambda lib, F: F.vjp(lambda x: (x, x), _t(lib, B), (_t(lib, B),)), RuntimeError),
    (lambda lib, F: F.vjp(lambda x: x * 2, _t(lib, B), _t(lib, A)), RuntimeError),
    (
        lambda lib, F: F.jvp(lambda x, y: x * y, (_t(lib, B), _t(lib, B)), (_t(lib, B), _t(lib, A))),
        RuntimeError,
    ),
    (lambda lib, F: F.hvp(lambda x: x * 2, _t(lib, B), _t(lib, B)), RuntimeError),
    (lambda lib, F: F.vhp(lambda x: (x.sum(), x.sum()), _t(lib, B), _t(lib, B)), RuntimeError),
    (lambda lib, F: F.hessian(lambda x: x * 2, _t(lib, B)), RuntimeError),
    (lambda lib, F: F.hessian(lambda x: (x.sum(),), _t(lib, B)), RuntimeError),
    (lambda lib, F: F.hessian(lambda x: x.sum(), [_t(lib, B)]), TypeError),
    (lambda lib, F: F.jacobian(lambda x: x, _t(lib, B), strategy="sideways"), AssertionError),
    (lambda lib, F: F.jacobian(lambda x: x, _t(lib, B), strategy="forward-mode"), NotImplementedError),
    (
        lambda lib, F: F.jacobian(lambda x: x, _t(lib, B), strategy="forward-mode", create_graph=True),
        NotImplementedError,
    ),
    (lambda lib, F: F.jacobian(lambda x: x, 2.0, strategy="forward-mode"), TypeError),
    (lambda lib, F: F.hessian(lambda x: x.sum(), _t(lib, B), outer_jacobian_strategy="x"), AssertionError),
    (
        lambda lib, F: F.hessian(lambda x: x.sum(), _t(lib, B), outer_jacobian_strategy="forward-mode"),
        NotImplementedError,
    ),
]


@pytest.mark.parametrize("index", range(len(ARGUMENT_ERRORS)))
def test_argument_errors(index):
    make, exception = ARGUMENT_ERRORS[index]
    ours = _error(lambda: make(engine, AF), exception)
    if torch is not None:
        theirs = _error(lambda: make(torch, torch.autograd.functional), exception)
        assert ours == theirs.replace("torch.", "engine.")


def test_namespace():
    assert engine.autograd.functional is AF
    assert set(AF.__all__) == {"jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"}
