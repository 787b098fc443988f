"""Engine results that differed from torch 2.13 on hostile input: in-place writes through views
(0-d bases, double backward), softmax of empty tensors, hooks that return the wrong gradient.

Each test takes `lib` and runs once on the engine and once on torch (where installed), with the
same assertions, so the expected values and words are torch's.
"""

from __future__ import annotations

import pytest


def _name(lib, text: str) -> str:
    return text.replace("torch.", f"{lib.__name__}.")


# ------------------------------------------------------------------ writes through a view of a 0-d tensor


def test_a_write_through_a_view_of_a_0d_tensor_replaces_its_gradient(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    t0 = x.mean()
    t0.flatten()[0] = 0.25
    (t0 * t0).backward()
    assert x.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize(
    "write, first, second",
    [
        (lambda x, t0: t0.flatten().__setitem__(0, 0.25), 2.0, 2.0),  # t0 * t0 + x * x: d2 = 2
        (lambda x, t0: t0.unsqueeze(0).mul_(x), 4.0, 12.0),  # t0 = x * x: (x^2)^2, d2 = 12 x^2
    ],
)
def test_a_write_through_a_view_of_a_0d_tensor_is_differentiated_twice(lib, write, first, second):
    x = lib.tensor(1.0, requires_grad=True)
    t0 = x * 1
    write(x, t0)
    (g,) = lib.autograd.grad(t0 * t0 + (x * x if first == 2.0 else 0), x, create_graph=True)
    (h,) = lib.autograd.grad(g, x)
    assert (g.item(), h.item()) == (first, second)


# ------------------------------------------------------------------ double backward through a view changed in place


@pytest.mark.parametrize("op", ["exp_", "sigmoid_", "tanh_"])
@pytest.mark.parametrize("keep_view", [False, True])
def test_double_backward_through_a_view_changed_in_place_by_an_op_that_saves_its_result(lib, op, keep_view):
    x = lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64, requires_grad=True)
    y = x * 2
    view = y[:2]
    getattr(view, op)()
    if not keep_view:
        del view  # the saved result then outlives the view's own grad_fn
    (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
    (h,) = lib.autograd.grad(g.sum(), x)
    reference = lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64, requires_grad=True)
    z = lib.cat([getattr(reference[:2] * 2, op[:-1])(), reference[2:] * 2])
    (rg,) = lib.autograd.grad((z * z).sum(), reference, create_graph=True)
    (rh,) = lib.autograd.grad(rg.sum(), reference)
    assert g.tolist() == pytest.approx(rg.tolist()) and h.tolist() == pytest.approx(rh.tolist())


def test_backward_with_create_graph_then_backward_of_the_gradient(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y[:2].exp_()
    (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
    g.sum().backward()
    assert x.grad.tolist() == pytest.approx([873.5704, 47695.324, 8.0])


@pytest.mark.parametrize("keep_view, producer", [(False, "Sigmoid"), (True, "AsStrided")])
def test_a_saved_result_changed_later_is_named_as_torch_names_it(lib, keep_view, producer):
    x = lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64, requires_grad=True)
    y = x * 1.0
    view = y[..., :1]
    view.sigmoid_()
    if not keep_view:
        del view  # torch's saved result then falls back to the node it is saved for
    y.mul_(1.5)
    with pytest.raises(RuntimeError) as info:
        (y * y).sum().backward()
    assert f"which is output 0 of {producer}, is at version 2; expected version 1 instead" in str(info.value)


# ------------------------------------------------------------------ softmax of an empty tensor


@pytest.mark.parametrize("shape, dim", [((0,), 0), ((0, 3), 1), ((0, 3), 0), ((2, 0), 1), ((2, 0, 3), -1)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_of_an_empty_tensor_is_empty(lib, shape, dim, name):
    x = lib.ones(shape, requires_grad=True)
    fn = getattr(lib.nn.functional, name)
    y = fn(x, dim=dim)
    y.sum().backward()
    assert tuple(y.shape) == shape and tuple(x.grad.shape) == shape and y.dtype == lib.float32
    assert tuple(getattr(lib, "softmax" if name == "softmin" else name)(x, dim).shape) == shape


@pytest.mark.parametrize("change", [lambda y, e: y.mul_(e), lambda y, e: y.add_(1), lambda y, e: y.copy_(e)])
def test_an_in_place_op_on_an_empty_tensor_changes_nothing_and_refuses_nothing(lib, change):
    a = lib.zeros(2, 3, dtype=lib.float64, requires_grad=True)
    empty = a[..., :0]
    y = empty * 1.0  # numpy gives it zero strides: no element is seen twice
    change(y, empty)
    y.sum().backward()
    assert tuple(y.shape) == (2, 0) and a.grad.tolist() == [[0.0] * 3] * 2


# ------------------------------------------------------------------ hooks that return the wrong gradient


def _leaf(lib):
    return lib.tensor([1.0, 2.0], requires_grad=True)


def _through_leaf(lib, hook):
    x = _leaf(lib)
    x.register_hook(hook)
    x.sum().backward()


def _through_non_leaf(lib, hook):
    x = _leaf(lib)
    y = x * 2
    y.register_hook(hook)
    y.sum().backward()


def _into_grad(lib, hook):
    x = _leaf(lib)
    y = x * 2
    y.register_hook(hook)
    lib.autograd.grad(y.sum(), x, create_graph=True)


def _captured_leaf(lib, hook):
    x = _leaf(lib)
    x.register_hook(hook)
    lib.autograd.grad((x * 2).sum(), x)


class _Callable:
    def __init__(self, lib):
        self.lib = lib

    def __call__(self, g):
        return self.lib.ones(3)


def named_hook(g):
    return g.double()


HOOKED = [_through_leaf, _through_non_leaf, _into_grad, _captured_leaf]


@pytest.mark.parametrize("where", HOOKED)
@pytest.mark.parametrize(
    "make_hook, words",
    [
        (lambda lib: lambda g: lib.ones(3), "hook '<lambda>' has changed the size of value"),
        (lambda lib: lambda g: lib.ones(()), "hook '<lambda>' has changed the size of value"),
        (lambda lib: _Callable(lib), "hook '<unknown>' has changed the size of value"),
        (
            lambda lib: lambda g: g.long(),
            "hook '<lambda>' has changed the type of value (was torch.FloatTensor got torch.LongTensor)",
        ),
        (
            lambda lib: named_hook,
            "hook 'named_hook' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)",
        ),
    ],
)
def test_a_tensor_hook_that_changes_the_gradients_size_or_type_is_refused(lib, where, make_hook, words):
    with pytest.raises(RuntimeError) as info:
        where(lib, make_hook(lib))
    assert str(info.value) == _name(lib, words)


@pytest.mark.parametrize("where", HOOKED)
def test_a_tensor_hook_must_return_a_tensor(lib, where):
    import numpy

    for value, name in ((3.0, "float"), (numpy.ones(2, dtype=numpy.float32), "numpy.ndarray")):
        with pytest.raises(TypeError) as info:
            where(lib, lambda g, value=value: value)
        assert str(info.value) == f"expected Variable, but hook returned '{name}'"


def test_a_tensor_hook_runs_with_none_where_no_gradient_reached_and_may_not_replace_it(lib):
    x = _leaf(lib)
    a, b = (x * 2).unbind()
    seen = []
    b.register_hook(seen.append)
    a.backward()
    assert seen == [None] and x.grad.tolist() == [2.0, 0.0]
    a, b = (x * 2).unbind()
    b.register_hook(lambda g: lib.ones(()))
    with pytest.raises(RuntimeError) as info:
        a.backward()
    assert str(info.value) == "can't replace a None gradient with a non-None value"


def _node_pre(lib, hook):
    x = _leaf(lib)
    y = x * 2
    y.grad_fn.register_prehook(hook)
    y.sum().backward()


def _node_post(lib, hook):
    x = _leaf(lib)
    y = x * 2
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: hook(grad_inputs))
    y.sum().backward()


SIZE = "hook '<lambda>' has changed the size of value"
NONE = "can't replace a None gradient with a non-None value"


def _count(got: int, expected: int) -> str:
    return f"hook '<lambda>' has returned an incorrect number of values (got {got}, but expected {expected})"


# What a node's hook returns (given the library), the error, its words: MulBackward0 of `x * 2`
# has one gradient in (pre-hooks) and two out (post-hooks; the 2 has no edge, so None).
NODE_HOOK_RESULTS = {
    _node_pre: [
        (lambda lib: (lib.ones(3),), RuntimeError, SIZE),
        (lambda lib: (lib.ones(2), lib.ones(2)), RuntimeError, _count(2, 1)),
        (lambda lib: (1.0,), TypeError, "expected Variable, but hook returned 'float'"),
        (lambda lib: [lib.ones(2)], TypeError, "expected tuple, but hook returned 'list'"),
        (lambda lib: lib.ones(2), TypeError, "expected tuple, but hook returned 'Tensor'"),
    ],
    _node_post: [
        (lambda lib: (lib.ones(2),), RuntimeError, _count(1, 2)),
        (lambda lib: (lib.ones(2), lib.ones(2)), RuntimeError, NONE),
        (lambda lib: (lib.ones(3), None), RuntimeError, SIZE),
    ],
}


@pytest.mark.parametrize(
    "where, result, error, words",
    [(where, *case) for where, cases in NODE_HOOK_RESULTS.items() for case in cases],
)
def test_a_node_hook_that_returns_the_wrong_gradients_is_refused(lib, where, result, error, words):
    with pytest.raises(error) as info:
        where(lib, lambda grads: result(lib))
    assert str(info.value) == words


@pytest.mark.parametrize("args", [(), ("cpu",), ("float32",)])
def test_to_with_copy_always_copies(lib, args):
    """`to(..., copy=True)` is a new tensor with its own storage and a ToCopyBackward0 node even
    where dtype and device already match; without copy, a matching `to` is the tensor itself."""
    x = lib.ones(2, requires_grad=True)
    given = tuple(getattr(lib, a) if a == "float32" else a for a in args)
    y = x.to(*given, copy=True)
    assert y is not x and type(y.grad_fn).__name__ == "ToCopyBackward0"
    with lib.no_grad():
        y[0] = 5.0
    assert x.tolist() == [1.0, 1.0]
    assert x.to(*given) is x
