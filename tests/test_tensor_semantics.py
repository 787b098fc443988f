"""Tensor semantics from PyTorch's long tail: `.data`, detach_, hooks tables, dtypes, random
creators, memory overlap, resize_, new, in-place view ops.

Every test runs on `engine` and, where it is installed, on torch itself (the `lib` fixture), so
the expected texts below are checked to be PyTorch 2.13's (with `torch` read as the library's
name) and not only what the engine happens to say.
"""

from __future__ import annotations

import re
from collections import OrderedDict

import numpy as np
import pytest

import engine


@pytest.fixture(params=["engine", "torch"])
def lib(request):
    """The library under test: the engine, or torch for the same expectations (skipped without it)."""
    if request.param == "torch":
        return pytest.importorskip("torch")
    return engine


def raises(exc_type, message: str):
    """pytest.raises for exactly `message` (not a pattern)."""
    return pytest.raises(exc_type, match="^" + re.escape(message) + "$")


def chain(t) -> list[str]:
    """grad_fn names from `t` down its first edges, AccumulateGrad without its namespace."""
    names = []
    fn = t.grad_fn
    while fn is not None:
        names.append(type(fn).__name__)
        following = [child for child, _ in fn.next_functions if child is not None]
        fn = following[0] if following else None
    return names


# ------------------------------------------------------------------------------- .data


def test_data_assignment_of_an_int_tensor_to_one_requiring_grad(lib):
    x = lib.randn(3, requires_grad=True)
    with raises(
        RuntimeError, "data set to a tensor that requires gradients must be floating point or complex dtype"
    ):
        x.data = lib.ones(3, dtype=lib.long)
    with raises(
        RuntimeError, "data set to a tensor that requires gradients must be floating point or complex dtype"
    ):
        with lib.no_grad():
            x.data = lib.ones(3, dtype=lib.bool)
    assert x.dtype == lib.float32


def test_data_assignment_rules(lib):
    y = lib.randn(3)
    y.data = lib.ones(3, dtype=lib.long)  # no grad required: any dtype
    assert y.dtype == lib.int64 and y._version == 0
    z = lib.randn(3, requires_grad=True)
    z.data = lib.randn(2, 2, dtype=lib.double)  # shape and dtype follow the new data
    assert z.shape == (2, 2) and z.dtype == lib.float64 and z.requires_grad
    with raises(TypeError, "Variable data has to be a tensor, but got list"):
        y.data = [1, 2]
    with raises(TypeError, "Variable data has to be a tensor, but got NoneType"):
        y.data = None


def test_data_assignment_keeps_the_version_counter_and_shares_the_storage(lib):
    z = lib.randn(3)
    v = z.view(3)
    new = lib.zeros(3)
    z.data = new
    z.add_(1)
    assert (z._version, new._version, v._version) == (1, 0, 1)
    assert new.tolist() == [1.0, 1.0, 1.0]


def test_data_cannot_be_deleted(lib):
    z = lib.randn(3)
    with raises(RuntimeError, "Deleting tensor data is not allowed. Delete tensor instead!"):
        del z.data


# ---------------------------------------------------------------------------- detach_

DETACHED = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
    "This is not supported, please use out-of-place `.detach()` instead"
)


def test_backward_through_a_saved_input_detached_in_place_raises(lib):
    a = lib.randn(3, requires_grad=True)
    b = a * 1
    c = b * b
    b.detach_()
    assert b._version == 0  # detach_ is no in-place change of the values
    with raises(RuntimeError, DETACHED):
        c.sum().backward()


def test_detach_error_comes_before_the_version_error(lib):
    a = lib.randn(3, requires_grad=True)
    b = a * 1
    c = b.exp() * b
    b.detach_()
    b.add_(1)
    with raises(RuntimeError, DETACHED):
        c.sum().backward(retain_graph=True)
    with raises(RuntimeError, DETACHED):
        lib.autograd.grad(c.sum(), a, create_graph=True)


def test_detached_saved_input_is_still_readable_from_the_node(lib):
    a = lib.randn(3, requires_grad=True)
    b = a * 1
    c = b * b
    b.detach_()
    assert c.grad_fn._saved_self.tolist() == b.tolist()


def test_detach_of_a_saved_output_or_a_leaf_is_no_error(lib):
    a = lib.randn(3, requires_grad=True)
    c = a.exp()
    d = c * 2
    c.detach_()
    d.sum().backward()  # exp saved its own output: the node still has it
    assert np.allclose(a.grad.numpy(), 2 * np.exp(a.detach().numpy()))
    b = a * 1
    e = b * b
    f = b * 3  # saved after nothing was detached; detaching another tensor leaves it alone
    g = lib.randn(3, requires_grad=True) * 1
    g.detach_()
    (e + f).sum().backward()


def test_tensor_saved_after_detach_is_fine(lib):
    a = lib.randn(3, requires_grad=True)
    b = a * 1
    b.detach_()
    w = lib.randn(3, requires_grad=True)
    (w * b).sum().backward()
    assert w.grad.tolist() == b.tolist()
    assert b._version == 0 and b._version + 1 == 1


# ----------------------------------------------------------------------- _backward_hooks


def test_backward_hooks_of_a_leaf_can_be_read_replaced_and_cleared(lib):
    a = lib.ones(2, requires_grad=True)
    assert a._backward_hooks is None
    handle = a.register_hook(lambda g: g * 2)
    assert isinstance(a._backward_hooks, OrderedDict) and list(a._backward_hooks) == [handle.id]
    a._backward_hooks = None
    a.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]
    a.grad = None
    a._backward_hooks = OrderedDict([(0, lambda g: g * 3)])
    a.sum().backward()
    assert a.grad.tolist() == [3.0, 3.0]
    a.grad = None
    a._backward_hooks.clear()
    a.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]
    with raises(RuntimeError, "Deletion of _backwards_hooks not allowed!"):
        del a._backward_hooks


def test_backward_hooks_of_a_non_leaf_as_torch_keeps_them(lib):
    a = lib.ones(2, requires_grad=True)
    b = a * 1
    assert b._backward_hooks is None
    b.register_hook(lambda g: g * 2)
    assert len(b._backward_hooks) == 1
    b._backward_hooks = None  # the hook registered on grad_fn keeps running
    assert b._backward_hooks is None
    b.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0]

    a = lib.ones(2, requires_grad=True)
    b = a * 1
    b._backward_hooks = OrderedDict()  # an assigned table on a non-leaf is never run
    b.register_hook(lambda g: g * 2)
    assert len(b._backward_hooks) == 1
    b.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]


# --------------------------------------------------------------------------- data_ptr


def test_data_ptr(lib):
    a = lib.arange(6.0)
    assert a[2:].data_ptr() - a.data_ptr() == 2 * a.element_size()
    assert a.view(2, 3).data_ptr() == a.data_ptr() == a.detach().data_ptr()
    assert a.clone().data_ptr() != a.data_ptr()
    assert lib.empty(0).data_ptr() == 0
    assert isinstance(a.data_ptr(), int)


def test_data_ptr_is_the_numpy_address():
    a = engine.arange(6.0)
    assert a[1:].data_ptr() == a.numpy()[1:].__array_interface__["data"][0]
