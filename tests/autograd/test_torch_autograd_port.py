"""Cases from PyTorch's own test/test_autograd.py where the engine differed from torch 2.13.

Each test takes `lib` and runs once on the engine and once on torch (skipped where torch is not
installed) with the same assertions, so what is expected is torch's behaviour, word for word.
"""

from __future__ import annotations

import contextlib
import io
import warnings

import pytest


def _words(lib, text: str) -> str:
    return text.replace("torch.", f"{lib.__name__}.")


# ------------------------------------------------------------------ autograd.grad's arguments


def test_grad_materialize_grads(lib):
    x = lib.tensor(0.5, requires_grad=True)
    a = lib.tensor(1.0, requires_grad=True)
    y = x * a
    dydx = lib.autograd.grad(y, x, create_graph=True)
    d2ydx2_none = lib.autograd.grad(dydx, x, create_graph=True, allow_unused=True)
    d2ydx2 = lib.autograd.grad(dydx, x, create_graph=True, allow_unused=True, materialize_grads=True)
    d3ydx3 = lib.autograd.grad(d2ydx2, x, materialize_grads=True)  # allow_unused set to True implicitly
    assert d2ydx2_none[0] is None
    assert d2ydx2[0].item() == 0 and d3ydx3[0].item() == 0
    with pytest.raises(ValueError) as info:
        lib.autograd.grad(y, x, allow_unused=False, materialize_grads=True)
    assert str(info.value) == (
        "Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False."
    )


def test_grad_refuses_empty_inputs_and_takes_a_dict_of_them(lib):
    x = lib.tensor(0.5, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        lib.autograd.grad(x * 2, [])
    assert str(info.value) == "`inputs` argument to `grad()` cannot be empty."
    grads = lib.autograd.grad(x * 3, {"first": x})
    assert list(grads) == ["first"] and grads["first"].item() == 3.0


def test_grad_warns_that_only_inputs_is_deprecated(lib):
    x = lib.tensor(0.5, requires_grad=True)
    with pytest.warns(FutureWarning) as caught:
        lib.autograd.grad(x * 2, x, only_inputs=False)
    assert str(caught[0].message) == _words(
        lib,
        "only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate gradient for "
        "other parts of the graph, please use torch.autograd.backward.",
    )


def test_diagonal_expanded_v(lib):
    value = lib.rand([])
    v_expanded = value.clone().expand(10)  # float32, for a float64 output: cast to the output's dtype
    a = lib.rand(10, 10, dtype=lib.double, requires_grad=True)
    (result,) = lib.autograd.grad(a.diagonal(), a, v_expanded)
    assert result.dtype == lib.float64
    assert (result == lib.eye(10, dtype=lib.double) * value).all()


def test_a_gradient_of_another_dtype_is_cast_to_the_outputs(lib):
    x = lib.ones(2, requires_grad=True)
    (g,) = lib.autograd.grad(x * 2, x, lib.ones(2, dtype=lib.int64))
    assert g.dtype == lib.float32 and g.tolist() == [2.0, 2.0]


@pytest.mark.parametrize(
    "call, error, words",
    [
        (
            lambda lib, y: y.backward([1, 1]),
            TypeError,
            "gradients can be either Tensors or None, but got int",
        ),
        (lambda lib, y: lib.autograd.backward(y, 2.0), TypeError, "'float' object is not iterable"),
        (
            lambda lib, y: lib.autograd.grad([y, y], y, [lib.ones(2)]),
            RuntimeError,
            "got 2 tensors and 1 gradients",
        ),
    ],
)
def test_gradients_given_for_the_outputs_are_tensors_one_for_each(lib, call, error, words):
    y = lib.ones(2, requires_grad=True) * 2
    with pytest.raises(error) as info:
        call(lib, y)
    assert str(info.value) == words


def test_extra_gradients_are_left_out(lib):
    x = lib.ones(2, requires_grad=True)
    lib.autograd.backward([x * 2], [lib.ones(2), lib.ones(2)])
    assert x.grad.tolist() == [2.0, 2.0]


# ------------------------------------------------------------------ attributes


def test_attribute_deletion(lib):
    x = lib.randn((5, 5), requires_grad=True)
    del x.grad
    assert x.grad is None
    with pytest.raises(RuntimeError):
        del x.data
    with pytest.raises(TypeError):
        x.data = None
    with pytest.raises(RuntimeError, match="^requires_grad must be a bool$"):
        del x.requires_grad
    with pytest.raises(RuntimeError, match="^Deletion of _grad_fn not allowed. Detach tensor instead!$"):
        del x._grad_fn
    with pytest.raises(RuntimeError):
        del x._backward_hooks


@pytest.mark.parametrize("value", [1, None, 0.0, "yes"])
def test_requires_grad_must_be_a_bool(lib, value):
    x = lib.ones(2)
    with pytest.raises(RuntimeError, match="^requires_grad must be a bool$"):
        x.requires_grad = value
    with pytest.raises(TypeError) as info:
        x.requires_grad_(value)
    assert str(info.value) == (
        f"requires_grad_(): argument 'requires_grad' (position 1) must be bool, not {type(value).__name__}"
    )
    assert not x.requires_grad


def test_grad_fn_set_to_none_detaches_in_place(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    assert y._grad_fn is y.grad_fn
    with pytest.raises(RuntimeError, match="^_grad_fn can be only set to None$"):
        y._grad_fn = y.grad_fn
    y._grad_fn = None
    assert y.grad_fn is None and not y.requires_grad and y.is_leaf


# ------------------------------------------------------------------ the create_graph warning


def _cycle_warnings(lib, backward) -> int:
    x = lib.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        backward(lib, x)
    return sum("Using backward() with create_graph=True" in str(w.message) for w in caught)


def test_backward_create_graph_warns_every_time_under_set_warn_always(lib):
    previous = lib.is_warn_always_enabled()
    lib.set_warn_always(True)
    try:
        for _ in range(2):
            assert _cycle_warnings(lib, lambda lib, x: (x * x).sum().backward(create_graph=True)) == 1
        y = lib.ones(2, requires_grad=True) * 2
        assert (
            _cycle_warnings(
                lib, lambda lib, x: lib.autograd.backward((y * y).sum(), create_graph=True, inputs=[y])
            )
            == 1
        )
        assert not _cycle_warnings(lib, lambda lib, x: lib.autograd.grad((x * x).sum(), x, create_graph=True))
        assert not _cycle_warnings(lib, lambda lib, x: (x * x).sum().backward())
    finally:
        lib.set_warn_always(previous)
    assert lib.is_warn_always_enabled() is previous


# ------------------------------------------------------------------ anomaly mode

SIZE = 10


def _nan_function(lib):
    class MyFunc(lib.autograd.Function):
        @staticmethod
        def forward(ctx, inp1, inp2, fail_0th):
            ctx.fail_0th = fail_0th
            return inp1.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, gO):
            gI = gO.clone().expand(SIZE)
            gI[0] = 0
            gI[0] /= 0  # a nan
            return (gI, None, None) if ctx.fail_0th else (None, gI, None)

    return MyFunc


def _messages(caught) -> list[str]:
    return [str(w.message) for w in caught]


def test_anomaly_detect_nan(lib):
    MyFunc = _nan_function(lib)
    inp = lib.rand(SIZE, requires_grad=True)
    MyFunc.apply(inp, inp, True).backward()  # no anomaly mode: no check
    out = MyFunc.apply(inp, inp, True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(
            RuntimeError, match=r"^Function 'MyFuncBackward' returned nan values in its 0th output.$"
        ):
            with lib.autograd.detect_anomaly():
                out.backward()
    assert _messages(caught)[1].startswith(
        "Error detected in MyFuncBackward. No forward pass information available. Enable detect anomaly during "
        "forward pass for more information."
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(
            RuntimeError, match=r"^Function 'MyFuncBackward' returned nan values in its 1th output.$"
        ):
            with lib.autograd.detect_anomaly():
                MyFunc.apply(inp, inp, False).backward()
    assert "MyFunc.apply" in _messages(caught)[1]


def _nested_functions(lib):
    class MyFunc(lib.autograd.Function):
        @staticmethod
        def forward(ctx, inp1, fail_0th):
            ctx.fail_0th = fail_0th
            ctx.save_for_backward(inp1)
            return inp1.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, gO):
            (inp,) = ctx.saved_tensors
            g = gO.clone().expand(SIZE)
            gI = MyFunc2.apply(g * inp, g + inp, ctx.fail_0th)
            return gI, None

    class MyFunc2(lib.autograd.Function):
        @staticmethod
        def forward(ctx, inp1, inp2, fail_0th):
            ctx.fail_0th = fail_0th
            return inp1 * 2.0 + inp2

        @staticmethod
        def backward(ctx, gO):
            g1, g2 = gO.clone(), gO.clone()
            g1[0] = 0
            g2[0] = 0
            if ctx.fail_0th:
                g1[0] /= 0
            else:
                g2[0] /= 0
            return g1, g2, None

    return MyFunc


def test_nested_anomaly_detect_nan(lib):
    MyFunc = _nested_functions(lib)
    inp = lib.rand(SIZE, requires_grad=True)
    (ginp,) = lib.autograd.grad(MyFunc.apply(inp, True), (inp,), create_graph=True)
    ginp.sum().backward()  # no anomaly mode: no check
    (ginp,) = lib.autograd.grad(MyFunc.apply(inp, True), (inp,), create_graph=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(
            RuntimeError, match=r"^Function 'MyFunc2Backward' returned nan values in its 0th output.$"
        ):
            with lib.autograd.detect_anomaly():
                ginp.sum().backward()
    assert "No forward pass information" in _messages(caught)[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(
            RuntimeError, match=r"^Function 'MyFunc2Backward' returned nan values in its 1th output.$"
        ):
            with lib.autograd.detect_anomaly():
                out = MyFunc.apply(inp, False)
                (ginp,) = lib.autograd.grad(out, (inp,), create_graph=True)
                ginp.sum().backward()
    messages = _messages(caught)
    assert len(messages) == 3
    assert messages[1].startswith(
        "Error detected in MyFunc2Backward. Traceback of forward call that caused the error:"
    )
    assert "MyFunc2.apply" in messages[1]
    assert messages[2].startswith(
        "\n\nPrevious calculation was induced by MyFuncBackward. Traceback of forward call that induced the "
        "previous calculation:\n"
    )
    assert "MyFunc.apply" in messages[2]


def _modified_saved_tensor(lib):
    a = lib.randn(5, requires_grad=True)
    d1 = a + 1
    d2 = d1**2
    d1 += 1
    lib.autograd.grad(d2.sum(), a)


def test_anomaly_grad_warnings(lib):
    with pytest.raises(
        RuntimeError, match="one of the variables needed for gradient computation has been modified"
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                _modified_saved_tensor(lib)
    assert len(caught) == 2
    assert "Anomaly Detection has been enabled" in str(caught[0].message)
    assert "Error detected in PowBackward0" in str(caught[1].message)
    # a warning the filter turns into an error is printed instead, and the error goes on
    stderr = io.StringIO()
    with pytest.raises(
        RuntimeError, match="one of the variables needed for gradient computation has been modified"
    ):
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(stderr):
            with lib.autograd.detect_anomaly():
                warnings.simplefilter("error")
                _modified_saved_tensor(lib)
    assert len(caught) == 1 and "Anomaly Detection has been enabled" in str(caught[0].message)
    assert stderr.getvalue().startswith("UserWarning: Error detected in PowBackward0")


def test_anomaly_mode_is_read_from_the_top_namespace(lib):
    assert not lib.is_anomaly_enabled()
    with lib.autograd.set_detect_anomaly(True, check_nan=False):
        assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
        with lib.autograd.set_detect_anomaly(False):
            assert not lib.is_anomaly_enabled()
        assert lib.is_anomaly_enabled()
    assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()


# ------------------------------------------------------------------ gradcheck


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_undefined_grad(lib, fast_mode):
    def fn(x):
        def hook(grad):
            if grad is None:
                raise RuntimeError("x is undefined")

        y = x.clone()
        y.register_hook(hook)
        return y

    x = lib.ones(1, dtype=lib.double, requires_grad=True)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="Expected backward function to handle undefined output grads"):
            lib.autograd.gradcheck(fn, (x,), fast_mode=fast_mode)


def test_a_custom_backward_must_return_tensors_or_none(lib):
    class Returns(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return 0

    x = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^expected Variable or None \(got int\)$"):
        Returns.apply(x).sum().backward()


# ------------------------------------------------------------------ custom Functions returning views


def _custom_functions(lib, calls: list):
    class IdOneOutput(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, make_view):
            return a.narrow(0, 0, 2) if make_view else a.clone()

        @staticmethod
        def backward(ctx, ga):
            calls.append("one")
            return ga, None, None

    class IdTwoOutput(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, make_view):
            a = a.narrow(0, 0, 2) if make_view else a.clone()
            return a, a + b

        @staticmethod
        def backward(ctx, ga, gab):
            calls.append("two")
            return ga + gab, gab, None

    class ViewOfTemp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, make_view):
            ctx.save_for_backward(a)
            a = a.narrow(0, 0, 2) if make_view else a.clone()
            return a.clone().select(0, 0)  # a view of an intermediate

        @staticmethod
        def backward(ctx, grad):
            calls.append("temp")
            (a,) = ctx.saved_tensors
            res = lib.zeros_like(a)
            res.select(0, 0).copy_(grad)
            return res, None

    return {"one_output": IdOneOutput, "two_output": IdTwoOutput, "view_of_temp": ViewOfTemp}


INPLACE_ON_VIEW_ERRORS = {
    "one_output": "Output 0 of IdOneOutput is a view and is being modified inplace. This view was created "
    "inside a custom Function",
    "two_output": "Output 0 of IdTwoOutput is a view and is being modified inplace. This view is the output "
    "of a function that returns multiple views.",
    "view_of_temp": "Output 0 of ViewOfTemp is a view and is being modified inplace. This view was created "
    "inside a custom Function",
}


@pytest.mark.parametrize("fn_id", sorted(INPLACE_ON_VIEW_ERRORS))
@pytest.mark.parametrize("inplace", [True, False])
@pytest.mark.parametrize("make_view", [True, False])
def test_autograd_simple_views_python(lib, fn_id, inplace, make_view):
    calls: list = []
    functions = _custom_functions(lib, calls)
    output_is_a_view = make_view or fn_id == "view_of_temp"

    def fn(a, b):
        a, b = a.clone(), b.clone()  # never changed in place, for gradcheck
        if fn_id == "two_output":
            tmp1, tmp2 = functions[fn_id].apply(a, b, make_view)
            if inplace:
                tmp1 += 3
                tmp2 += 3
            else:
                tmp1, tmp2 = tmp1 + 3, tmp2 + 3
            tmp = tmp1 * tmp2
        else:
            args = (a, b, make_view) if fn_id == "one_output" else (a + b, make_view)
            tmp = functions[fn_id].apply(*args)
            if inplace:
                tmp += 3
            else:
                tmp = tmp + 3
        return tmp.sum()

    a = lib.ones(2, dtype=lib.double, requires_grad=True)
    b = lib.ones(2, dtype=lib.double, requires_grad=True)
    if inplace and output_is_a_view:
        with pytest.raises(RuntimeError) as info:
            fn(a, b)
        assert str(info.value).startswith(INPLACE_ON_VIEW_ERRORS[fn_id])
        assert not calls
        return
    assert lib.autograd.gradcheck(fn, (a, b), check_batched_grad=False)
    calls.clear()
    fn(a, b).abs().backward()
    assert len(calls) == 1


# ------------------------------------------------------------------ legacy tensor types


@pytest.mark.parametrize(
    "name, dtype",
    [
        ("FloatTensor", "float32"),
        ("DoubleTensor", "float64"),
        ("HalfTensor", "float16"),
        ("ByteTensor", "uint8"),
        ("CharTensor", "int8"),
        ("ShortTensor", "int16"),
        ("IntTensor", "int32"),
        ("LongTensor", "int64"),
        ("BoolTensor", "bool"),
    ],
)
def test_the_legacy_tensor_types(lib, name, dtype):
    kind = getattr(lib, name)
    made = kind([1, 0])
    assert made.dtype == getattr(lib, dtype) and made.tolist() == (
        [True, False] if dtype == "bool" else [1, 0]
    )
    assert tuple(kind(2, 3).shape) == (2, 3) and tuple(kind().shape) == (0,)
    other = lib.float32 if dtype == "float64" else lib.float64
    assert isinstance(made, kind) and not isinstance(made.to(other), kind)
    assert kind.dtype == getattr(lib, dtype) and not kind.is_cuda
    assert lib.zeros(2).type(kind).dtype == getattr(lib, dtype)
    with pytest.raises(TypeError, match=r"^new\(\): data must be a sequence \(got float\)$"):
        kind(2.0)


# ------------------------------------------------------------------ indexing (test_setitem and the ops)


def _setitem(lib, size, index):
    x = lib.ones(*size, requires_grad=True)
    y = x + 2
    version = y._version
    y[index] = 2
    assert y._version != version
    y.backward(lib.ones(*size))
    expected = lib.ones(*size)
    expected[index] = 0
    assert (x.grad == expected).all()


def _setitem_tensor(lib, size, index):
    x = lib.ones(*size, requires_grad=True)
    y = x + 2
    value = x.new(x[index].size()).fill_(7)
    value.requires_grad = True
    y[index] = value
    y.backward(lib.ones(*size))
    expected = lib.ones(*size)
    expected[index] = 0
    assert (x.grad == expected).all() and (value.grad == lib.ones_like(value)).all()


SEQUENCE_WARNING = "Using a non-tuple sequence for multidimensional indexing is deprecated"


@pytest.mark.parametrize(
    "size, index",
    [
        ((5, 5), 1),
        ((10,), [[0, 4, 2]]),
        ((5, 5), [[0, 4], [2, 2]]),
        ((5, 5, 5), [slice(None), slice(None), [1, 3]]),
        ((5, 5, 5), [slice(None), [1, 3], slice(None)]),
        ((5, 5, 5), [[1, 3], slice(None), slice(None)]),
        ((5, 5, 5), [slice(None), [2, 4], [1, 3]]),
        ((5, 5, 5), [[1, 3], [2, 4], slice(None)]),
    ],
)
def test_setitem(lib, size, index):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _setitem(lib, size, index)
        _setitem_tensor(lib, size, index)
    sequence = isinstance(index, list) and any(isinstance(k, (list, slice)) for k in index)
    assert all(SEQUENCE_WARNING in str(w.message) for w in caught) and bool(caught) == sequence


def test_setitem_with_legacy_long_tensors(lib):
    _setitem_tensor(lib, (5,), lib.autograd.Variable(lib.LongTensor([3]), requires_grad=False).sum())
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        _setitem_tensor(lib, (5, 5, 5), [lib.LongTensor([1, 3]), [2, 4], slice(None)])


def test_a_tuple_inside_an_index_is_an_index_list(lib):
    x = lib.arange(24.0).reshape(2, 3, 4)
    assert tuple(x[((0,),)].shape) == (1, 3, 4)
    assert tuple(x[((0, 1),)].shape) == (2, 3, 4)
    assert tuple(x[(((0, 1),),)].shape) == (1, 2, 3, 4)
    assert tuple(x[0, (1, 2)].shape) == (2, 4)
    with pytest.warns(UserWarning, match=SEQUENCE_WARNING):
        assert tuple(x[[(0, 1)]].shape) == (2, 3, 4)


@pytest.mark.parametrize(
    "key, shape",
    [
        (lambda d: (1, slice(None), slice(3, 11, 2), d, slice(0, 2)), (4, 4, 3, 2)),
        (lambda d: (slice(None), 1, slice(None), d), (2, 12, 3, 3)),
        (lambda d: (1, slice(None), slice(None), d), (4, 12, 3, 3)),
        (lambda d: (slice(None), [0, 1], slice(None), [1, 2]), (2, 2, 12, 3)),
        (lambda d: (Ellipsis, d, 1), (2, 4, 12, 3)),
        (lambda d: (d % 2, slice(None), d), (3, 4, 5, 3)),
    ],
)
def test_an_int_index_selects_before_the_tensor_indices_gather(lib, key, shape):
    y = lib.arange(2 * 4 * 12 * 5 * 3.0).reshape(2, 4, 12, 5, 3).requires_grad_()
    d = lib.tensor([0, 2, 1])
    picked = y[key(d)]
    assert tuple(picked.shape) == shape
    z = y.detach().clone()
    z[key(d)] = lib.ones(shape)
    assert (z[key(d)] == 1).all()
    picked.sum().backward()
    assert y.grad.sum().item() == picked.numel()


def test_values_that_do_not_fit_the_indexed_shape(lib):
    z = lib.zeros(2, 3, 4)
    with pytest.raises(RuntimeError) as info:
        z[1, :, [0, 1]] = lib.ones(2, 3)
    assert str(info.value) == (
        "shape mismatch: value tensor of shape [2, 3] cannot be broadcast to indexing result of shape [3, 2]"
    )


# ------------------------------------------------------------------ max / min with axis=, view(dtype)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_and_min_take_numpys_axis(lib, name):
    x = lib.arange(24.0).reshape(2, 3, 4)
    by_axis = getattr(lib, name)(x, axis=1, keepdim=True)
    by_dim = getattr(lib, name)(x, 1, keepdim=True)
    assert (by_axis.values == by_dim.values).all() and (by_axis.indices == by_dim.indices).all()
    assert (getattr(x, name)(axis=2).values == getattr(x, name)(2).values).all()
    with pytest.raises(TypeError) as info:
        getattr(x, name)(dim=1, axis=1)
    assert str(info.value) == f"{name}() got an unexpected keyword argument 'axis'"
    with pytest.raises(TypeError) as info:
        getattr(lib, name)(x, dim=1, axis=1)
    assert str(info.value).startswith(
        f"{name}() received an invalid combination of arguments - got (Tensor, axis=int, dim=int), but expected "
        "one of:\n * (Tensor input, *, Tensor out = None)\n      didn't match because some of the keywords were "
        "incorrect: axis, dim\n"
    )


def test_view_dtype_reads_the_same_bytes(lib):
    x = lib.ones(2, 4, requires_grad=True)
    as_int = x.view(lib.int32)
    assert as_int.dtype == lib.int32 and as_int.tolist() == [[1065353216] * 4] * 2
    assert not as_int.requires_grad and as_int.grad_fn is None and not as_int._is_view()
    assert tuple(x.view(lib.float64).shape) == (2, 2) and tuple(x.view(dtype=lib.uint8).shape) == (2, 16)
    assert x.view(lib.uint8)[0, :4].tolist() == [0, 0, 128, 63]
    assert lib.tensor([1, 0], dtype=lib.uint8).view(lib.bool).tolist() == [True, False]
    base = lib.zeros(2, 4)
    ints = base.view(lib.int32)
    base.add_(1)
    assert ints._version == 1 and ints[0, 0].item() == 1065353216  # one storage, one version counter


@pytest.mark.parametrize(
    "make, dtype, words",
    [
        (lambda lib: lib.ones(3), "float64", "self.size(-1) must be divisible by 2 to view Float as Double"),
        (
            lambda lib: lib.ones(3)[1:],
            "float64",
            "self.storage_offset() must be divisible by 2 to view Float as Double",
        ),
        (
            lambda lib: lib.ones(2, 3)[:, :2],
            "float64",
            "self.stride(0) must be divisible by 2 to view Float as Double",
        ),
        (lambda lib: lib.ones(2, 4).t(), "uint8", "self.stride(-1) must be 1 to view Float as Byte"),
        (lambda lib: lib.tensor(1.0), "float64", "self.dim() cannot be 0 to view Float as Double"),
    ],
)
def test_view_dtype_refuses_what_does_not_fit(lib, make, dtype, words):
    with pytest.raises(RuntimeError) as info:
        make(lib).view(getattr(lib, dtype))
    assert str(info.value).startswith(words + " (different element sizes)")


# ------------------------------------------------------------------ views whose storage changed in place

NO_GRAD_VIEW_CHANGED = (
    "A view was created in no_grad mode and its base or another view of its base has been modified inplace "
    "with grad mode enabled."
)
SPLIT_VIEW_CHANGED = (
    "Output 0 of Split is a view and its base or another view of its base has been modified inplace. This view "
    "is the output of a function that returns multiple views."
)


def _no_grad_view(lib):
    a = lib.rand(3, requires_grad=True).clone()
    with lib.no_grad():
        view = a[:2]
    a.mul_(2)
    return view


def _split_view(lib):
    a = lib.rand(10, dtype=lib.double, requires_grad=True).clone()
    view = a.split(2)[0]
    a.mul_(2)
    return view


@pytest.mark.parametrize(
    "make, words", [(_no_grad_view, NO_GRAD_VIEW_CHANGED), (_split_view, SPLIT_VIEW_CHANGED)]
)
def test_reading_the_grad_fn_of_a_view_whose_storage_changed_raises(lib, make, words):
    view = make(lib)
    for read in (lambda: view.grad_fn, lambda: view.is_leaf, lambda: view * 2):
        with pytest.raises(RuntimeError) as info:
            read()
        assert str(info.value).startswith(words)
    assert view.requires_grad and view._base is not None
    assert repr(view).endswith("grad_fn=<Invalid>)")
    with lib.no_grad():
        assert (view * 2).shape == view.shape  # fine outside grad mode
