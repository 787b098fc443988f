"""Engine behaviours not covered by the seed notes or the op table: memory, anomaly mode,
node hooks, reprs from torch_reference.md, and the saved-output naming rule."""

import gc
import re
import tracemalloc
import warnings

import numpy as np
import pytest

import engine
from engine.autograd import Function


def test_backward_frees_saved_buffers():
    """A 2000-op chain on 1e4 float32 elements holds ~80 MB of saved tensors until backward."""
    x = engine.ones(10_000, requires_grad=True)
    gc.collect()
    tracemalloc.start()
    try:
        y = x
        for i in range(1000):
            y = (y * 0.999).tanh() if i % 2 else (y * 1.001).exp() * 0.3
        loss = y.sum()
        before = tracemalloc.get_traced_memory()[0]
        loss.backward()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert before > 40_000_000  # the saved activations really were held
    # The graph object (loss.grad_fn and its nodes) is still alive, but holds no buffers.
    assert after < 2_000_000, after
    assert loss.grad_fn is not None
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()


def _freed_without_gc(make_output) -> bool:
    """Whether an output's graph dies as soon as the output does, with the cyclic GC off."""
    import weakref

    gc.disable()
    try:
        y = make_output()
        node = weakref.ref(y.grad_fn)
        del y
        return node() is None
    finally:
        gc.enable()


class _SavesItsOutput(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


def test_a_saved_output_makes_no_reference_cycle():
    """As in torch, an op that saves its own output frees its node without the cyclic GC."""
    x = engine.ones(3, requires_grad=True)
    assert _freed_without_gc(lambda: x.exp())
    assert _freed_without_gc(lambda: (x * 2).tanh().sigmoid())
    assert _freed_without_gc(lambda: _SavesItsOutput.apply(x))


def test_saved_result_is_rebuilt_like_torch():
    """torch: `y.grad_fn._saved_result` equals y, is a new tensor each time, grad_fn the node."""
    x = engine.tensor([0.0, 1.0], requires_grad=True)
    y = x.exp()
    r = y.grad_fn._saved_result
    assert r is not y and r is not y.grad_fn._saved_result
    assert r.grad_fn is y.grad_fn and r.equal(y) and r._version == 0
    y.add_(1)
    assert r._version == 1  # the rebuilt tensor shares the version counter
    z = _SavesItsOutput.apply(x)
    (saved,) = z.grad_fn.saved_tensors
    assert saved is not z and saved.grad_fn is z.grad_fn and saved.equal(z)
    z.sum().backward()
    assert np.allclose(x.grad.numpy(), np.exp([0.0, 1.0]))


def test_saved_output_modified_is_named_after_its_node():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    s = y.sum()
    y.add_(1)
    with pytest.raises(RuntimeError, match=re.escape("which is output 0 of Exp, is at version 1")):
        s.backward()


def test_saved_input_modified_names_its_current_producer():
    a = engine.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b.mul_(2)
    with pytest.raises(RuntimeError, match=re.escape("which is output 0 of Mul, is at version 1")):
        loss.backward()


def test_a_producer_with_a_numbered_name_keeps_its_number():
    """torch 2.13: PowBackward1 is "Pow1" in the message (only Backward0 loses its digit)."""
    x = engine.tensor([1.5, 2.0], requires_grad=True)
    a = x ** engine.tensor([2.0, 3.0], requires_grad=True)
    loss = (a * a).sum()
    with engine.no_grad():
        a.add_(1)  # the version moves on, the producer stays PowBackward1
    with pytest.raises(RuntimeError, match=re.escape("which is output 0 of Pow1, is at version 1")):
        loss.backward()


def test_saved_leaf_modified_has_no_producer_clause():
    w = engine.tensor([1.0, 2.0])
    x = engine.tensor([3.0, 4.0], requires_grad=True)
    s = (x * w).sum()
    w.add_(1)
    with pytest.raises(RuntimeError, match=re.escape("[engine.FloatTensor [2]] is at version 1; expected")):
        s.backward()


def test_no_grad_as_bare_decorator_and_call():
    @engine.no_grad
    def f(t):
        return t * 2

    @engine.no_grad()
    def g(t):
        return t * 2

    x = engine.ones(2, requires_grad=True)
    assert not f(x).requires_grad and not g(x).requires_grad
    assert engine.is_grad_enabled()


def test_anomaly_mode_reports_nan_and_forward_trace():
    x = engine.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt() * 0.0  # d/dx sqrt at 0 is inf; inf * 0 -> nan in SqrtBackward0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with engine.autograd.detect_anomaly():
            y = x.sqrt() * 0.0
            with pytest.raises(
                RuntimeError, match=r"Function 'SqrtBackward0' returned nan values in its 0th output."
            ):
                y.sum().backward()
    texts = [str(w.message) for w in caught]
    assert any(t.startswith("Anomaly Detection has been enabled") for t in texts)
    assert any("Error detected in SqrtBackward0" in t and "test_engine_core.py" in t for t in texts)
    assert not engine.autograd.is_anomaly_enabled()


def test_node_hooks_pre_and_post():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = []
    y.grad_fn.register_prehook(lambda gout: seen.append(("pre", gout[0].tolist())))
    handle = y.grad_fn.register_hook(lambda gin, gout: (gin[0] * 10, gin[1]))
    y.sum().backward(retain_graph=True)
    assert seen == [("pre", [1.0, 1.0])]
    assert x.grad.tolist() == [30.0, 30.0]
    handle.remove()
    x.grad = None
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_retain_grad_accumulates_across_backwards():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = (y * y).sum()
    z.backward(retain_graph=True)
    z.backward()
    assert y.grad.tolist() == [8.0, 16.0]


def test_custom_function_double_backward_and_saved_output():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    x = engine.tensor([2.0], dtype=engine.float64, requires_grad=True)
    (g,) = engine.autograd.grad(Cube.apply(x), x, create_graph=True)
    assert type(Cube.apply(x).grad_fn).__name__ == "CubeBackward"
    (gg,) = engine.autograd.grad(g, x)
    assert g.item() == 12.0 and gg.item() == 12.0


def test_custom_function_wrong_gradient_count_message():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g

    x = engine.ones(2, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=re.escape("function BadBackward returned an incorrect number of gradients (expected 2, got 1)"),
    ):
        Bad.apply(x, 2.0).sum().backward()


def test_grad_wrt_nonleaf_and_backward_inputs():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    out = (h * h).sum()
    (gh,) = engine.autograd.grad(out, h, retain_graph=True)
    assert gh.tolist() == [4.0, 8.0]
    assert x.grad is None  # autograd.grad never accumulates
    w = engine.tensor([1.0], requires_grad=True)
    (x * w).sum().backward(inputs=[w])
    assert w.grad.tolist() == [3.0] and x.grad is None


@pytest.mark.parametrize(
    "make, text",
    [
        (lambda: engine.tensor([1e-5, 1e5]), "tensor([1.0000e-05, 1.0000e+05])"),
        (lambda: engine.tensor([0.1234567, 100.5]), "tensor([  0.1235, 100.5000])"),
        (lambda: engine.tensor([True, False]), "tensor([ True, False])"),
        (lambda: engine.zeros(0, 3), "tensor([], size=(0, 3))"),
        (lambda: engine.tensor(2.5, dtype=engine.float64), "tensor(2.5000, dtype=engine.float64)"),
        (lambda: engine.tensor([float("inf"), float("nan"), 1.0]), "tensor([inf, nan, 1.])"),
        (
            lambda: engine.arange(2000.0),
            "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        1.9990e+03])",
        ),
        (
            lambda: engine.arange(12.0).reshape(3, 4),
            "tensor([[ 0.,  1.,  2.,  3.],\n        [ 4.,  5.,  6.,  7.],\n        [ 8.,  9., 10., 11.]])",
        ),
    ],
)
def test_repr_matches_torch(make, text):
    assert repr(make()) == text


def test_max_dim_returns_named_values_and_indices():
    x = engine.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True)
    values, indices = x.max(1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 1.0], [1.0, 0.0]])


def test_custom_function_backward_runs_on_zeros_when_no_gradient_arrives():
    """As torch: an upstream backward returning None still calls the custom Function (on zeros)."""
    calls = []

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls.append(g.tolist())
            return g * 2

    class G(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return None

    x = engine.ones(2, requires_grad=True)
    (gx,) = engine.autograd.grad(G.apply(F.apply(x)).sum(), [x], allow_unused=True)
    assert calls == [[0.0, 0.0]] and gx.tolist() == [0.0, 0.0]


def test_numpy_of_a_tensor_requiring_grad_is_allowed_under_no_grad():
    x = engine.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape("Can't call numpy() on Tensor that requires grad.")):
        x.numpy()
    with engine.no_grad():
        assert x.numpy().tolist() == [1.0, 1.0]


def test_only_values_a_gradient_reads_are_saved():
    """As torch: x * 2 saves other, not self; changing an unsaved input is not an error."""
    a = engine.ones(2, requires_grad=True)
    node = (a * 2).grad_fn
    assert node._saved_self is None and node._saved_other.item() == 2
    x = engine.ones(2)
    w = engine.ones(2, requires_grad=True)
    y = (x * w).sum()  # w's gradient reads x; nobody reads w
    with engine.no_grad():
        w.mul_(2)
    y.backward()
    assert w.grad.tolist() == [1.0, 1.0]
    x2 = engine.ones(2)
    y2 = (x2 * w).sum()
    x2.add_(1)  # x2 *is* read by w's gradient
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y2.backward()
