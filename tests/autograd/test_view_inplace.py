"""Views and in-place changes, as PyTorch 2.13 has them:

- a view made in no_grad mode may not be changed in place with grad mode on, and once its
  storage changed it may not be used in grad mode (PyTorch's messages, word for word);
- when a base's data changes in place (through the base, a view, or a detach() alias),
  every other view's grad_fn becomes an AsStridedBackward0 on the base's new history, so
  gradients through it are right even when the changed region overlaps it.

Node names, messages and gradients below were printed by torch 2.13. The module under test
is ENGINE_MODULE ("engine" by default); run with ENGINE_MODULE=torch to check them against
real PyTorch.
"""

import os
import warnings

import numpy as np
import pytest

MODULE = os.environ.get("ENGINE_MODULE", "engine")
torch = pytest.importorskip(MODULE)
ENGINE = MODULE == "engine"

TAIL = (
    " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
    "moving both the view and the inplace either both inside the no_grad block (if you don't want the "
    "inplace to be tracked) or both outside (if you want the inplace to be tracked)."
)
DIRECT = "A view was created in no_grad mode and is being modified inplace with grad mode enabled." + TAIL
INDIRECT = (
    "A view was created in no_grad mode and its base or another view of its base has been modified inplace "
    "with grad mode enabled." + TAIL
)


def view_of_view(node: str, indirect: bool = False) -> str:
    what = "its base or another view of its base has been" if indirect else "is being"
    return (
        f"Output 0 of {node} is a view of a view which was created in no_grad mode and {what} modified "
        f"inplace with grad mode enabled." + TAIL
    )


def test_view_ops_record_their_views():
    """Every view op records its view on the shared version counter (engine.ops.views.note_view)."""
    if not ENGINE:
        pytest.skip("engine bookkeeping")
    b = torch.zeros(2)
    v = b[0]
    from engine.ops.views import views_of

    assert views_of(b)[id(v)]() is v


def name(fn) -> str | None:
    """A node's name without the C++ namespace (torch:: / engine::autograd::CopySlices)."""
    if fn is None:
        return None
    return fn.name().split("::")[-1]


def f64(values, requires_grad=False):
    return torch.tensor(np.array(values, dtype=np.float64), requires_grad=requires_grad)


def close(t, expected):
    np.testing.assert_allclose(
        t.detach().numpy(), np.asarray(expected, dtype=np.float64), rtol=1e-12, atol=1e-12
    )


def message(excinfo) -> str:
    return str(excinfo.value)


# ------------------------------------------------------- views made in no_grad mode


def _leaf():
    return f64([1.0, 2.0, 3.0], requires_grad=True)


def _non_leaf():
    return f64([1.0, 2.0, 3.0], requires_grad=True).clone()


@pytest.mark.parametrize("make", [_leaf, _non_leaf], ids=["leaf", "non_leaf"])
def test_no_grad_view_requires_grad_without_grad_fn(make):
    a = make()
    with torch.no_grad():
        v = a[:2]
    assert v.requires_grad is True
    assert v.grad_fn is None
    assert v.is_leaf is True
    assert v._base is a


@pytest.mark.parametrize("make", [_leaf, _non_leaf], ids=["leaf", "non_leaf"])
def test_no_grad_view_used_in_grad_mode_has_no_edge(make):
    """It requires grad (through its base) but has no AccumulateGrad: nothing reaches it."""
    a = make()
    a.retain_grad()
    with torch.no_grad():
        v = a[:2]
    y = v * 2
    assert y.requires_grad and y.grad_fn.next_functions[0] == (None, 0)
    y.sum().backward()
    assert a.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reading .grad of a view that is not a leaf of its own
        assert v.grad is None


INPLACE = {
    "mul_": lambda v: v.mul_(2),
    "add_": lambda v: v.add_(1),
    "zero_": lambda v: v.zero_(),
    "fill_": lambda v: v.fill_(3.0),
    "copy_": lambda v: v.copy_(f64([5.0, 6.0])),
    "iadd": lambda v: v.__iadd__(1),
}


@pytest.mark.parametrize("op", INPLACE.values(), ids=INPLACE.keys())
@pytest.mark.parametrize("make", [_leaf, _non_leaf], ids=["leaf", "non_leaf"])
def test_no_grad_view_changed_in_grad_mode_raises(make, op):
    # For a leaf, this message comes before "a view of a leaf Variable ...", as in torch.
    a = make()
    with torch.no_grad():
        v = a[:2]
    with pytest.raises(RuntimeError) as excinfo:
        op(v)
    assert message(excinfo) == DIRECT
    close(a, [1.0, 2.0, 3.0])  # refused before anything was written
    assert a._version == 0


def test_no_grad_view_of_plain_tensor_raises_only_when_recorded():
    a = torch.zeros(3, dtype=torch.float64)
    with torch.no_grad():
        v = a[:2]
    v.mul_(2)  # nothing requires grad: nothing to track, fine
    assert v.grad_fn is None and a.grad_fn is None
    assert v._version == 1
    with pytest.raises(RuntimeError) as excinfo:
        v.mul_(f64([1.0, 1.0], requires_grad=True))
    assert message(excinfo) == DIRECT


def test_no_grad_view_changed_in_no_grad_mode_is_fine():
    a = _leaf()
    with torch.no_grad():
        v = a[:2]
        v.mul_(2)
    assert v.requires_grad is True
    assert a._version == v._version == 1
    close(a, [2.0, 4.0, 3.0])


VIEW_OF_VIEW = {
    "unsqueeze": (lambda v: v.unsqueeze(0), "Unsqueeze"),
    "none_index": (lambda v: v[None], "Unsqueeze"),
    "squeeze_dim": (lambda v: v[0:1].squeeze(0), "Squeeze1"),
    "squeeze_all": (lambda v: v.unsqueeze(0).squeeze(), "Squeeze"),
    "t": (lambda v: v.unsqueeze(0).t(), "T"),
    "transpose": (lambda v: v.unsqueeze(0).transpose(0, 1), "Transpose"),
    "permute": (lambda v: v.unsqueeze(0).permute(1, 0), "Permute"),
    "view": (lambda v: v.view(3), "View"),
    "reshape": (lambda v: v.reshape(3, 1), "View"),
    "alias": (lambda v: v[...], "Alias"),
    "select": (lambda v: v[1], "Select"),
    "slice": (lambda v: v[1:], "Slice"),
    "narrow": (lambda v: v.narrow(0, 0, 2), "Slice"),
    "expand": (lambda v: v[0:1].expand(3), "Expand"),
}


@pytest.mark.parametrize("make,node", VIEW_OF_VIEW.values(), ids=VIEW_OF_VIEW.keys())
def test_grad_mode_view_of_no_grad_view_names_its_node(make, node):
    a = _non_leaf()
    with torch.no_grad():
        v = a[:]
    u = make(v)  # grad mode: u has a grad_fn, and inherits "made in no_grad" from v
    with pytest.raises(RuntimeError) as excinfo:
        u.zero_()
    assert message(excinfo) == view_of_view(node)


def test_setitem_on_no_grad_view_raises():
    a = _non_leaf()
    with torch.no_grad():
        v = a[:]
    with pytest.raises(RuntimeError) as excinfo:
        v[0] = 5.0  # through the view v[0] (SelectBackward0)
    assert message(excinfo) == view_of_view("Select")
    with pytest.raises(RuntimeError) as excinfo:
        v[torch.tensor([0])] = 5.0  # index_put_ on v itself
    assert message(excinfo) == DIRECT


def test_no_grad_view_of_any_view_raises_without_node_name():
    a = _non_leaf()
    with torch.no_grad():
        v = a[:]
        w = v[0:2]
    with pytest.raises(RuntimeError) as excinfo:
        w.zero_()
    assert message(excinfo) == DIRECT

    g = a[:]  # grad mode
    with torch.no_grad():
        w = g[0:2]
    with pytest.raises(RuntimeError) as excinfo:
        w.zero_()
    assert message(excinfo) == DIRECT


def test_grad_mode_view_of_plain_no_grad_view_raises_without_node_name():
    a = torch.zeros(2, 3, dtype=torch.float64)
    with torch.no_grad():
        v = a[:]
    u = v[0]  # grad mode, but nothing requires grad: no grad_fn
    assert u.grad_fn is None
    with pytest.raises(RuntimeError) as excinfo:
        u.mul_(f64([1.0, 1.0, 1.0], requires_grad=True))
    assert message(excinfo) == DIRECT


def _change_base(a):
    a.mul_(2)


def _change_base_no_grad(a):
    with torch.no_grad():
        a.mul_(2)


def _change_sibling(a):
    a[1:].mul_(2)


CHANGES = {"base": _change_base, "base_under_no_grad": _change_base_no_grad, "sibling": _change_sibling}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_no_grad_view_after_its_storage_changed(change):
    a = _non_leaf()
    with torch.no_grad():
        v = a[:2]
    change(a)
    assert v.requires_grad is True
    with torch.no_grad():
        close(v * 2, [4.0, 8.0] if change is not _change_sibling else [2.0, 8.0])  # fine under no_grad
    assert repr(v).endswith("grad_fn=<Invalid>)")  # torch: reading grad_fn raises, repr says Invalid
    with pytest.raises(RuntimeError) as excinfo:
        v.grad_fn  # noqa: B018 - reading it raises, as in torch
    assert message(excinfo) == INDIRECT
    with pytest.raises(RuntimeError) as excinfo:
        v * 2  # used in grad mode
    assert message(excinfo) == INDIRECT
    (a * a).sum().backward()  # the base itself is fine


def test_no_grad_view_changed_in_no_grad_mode_then_used_in_grad_mode():
    a = _leaf()
    with torch.no_grad():
        v = a[:2]
        v.mul_(2)
    with pytest.raises(RuntimeError) as excinfo:
        (v * 2).sum().backward()
    assert message(excinfo) == INDIRECT
    with pytest.raises(RuntimeError) as excinfo:
        v.mul_(2)  # changing it again in grad mode: the direct message
    assert message(excinfo) == DIRECT


def test_view_of_no_grad_view_after_its_storage_changed_names_its_node():
    a = _non_leaf()
    with torch.no_grad():
        v = a[:2]
    u = v[0:1]
    a.mul_(2)
    with pytest.raises(RuntimeError) as excinfo:
        (u * 2).sum().backward()
    assert message(excinfo) == view_of_view("Slice", indirect=True)


# ------------------------------------------------ sibling views after an in-place change


def test_sibling_view_overlapping_the_change_gets_its_gradient():
    x = f64([1.0, 2.0, 3.0], requires_grad=True)
    b = x.clone()
    v1 = b[:2]
    v2 = b[1:]
    v1.mul_(10)
    assert name(b.grad_fn) == "CopySlices"
    assert name(v1.grad_fn) == "AsStridedBackward0"
    assert name(v2.grad_fn) == "AsStridedBackward0"
    assert v2.grad_fn.next_functions[0][0] is b.grad_fn
    assert v2.output_nr == 0 and not v2.is_leaf and v2.requires_grad
    close(v2, [20.0, 3.0])
    (v2 * f64([1.0, 100.0])).sum().backward()
    close(x.grad, [0.0, 10.0, 100.0])  # d v2[0] / d x[1] = 10: v2[0] is x[1] * 10 now


def test_view_after_its_base_changed_in_place():
    x = f64([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = x.clone()
    v = b[1]
    b.mul_(3)
    assert name(v.grad_fn) == "AsStridedBackward0"
    assert name(v.grad_fn.next_functions[0][0]) == "MulBackward0"
    assert v.grad_fn.next_functions[0][0] is b.grad_fn
    (v * v).sum().backward()
    close(x.grad, [[0.0, 0.0, 0.0], [72.0, 90.0, 108.0]])


def _views(b):
    return {
        "slice": b[:, 1:],
        "select": b[1],
        "view": b.view(6),
        "t": b.t(),
        "expand": b[0:1].expand(3, 3),
        "unsqueeze": b.unsqueeze(0),
        "alias": b[...],
        "view_of_view": b[1][1:],
        "step": b[:, ::2],
        "none": b[None],
    }


# x.grad for (view * (arange(numel) + 1)).sum(), after b[:, :2] *= 10 (torch 2.13)
THROUGH_V1 = {
    "slice": [[0, 10, 2], [0, 30, 4]],
    "select": [[0, 0, 0], [10, 20, 3]],
    "view": [[10, 20, 3], [40, 50, 6]],
    "t": [[10, 30, 5], [20, 40, 6]],
    "expand": [[120, 150, 18], [0, 0, 0]],
    "unsqueeze": [[10, 20, 3], [40, 50, 6]],
    "alias": [[10, 20, 3], [40, 50, 6]],
    "view_of_view": [[0, 0, 0], [0, 10, 2]],
    "step": [[10, 0, 2], [30, 0, 4]],
    "none": [[10, 20, 3], [40, 50, 6]],
}


def _x23():
    return f64([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)


def _weights(v):
    return (torch.arange(v.numel()).to(torch.float64) + 1).reshape(v.shape)


@pytest.mark.parametrize("kind", THROUGH_V1)
def test_every_kind_of_sibling_view_is_regenerated(kind):
    x = _x23()
    b = x.clone()
    v = _views(b)[kind]
    b[:, :2].mul_(10)
    assert name(v.grad_fn) == "AsStridedBackward0"
    assert v.grad_fn.next_functions[0][0] is b.grad_fn
    assert name(b.grad_fn) == "CopySlices"
    (v * _weights(v)).sum().backward()
    close(x.grad, THROUGH_V1[kind])


@pytest.mark.parametrize("kind", THROUGH_V1)
def test_sibling_gradients_match_finite_differences(kind):
    def f(x):
        b = x.clone()
        v = _views(b)[kind]
        b[:, :2].mul_(x[:, :2])
        return v * v

    assert torch.autograd.gradcheck(f, (_x23(),))
    assert torch.autograd.gradgradcheck(f, (_x23(),))


def _through_base_no_grad(b):
    with torch.no_grad():
        b.mul_(10)


def _through_view_no_grad(b):
    with torch.no_grad():
        b[:, :2].mul_(10)


def _through_detached_alias(b):
    b.detach().mul_(10)


@pytest.mark.parametrize(
    "change",
    [_through_base_no_grad, _through_view_no_grad, _through_detached_alias],
    ids=["base_no_grad", "view_no_grad", "detach"],
)
def test_unrecorded_change_regenerates_views_on_the_same_history(change):
    # torch regenerates when the version moved, whoever moved it: the history is unchanged
    x = _x23()
    b = x.clone()
    views = _views(b)
    change(b)
    assert name(b.grad_fn) == "CloneBackward0"
    for kind, v in views.items():
        assert name(v.grad_fn) == "AsStridedBackward0", kind
        assert v.grad_fn.next_functions[0][0] is b.grad_fn
    x.grad = None
    (views["t"] * _weights(views["t"])).sum().backward()
    close(x.grad, [[1, 3, 5], [2, 4, 6]])


def test_view_of_leaf_after_no_grad_change_points_at_accumulate_grad():
    x = _leaf()
    v = x[:2]
    with torch.no_grad():
        x.mul_(2)
    assert name(v.grad_fn) == "AsStridedBackward0"
    assert name(v.grad_fn.next_functions[0][0]) == "AccumulateGrad"
    (v * f64([1.0, 2.0])).sum().backward()
    close(x.grad, [1.0, 2.0, 0.0])


def test_two_overlapping_changes():
    x = f64([1.0, 2.0, 3.0], requires_grad=True)
    b = x.clone()
    v1 = b[:2]
    v2 = b[1:]
    v1.mul_(10)
    v2.mul_(f64([2.0, 3.0]))
    assert (name(b.grad_fn), name(v1.grad_fn), name(v2.grad_fn)) == (
        "CopySlices",
        "AsStridedBackward0",
        "AsStridedBackward0",
    )
    (v1 * f64([1.0, 7.0])).sum().backward()
    close(x.grad, [10.0, 140.0, 0.0])


def test_retain_grad_moves_to_the_regenerated_node():
    x = f64([1.0, 2.0, 3.0], requires_grad=True)
    b = x.clone()
    v = b[1:]
    v.retain_grad()
    y = v * 2  # uses v's history before the change
    b.mul_(3)
    (y + v).sum().backward()
    close(v.grad, [1.0, 1.0])  # only the gradient reaching v after the change, as in torch
    close(x.grad, [0.0, 5.0, 5.0])


def test_view_of_plain_tensor_joins_the_graph_when_its_base_does():
    b = torch.zeros(3, dtype=torch.float64)
    w = b[:2]
    assert not w.requires_grad and w.grad_fn is None
    y = f64([1.0, 2.0, 3.0], requires_grad=True)
    b.copy_(y * 2)
    assert w.requires_grad
    assert name(w.grad_fn) == "AsStridedBackward0"
    assert w.grad_fn.next_functions[0][0] is b.grad_fn
    (w * w).sum().backward()
    close(y.grad, [8.0, 16.0, 0.0])


def test_double_backward_through_regenerated_views():
    x = f64([1.0, 2.0, 3.0], requires_grad=True)
    b = x.clone()
    v1 = b[:2]
    v2 = b[1:]
    v1.mul_(x[:2])  # b = [x0^2, x1^2, x2]
    (g,) = torch.autograd.grad((v2 * v2).sum(), x, create_graph=True)
    close(g, [0.0, 32.0, 6.0])  # d(x1^4 + x2^2)
    (h,) = torch.autograd.grad(g.sum(), x)
    close(h, [0.0, 48.0, 2.0])


def test_double_backward_through_regenerated_expanded_view():
    x = f64([1.0, 2.0, 3.0], requires_grad=True)
    b = x.clone()
    e = b[0:1].expand(4)  # sees b[0] four times
    b.mul_(x)
    (g,) = torch.autograd.grad((e * e * torch.arange(4).to(torch.float64)).sum(), x, create_graph=True)
    close(g, [24.0, 0.0, 0.0])  # d(6 x0^4)
    (h,) = torch.autograd.grad((g * g).sum(), x)
    close(h, [3456.0, 0.0, 0.0])  # d(576 x0^6)


@pytest.mark.skipif(not ENGINE, reason="the engine's view table")
def test_dead_views_leave_the_table():
    from engine.ops.views import views_of

    b = torch.zeros(100)
    kept = [b[i] for i in range(3)]
    for i in range(1000):
        b[i % 100]
    views = views_of(b)
    assert len(views) < 80
    b.add_(1)  # walking the table drops the rest
    assert len(views) == len(kept)
