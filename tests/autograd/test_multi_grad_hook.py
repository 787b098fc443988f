"""autograd.graph.register_multi_grad_hook: one call per backward run over several tensors, as torch's."""

import pytest


def _tensors(lib):
    a = lib.rand(2, 3, requires_grad=True)
    b = lib.rand(2, 3, requires_grad=True)
    return a, b, a * b, a * b


def test_all_waits_for_every_tensor_the_run_reaches(lib):
    a, b, c, d = _tensors(lib)
    seen = []
    lib.autograd.graph.register_multi_grad_hook(
        (a, b, c, d), lambda grads: seen.append([g is not None for g in grads])
    )
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    lib.autograd.grad(c.sum(), (c,), retain_graph=True)
    (c + d).sum().backward(retain_graph=True)
    assert seen == [
        [True, True, True, False],
        [True, False, True, False],
        [False, False, True, False],
        [True] * 4,
    ]


def test_all_gets_the_gradients_in_order(lib):
    a, b, c, _ = _tensors(lib)
    got = []
    lib.autograd.graph.register_multi_grad_hook((b, c, a), got.append)
    (c * 3).sum().backward()
    grad_b, grad_c, grad_a = got[0]
    assert lib.equal(grad_c, lib.full((2, 3), 3.0))
    assert lib.allclose(grad_a, 3 * b.detach()) and lib.allclose(grad_b, 3 * a.detach())


def test_any_gets_the_first_gradient_once_per_run(lib):
    a, b, c, d = _tensors(lib)
    frozen = lib.ones(2, 3)
    got = []
    lib.autograd.graph.register_multi_grad_hook((frozen, a, b, c, d), got.append, mode="any")
    (c + 2 * d).sum().backward(retain_graph=True)
    d.sum().backward()
    assert len(got) == 2
    assert lib.equal(got[0], lib.full((2, 3), 2.0)) or lib.equal(got[0], lib.ones(2, 3))


def test_removed_hook_is_not_called(lib):
    a, b, c, d = _tensors(lib)
    got = []
    handle = lib.autograd.graph.register_multi_grad_hook((a, b), got.append)
    handle.remove()
    c.sum().backward()
    assert got == []


def test_errors_as_torch(lib):
    a, b, c, _ = _tensors(lib)
    with pytest.raises(ValueError, match=r"^Expects mode to be one of \('all', 'any'\) but got first$"):
        lib.autograd.graph.register_multi_grad_hook((a,), print, mode="first")
    lib.autograd.graph.register_multi_grad_hook((a, b), print)
    with pytest.raises(
        RuntimeError, match="^A leaf node was passed to _will_engine_execute_node but we are currently"
    ):
        lib.autograd.grad(c.sum(), (b,))
