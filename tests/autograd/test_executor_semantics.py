"""The executor's long tail, as PyTorch 2.13 behaves: roots, inputs=, hook order, reentrancy,
freed nodes, grad_fn calls, create_graph graphs.

Most tests take `lib` and run twice: on the engine, and on torch where it is installed (skipped
cleanly where it is not), with the same expected values, so the expectations are PyTorch's own.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
from paths import ROOT

import engine
from engine.autograd.node import FREED_MESSAGE
from engine.ops.derivatives import row
from engine.ops.op import RowError

# the module: engine.autograd.backward is also the name of the function
executor = importlib.import_module("engine.autograd.backward")
warn_once = importlib.import_module("engine.warn_once")
REPO_ROOT = ROOT


@pytest.fixture(params=["engine", pytest.param("torch", marks=pytest.mark.torch_parity)])
def lib(request):
    return engine if request.param == "engine" else pytest.importorskip("torch")


def graph(fn):
    """A grad_fn's graph as nested (name, children) tuples; leaves as 'AccumulateGrad'."""
    if fn is None:
        return None
    name = type(fn).__name__
    if name == "AccumulateGrad":
        return name
    return (name, tuple(graph(child) for child, _ in fn.next_functions))


def values(t):
    return None if t is None else t.detach().tolist()


# ------------------------------------------------------------------------------ roots


def test_the_same_root_twice_gets_both_gradients(lib):
    x = lib.ones(3, requires_grad=True)
    g = lib.ones(3)
    lib.autograd.backward([x, x], [g, g])
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    x.grad = None
    y = x * 2
    lib.autograd.backward([y, y], [g, g])
    assert x.grad.tolist() == [4.0, 4.0, 4.0]


# ------------------------------------------------------------------- inputs: capture and run


def boom_function(lib):
    class Boom(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            raise ValueError("Boom's backward ran")

    return Boom


def test_grad_stops_at_a_non_leaf_input(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    t = boom_function(lib).apply(a)
    log = []
    t.grad_fn.register_prehook(lambda grads: log.append("pre"))
    t.grad_fn.register_hook(lambda grads_in, grads_out: log.append("post"))
    out = (t * t).sum()
    (g,) = lib.autograd.grad(out, (t,), retain_graph=True)
    assert g.tolist() == [2.0, 4.0] and log == []
    # backward(inputs=) runs the input's node: it accumulates through retain_grad
    with pytest.raises(ValueError, match="Boom's backward ran"):
        out.backward(inputs=[t])
    assert t.retains_grad and t.grad.tolist() == [2.0, 4.0] and log == ["pre"]


def hooked_input(lib, log):
    """a and t = a * 2, with a tensor hook on t (times 10) and logging pre- and post-hooks on t's node."""
    a = lib.ones(2, requires_grad=True)
    t = a * 2
    t.register_hook(lambda g: (log.append("tensor hook"), g * 10)[1])
    t.grad_fn.register_prehook(lambda grads: log.append("pre"))
    t.grad_fn.register_hook(lambda grads_in, grads_out: log.append("post"))
    return a, t


def test_an_input_node_that_only_holds_inputs_runs_its_tensor_hooks_first(lib):
    log = []
    a, t = hooked_input(lib, log)
    t.retain_grad()
    out = (t * t).sum()
    assert values(lib.autograd.grad(out, (t,), retain_graph=True)[0]) == [40.0, 40.0]
    assert log == ["tensor hook"] and t.grad.tolist() == [40.0, 40.0]  # retain_grad ran too


def test_an_input_node_that_runs_hands_over_its_gradient_before_its_hooks(lib):
    log = []
    a, t = hooked_input(lib, log)
    gt, ga = lib.autograd.grad((t * t).sum(), (t, a))
    assert gt.tolist() == [4.0, 4.0] and ga.tolist() == [80.0, 80.0]
    assert log == ["tensor hook", "pre", "post"]


def test_backward_inputs_must_require_grad(lib):
    x = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^can't retain_grad on Tensor that has requires_grad=False$"):
        (x * 2).sum().backward(inputs=[lib.ones(2)])


# ---------------------------------------------------------------------------- leaf hooks


def logged_leaf(lib, log):
    """x with a tensor hook (doubling), an AccumulateGrad pre- and post-hook, a post-accumulate hook."""
    x = lib.ones(2, requires_grad=True)
    y = x * 3
    acc = y.grad_fn.next_functions[0][0]
    x.register_hook(lambda g: (log.append(("tensor", g.tolist())), g * 2)[1])
    acc.register_prehook(lambda grads: log.append(("pre", grads[0].tolist())))
    acc.register_hook(lambda grads_in, grads_out: log.append(("post", grads_in, grads_out[0].tolist())))
    x.register_post_accumulate_grad_hook(lambda t: log.append(("post-accumulate", t.grad.tolist())))
    return x, y


def test_leaf_hooks_run_in_pytorchs_order_and_see_the_hooked_gradient(lib):
    log = []
    x, y = logged_leaf(lib, log)
    y.sum().backward()
    assert log == [
        ("tensor", [3.0, 3.0]),
        ("pre", [6.0, 6.0]),
        ("post-accumulate", [6.0, 6.0]),
        ("post", (), [6.0, 6.0]),
    ]
    assert x.grad.tolist() == [6.0, 6.0]


def test_a_leafs_tensor_hooks_run_under_autograd_grad_and_nothing_else(lib):
    log = []
    x, y = logged_leaf(lib, log)
    assert values(lib.autograd.grad(y.sum(), x)[0]) == [6.0, 6.0]
    assert log == [("tensor", [3.0, 3.0])] and x.grad is None


def test_post_accumulate_grad_hook_handles_and_refusals(lib):
    x = lib.ones(2, requires_grad=True)
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * 2).sum().backward()
    handle.remove()
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0]] and x.grad.tolist() == [4.0, 4.0]
    with pytest.raises(
        RuntimeError, match="^post accumulate grad hooks cannot be registered on non-leaf tensors$"
    ):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(
        RuntimeError, match="^cannot register a hook on a tensor that doesn't require gradient$"
    ):
        lib.ones(2).register_post_accumulate_grad_hook(lambda t: None)


def test_post_accumulate_grad_hooks_must_return_none(lib):
    x = lib.ones(2, requires_grad=True)
    handle = x.register_post_accumulate_grad_hook(lambda t: 5)
    with pytest.raises(TypeError, match="^expected Variable, but hook returned 'int'$"):
        (x * 2).sum().backward()
    handle.remove()
    x.register_post_accumulate_grad_hook(lambda t: t.grad.mul_(10))
    with pytest.raises(RuntimeError, match=r"^Tensor post accumulate grad hooks should return None\.$"):
        (x * 2).sum().backward()
    x.grad = None
    y = lib.ones(2, requires_grad=True)
    y.register_post_accumulate_grad_hook(lambda t: t)  # the tensor itself counts as None
    (y * 2).sum().backward()
    assert y.grad.tolist() == [2.0, 2.0]


def test_a_leaf_that_stopped_requiring_grad_gets_no_grad(lib):
    x = lib.ones(2, requires_grad=True)
    y = (x * 2).sum()
    x.requires_grad_(False)
    y.backward()
    assert x.grad is None


# ------------------------------------------------------------------------------ accumulation


def test_accumulation_without_a_graph_is_in_place_even_into_a_grad_with_history(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x * x).sum().backward(create_graph=True)
    first, version = x.grad, x.grad._version
    (x * x).sum().backward()
    assert x.grad is first and x.grad._version == version + 1
    assert type(x.grad.grad_fn).__name__ == "CopyBackwards" and x.grad.tolist() == [4.0, 8.0]
    z = lib.tensor([1.0, 2.0], requires_grad=True)
    z.grad = lib.zeros(2, requires_grad=True)
    kept = z.grad
    (z * z).sum().backward()
    assert z.grad is kept and z.grad.requires_grad and z.grad.tolist() == [2.0, 4.0]


CREATE_GRAPH_GRADS = {
    "square": (
        lambda x: (x * x).sum(),
        (
            "CopyBackwards",
            (None, ("AddBackward0", (("MulBackward0", (None, "AccumulateGrad")),) * 2)),
        ),
    ),
    "exp": (
        lambda x: x.exp().sum(),
        ("CopyBackwards", (None, ("MulBackward0", (None, ("ExpBackward0", ("AccumulateGrad",)))))),
    ),
    "sum": (lambda x: x.sum(), None),
}


@pytest.mark.parametrize("name", sorted(CREATE_GRAPH_GRADS))
def test_create_graph_grad_starts_with_the_node_torch_puts_there(lib, name):
    fn, expected = CREATE_GRAPH_GRADS[name]
    x = lib.tensor([1.0, -2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn(x).backward(create_graph=True)
        assert graph(x.grad.grad_fn) == expected
        first = graph(x.grad.grad_fn)
        fn(x).backward(create_graph=True)  # a second one is added out of place
    if expected is not None:
        assert graph(x.grad.grad_fn)[0] == "AddBackward0" and graph(x.grad.grad_fn)[1][0] == first


def test_create_graph_grad_keeps_the_leafs_dtype(lib):
    x = lib.ones(2, dtype=lib.float32, requires_grad=True)
    y = (x.double() * x.double()).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y.backward(create_graph=True)
    assert x.grad.dtype == lib.float32 and x.grad.requires_grad


def test_materialized_grads_require_grad_under_create_graph(lib):
    x = lib.ones(2, requires_grad=True)
    unused = lib.ones(2, requires_grad=True)
    gx, gu = lib.autograd.grad((x * 2).sum(), (x, unused), create_graph=True, materialize_grads=True)
    assert gu.tolist() == [0.0, 0.0] and gu.requires_grad and gu.grad_fn is None
    gx, gu = lib.autograd.grad((x * 2).sum(), (x, unused), materialize_grads=True)
    assert not gu.requires_grad


def test_create_graph_backward_warns_once_about_the_reference_cycle(monkeypatch):
    monkeypatch.setattr(warn_once, "_given", set())
    x = engine.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (x * x).sum().backward(create_graph=True)
        engine.autograd.backward((x * x).sum(), create_graph=True)
        engine.autograd.grad((x * x).sum(), x, create_graph=True)
    assert [(w.category, str(w.message)) for w in caught] == [(UserWarning, CYCLE_WARNING)]


CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
    "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
    "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters "
    "to None after use to break the cycle and avoid the leak."
)
CYCLE_SCRIPT = """
import warnings
import {lib}
warnings.simplefilter("always")
x = {lib}.ones(2, requires_grad=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    (x * 2).sum().backward(create_graph=True, inputs=[x])
    {lib}.autograd.grad((x * x).sum(), x, create_graph=True)
    (x * x).sum().backward(retain_graph=True)
    (x * x).sum().backward(create_graph=True)
print(repr([(w.category.__name__, str(w.message)) for w in caught]))
"""
TORCH_CPP_SUFFIX = re.compile(r" \(Triggered internally at [^)]*\.\)")  # where in torch's C++ it was raised


@pytest.mark.torch_parity
def test_the_reference_cycle_warning_is_pytorchs():
    """In a fresh process each (the warning is shown once per process): the same warnings, same text."""
    seen = {}
    for name in ("engine", "torch"):
        done = subprocess.run(
            [sys.executable, "-c", CYCLE_SCRIPT.format(lib=name)],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO_ROOT,  # where `import engine` finds this checkout
        )
        seen[name] = TORCH_CPP_SUFFIX.sub("", done.stdout.strip())
    assert seen["engine"] == seen["torch"] == repr([("UserWarning", CYCLE_WARNING)])


# ------------------------------------------------------------------ create_graph through masks


@pytest.mark.parametrize(
    "op, node",
    [
        (lambda lib, x: lib.relu(x), "ThresholdBackwardBackward0"),
        (lambda lib, x: lib.nn.functional.relu(x), "ThresholdBackwardBackward0"),
        (lambda lib, x: lib.nn.functional.leaky_relu(x, 0.0), "LeakyReluBackwardBackward0"),
    ],
    ids=["relu", "F.relu", "leaky_relu_slope_0"],
)
def test_an_all_zero_gradient_through_a_mask_still_has_a_graph(lib, op, node):
    x = lib.tensor([-1.0, -2.0], requires_grad=True)
    (g,) = lib.autograd.grad(op(lib, x).sum(), x, create_graph=True)
    assert g.tolist() == [0.0, 0.0] and g.requires_grad
    assert type(g.grad_fn).__name__ == node and g.grad_fn.next_functions[0][0] is None
    (gg,) = lib.autograd.grad(g.sum(), x)  # a second backward through it works
    assert gg.tolist() == [0.0, 0.0]


TIED_TO_SELF = {  # case: (op, input shape, the gradient's node)
    "avg_pool2d": (
        lambda lib, x: lib.nn.functional.avg_pool2d(x, 2),
        (1, 1, 4, 4),
        "AvgPool2DBackwardBackward0",
    ),
    "max_pool2d": (
        lambda lib, x: lib.nn.functional.max_pool2d(x, 2),
        (1, 1, 4, 4),
        "MaxPool2DWithIndicesBackwardBackward0",
    ),
    "reflection_pad": (
        lambda lib, x: lib.nn.functional.pad(x, (1, 1, 1, 1), mode="reflect"),
        (1, 1, 4, 4),
        "ReflectionPad2DBackwardBackward0",
    ),
    "replication_pad": (
        lambda lib, x: lib.nn.functional.pad(x, (1, 2), mode="replicate"),
        (1, 4, 4),
        "ReplicationPad1DBackwardBackward0",
    ),
    "nll_loss": (
        lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([0, 3, 1, 2]), reduction="none"),
        (4, 4),
        "NllLossBackwardBackward0",
    ),
}


@pytest.mark.parametrize("case", sorted(TIED_TO_SELF))
def test_a_pool_pad_or_loss_gradient_depends_on_the_input_under_create_graph(lib, case):
    """Their backwards are ops of (grad, self) in PyTorch: the gradient requires grad with a constant grad."""
    fn, shape, node = TIED_TO_SELF[case]
    x = lib.tensor(np.arange(16.0).reshape(shape) / 7, requires_grad=True)
    (g,) = lib.autograd.grad(fn(lib, x).sum(), x, create_graph=True)
    assert g.requires_grad and type(g.grad_fn).__name__ == node
    assert g.grad_fn.next_functions[0][0] is None and g.grad_fn.next_functions[1][0] is not None
    (gg,) = lib.autograd.grad((g * g).sum(), x)
    assert gg.tolist() == np.zeros(shape).tolist()


def test_relu_and_leaky_relu_double_backward_values(lib):
    x = lib.tensor([-1.5, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
    v = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    for f, mask in (
        (lambda t: lib.relu(t), [0.0, 1.0, 1.0]),
        (lambda t: lib.nn.functional.leaky_relu(t, 0.1), [0.1, 1.0, 1.0]),
    ):
        (g,) = lib.autograd.grad(f(x), x, grad_outputs=v, create_graph=True)
        assert np.allclose(g.tolist(), np.multiply(mask, [1.0, 2.0, 3.0]))
        gx, gv = lib.autograd.grad((g * g).sum(), (x, v))
        assert gx.tolist() == [0.0, 0.0, 0.0]
        assert np.allclose(gv.tolist(), 2 * np.multiply(np.square(mask), [1.0, 2.0, 3.0]))


def test_pow_mixed_second_derivative_at_exponent_zero_matches_finite_differences():
    """d/de of d(b**e)/db at e == 0 is 1/b (the Hessian is symmetric); torch 2.13 gives 0 there."""
    b = engine.tensor([0.5, 2.0, 3.0], dtype=engine.float64, requires_grad=True)
    e = engine.tensor([0.0, 0.0, 1.0], dtype=engine.float64, requires_grad=True)
    (gb,) = engine.autograd.grad((b**e).sum(), b, create_graph=True)
    (mixed,) = engine.autograd.grad(gb.sum(), e)
    (ge,) = engine.autograd.grad((b**e).sum(), e, create_graph=True)
    (other_way,) = engine.autograd.grad(ge.sum(), b)

    def first(exponent):
        """d(b**e)/db at `exponent`, by the engine's first-order backward."""
        bb = engine.tensor(b.tolist(), dtype=engine.float64, requires_grad=True)
        ee = engine.tensor(exponent, dtype=engine.float64)
        return np.array(engine.autograd.grad((bb**ee).sum(), bb)[0].tolist())

    h = 1e-6
    e0 = np.array(e.tolist())
    numeric = (first(e0 + h) - first(e0 - h)) / (2 * h)
    assert np.allclose(mixed.tolist(), numeric, rtol=1e-6, atol=1e-8)
    assert np.allclose(mixed.tolist(), [2.0, 0.5, 1 + np.log(3.0)])
    assert np.allclose(other_way.tolist(), mixed.tolist())


# ------------------------------------------------------------------------- freed nodes


FREED_CASES = {
    "index": lambda lib, x: x[lib.tensor([0, 2])],
    "index_bool": lambda lib, x: x[lib.tensor([True, False, True, False])],
    "index_put": lambda lib, x: _index_put(lib, x),
    "max_dim": lambda lib, x: x.reshape(2, 2).max(1)[0],
    "where": lambda lib, x: lib.where(x > 1, x, -x),
    "embedding": lambda lib, x: lib.nn.functional.embedding(lib.tensor([1, 3]), x.reshape(4, 1)),
    "nll_loss": lambda lib, x: lib.nn.functional.nll_loss(x.reshape(2, 2), lib.tensor([0, 1])),
    "max_pool2d": lambda lib, x: lib.nn.functional.max_pool2d(x.reshape(1, 1, 2, 2), 2),
    "avg_pool2d": lambda lib, x: lib.nn.functional.avg_pool2d(x.reshape(1, 1, 2, 2), 2),
    "reflection_pad": lambda lib, x: lib.nn.functional.pad(x.reshape(1, 1, 4), (1, 1), mode="reflect"),
}


def _index_put(lib, x):
    y = x.clone()
    y[lib.tensor([0, 2])] = lib.tensor([5.0, 6.0])
    return y


@pytest.mark.parametrize("case", sorted(FREED_CASES))
def test_a_second_backward_through_a_node_that_saved_indices_raises(lib, case):
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    out = FREED_CASES[case](lib, x).sum()
    out.backward(retain_graph=True)
    out.backward()
    with pytest.raises(RuntimeError) as info:
        out.backward()
    assert str(info.value) == FREED_MESSAGE


@pytest.mark.parametrize("case", ["index", "index_put"])
def test_saved_indices_are_freed_with_the_node(lib, case):
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = FREED_CASES[case](lib, x)
    fn = y.grad_fn
    assert fn._saved_indices is not None
    y.sum().backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        _ = fn._saved_indices
    if hasattr(fn, "_saved_self_sym_sizes"):
        assert tuple(fn._saved_self_sym_sizes) == (4,)  # sizes are not freed


def test_a_row_can_free_only_its_own_attrs():
    with pytest.raises(
        RowError, match=r"IndexLikeBackward0: frees \['mask'\], which are not attrs \('index',\)"
    ):
        row(
            "IndexLikeBackward0",
            lambda xp, self, index: self[index],
            attrs=("index",),
            frees=("mask",),
            self=lambda m, g, index: g,
        )


# ------------------------------------------------------------------ calling a grad_fn directly


def test_calling_a_grad_fn_with_the_wrong_arguments(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    fn = (x * 2).grad_fn
    with pytest.raises(TypeError, match="^expected 1 arguments, got 0 instead$"):
        fn()
    with pytest.raises(TypeError, match="^expected 1 arguments, got 2 instead$"):
        fn(lib.ones(2), lib.ones(2))
    with pytest.raises(TypeError, match="^keyword arguments are not supported$"):
        fn(g=lib.ones(2))
    with pytest.raises(TypeError, match="^argument 0 is not a Variable$"):
        fn(1.0)
    assert fn(None) == (None, None) and x.exp().grad_fn(None) is None


def test_calling_a_grad_fn_records_under_grad_mode(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    fn = (x * w).grad_fn
    gx, gw = fn(lib.ones(2))
    assert gx.tolist() == [3.0, 4.0] and gw.tolist() == [1.0, 2.0]
    assert type(gx.grad_fn).__name__ == "MulBackward0" and gx.requires_grad
    with lib.no_grad():
        gx, gw = fn(lib.ones(2))
    assert not gx.requires_grad and not gw.requires_grad


def test_grad_fn_metadata_is_one_dict_per_node(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    y.grad_fn.metadata["note"] = 1
    assert y.grad_fn.metadata == {"note": 1} and y.grad_fn.metadata is y.grad_fn.metadata
    acc = y.grad_fn.next_functions[0][0]
    assert acc.metadata == {} and acc.metadata is acc.metadata


# ------------------------------------------------------------------------------ reentrancy


def reentrant_functions(lib):
    class Reenter(lib.autograd.Function):
        """Its backward runs a backward of its own graph."""

        @staticmethod
        def forward(ctx, x):
            with lib.enable_grad():
                ctx.x = x.detach().requires_grad_()
                ctx.out = ctx.x * ctx.x
            return ctx.out.detach()

        @staticmethod
        def backward(ctx, g):
            ctx.out.backward(g)
            return ctx.x.grad

    class ReenterGrad(lib.autograd.Function):
        """Its backward asks autograd.grad."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            with lib.enable_grad():
                xx = x.detach().requires_grad_()
                (gg,) = lib.autograd.grad((xx**3).sum(), xx)
            return g * gg

    return Reenter, ReenterGrad


def test_reentrant_backward(lib):
    reenter, reenter_grad = reentrant_functions(lib)
    x = lib.tensor([1.0, 3.0], requires_grad=True)
    (reenter.apply(x) * 2).sum().backward()
    assert x.grad.tolist() == [4.0, 12.0]
    x.grad = None
    reenter_grad.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 27.0]


def deep_reentrant(lib, at_the_bottom=None):
    """A Function whose backward starts the backward of one more level, until the value is below 0.

    `at_the_bottom` (if given) is called by the deepest level's backward.
    """

    class DeepReentrant(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with lib.enable_grad():
                ctx.x = x.detach().requires_grad_() - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, g):
            if ctx.x < 0:
                if at_the_bottom is not None:
                    at_the_bottom()
                return g
            with lib.enable_grad():
                DeepReentrant.apply(ctx.x).sum().backward()
            return g

    return DeepReentrant


def test_deep_reentrant_backward_does_not_exhaust_the_stack(lib):
    deep = deep_reentrant(lib)
    for levels in (3000.0, 200.0):  # twice: the second run finds the first one's threads gone
        v = lib.tensor(levels, requires_grad=True)
        deep.apply(v).sum().backward()
        assert v.grad.item() == 1.0


def test_an_error_deep_in_a_reentrant_backward_reaches_the_caller():
    def fail():
        raise ArithmeticError("the deepest level failed")

    v = engine.tensor(1000.0, requires_grad=True)
    with pytest.raises(ArithmeticError, match="the deepest level failed"):
        deep_reentrant(engine, fail).apply(v).sum().backward()
    assert executor._nesting.depth == 0 and engine.is_grad_enabled()
