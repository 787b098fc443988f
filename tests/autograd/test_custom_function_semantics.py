"""Custom autograd Functions at the edges: PyTorch 2.13's behaviour, messages and warnings.

Every scenario runs on the engine and, where torch is installed, on torch too with the same
assertions (the `lib` fixture, tests/conftest.py): torch's own texts, `torch` read as `engine`
where they name the module.
"""

import gc
import warnings
import weakref

import numpy as np
import pytest

CUSTOM_VIEW_TAIL = (
    " This view was created inside a custom Function (or because an input was returned as-is) and the "
    "autograd logic to handle view+inplace would override the custom backward associated with the custom "
    "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
    "output of the custom Function."
)
MULTI_VIEW_TAIL = (
    " This view is the output of a function that returns multiple views. Such functions do not allow the "
    "output views to be modified inplace. You should replace the inplace operation by an out-of-place one."
)
ONCE = "trying to differentiate twice a function that was marked with @once_differentiable"
LEGACY = (
    "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
    "function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html#torch."
    "autograd.Function)"
)
INSTANTIATED = (
    " should not be instantiated. Methods on autograd functions are all static, so you should invoke them "
    "on the class itself. Instantiating an autograd function will raise an error in a future version of "
    "PyTorch."
)
DIRTY_VIEW_SEVERAL = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot "
    "return more than one Tensor. This is not supported by the current autograd engine. You should either "
    "make sure the input is not a view (using .clone() for example) or make your Function only return one "
    "Tensor (potentially splitting it into two Functions: one doing the inplace that returns a single Tensor "
    "and a second one that does the other operations). You can ask on the forum https://discuss.pytorch.org/ "
    "if you need help to do this change."
)
DIRTY_NOT_RETURNED = (
    "Some elements marked as dirty during the forward method were not returned as output. The inputs that "
    "are modified inplace must all be outputs of the Function."
)
DIRTY_NOT_INPUT = (
    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been mutated "
    "should be passed to ctx.mark_dirty()."
)


def f64(lib, values, requires_grad=False):
    return lib.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def values(t):
    return np.asarray(t.detach().tolist(), dtype=np.float64)


def is_view(t) -> bool:
    return t._base is not None


def node_name(t) -> str:
    """grad_fn's name without the C++ namespace (torch:: / engine::autograd::Error)."""
    return t.grad_fn.name().split("::")[-1]


def raises_exactly(exc_type, message):
    return pytest.raises(exc_type, match="^" + _escape(message) + "$")


def _escape(text):
    import re

    return re.escape(text)


def define(lib, name, forward, backward, **attrs):
    """A Function subclass named `name` (its node is `<name>Backward`, as messages show)."""
    body = {"forward": staticmethod(forward), "backward": staticmethod(backward), **attrs}
    return type(name, (lib.autograd.Function,), body)


# --------------------------------------------------------------------------- once_differentiable


def _once(lib, n_outputs=1):
    once = lib.autograd.function.once_differentiable
    seen = {}

    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @once
    def backward(ctx, g):
        seen["grad_enabled"] = lib.is_grad_enabled()
        x, w = ctx.saved_tensors
        return (g * w, g * x) if n_outputs == 2 else (g * w, None)

    return define(lib, "Scale", forward, backward), seen


def test_once_differentiable_double_backward_raises(lib):
    Scale, seen = _once(lib, n_outputs=2)
    x = f64(lib, [1.0, 2.0], requires_grad=True)
    w = f64(lib, [3.0, 4.0], requires_grad=True)
    go = f64(lib, [1.0, 1.0], requires_grad=True)
    gx, gw = lib.autograd.grad(Scale.apply(x, w), (x, w), go, create_graph=True)
    assert seen["grad_enabled"] is False  # the body runs under no_grad even with create_graph
    np.testing.assert_allclose(values(gx), [3, 4])
    np.testing.assert_allclose(values(gw), [1, 2])
    assert gx.requires_grad and gx.grad_fn is gw.grad_fn
    assert node_name(gx) == "Error" and type(gx.grad_fn).__name__ == "Error"
    assert (gx.output_nr, gw.output_nr) == (0, 1)
    assert all(type(fn).__name__ == "AccumulateGrad" for fn, _ in gx.grad_fn.next_functions)
    with raises_exactly(RuntimeError, ONCE):
        (gx.sum() + gw.sum()).backward()


def test_once_differentiable_none_gradient_keeps_no_edge(lib):
    Scale, _ = _once(lib)
    x = f64(lib, [1.0, 2.0], requires_grad=True)
    w = f64(lib, [3.0, 4.0], requires_grad=True)
    go = f64(lib, [1.0, 1.0], requires_grad=True)
    (gx,) = lib.autograd.grad(Scale.apply(x, w), (x,), go, create_graph=True)
    assert node_name(gx) == "Error"
    assert gx.grad_fn.next_functions[1] == (None, 0)


def test_once_differentiable_without_graph_returns_plain_gradients(lib):
    Scale, _ = _once(lib, n_outputs=2)
    x = f64(lib, [1.0, 2.0], requires_grad=True)
    w = f64(lib, [3.0, 4.0], requires_grad=True)
    gx, gw = lib.autograd.grad(Scale.apply(x, w).sum(), (x, w), create_graph=True)
    assert not gx.requires_grad and gx.grad_fn is None  # the incoming gradient needs none
    assert Scale.backward.__name__ == "backward"


# --------------------------------------------------------------------------- legacy API


def test_legacy_call_raises_after_the_instantiation_warning(lib):
    Ident = define(lib, "Ident", lambda ctx, x: x.clone(), lambda ctx, g: g)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        instance = Ident()
    assert [(w.category, str(w.message)) for w in caught] == [(DeprecationWarning, f"{Ident}{INSTANTIATED}")]
    with raises_exactly(RuntimeError, LEGACY):
        instance(f64(lib, [1.0]))


def test_inplace_function(lib):
    InplaceFunction = lib.autograd.function.InplaceFunction
    Twice = type(
        "Twice",
        (InplaceFunction,),
        {
            "forward": staticmethod(lambda ctx, x: x * 2),
            "backward": staticmethod(lambda ctx, g: g * 2),
        },
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert Twice(inplace=True).inplace is True
        assert Twice().inplace is False
    assert [w.category for w in caught] == [DeprecationWarning, DeprecationWarning]
    x = f64(lib, [1.0, 2.0], requires_grad=True)
    Twice.apply(x).sum().backward()
    np.testing.assert_allclose(values(x.grad), [2, 2])
    assert node_name(Twice.apply(x)) == "TwiceBackward"


def test_variable_is_a_detached_alias(lib):
    Variable = lib.autograd.Variable
    t = f64(lib, [1.0, 2.0])
    v = Variable(t)
    assert type(v) is lib.Tensor and v is not t
    assert isinstance(t, Variable) and not isinstance(3, Variable) and not issubclass(lib.Tensor, Variable)
    assert not v.requires_grad and v.is_leaf
    t.add_(1)
    assert v._version == 1 and values(v).tolist() == [2, 3]
    r = Variable(t, requires_grad=True)
    assert r.requires_grad and r.is_leaf
    nonleaf = f64(lib, [1.0], requires_grad=True) * 2
    assert Variable(nonleaf).grad_fn is None and not Variable(nonleaf).requires_grad
    empty = Variable()
    assert tuple(empty.shape) == (0,) and empty.dtype == lib.float32
    assert Variable(t, False).requires_grad is False
    assert Variable.__name__ == "Variable" and Variable.__module__ == f"{lib.__name__}.autograd.variable"


@pytest.mark.parametrize(
    "args, kwargs, exc, message",
    [
        ((1.0, 1, 0, None, None, 5), {}, TypeError, "function takes at most 5 arguments (6 given)"),
        ((1.0,), {"foo": 1}, TypeError, "'foo' is an invalid keyword argument for this function"),
        ((1.0,), {"data": 1}, TypeError, "argument for function given by name ('data') and position (1)"),
        ((1.0, "x"), {}, TypeError, "'str' object cannot be interpreted as an integer"),
        ((1.0, 300), {}, OverflowError, "unsigned byte integer is greater than maximum"),
        ((1.0,), {"name": 3}, TypeError, "argument 5 must be str or None, not int"),
        ((1.0, True, True), {}, ValueError, "Variable can't be volatile and require_grad at the same time!"),
        ((1.0,), {"_grad_fn": 3}, TypeError, "_grad_fn has to be a Function object or None, but got int"),
        ((3,), {}, TypeError, "Variable data has to be a tensor, but got int"),
        ("long", {"requires_grad": True}, RuntimeError, None),
    ],
)
def test_variable_constructor_errors(lib, args, kwargs, exc, message):
    if args == "long":
        args = (lib.tensor([1, 2]),)
        message = "Only Tensors of floating point and complex dtype can require gradients"
    else:
        args = tuple(f64(lib, [1.0]) if a == 1.0 and type(a) is float else a for a in args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with raises_exactly(exc, message):
            lib.autograd.Variable(*args, **kwargs)


def test_variable_volatile_warns_and_grad_fn_is_refused(lib):
    Variable = lib.autograd.Variable
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Variable(f64(lib, [1.0]), volatile=True)
    assert [str(w.message) for w in caught] == [
        f"volatile was removed and now has no effect. Use `with {lib.__name__}.no_grad():` instead."
    ]
    y = define(lib, "Ident", lambda ctx, x: x * 1, lambda ctx, g: g).apply(
        f64(lib, [1.0], requires_grad=True)
    )
    with raises_exactly(
        RuntimeError,
        "_grad_fn argument to legacy Variable constructor is no longer supported.  Instead, please invoke "
        "your _grad_fn to produce a variable with it as the _grad_fn.",
    ):
        Variable(f64(lib, [1.0]), _grad_fn=y.grad_fn)
    built_in = (f64(lib, [1.0], requires_grad=True) * 2).grad_fn
    with raises_exactly(TypeError, "_grad_fn has to be a Function object or None, but got MulBackward0"):
        Variable(f64(lib, [1.0]), _grad_fn=built_in)


# --------------------------------------------------------------------------- setup_context


def test_setup_context_receives_forward_defaults(lib):
    seen = {}

    class Affine(lib.autograd.Function):
        @staticmethod
        def forward(x, scale=3.0, shift=1.0):
            return x * scale + shift

        @staticmethod
        def setup_context(ctx, inputs, output):
            seen["inputs"] = inputs
            ctx.scale = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.scale, None, None

    x = f64(lib, [1.0, 2.0], requires_grad=True)
    Affine.apply(x).sum().backward()
    assert seen["inputs"][0] is x and seen["inputs"][1:] == (3.0, 1.0)
    np.testing.assert_allclose(values(x.grad), [3, 3])
    Affine.apply(x, 5.0).sum().backward()
    assert seen["inputs"][1:] == (5.0, 1.0)
    np.testing.assert_allclose(values(x.grad), [8, 8])


def test_setup_context_counts_defaults_as_inputs(lib):
    class Short(lib.autograd.Function):
        @staticmethod
        def forward(x, scale=2.0):
            return x * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return (g * 2, None, None)[: ctx.wanted]

    x = f64(lib, [1.0], requires_grad=True)
    y = Short.apply(x)
    y.grad_fn.wanted = 1
    with raises_exactly(
        RuntimeError, "function ShortBackward returned an incorrect number of gradients (expected 2, got 1)"
    ):
        y.sum().backward()


def test_base_setup_context_is_not_implemented(lib):
    with raises_exactly(NotImplementedError, "setup_context is not implemented."):
        lib.autograd.Function.setup_context(None, (), None)


def test_setup_context_on_classmethods(lib):
    class Cube(lib.autograd.Function):
        @classmethod
        def forward(cls, x, power=3):
            return x**power

        @classmethod
        def setup_context(cls, ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.power = inputs[1]

        @classmethod
        def backward(cls, ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.power * x ** (ctx.power - 1), None

    x = f64(lib, 2.0, requires_grad=True)
    (g,) = lib.autograd.grad(Cube.apply(x), x)
    assert g.item() == 12.0


def test_vjp_stands_for_backward_but_not_beside_it(lib):
    x = f64(lib, [1.0], requires_grad=True)
    VjpOnly = type(
        "VjpOnly",
        (lib.autograd.Function,),
        {"forward": staticmethod(lambda ctx, t: t.clone()), "vjp": staticmethod(lambda ctx, g: g * 3)},
    )
    VjpOnly.apply(x).sum().backward()
    assert values(x.grad).tolist() == [3]
    Both = define(lib, "Both", lambda ctx, t: t.clone(), lambda ctx, g: g, vjp=staticmethod(lambda ctx, g: g))
    with raises_exactly(
        RuntimeError,
        "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should only "
        "implement one of them.",
    ):
        Both.apply(x).sum().backward()


# --------------------------------------------------------------------------- materializing gradients


def _two_outputs(lib, materialize, materialize_non_diff, seen):
    def forward(ctx, x):
        ctx.set_materialize_grads(materialize)
        ctx._materialize_non_diff_grads = materialize_non_diff
        index = lib.arange(2.0)
        ctx.mark_non_differentiable(index)
        return x.clone(), x.clone(), index, lib.arange(2), 7, None

    def backward(ctx, g1, g2, g_index, g_long, g_int, g_none):
        seen["grads"] = (g1, g2, g_index, g_long, g_int, g_none)
        return g1 if g1 is not None else g2

    return define(lib, "Outs", forward, backward)


@pytest.mark.parametrize(
    "materialize, non_diff",
    [(True, True), (True, False), (False, True)],
)
def test_which_gradients_are_materialized(lib, materialize, non_diff):
    seen = {}
    Outs = _two_outputs(lib, materialize, non_diff, seen)
    x = f64(lib, [1.0, 2.0], requires_grad=True)
    a, b, index, long, seven, none = Outs.apply(x)
    assert (seven, none) == (7, None)
    assert not index.requires_grad and not long.requires_grad and long.grad_fn is None
    a.sum().backward()
    g1, g2, g_index, g_long, g_int, g_none = seen["grads"]
    assert values(g1).tolist() == [1, 1]
    assert g_int is None and g_none is None  # non-Tensor outputs always get None
    if materialize:
        assert values(g2).tolist() == [0, 0] and g2.dtype == lib.float64
    else:
        assert g2 is None
    if materialize and non_diff:
        assert values(g_index).tolist() == [0, 0]
        assert g_long.dtype == lib.int64 and g_long.tolist() == [0, 0]
    else:
        assert g_index is None and g_long is None


def test_materialize_non_diff_grads_defaults_on(lib):
    seen = {}

    def forward(ctx, x):
        seen["default"] = ctx._materialize_non_diff_grads
        return x.clone()

    define(lib, "Probe", forward, lambda ctx, g: g).apply(f64(lib, [1.0], requires_grad=True))
    assert seen["default"] is True


# --------------------------------------------------------------------------- non-Tensor inputs/outputs


def test_non_tensor_inputs_and_outputs(lib):
    seen = {}

    def forward(ctx, x, k, label):
        ctx.k = k
        return x * k, k, label

    def backward(ctx, g, gk, glabel):
        seen["grads"] = (gk, glabel)
        return g * ctx.k, None, None

    Mixed = define(lib, "Mixed", forward, backward)
    x = f64(lib, [1.0, 2.0], requires_grad=True)
    y, k, label = Mixed.apply(x, 3, "s")
    assert (k, label) == (3, "s") and y.requires_grad
    y.sum().backward()
    assert seen["grads"] == (None, None)
    np.testing.assert_allclose(values(x.grad), [3, 3])


def test_gradient_for_a_non_tensor_input_is_refused(lib):
    Bad = define(lib, "Bad", lambda ctx, x, k: x * k, lambda ctx, g: (g, g))
    x = f64(lib, [1.0], requires_grad=True)
    with raises_exactly(
        RuntimeError,
        "function BadBackward returned a gradient different than None at position 2, but the "
        "corresponding forward input was not a Variable",
    ):
        Bad.apply(x, 2.0).sum().backward()


@pytest.mark.parametrize(
    "mark, exc, message",
    [
        ("mark_dirty", RuntimeError, "mark_dirty can only accept variables, but argument "),
        (
            "mark_non_differentiable",
            RuntimeError,
            "mark_non_differentiable only accepts variable arguments, but got ",
        ),
        (
            "save_for_backward",
            TypeError,
            "save_for_backward can only save variables, but argument 1 is of type int",
        ),
    ],
)
def test_ctx_takes_only_tensors(lib, mark, exc, message):
    """torch 2.13's first two messages end where its formatting cuts them off."""

    def forward(ctx, x):
        getattr(ctx, mark)(x, 3)
        return x * 1

    Marks = define(lib, "Marks", forward, lambda ctx, g: g)
    with raises_exactly(exc, message):
        Marks.apply(f64(lib, [1.0], requires_grad=True))


def test_only_non_tensor_output(lib):
    Const = define(lib, "Const", lambda ctx, x: 3, lambda ctx, g: None)
    assert Const.apply(f64(lib, [1.0], requires_grad=True)) == 3


# --------------------------------------------------------------------------- returning inputs and views


def _identity(lib):
    return define(lib, "Id", lambda ctx, x: x, lambda ctx, g: g * 2)


def test_input_returned_as_is_comes_back_as_a_view(lib):
    x = f64(lib, [1.0, 2.0], requires_grad=True)
    y = _identity(lib).apply(x)
    assert y is not x and y._base is x and is_view(y)
    assert node_name(y) == "IdBackward" and not y.is_leaf and y._version == 0
    y.sum().backward()
    np.testing.assert_allclose(values(x.grad), [2, 2])
    with raises_exactly(
        RuntimeError, "Output 0 of Id is a view and is being modified inplace." + CUSTOM_VIEW_TAIL
    ):
        y.add_(1)


def test_input_returned_outside_the_graph(lib):
    z = f64(lib, [1.0, 2.0])
    y = _identity(lib).apply(z)
    assert y is not z and y._base is z and not y.requires_grad
    y.add_(1)  # nothing is recorded: allowed, and z sees it
    assert values(z).tolist() == [2, 3]
    x = f64(lib, [1.0], requires_grad=True)
    with lib.no_grad():
        d = _identity(lib).apply(x)
    assert not d.requires_grad and not is_view(d) and d.grad_fn is None  # a detached alias


def _view_of_input(lib):
    def backward(ctx, g):
        out = lib.zeros(3, dtype=g.dtype)
        out[:2] = g
        return out

    return define(lib, "Head", lambda ctx, x: x[:2], backward)


def test_view_of_an_input_refuses_inplace_directly_and_through_its_base(lib):
    x = f64(lib, [1.0, 2.0, 3.0], requires_grad=True)
    base = x.clone()
    y = _view_of_input(lib).apply(base)
    assert y._base is base and node_name(y) == "HeadBackward"
    with raises_exactly(
        RuntimeError, "Output 0 of Head is a view and is being modified inplace." + CUSTOM_VIEW_TAIL
    ):
        y.mul_(2)
    base.mul_(2)
    indirect = (
        "Output 0 of Head is a view and its base or another view of its base has been modified inplace."
    )
    with raises_exactly(RuntimeError, indirect + CUSTOM_VIEW_TAIL):
        y.sum().backward()  # torch already raises reading y's grad_fn; the engine when backward reaches it


def test_view_of_an_input_returned_in_no_grad(lib):
    x = f64(lib, [1.0, 2.0, 3.0], requires_grad=True)
    with lib.no_grad():
        y = _view_of_input(lib).apply(x)
        expected = x[:2]
    assert y.requires_grad == expected.requires_grad and y.grad_fn is None
    with raises_exactly(
        RuntimeError,
        "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
        + CUSTOM_VIEW_TAIL,
    ):
        y.zero_()


def test_view_of_an_intermediate(lib):
    def forward(ctx, x):
        return x.clone()[1:]

    def backward(ctx, g):
        out = lib.zeros(3, dtype=g.dtype)
        out[1:] = g
        return out

    Tail = define(lib, "Tail", forward, backward)
    x = f64(lib, [1.0, 2.0, 3.0], requires_grad=True)
    y = Tail.apply(x)
    assert is_view(y) and node_name(y) == "TailBackward"
    (y * y).sum().backward()
    np.testing.assert_allclose(values(x.grad), [0, 4, 6])
    with raises_exactly(
        RuntimeError, "Output 0 of Tail is a view and is being modified inplace." + CUSTOM_VIEW_TAIL
    ):
        y.add_(1)
    z = Tail.apply(x) + 1  # an out-of-place op on it is fine
    assert z.requires_grad


def test_views_among_several_outputs(lib):
    def forward(ctx, x):
        return x[:1], x[1:]

    def backward(ctx, g1, g2):
        return lib.cat([g1, g2])

    Split = define(lib, "Split", forward, backward)
    x = f64(lib, [1.0, 2.0], requires_grad=True)
    a, b = Split.apply(x.clone())
    with raises_exactly(
        RuntimeError, "Output 0 of Split is a view and is being modified inplace." + MULTI_VIEW_TAIL
    ):
        a.mul_(2)
    (a.sum() * 2 + b.sum() * 3).backward()
    np.testing.assert_allclose(values(x.grad), [2, 3])


def test_view_of_a_returned_view_is_refused_too(lib):
    x = f64(lib, [1.0, 2.0, 3.0], requires_grad=True)
    y = _view_of_input(lib).apply(x.clone())
    z = y[1:]
    with raises_exactly(
        RuntimeError, "Output 0 of Slice is a view and is being modified inplace." + CUSTOM_VIEW_TAIL
    ):
        z.mul_(2)


def test_same_tensor_returned_twice(lib):
    def forward(ctx, x):
        out = x * 2
        return out, out

    Twice = define(lib, "Twice", forward, lambda ctx, g1, g2: g1 * 2 + g2 * 2)
    x = f64(lib, [1.0, 2.0], requires_grad=True)
    a, b = Twice.apply(x)
    assert a is b and a.output_nr == 1
    (a + b).sum().backward()
    np.testing.assert_allclose(values(x.grad), [4, 4])
    x.grad = None
    a, b = define(lib, "Both", lambda ctx, x: (x, x), lambda ctx, g1, g2: g1 + g2).apply(x)
    assert a is not b and a._base is x and b._base is x and (a.output_nr, b.output_nr) == (0, 1)
    (a + b).sum().backward()
    np.testing.assert_allclose(values(x.grad), [2, 2])


# --------------------------------------------------------------------------- mark_dirty


def _dirtying(lib, name, backward, returns=lambda x: x, also=lambda ctx, x: None):
    """A Function doubling its input in place and marking it dirty; `also` sets up more of ctx."""

    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        also(ctx, x)
        return returns(x)

    return define(lib, name, forward, backward)


def _doubler(lib):
    return _dirtying(lib, "Dbl", lambda ctx, g: g * 2)


def test_mark_dirty_on_a_view_of_a_view(lib):
    a = lib.arange(6.0, dtype=lib.float64).requires_grad_()
    b = a.clone()
    v = b.narrow(0, 1, 4).narrow(0, 1, 2)
    out = _doubler(lib).apply(v)
    assert out is v and out._version == 2  # mul_ once, mark_dirty once more
    assert node_name(out) == "AsStridedBackward0" and node_name(b) == "CopySlices"
    assert out.grad_fn.next_functions[0][0] is b.grad_fn
    assert type(b.grad_fn.next_functions[0][0]).__name__ == "CloneBackward0"
    assert values(b).tolist() == [0, 1, 4, 6, 4, 5]
    (b * lib.arange(6.0, dtype=lib.float64)).sum().backward()
    np.testing.assert_allclose(values(a.grad), [0, 1, 4, 6, 4, 5])
    a.grad = None
    b = a.clone()
    out = _doubler(lib).apply(b.narrow(0, 1, 4).narrow(0, 1, 2))
    out.sum().backward()
    np.testing.assert_allclose(values(a.grad), [0, 0, 2, 2, 0, 0])


def test_mark_dirty_on_a_leaf_or_a_view_of_one(lib):
    a = lib.arange(4.0, dtype=lib.float64).requires_grad_()
    with raises_exactly(
        RuntimeError, "a leaf Variable that requires grad has been used in an in-place operation."
    ):
        _doubler(lib).apply(a)
    with raises_exactly(
        RuntimeError, "a view of a leaf Variable that requires grad is being used in an in-place operation."
    ):
        _doubler(lib).apply(a.narrow(0, 1, 2))
    assert values(a).tolist() == [0, 4, 8, 6]  # forward ran before the refusal, as in torch
    with lib.no_grad():
        alias = _doubler(lib).apply(a)  # nothing recorded: allowed, and a detached alias comes back
    assert alias is not a and not alias.requires_grad and alias._version == a._version


def test_mark_dirty_on_a_view_returned_by_a_custom_function(lib):
    y = _identity(lib).apply(f64(lib, [1.0, 2.0], requires_grad=True).clone())
    with raises_exactly(
        RuntimeError, "Output 0 of Id is a view and is being modified inplace." + CUSTOM_VIEW_TAIL
    ):
        _doubler(lib).apply(y)


def test_mark_dirty_on_a_tensor_that_is_not_an_input_warns(lib):
    def forward(ctx, x):
        y = x * 2
        ctx.mark_dirty(y)
        return y

    Fresh = define(lib, "Fresh", forward, lambda ctx, g: g * 2)
    x = f64(lib, [1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = Fresh.apply(x)
    assert [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught] == [
        (UserWarning, DIRTY_NOT_INPUT)
    ]
    assert node_name(y) == "FreshBackward" and y._version == 1
    y.sum().backward()
    np.testing.assert_allclose(values(x.grad), [2, 2])


def test_mark_dirty_without_returning_the_tensor(lib):
    Hidden = _dirtying(lib, "Hidden", lambda ctx, g: g * 2, returns=lambda x: x * 1)
    x = f64(lib, [1.0], requires_grad=True)
    with raises_exactly(RuntimeError, DIRTY_NOT_RETURNED):
        Hidden.apply(x.clone())
    with lib.no_grad(), raises_exactly(RuntimeError, DIRTY_NOT_RETURNED):
        Hidden.apply(x.clone())


def test_mark_dirty_view_with_several_outputs(lib):
    Pair = _dirtying(lib, "Pair", lambda ctx, g1, g2: g1 * 2, returns=lambda x: (x, x * 1))
    base = f64(lib, [1.0, 2.0], requires_grad=True).clone()
    with raises_exactly(RuntimeError, DIRTY_VIEW_SEVERAL):
        Pair.apply(base[:1])
    a, b = Pair.apply(base)  # not a view: fine
    assert a is base and node_name(a) == "PairBackward"


def test_mark_dirty_input_that_does_not_require_grad(lib):
    def forward(ctx, x, w):
        x.add_(w)
        ctx.mark_dirty(x)
        return x

    AddInto = define(lib, "AddInto", forward, lambda ctx, g: (g, g))
    z = f64(lib, [0.0, 0.0])
    w = f64(lib, [1.0, 2.0], requires_grad=True)
    out = AddInto.apply(z, w)
    assert out is z and z.requires_grad and node_name(z) == "AddIntoBackward"
    z.sum().backward()
    np.testing.assert_allclose(values(w.grad), [1, 1])


def test_mark_dirty_and_non_differentiable(lib):
    Quiet = _dirtying(lib, "Quiet", lambda ctx, g: g, also=lambda ctx, x: ctx.mark_non_differentiable(x))
    b = f64(lib, [1.0], requires_grad=True).clone()
    y = Quiet.apply(b)
    assert y is not b and not y.requires_grad and y.grad_fn is None


@pytest.mark.parametrize("through_view", [False, True])
def test_saving_a_dirty_tensor_makes_no_reference_cycle(lib, through_view):
    nodes = []
    saved = {}

    def keep(ctx, x):
        nodes.append(weakref.ref(ctx))
        ctx.save_for_backward(x)

    def backward(ctx, g):
        (t,) = ctx.saved_tensors
        saved["grad_fn"], saved["version"], saved["is_view"] = node_name(t), t._version, is_view(t)
        return g * 2

    SaveDirty = _dirtying(lib, "SaveDirty", backward, also=keep)

    def scope():
        b = f64(lib, [1.0, 1.0, 1.0], requires_grad=True).clone()
        SaveDirty.apply(b[:2] if through_view else b)

    gc.collect()
    gc.disable()
    try:
        scope()
        assert nodes[-1]() is None  # freed by reference counting alone
    finally:
        gc.enable()
    x = f64(lib, [1.0, 1.0, 1.0], requires_grad=True)
    b = x.clone()
    SaveDirty.apply(b[:2] if through_view else b).sum().backward()
    assert saved == {"grad_fn": "SaveDirtyBackward", "version": 2, "is_view": False}
    np.testing.assert_allclose(values(x.grad), [2, 2, 0] if through_view else [2, 2, 2])
