"""engine.autograd.forward_ad: torch.autograd.forward_ad's API, messages and semantics, each test run on
the engine and on torch (the `lib` fixture)."""

import numpy as np
import pytest

import engine


def _fw(lib):
    return lib.autograd.forward_ad


def _values(t):
    return t.detach().clone().numpy()


def _raises(exc, message, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == message


def test_levels(lib):
    fw = _fw(lib)
    with fw.dual_level() as level:
        assert level == 0
        _raises(RuntimeError, "Nested forward mode AD is not supported at the moment", fw.enter_dual_level)
        _raises(
            RuntimeError,
            "Trying to exit a forward AD level that was not the last one that was created. This is not supported.",
            lambda: fw.exit_dual_level(level=1),
        )
    assert fw.enter_dual_level() == 0
    fw.exit_dual_level()


def test_make_dual_checks(lib):
    fw = _fw(lib)
    _raises(
        RuntimeError,
        "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first.",
        lambda: fw.make_dual(lib.ones(2), lib.ones(2)),
    )
    with fw.dual_level():
        _raises(
            RuntimeError,
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            "not supported. Tensor is of size [2] while the given forward gradient is of size [3].",
            lambda: fw.make_dual(lib.ones(2), lib.ones(3)),
        )
        _raises(
            ValueError,
            f"Expected tangent to be floating point or complex, but got: {lib.__name__}.int64",
            lambda: fw.make_dual(lib.ones(2), lib.ones(2, dtype=lib.int64)),
        )
        _raises(
            ValueError,
            f"Expected primal to be floating point or complex, but got: {lib.__name__}.int64",
            lambda: fw.make_dual(lib.ones(2, dtype=lib.int64), lib.ones(2)),
        )
        _raises(
            RuntimeError,
            "Invalid level given to _make_dual",
            lambda: fw.make_dual(lib.ones(2), lib.ones(2), level=3),
        )
        dual = fw.make_dual(lib.ones(2), lib.ones(2))
        _raises(
            RuntimeError,
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the same level 0 is not "
            "supported.",
            lambda: fw.make_dual(dual, lib.ones(2)),
        )
        _raises(RuntimeError, "Invalid level given to _fw_primal", lambda: fw.unpack_dual(dual, level=3))


def test_dual_is_a_view_and_the_tangent_is_kept_as_is(lib):
    fw = _fw(lib)
    primal, tangent = lib.ones(3), lib.full((3,), 2.0, dtype=lib.float64)
    with fw.dual_level():
        dual = fw.make_dual(primal, tangent)
        assert dual._base is primal
        unpacked = fw.unpack_dual(dual)
        assert isinstance(unpacked, fw.UnpackedDualTensor)
        assert unpacked.tangent is tangent
        assert unpacked.primal._base is primal
        assert fw.unpack_dual(unpacked.primal).tangent is None
        assert fw.unpack_dual(lib.ones(2)).tangent is None
        out = dual * 3
    assert fw.unpack_dual(out).tangent is None  # the level's tangents are gone with it
    assert fw.unpack_dual(dual).primal is dual


def test_views_share_the_tangent(lib):
    fw = _fw(lib)
    with fw.dual_level():
        base = fw.make_dual(lib.zeros(2, 3), lib.arange(6.0).reshape(2, 3))
        row = base[1]
        np.testing.assert_array_equal(_values(fw.unpack_dual(row).tangent), [3.0, 4.0, 5.0])
        row.mul_(2)  # in place through a view: the base's tangent changes too
        np.testing.assert_array_equal(_values(fw.unpack_dual(base).tangent), [[0, 1, 2], [6, 8, 10]])
        plain = lib.zeros(3)
        plain[1:].copy_(fw.make_dual(lib.ones(2), lib.full((2,), 5.0)))
        np.testing.assert_array_equal(_values(fw.unpack_dual(plain).tangent), [0.0, 5.0, 5.0])
        pieces = base.split(1, dim=1)
        np.testing.assert_array_equal(_values(fw.unpack_dual(pieces[2]).tangent), [[2.0], [10.0]])


def test_detach_no_grad_and_integer_outputs(lib):
    fw = _fw(lib)
    with fw.dual_level():
        x = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 1.0]))
        assert fw.unpack_dual(x.detach()).tangent is None
        with lib.no_grad():  # no_grad does not turn forward AD off
            np.testing.assert_array_equal(_values(fw.unpack_dual(x * x).tangent), [2.0, 4.0])
        assert fw.unpack_dual(x.argmax()).tangent is None
        assert fw.unpack_dual(x > 1).tangent is None


def _custom_functions(lib):
    class MulJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.k = k
            return x * y * k

        @staticmethod
        def jvp(ctx, dx, dy, dk):
            x, y = ctx.saved_tensors
            assert dk is None
            return (dx * y + x * dy) * ctx.k

    class NoJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return MulJvp, NoJvp


def test_custom_function_jvp(lib):
    fw = _fw(lib)
    MulJvp, NoJvp = _custom_functions(lib)
    with fw.dual_level():
        x = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([1.0, -1.0]))
        out = MulJvp.apply(x, lib.tensor([3.0, 4.0]), 2)  # y has no tangent: jvp gets zeros for it
        np.testing.assert_array_equal(_values(fw.unpack_dual(out).tangent), [6.0, -8.0])
        _raises(
            NotImplementedError,
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD.",
            lambda: NoJvp.apply(x),
        )


def test_forward_over_reverse(lib):
    """A tangent through a backward with create_graph=True: the Hessian-vector product."""
    fw = _fw(lib)
    x0 = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    v = lib.tensor([1.0, 2.0, -1.0], dtype=lib.float64)
    with fw.dual_level():
        x = fw.make_dual(x0, v)
        y = (x.sin() * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        hvp = fw.unpack_dual(g).tangent
    a = x0.detach().numpy()
    hessian_diagonal = 2 * np.cos(a) - a * np.sin(a)
    np.testing.assert_allclose(_values(hvp), hessian_diagonal * v.numpy(), rtol=1e-12)


def test_reverse_over_forward(lib):
    """A tangent is differentiable by reverse mode, with respect to the primal and to the tangent."""
    fw = _fw(lib)
    x0 = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    v = lib.tensor([1.0, 2.0, -1.0], dtype=lib.float64, requires_grad=True)
    with fw.dual_level():
        x = fw.make_dual(x0, v)
        tangent = fw.unpack_dual(lib.tanh(x).sum()).tangent  # sum((1 - tanh^2) v)
        gx, gv = lib.autograd.grad(tangent, (x0, v))
    a, b = x0.detach().numpy(), v.detach().numpy()
    np.testing.assert_allclose(_values(gv), 1 - np.tanh(a) ** 2, rtol=1e-12)
    np.testing.assert_allclose(_values(gx), -2 * np.tanh(a) * (1 - np.tanh(a) ** 2) * b, rtol=1e-12)


def test_mlp_layers(lib):
    """The ops of an MLP, a CNN and a transformer block, against finite differences along the tangent."""
    F = lib.nn.functional
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in ((2, 1, 6, 6), (3, 1, 3, 3), (3,), (12, 48), (12,), (12,))]
    x, w, b, w2, gamma, beta = (lib.tensor(a) for a in arrays)
    target = lib.tensor([1, 5])

    def f(x):
        h = F.gelu(F.conv2d(x, w, b)).reshape(2, -1)
        h = F.layer_norm(F.linear(h, w2), (12,), gamma, beta)
        h = F.softmax(lib.tanh(h) @ h.T, dim=-1) @ h
        return F.cross_entropy(F.relu(h), target) + F.mse_loss(h, lib.zeros_like(h))

    direction = lib.tensor(rng.standard_normal((2, 1, 6, 6)))
    fw = _fw(lib)
    with fw.dual_level():
        tangent = fw.unpack_dual(f(fw.make_dual(x, direction))).tangent
    eps = 1e-6
    expected = (f(x + eps * direction) - f(x - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(_values(tangent), _values(expected), rtol=1e-6)


def test_every_row_has_a_rule_or_goes_through_its_backward():
    """The fallback (J v through the row's recorded backward) on a row with no rule of its own: cumprod."""
    fw = engine.autograd.forward_ad
    from engine.ops import derivatives as D

    assert D.CUMPROD.jvp is None
    x0 = engine.tensor([0.5, -2.0, 3.0], dtype=engine.float64)
    v = engine.tensor([1.0, 0.5, -1.0], dtype=engine.float64)
    with fw.dual_level():
        tangent = fw.unpack_dual(engine.cumprod(fw.make_dual(x0, v), 0)).tangent
    a, b = x0.numpy(), v.numpy()
    expected = [b[0], b[0] * a[1] + a[0] * b[1], (b[0] * a[1] + a[0] * b[1]) * a[2] + a[0] * a[1] * b[2]]
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-12)


NO_FORWARD_AD = [
    (
        "_scaled_dot_product_flash_attention_for_cpu",
        lambda lib, x: lib.nn.functional.scaled_dot_product_attention(x, x, x),
    ),
    (
        "_embedding_bag",
        lambda lib, x: lib.nn.functional.embedding_bag(lib.tensor([0, 1]), x[0, 0], lib.tensor([0, 1])),
    ),
    ("_unique2", lambda lib, x: lib.unique(x)),
    ("unique_dim", lambda lib, x: lib.unique(x, dim=0)),
]


@pytest.mark.parametrize("aten_name, call", NO_FORWARD_AD, ids=[name for name, _ in NO_FORWARD_AD])
def test_ops_torch_has_no_forward_ad_for_raise_its_error(lib, aten_name, call):
    fw = _fw(lib)
    x = lib.tensor(np.random.default_rng(0).standard_normal((1, 2, 3, 4)))
    with fw.dual_level():
        dual = fw.make_dual(x, lib.ones_like(x))
        with pytest.raises(NotImplementedError) as info:
            call(lib, dual)
    assert str(info.value) == (
        f"Trying to use forward AD with {aten_name} that does not support it because it has not been implemented "
        "yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template="
        "feature-request.yml so that we can prioritize its implementation or submit a PR adding the "
        "implementation to derivatives.yaml"
    )


@pytest.mark.parametrize("saves", ["output", "input"])
def test_forward_over_reverse_through_a_function_that_saves_its_output(lib, saves):
    """A backward recorded under forward AD reads the Function's saved output with its tangent,
    as torch's SavedVariable keeps fw_grad: d/dx (g * exp(x)) along v is g * exp(x) * v."""
    fw = _fw(lib)

    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y if saves == "output" else x)
            ctx.save_for_forward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (s,) = ctx.saved_tensors
            return g * (s if saves == "output" else s.exp())

        @staticmethod
        def jvp(ctx, t):
            (y,) = ctx.saved_tensors
            return t * y

    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    v = lib.tensor([1.0, 2.0, -1.0], dtype=lib.float64)
    with fw.dual_level():
        dual = fw.make_dual(x, v)
        (g,) = lib.autograd.grad(Exp.apply(dual).sum(), dual, create_graph=True)
        tangent = fw.unpack_dual(g).tangent
    np.testing.assert_allclose(tangent.detach().numpy(), (x.exp() * v).detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("op", ["exp", "mul"])
def test_forward_over_reverse_under_saved_tensor_hooks(lib, op):
    """Saved tensors that went through pack/unpack hooks keep their tangents: an output (exp saves
    its result) and inputs (mul saves both) give the gradient's tangent the hooks-free run gives."""
    fw = _fw(lib)
    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    v = lib.tensor([1.0, 2.0, -1.0], dtype=lib.float64)

    def tangent_of_gradient(hooked: bool):
        with fw.dual_level():
            dual = fw.make_dual(x, v)
            if hooked:
                with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
                    out = dual.exp() if op == "exp" else dual * dual
            else:
                out = dual.exp() if op == "exp" else dual * dual
            (g,) = lib.autograd.grad(out.sum(), dual, create_graph=True)
            return fw.unpack_dual(g).tangent.detach().numpy()

    expected = (x.exp() * v).detach().numpy() if op == "exp" else 2 * v.numpy()
    np.testing.assert_allclose(tangent_of_gradient(False), expected, rtol=1e-12)
    np.testing.assert_allclose(tangent_of_gradient(True), expected, rtol=1e-12)
