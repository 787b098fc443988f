"""Autograd semantics: version counters, views, in-place checks, graph
retention, hooks, grad modes, custom Functions and the autograd.grad/backward API.

The module under test is ENGINE_MODULE ("engine" by default); run with
ENGINE_MODULE=torch to validate these expectations against real PyTorch.
"""

import os
import warnings

import numpy as np
import pytest

torch = pytest.importorskip(os.environ.get("ENGINE_MODULE", "engine"))

MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
SECOND_TIME = "Trying to backward through the graph a second time"


def f64(values, requires_grad=False):
    return torch.tensor(np.array(values, dtype=np.float64), requires_grad=requires_grad)


def close(t, expected):
    np.testing.assert_allclose(
        t.detach().numpy(),
        np.asarray(expected, dtype=np.float64),
        rtol=1e-12,
        atol=1e-12,
    )


def grad_of(t):
    """t.grad without torch's warning about reading .grad of a non-leaf."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.grad


# --------------------------------------------------------------------------- versions


def _iadd(t):
    t += 1


def _isub(t):
    t -= 1


def _imul(t):
    t *= 2


def _idiv(t):
    t /= 2


def _setitem_scalar(t):
    t[0] = 5.0


def _setitem_slice(t):
    t[1:] = f64([7.0, 8.0])


INPLACE = {
    "add_": (lambda t: t.add_(1), [2, 3, 4]),
    "add_tensor": (lambda t: t.add_(f64([1, 1, 1])), [2, 3, 4]),
    "sub_": (lambda t: t.sub_(1), [0, 1, 2]),
    "mul_": (lambda t: t.mul_(2), [2, 4, 6]),
    "div_": (lambda t: t.div_(2), [0.5, 1, 1.5]),
    "pow_": (lambda t: t.pow_(2), [1, 4, 9]),
    "exp_": (lambda t: t.exp_(), np.exp([1, 2, 3])),
    "zero_": (lambda t: t.zero_(), [0, 0, 0]),
    "fill_": (lambda t: t.fill_(3.0), [3, 3, 3]),
    "clamp_": (lambda t: t.clamp_(1.5, 2.5), [1.5, 2, 2.5]),
    "iadd": (_iadd, [2, 3, 4]),
    "isub": (_isub, [0, 1, 2]),
    "imul": (_imul, [2, 4, 6]),
    "idiv": (_idiv, [0.5, 1, 1.5]),
    "setitem_scalar": (_setitem_scalar, [5, 2, 3]),
    "setitem_slice": (_setitem_slice, [1, 7, 8]),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_bumps_version_once(name):
    op, expected = INPLACE[name]
    t = f64([1, 2, 3])
    before = t._version
    op(t)
    assert t._version == before + 1
    close(t, expected)
    op(t)
    assert t._version == before + 2


@pytest.mark.parametrize("name", [n for n in INPLACE if n.endswith("_")])
def test_inplace_method_returns_self(name):
    t = f64([1, 2, 3])
    assert INPLACE[name][0](t) is t


def test_augmented_assignment_keeps_object():
    t = f64([1, 2, 3])
    orig = t
    t += 1
    t *= 2
    assert t is orig


def test_out_of_place_ops_do_not_bump_version():
    t = f64([1, 2, 3])
    before = t._version
    _ = t + 1, t * 2, t.exp(), t[1:], t.sum(), -t, t.clone()
    assert t._version == before


def test_new_tensor_version_zero():
    assert f64([1.0])._version == 0
    assert (f64([1.0]) * 2)._version == 0


# --------------------------------------------------------------------------- views

VIEWS = {
    "view": (lambda b: b.view(6), lambda a: a.reshape(6)),
    "view_2d": (lambda b: b.view(3, 2), lambda a: a.reshape(3, 2)),
    "reshape_contiguous": (lambda b: b.reshape(3, 2), lambda a: a.reshape(3, 2)),
    "slice_rows": (lambda b: b[1:], lambda a: a[1:]),
    "slice_step": (lambda b: b[:, ::2], lambda a: a[:, ::2]),
    "int_index": (lambda b: b[1], lambda a: a[1]),
    "t": (lambda b: b.t(), lambda a: a.T),
    "transpose": (lambda b: b.transpose(0, 1), lambda a: a.T),
    "permute": (lambda b: b.permute(1, 0), lambda a: a.T),
    "expand": (lambda b: b[:1].expand(4, 3), lambda a: np.broadcast_to(a[:1], (4, 3))),
    "unsqueeze": (lambda b: b.unsqueeze(0), lambda a: a[None]),
    "squeeze": (lambda b: b.unsqueeze(1).squeeze(1), lambda a: a),
    "view_of_view": (lambda b: b.view(6)[2:5], lambda a: a.reshape(6)[2:5]),
}


def _base_tensor():
    return f64(np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("name", list(VIEWS))
def test_view_sees_base_updates_and_shares_version(name):
    make, make_np = VIEWS[name]
    base = _base_tensor()
    v = make(base)
    assert v._version == base._version
    base.mul_(10)
    close(v, make_np(np.arange(6.0).reshape(2, 3) * 10))
    assert v._version == base._version == 1


@pytest.mark.parametrize("name", list(VIEWS))
def test_view_base_attribute(name):
    base = _base_tensor()
    v = VIEWS[name][0](base)
    assert base._base is None
    assert v._base is base  # views of views point to the root


@pytest.mark.parametrize("name", [n for n in VIEWS if n != "expand"])
def test_writing_through_view_updates_base(name):
    make, make_np = VIEWS[name]
    base = _base_tensor()
    v = make(base)
    v.add_(100)
    expected = np.arange(6.0).reshape(2, 3)
    make_np(expected)[...] += 100
    close(base, expected)
    assert base._version == v._version == 1


def test_detach_shares_storage_and_version_but_is_not_a_view():
    base = _base_tensor()
    d = base.detach()
    assert d._base is None
    d.add_(1)
    close(base, np.arange(6.0).reshape(2, 3) + 1)
    assert base._version == d._version == 1
    base.zero_()
    close(d, np.zeros((2, 3)))
    assert d._version == 2


def test_numpy_shares_memory():
    base = _base_tensor()
    base.numpy()[0, 0] = 42.0
    assert base[0, 0].item() == 42.0


def test_reshape_of_non_contiguous_copies():
    base = _base_tensor()
    r = base.t().reshape(6)
    base.add_(1)
    close(r, np.arange(6.0).reshape(2, 3).T.reshape(6))
    assert r._version == 0


# --------------------------------------------------------------------------- in-place checks in backward


def test_modified_saved_tensor_raises_with_torch_message():
    x = f64([0.1, 0.2, 0.3], requires_grad=True)
    y = x.sin()
    z = y * y
    y.add_(1)
    msg = (
        MODIFIED + r": \[(torch|engine)\.DoubleTensor \[3\]\], which is output 0 of \w+, "
        r"is at version 1; expected version 0 instead"
    )
    with pytest.raises(RuntimeError, match=msg):
        z.sum().backward()


def test_modified_saved_output_raises():
    x = f64([0.1, 0.2, 0.3], requires_grad=True)
    y = x.exp()  # exp saves its result
    y.mul_(2)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


def test_modified_saved_tensor_through_view_raises():
    x = f64([0.1, 0.2, 0.3], requires_grad=True)
    y = x * 1
    z = y**2
    y[0] = 0.0
    with pytest.raises(RuntimeError, match=MODIFIED):
        z.sum().backward()


def test_modified_saved_leaf_under_no_grad_raises():
    x = f64([0.1, 0.2, 0.3], requires_grad=True)
    z = x * x
    with torch.no_grad():
        x.add_(1)
    with pytest.raises(RuntimeError, match=MODIFIED):
        z.sum().backward()


def test_modifying_unsaved_tensor_is_fine():
    x = f64([0.1, 0.2, 0.3], requires_grad=True)
    y = x * 1
    z = y + 1  # add saves nothing
    y.mul_(2)
    z.sum().backward()
    close(x.grad, [1, 1, 1])


@pytest.mark.parametrize(
    "op",
    [
        lambda x: x.add_(1),
        lambda x: x.mul_(2),
        lambda x: x.zero_(),
        _iadd,
        _setitem_scalar,
    ],
    ids=["add_", "mul_", "zero_", "iadd", "setitem"],
)
def test_inplace_on_leaf_requiring_grad_raises(op):
    x = f64([1, 2, 3], requires_grad=True)
    with pytest.raises(RuntimeError, match=LEAF_INPLACE):
        op(x)


def test_inplace_on_leaf_under_no_grad_allowed():
    x = f64([1, 2, 3], requires_grad=True)
    with torch.no_grad():
        x.mul_(2)
        x[0] = 10.0
    close(x, [10, 4, 6])
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    assert x._version == 2
    (x * x).sum().backward()
    close(x.grad, [20, 8, 12])


def test_inplace_on_leaf_not_requiring_grad_allowed():
    x = f64([1, 2, 3])
    x.add_(1)
    close(x, [2, 3, 4])


@pytest.mark.parametrize(
    "op, name",
    [
        (lambda y: y.mul_(2), "MulBackward0"),
        (lambda y: y.add_(1), "AddBackward0"),
        (lambda y: y.sub_(1), "SubBackward0"),
        (lambda y: y.div_(2), "DivBackward0"),
        (lambda y: y.exp_(), "ExpBackward0"),
        (lambda y: y.pow_(2), "PowBackward0"),
        (_iadd, "AddBackward0"),
        (_imul, "MulBackward0"),
        (_setitem_scalar, "CopySlices"),
    ],
)
def test_grad_fn_name_after_inplace_on_non_leaf(op, name):
    x = f64([1, 2, 3], requires_grad=True)
    y = x + 0
    assert type(y.grad_fn).__name__ == "AddBackward0"
    op(y)
    assert type(y.grad_fn).__name__ == name
    assert y._version == 1 and not y.is_leaf


def test_grad_fn_name_method():
    x = f64([1, 2, 3], requires_grad=True)
    assert (x * 2).grad_fn.name() == "MulBackward0"
    assert x.exp().grad_fn.name() == "ExpBackward0"
    assert x.grad_fn is None


# --------------------------------------------------------------------------- graph retention, accumulation


def test_backward_twice_raises():
    x = f64([1, 2, 3], requires_grad=True)
    y = x.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError, match=SECOND_TIME):
        y.backward()


def test_backward_twice_with_retain_graph_accumulates():
    x = f64([1, 2, 3], requires_grad=True)
    y = (x**2).sum()
    y.backward(retain_graph=True)
    close(x.grad, [2, 4, 6])
    y.backward()
    close(x.grad, [4, 8, 12])


def test_backward_twice_without_saved_tensors_is_allowed():
    # torch only fails when a *saved tensor* was freed; add/sum save none.
    x = f64([1, 2, 3], requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    close(x.grad, [2, 2, 2])


def test_autograd_grad_twice_raises():
    x = f64([1, 2, 3], requires_grad=True)
    y = x.sin().sum()
    torch.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match=SECOND_TIME):
        torch.autograd.grad(y, x)


def test_grads_accumulate_across_graphs():
    x = f64([1, 2, 3], requires_grad=True)
    (x * 2).sum().backward()
    (x * x).sum().backward()
    close(x.grad, [4, 6, 8])


def test_grad_reset_to_none():
    x = f64([1, 2, 3], requires_grad=True)
    assert x.grad is None
    (x * 2).sum().backward()
    x.grad = None
    assert x.grad is None
    (x * 3).sum().backward()
    close(x.grad, [3, 3, 3])
    x.grad.zero_()
    (x * 1).sum().backward()
    close(x.grad, [1, 1, 1])


def test_leaf_grad_properties():
    x = f64([1, 2, 3], requires_grad=True)
    (x * 2).sum().backward()
    assert x.grad.dtype == torch.float64
    assert tuple(x.grad.shape) == (3,)
    assert not x.grad.requires_grad and x.grad.grad_fn is None


def test_shared_input_gradients_sum():
    x = f64([1, 2, 3], requires_grad=True)
    y = x * 2
    z = y * y + y.exp() + y
    z.sum().backward()
    a = np.array([1.0, 2, 3])
    close(x.grad, 2 * (2 * 2 * a + np.exp(2 * a) + 1))


def test_backward_non_scalar_requires_gradient():
    x = f64([1, 2, 3], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    y.backward(f64([1, 0, 2]))
    close(x.grad, [2, 0, 4])


# --------------------------------------------------------------------------- hooks, retain_grad


def test_hook_replaces_gradient_and_remove():
    x = f64([1, 2, 3], requires_grad=True)
    handle = x.register_hook(lambda g: g * 10)
    (x * 2).sum().backward()
    close(x.grad, [20, 20, 20])
    handle.remove()
    x.grad = None
    (x * 2).sum().backward()
    close(x.grad, [2, 2, 2])


def test_hook_returning_none_observes():
    seen = []
    x = f64([1, 2, 3], requires_grad=True)
    x.register_hook(lambda g: seen.append(g.detach().numpy().copy()))
    (x * 3).sum().backward()
    np.testing.assert_allclose(seen[0], [3, 3, 3])
    close(x.grad, [3, 3, 3])


def test_hook_on_non_leaf_changes_upstream():
    x = f64([1, 2, 3], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g + 1)
    (y * y).sum().backward()
    close(x.grad, (2 * 2 * np.array([1.0, 2, 3]) + 1) * 2)


def test_multiple_hooks_chain_in_order():
    x = f64([1, 2, 3], requires_grad=True)
    x.register_hook(lambda g: g + 1)
    x.register_hook(lambda g: g * 10)
    x.sum().backward()
    close(x.grad, [20, 20, 20])


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(
        RuntimeError,
        match="cannot register a hook on a tensor that doesn't require gradient",
    ):
        f64([1.0]).register_hook(lambda g: g)


def test_retain_grad():
    x = f64([1, 2, 3], requires_grad=True)
    y = x * 2
    w = x * 3
    y.retain_grad()
    assert y.retains_grad and not w.retains_grad
    (y * y + w).sum().backward()
    close(y.grad, [4, 8, 12])
    assert grad_of(w) is None
    close(x.grad, [8 + 3, 16 + 3, 24 + 3])


def test_retain_grad_on_leaf_is_noop():
    x = f64([1, 2, 3], requires_grad=True)
    x.retain_grad()
    x.sum().backward()
    close(x.grad, [1, 1, 1])


# --------------------------------------------------------------------------- grad modes


def test_no_grad_context():
    x = f64([1, 2, 3], requires_grad=True)
    assert torch.is_grad_enabled()
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        y = x * 2
    assert torch.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_nested_modes():
    x = f64([1, 2, 3], requires_grad=True)
    with torch.no_grad():
        with torch.enable_grad():
            a = x * 2
            with torch.set_grad_enabled(False):
                b = x * 2
            c = x * 2
        d = x * 2
    assert a.requires_grad and c.requires_grad
    assert not b.requires_grad and not d.requires_grad
    with torch.set_grad_enabled(True):
        assert (x * 2).requires_grad


def test_mode_restored_after_exception():
    with pytest.raises(ValueError), torch.no_grad():
        raise ValueError
    assert torch.is_grad_enabled()


def test_set_grad_enabled_as_function():
    x = f64([1.0], requires_grad=True)
    torch.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        torch.set_grad_enabled(True)
    assert (x * 2).requires_grad


def test_decorators():
    x = f64([1.0], requires_grad=True)

    @torch.no_grad()
    def no_grad_call(t):
        return t * 2

    @torch.no_grad
    def no_grad_bare(t):
        return t * 2

    @torch.enable_grad()
    def enable_grad_call(t):
        return t * 2

    @torch.set_grad_enabled(False)
    def disabled(t):
        return t * 2

    assert not no_grad_call(x).requires_grad
    assert not no_grad_bare(x).requires_grad
    assert not disabled(x).requires_grad
    assert torch.is_grad_enabled()
    with torch.no_grad():
        assert enable_grad_call(x).requires_grad
        assert not torch.is_grad_enabled()


def test_decorator_keeps_function_name():
    @torch.no_grad()
    def my_function(t):
        return t

    assert my_function.__name__ == "my_function"


# --------------------------------------------------------------------------- requires_grad, detach


def test_requires_grad_propagation():
    a = f64([1, 2])
    b = f64([3, 4], requires_grad=True)
    assert not a.requires_grad and a.is_leaf
    assert b.requires_grad and b.is_leaf
    assert not (a * 2).requires_grad and (a * 2).is_leaf
    c = a * b
    assert c.requires_grad and not c.is_leaf and c.grad_fn is not None
    assert torch.cat([a, b]).requires_grad and torch.stack([a, a]).requires_grad is False
    assert torch.where(a > 1, a, b).requires_grad


def test_comparison_results_do_not_require_grad():
    b = f64([3, 4], requires_grad=True)
    assert not (b > 3).requires_grad
    assert (b > 3).dtype == torch.bool


def test_requires_grad_on_integer_tensor_raises():
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        torch.tensor([1, 2]).requires_grad_()


def test_requires_grad_():
    a = f64([1, 2])
    assert a.requires_grad_() is a and a.requires_grad
    a.requires_grad_(False)
    assert not a.requires_grad
    a.requires_grad = True
    assert a.requires_grad


def test_requires_grad_false_on_non_leaf_raises():
    y = f64([1, 2], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)


def test_detach():
    x = f64([1, 2], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    assert y.requires_grad and y.grad_fn is not None
    close(d, [2, 4])


def test_detach_inplace():
    x = f64([1, 2], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    z = (y * x).sum()
    z.backward()
    close(x.grad, [2, 4])


def test_detached_result_modified_breaks_backward():
    x = f64([0.1, 0.2], requires_grad=True)
    y = x.exp()
    y.detach().zero_()
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


# --------------------------------------------------------------------------- custom Function

RECORD = {}


class MulAdd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y, alpha):
        RECORD["grad_enabled_in_forward"] = torch.is_grad_enabled()
        ctx.save_for_backward(x, y)
        ctx.alpha = alpha
        return x * y * alpha

    @staticmethod
    def backward(ctx, grad):
        RECORD["needs_input_grad"] = ctx.needs_input_grad
        x, y = ctx.saved_tensors
        gx = grad * y * ctx.alpha if ctx.needs_input_grad[0] else None
        gy = grad * x * ctx.alpha if ctx.needs_input_grad[1] else None
        return gx, gy, None


class InplaceDouble(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class SortLike(torch.autograd.Function):
    """Two outputs; the second (an 'index') is non-differentiable."""

    @staticmethod
    def forward(ctx, x):
        idx = torch.tensor(np.arange(x.shape[0], dtype=np.float64))
        ctx.mark_non_differentiable(idx)
        return x * 3, idx

    @staticmethod
    def backward(ctx, grad, grad_idx):
        RECORD["grad_idx"] = grad_idx
        return grad * 3


class TwoOutputs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2, x * x

    @staticmethod
    def backward(ctx, g1, g2):
        RECORD["g2"] = g2
        (x,) = ctx.saved_tensors
        return g1 * 2 + g2 * 2 * x


def test_custom_function_basic():
    RECORD.clear()
    x = f64([1, 2, 3], requires_grad=True)
    y = f64([4, 5, 6])
    out = MulAdd.apply(x, y, 0.5)
    assert RECORD["grad_enabled_in_forward"] is False
    assert torch.is_grad_enabled()
    assert type(out.grad_fn).__name__ == "MulAddBackward"
    assert out.requires_grad
    close(out, [2, 5, 9])
    out.sum().backward()
    assert tuple(RECORD["needs_input_grad"]) == (True, False, False)
    close(x.grad, [2, 2.5, 3])
    assert y.grad is None


def test_custom_function_no_grad_inputs():
    out = MulAdd.apply(f64([1, 2]), f64([3, 4]), 2.0)
    assert not out.requires_grad and out.grad_fn is None


def test_custom_function_in_graph_and_higher_level():
    x = f64([1, 2, 3], requires_grad=True)
    y = f64([4, 5, 6], requires_grad=True)
    out = MulAdd.apply(x.exp(), y * 2, 1.0).sum()
    gx, gy = torch.autograd.grad(out, [x, y])
    a, b = np.array([1.0, 2, 3]), np.array([4.0, 5, 6])
    close(gx, np.exp(a) * 2 * b)
    close(gy, np.exp(a) * 2)


def test_custom_function_mark_dirty():
    x = f64([1, 2, 3], requires_grad=True)
    y = x * 1
    z = InplaceDouble.apply(y)
    assert z is y
    assert y._version >= 1  # torch bumps once for mul_ and once more for mark_dirty
    assert type(y.grad_fn).__name__ == "InplaceDoubleBackward"
    close(y, [2, 4, 6])
    (z * z).sum().backward()
    close(x.grad, 2 * 2 * np.array([2.0, 4, 6]))


def test_custom_function_mark_non_differentiable():
    RECORD.clear()
    x = f64([1, 2, 3], requires_grad=True)
    out, idx = SortLike.apply(x)
    assert out.requires_grad and not idx.requires_grad
    close(idx, [0, 1, 2])
    out.sum().backward()
    close(x.grad, [3, 3, 3])
    close(RECORD["grad_idx"], [0, 0, 0])


def test_custom_function_two_outputs():
    RECORD.clear()
    x = f64([1, 2, 3], requires_grad=True)
    a, b = TwoOutputs.apply(x)
    assert a.grad_fn is b.grad_fn
    (a.sum() + (b * 2).sum()).backward()
    close(x.grad, 2 + 2 * 2 * np.array([1.0, 2, 3]))
    x.grad = None
    a, b = TwoOutputs.apply(x)
    a.sum().backward()  # gradient for the unused output is materialized as zeros
    close(RECORD["g2"], [0, 0, 0])
    close(x.grad, [2, 2, 2])


# --------------------------------------------------------------------------- autograd.grad / backward API


def test_autograd_grad_does_not_touch_dot_grad():
    x = f64([1, 2, 3], requires_grad=True)
    (g,) = torch.autograd.grad((x * x).sum(), x)
    close(g, [2, 4, 6])
    assert x.grad is None
    assert not g.requires_grad


def test_autograd_grad_unused_input():
    x = f64([1, 2, 3], requires_grad=True)
    z = f64([1, 2, 3], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="appears to not have been used in the graph",
    ):
        torch.autograd.grad((x * 2).sum(), [x, z])
    gx, gz = torch.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    close(gx, [2, 2, 2])
    assert gz is None


def test_autograd_grad_create_graph():
    x = f64([1, 2, 3], requires_grad=True)
    (g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    close(g, 3 * np.array([1.0, 2, 3]) ** 2)
    (h,) = torch.autograd.grad(g.sum(), x)
    close(h, 6 * np.array([1.0, 2, 3]))


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_double_backward_with_backward_create_graph():
    x = f64([1, 2, 3], requires_grad=True)
    (x**3).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    x.grad = None
    g.sum().backward()
    close(x.grad, 6 * np.array([1.0, 2, 3]))


def test_autograd_grad_grad_outputs_and_multiple_outputs():
    x = f64([1, 2, 3], requires_grad=True)
    y1, y2 = x * 2, x * x
    (g,) = torch.autograd.grad([y1, y2], [x], grad_outputs=[f64([1, 1, 1]), f64([1, 0, -1])])
    close(g, [2 + 2, 2, 2 - 6])


def test_autograd_grad_non_scalar_needs_grad_outputs():
    x = f64([1, 2, 3], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        torch.autograd.grad(x * 2, x)


def test_autograd_backward_multiple():
    x = f64([1, 2, 3], requires_grad=True)
    y1, y2 = x * 2, x.exp()
    torch.autograd.backward([y1, y2], [f64([1, 2, 3]), f64([1, 1, 0])])
    close(x.grad, [2 + np.e, 4 + np.exp(2), 6])


def test_backward_inputs_only_accumulates_there():
    x = f64([1, 2, 3], requires_grad=True)
    w = f64([4, 5, 6], requires_grad=True)
    loss = (w * x).sum()
    loss.backward(inputs=[w])
    close(w.grad, [1, 2, 3])
    assert x.grad is None


def test_autograd_backward_inputs():
    x = f64([1, 2, 3], requires_grad=True)
    w = f64([4, 5, 6], requires_grad=True)
    torch.autograd.backward((w * x).sum(), inputs=[x])
    close(x.grad, [4, 5, 6])
    assert w.grad is None


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        f64([1.0]).sum().backward()
