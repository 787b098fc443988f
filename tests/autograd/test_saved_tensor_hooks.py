"""autograd.graph.saved_tensors_hooks, save_on_cpu and disable_saved_tensors_hooks, as torch's:
what is packed and when, what unpacking gives back, and the errors."""

import re

import numpy as np
import pytest

import engine


def _graph(lib):
    return lib.autograd.graph


def _identity_hooks(lib, calls: list):
    def pack(t):
        calls.append("pack")
        return t

    def unpack(t):
        calls.append("unpack")
        return t

    return _graph(lib).saved_tensors_hooks(pack, unpack)


def test_packed_at_save_time_unpacked_at_each_read(lib):
    a = lib.ones(3, requires_grad=True)
    calls = []
    with _identity_hooks(lib, calls):
        b = a * 1  # a Python number is not a saved tensor
        c = b.sin()
        d = a.sin()
        lib.mul(a, lib.tensor(2.0))  # saves the 0-dim tensor only
    assert calls == ["pack"] * 3
    saved = c.grad_fn._saved_self
    assert saved is not b and saved.grad_fn is b.grad_fn
    leaf = d.grad_fn._saved_self
    assert leaf is not a and leaf.is_leaf and leaf.requires_grad
    assert calls == ["pack"] * 3 + ["unpack"] * 2
    c.sum().backward()
    assert calls[-1] == "unpack" and len(calls) == 6
    np.testing.assert_allclose(a.grad.numpy(), np.cos(np.ones(3)))


def test_saved_output_unpacks_with_its_node(lib):
    a = lib.ones(3, requires_grad=True)
    with _identity_hooks(lib, []):
        e = a.exp()
    r = e.grad_fn._saved_result
    assert r is not e and r.grad_fn is e.grad_fn and lib.equal(r, e)


def test_hooks_change_what_backward_reads(lib):
    a = lib.full((3,), 2.0, requires_grad=True)
    with _graph(lib).saved_tensors_hooks(lambda t: t * 10, lambda t: t / 10):
        (a * a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [4.0] * 3)
    a.grad = None
    with _graph(lib).saved_tensors_hooks(lambda t: t, lambda t: t * 0):
        (a * a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [0.0] * 3)


def test_innermost_registration_applies(lib):
    a = lib.ones(3, requires_grad=True)
    seen = []
    with _graph(lib).saved_tensors_hooks(lambda t: ("outer", t), lambda p: (seen.append(p[0]), p[1])[1]):
        with _graph(lib).saved_tensors_hooks(lambda t: ("inner", t), lambda p: (seen.append(p[0]), p[1])[1]):
            inner = a.exp()
        outer = a.exp()
    _ = inner.grad_fn._saved_result, outer.grad_fn._saved_result
    assert seen == ["inner", "outer"]
    plain = a.exp()
    _ = plain.grad_fn._saved_result
    assert seen == ["inner", "outer"]


def test_versions_are_not_checked_through_hooks(lib):
    a = lib.ones(3, requires_grad=True)
    b = a * 1
    with _identity_hooks(lib, []):
        c = b.sin()
    b.add_(1)
    c.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.cos(np.full(3, 2.0)))


def test_freed_after_backward(lib):
    a = lib.ones(3, requires_grad=True)
    with _identity_hooks(lib, []):
        c = (a * 1).sin()
    c.sum().backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        c.sum().backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        _ = c.grad_fn._saved_self


def test_unpack_must_give_a_tensor(lib):
    x = lib.ones(3, requires_grad=True)
    with _graph(lib).saved_tensors_hooks(lambda t: 5, lambda p: p):
        y = x.exp()
    message = "^Output of saved tensor unpack_hook expected to be a Tensor but got result of type int$"
    with pytest.raises(TypeError, match=message):
        y.sum().backward()
    with pytest.raises(TypeError, match=message):
        _ = y.grad_fn._saved_result


def test_pack_must_not_change_its_input(lib):
    x = lib.ones(3, requires_grad=True)
    with pytest.raises(
        RuntimeError, match="^A saved tensor pack hook is modifying its input in place. Tensors"
    ):
        with _graph(lib).saved_tensors_hooks(lambda t: t.mul_(1), lambda t: t):
            (x * 1).exp()


def test_pack_runs_without_grad_and_double_backward_works(lib):
    a = lib.full((3,), 3.0, requires_grad=True)
    modes = []
    with _graph(lib).saved_tensors_hooks(
        lambda t: (modes.append(lib.is_grad_enabled()), t * 1)[1], lambda t: t
    ):
        y = (a * a * a).sum()
    assert modes and not any(modes)
    (g,) = lib.autograd.grad(y, a, create_graph=True)
    g.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [18.0] * 3)


def test_custom_function_saved_tensors(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * x
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, gy):
            x, _ = ctx.saved_tensors
            return 2 * x * gy

    a = lib.ones(3, requires_grad=True)
    calls = []
    with lib.autograd.graph.saved_tensors_hooks(
        lambda t: (calls.append("pack"), t * 2)[1], lambda t: (calls.append("unpack"), t / 2)[1]
    ):
        out = Square.apply(a)
    out.sum().backward()
    assert calls == ["pack", "pack", "unpack", "unpack"]
    np.testing.assert_allclose(a.grad.numpy(), [2.0] * 3)


def test_inplace_op_saves_the_changed_tensor(lib):
    q = lib.ones(3, requires_grad=True).clone()
    with _identity_hooks(lib, []):
        q.exp_()
    assert q.grad_fn._saved_result.data_ptr() == q.data_ptr()


def test_save_on_cpu(lib):
    a = lib.ones(3, requires_grad=True)
    with _graph(lib).save_on_cpu():
        h = a.exp()
    saved = h.grad_fn._saved_result
    assert saved is not h and saved.data_ptr() == h.data_ptr()  # on the CPU, no copy
    with _graph(lib).save_on_cpu(pin_memory=True):
        h = a.exp()
    assert h.grad_fn._saved_result.data_ptr() != h.data_ptr()
    h.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.exp(np.ones(3)))


def test_save_on_cpu_moves_back_to_the_device(fake_cuda):
    a = engine.ones(3, device="cuda", requires_grad=True)
    with engine.autograd.graph.save_on_cpu():
        h = a.exp()
    node = h.grad_fn
    packed = node._saved[0].packed
    assert packed[1].device.type == "cpu" and str(packed[0]) == "cuda:0"
    assert node._saved_result.device.type == "cuda"
    h.sum().backward()
    assert a.grad.device.type == "cuda"


def test_disable_saved_tensors_hooks(lib):
    graph = _graph(lib)
    with pytest.raises(RuntimeError, match="^no hooks here$"):
        with graph.disable_saved_tensors_hooks("no hooks here"):
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with pytest.raises(RuntimeError, match="^no hooks here$"):
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with graph.disable_saved_tensors_hooks("no hooks here"):
                pass
    with pytest.raises(RuntimeError, match=re.escape("outer")):
        with graph.disable_saved_tensors_hooks("outer"):
            with graph.disable_saved_tensors_hooks("inner"):
                pass
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # enabled again
        pass


def test_raw_saved_tensor_gets_hooks_of_its_own(lib):
    a = lib.full((3,), 2.0, requires_grad=True)
    b = a * a
    b.grad_fn._raw_saved_self.register_hooks(lambda t: t * 10, lambda t: t / 5)
    b.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [6.0] * 3)  # self read as 2a, other as a
    y = a.exp()
    y.grad_fn._raw_saved_result.register_hooks(lambda t: t * 2, lambda t: t / 2)
    assert lib.allclose(y.grad_fn._saved_result, y)


def test_raw_saved_tensor_errors(lib):
    x = lib.ones(3, requires_grad=True)
    y = x.exp()
    y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
    already = (
        "^Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one pair"
    )
    with pytest.raises(RuntimeError, match=already):
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
    with _identity_hooks(lib, []):
        w = x.sin()
    with pytest.raises(RuntimeError, match=already):
        w.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    n = x * lib.ones(3)
    with pytest.raises(
        RuntimeError, match="^Calling register_hooks on a saved tensor with value None is forbidden$"
    ):
        n.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    z = x.sin()
    z.sum().backward()
    with pytest.raises(
        RuntimeError, match="^Calling register_hooks on a saved tensor after it has been freed. Saved"
    ):
        z.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
