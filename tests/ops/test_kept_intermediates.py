"""Forward intermediates a row keeps for its raw backward (`keeps=`): GELU's normal cdf, attention's
log-sum-exp. The raw backward that reuses them and the recorded one (create_graph) that recomputes
agree, nodes show only PyTorch's saved values, and the kept arrays go when the node is freed.
"""

import math

import numpy as np
import pytest
from numgrad import check_grad, check_gradgrad

import engine
import engine.nn.functional as F


def _data(seed, shape=(3, 4)):
    return np.random.RandomState(seed).uniform(-1.5, 1.5, shape)


def test_gelu_keeps_its_cdf_for_the_raw_backward_but_shows_only_torchs_saved_values():
    x = engine.tensor(_data(3), requires_grad=True)
    fn = F.gelu(x).grad_fn
    assert fn.attr_names == ("approximate",) and fn.kept_names == ("cdf",)
    assert fn._saved_approximate == "none" and fn._saved_self is x and not hasattr(fn, "_saved_cdf")
    assert fn._attrs[-1][0] is not None  # the box the forward filled
    no_box = engine.tensor(_data(3)).requires_grad_(False)
    assert F.gelu(no_box).grad_fn is None


def test_gelu_node_frees_its_kept_cdf_with_its_saved_values():
    x = engine.tensor(_data(4), requires_grad=True)
    y = F.gelu(x)
    y.sum().backward()
    assert y.grad_fn._attrs == ("none", None)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradients_with_and_without_the_kept_cdf_agree(approximate):
    data = _data(5, (4, 6)) * 3
    x = engine.tensor(data, requires_grad=True)
    check_grad(lambda a: F.gelu(a, approximate=approximate), x)
    check_gradgrad(lambda a: F.gelu(a, approximate=approximate), x)
    (first,) = engine.autograd.grad(F.gelu(x, approximate=approximate).sum(), x, create_graph=True)
    (plain,) = engine.autograd.grad(F.gelu(x, approximate=approximate).sum(), x)
    np.testing.assert_allclose(first.detach().numpy(), plain.numpy(), rtol=1e-14, atol=1e-15)
    for dtype in (engine.float32, engine.float64):
        x32 = engine.tensor(data, dtype=dtype, requires_grad=True)
        F.gelu(x32, approximate=approximate).sum().backward()
        assert x32.grad.dtype is dtype


def _attention_grads(q, k, v, create_graph, **kwargs):
    out = F.scaled_dot_product_attention(q, k, v, **kwargs)
    seed = engine.tensor(np.random.RandomState(9).standard_normal(tuple(out.shape)))
    grads = engine.autograd.grad(out, (q, k, v), seed, create_graph=create_graph)
    return out, [g.detach().numpy() for g in grads]


MASKED_ROW = np.zeros((5, 5))
MASKED_ROW[2] = -np.inf  # a row masked throughout: softmax 0 there, not NaN


@pytest.mark.parametrize(
    "kwargs, heads",
    [({}, 2), ({"is_causal": True}, 2), ({"attn_mask": MASKED_ROW}, 2), ({"enable_gqa": True}, 1)],
    ids=["plain", "causal", "masked-row", "gqa"],
)
def test_attention_backward_from_the_kept_logsumexp_matches_the_recorded_one(kwargs, heads):
    q, k, v = (
        engine.tensor(_data(s, (2, h, 5, 3)), requires_grad=True) for s, h in ((1, 2), (2, heads), (3, heads))
    )
    if "attn_mask" in kwargs:
        kwargs = {"attn_mask": engine.tensor(kwargs["attn_mask"])}
    out, raw = _attention_grads(q, k, v, False, **kwargs)
    fn = out.grad_fn
    assert fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    assert not hasattr(fn, "_saved_logsumexp") and fn.kept_names == ("logsumexp",)
    _, recorded = _attention_grads(q, k, v, True, **kwargs)
    for a, b in zip(raw, recorded):
        assert np.isfinite(a).all()
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    check_grad(lambda a: F.scaled_dot_product_attention(a, k, v, **kwargs), q)


def test_float32_gelu_is_as_close_to_exact_as_torchs_float32_gelu():
    """Phi is evaluated in float32 for float32 GELU: its error stays within torch's own (1.2e-6 absolute)."""
    grid = np.concatenate([np.linspace(-8.0, 8.0, 400_001), [0.0, -0.0, np.inf, -np.inf]]).astype(np.float32)
    x64 = grid.astype(np.float64)
    with np.errstate(invalid="ignore"):
        exact = np.array([0.5 * v * math.erfc(-v / math.sqrt(2.0)) for v in x64.tolist()])
    got = F.gelu(engine.tensor(grid))
    assert got.dtype is engine.float32
    got = got.numpy().astype(np.float64)
    finite = np.isfinite(grid)
    error = np.abs(got[finite] - exact[finite])
    assert (error <= 4e-7 * np.maximum(np.abs(x64[finite]), 1.0)).all(), grid[finite][error.argmax()]
    assert (got[finite & (grid < 0)] <= 0).all()
    assert np.isnan(got[-2:]).all()  # torch's float32 kernel: GELU(+-inf) is NaN
    assert np.isnan(F.gelu(engine.tensor([np.nan], dtype=engine.float32)).item())


SPECIAL = [-np.inf, np.inf, np.nan, -30.0, -10.0, -6.0, -5.7, 0.0, -0.0, 1e-30, -1e-30, 1e30, -1e30, 3.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_special_values_and_deep_tail_are_torchs(torch, dtype, approximate):
    """inf, NaN, signed zeros and the negative tail (-0.0 where Phi is below the dtype's resolution)."""
    values = np.array(SPECIAL, dtype=dtype)
    got = F.gelu(engine.tensor(values), approximate=approximate).numpy()
    want = torch.nn.functional.gelu(torch.tensor(values), approximate=approximate).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    numbers = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)  # zeros and infinities exactly


def test_float32_gelu_tail_is_zero_with_a_vanishing_gradient():
    """Deep in the negative tail float32 GELU is -0.0 (it was x Phi(-5.66), growing with |x|), and its
    gradient is Phi + x pdf: as small as the float64 one there."""
    tail = np.array([-6.0, -10.0, -30.0, -1e4], dtype=np.float32)
    x = engine.tensor(tail, requires_grad=True)
    y = F.gelu(x)
    assert (y.detach().numpy() == 0).all() and np.signbit(y.detach().numpy()).all()
    y.sum().backward()
    x64 = engine.tensor(tail.astype(np.float64), requires_grad=True)
    F.gelu(x64).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x64.grad.numpy(), rtol=0, atol=1e-7)


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("normalized_shape", [(4,), (3, 4)])
def test_layer_norm_backward_from_the_kept_xhat_matches_the_recorded_one(affine, normalized_shape):
    x = engine.tensor(_data(6, (2, 3, 4)) * 2, requires_grad=True)
    weight = engine.tensor(_data(7, normalized_shape), requires_grad=True) if affine else None
    bias = engine.tensor(_data(8, normalized_shape), requires_grad=True) if affine else None
    leaves = (x, weight, bias) if affine else (x,)
    out = F.layer_norm(x, normalized_shape, weight, bias)
    fn = out.grad_fn
    assert fn.name() == "NativeLayerNormBackward0" and fn.kept_names == ("xhat",)
    stats_shape = (2, 3, 1) if len(normalized_shape) == 1 else (2, 1, 1)  # torch's mean and rstd
    assert not hasattr(fn, "_saved_xhat") and tuple(fn._saved_result1.shape) == stats_shape
    seed = engine.tensor(np.random.RandomState(9).standard_normal((2, 3, 4)))
    raw = engine.autograd.grad(out, leaves, seed, retain_graph=True)
    recorded = engine.autograd.grad(out, leaves, seed, create_graph=True)
    for a, b in zip(raw, recorded):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-14)
    for k, leaf in enumerate(leaves):
        others = list(leaves)

        def f(t, k=k, others=others):
            args = others[:k] + [t] + others[k + 1 :]
            return F.layer_norm(args[0], normalized_shape, *(args[1:] if affine else ()))

        check_grad(f, leaf)
        check_gradgrad(f, leaf)


def test_layer_norm_output_changed_in_place_leaves_the_kept_xhat_alone():
    """Without weight and bias the output is a copy of x-hat: changing it cannot change the gradient."""
    x = engine.tensor(_data(10, (3, 5)), requires_grad=True)
    out = F.layer_norm(x, (5,))
    want = engine.autograd.grad((F.layer_norm(x, (5,)) * engine.tensor(_data(11, (3, 5)))).sum(), x)[0]
    y = out * engine.tensor(_data(11, (3, 5)))
    with engine.no_grad():
        out.mul_(100.0)
    (got,) = engine.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
