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


@pytest.fixture(params=["engine", pytest.param("torch", marks=pytest.mark.torch_parity)])
def lib(request):
    """The library under test: the engine, or torch for the same expectations (skipped without it)."""
    if request.param == "torch":
        return pytest.importorskip("torch")
    return engine


def raises(exc_type, message: str):
    """pytest.raises for exactly `message` (not a pattern)."""
    return pytest.raises(exc_type, match="^" + re.escape(message) + "$")


def type_name(lib, t, tensor_type: str) -> str:
    """How torch names the type of `t` in messages (torch.typename): `torch.cuda.FloatTensor` on a GPU."""
    return f"{lib.__name__}.{'cuda.' if t.is_cuda else ''}{tensor_type}"


def on_default_device(lib, text: str) -> str:
    """A repr as torch prints it for a tensor on the default device: `device='cuda:0', ` before the
    dtype where that is a GPU (an ENGINE_TEST_DEVICE session), the text itself on the CPU."""
    device = lib.get_default_device()
    return text if device.type == "cpu" else text.replace("dtype=", f"device='{device}', dtype=", 1)


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


def test_data_ptr_is_the_address_in_the_array_module():
    a = engine.arange(6.0)
    if a.device.type == "cpu":
        assert a[1:].data_ptr() == a.numpy()[1:].__array_interface__["data"][0]
    else:  # CuPy's: the MemoryPointer of the element
        assert a[1:].data_ptr() == a._data[1:].data.ptr == a.data_ptr() + a.element_size()


# ----------------------------------------------------------------------------- dtypes

NARROW = ["int8", "int16", "bfloat16"]


@pytest.mark.parametrize(
    "name, info",
    [
        ("int8", (False, 1, "CharTensor", True)),
        ("int16", (False, 2, "ShortTensor", True)),
        ("bfloat16", (True, 2, "BFloat16Tensor", True)),
    ],
)
def test_narrow_dtypes_are_exported_with_torch_attributes(lib, name, info):
    dt = getattr(lib, name)
    assert repr(dt) == f"{lib.__name__}.{name}" and str(dt) == f"{lib.__name__}.{name}"
    t = lib.zeros(2, dtype=dt)
    floating, size, tensor_type, signed = info
    assert (dt.is_floating_point, dt.itemsize, t.element_size(), dt.is_signed) == (
        floating,
        size,
        size,
        signed,
    )
    assert t.dtype == dt and lib.ones(1).to(dt).dtype == dt
    assert lib.short is lib.int16
    assert (lib.ones(2).short().dtype, lib.ones(2).char().dtype, lib.ones(2).bfloat16().dtype) == (
        lib.int16,
        lib.int8,
        lib.bfloat16,
    )
    assert lib.typename(t) == type_name(lib, t, tensor_type)


@pytest.mark.parametrize(
    "name, text",
    [
        ("int8", "tensor([ 1,  2, -3], dtype={lib}.int8)"),
        ("int16", "tensor([ 1,  2, -3], dtype={lib}.int16)"),
        ("bfloat16", "tensor([ 1.,  2., -3.], dtype={lib}.bfloat16)"),
    ],
)
def test_narrow_dtypes_print_as_torch(lib, name, text):
    assert repr(lib.tensor([1, 2, -3]).to(getattr(lib, name))) == on_default_device(
        lib, text.format(lib=lib.__name__)
    )


def test_bfloat16_values_are_rounded_and_printed_as_torch(lib):
    t = lib.tensor([1.001, 3.14159, 1e-3, 100.7, 65504.0, 1e38]).to(lib.bfloat16)
    assert repr(t) == on_default_device(
        lib,
        "tensor([1.0000e+00, 3.1406e+00, 9.9945e-04, 1.0050e+02, 6.5536e+04, 9.9692e+37],\n"
        f"       dtype={lib.__name__}.bfloat16)",
    )
    assert lib.tensor([0.1, 0.2], dtype=lib.bfloat16).tolist() == [0.10009765625, 0.2001953125]
    assert lib.tensor([1.001], dtype=lib.bfloat16).item() == 1.0
    assert repr(lib.tensor([1.0], dtype=lib.bfloat16) / 3) == on_default_device(
        lib, f"tensor([0.3340], dtype={lib.__name__}.bfloat16)"
    )
    assert repr(lib.tensor([1.001, 2.3], dtype=lib.bfloat16).sum()) == on_default_device(
        lib, f"tensor(3.2969, dtype={lib.__name__}.bfloat16)"
    )
    both = lib.cat([lib.ones(2, dtype=lib.bfloat16)] * 2)
    assert both.dtype == lib.bfloat16 and lib.stack([both, both]).dtype == lib.bfloat16


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("bfloat16", "float16", "float32"),
        ("bfloat16", "float32", "float32"),
        ("bfloat16", "float64", "float64"),
        ("bfloat16", "int64", "bfloat16"),
        ("bfloat16", "bool", "bfloat16"),
        ("int8", "uint8", "int16"),
        ("int8", "int16", "int16"),
        ("int16", "uint8", "int16"),
        ("int8", "float16", "float16"),
    ],
)
def test_narrow_dtypes_promote_as_torch(lib, a, b, expected):
    ta, tb = (getattr(lib, n) for n in (a, b))
    assert lib.promote_types(ta, tb) == getattr(lib, expected) == lib.promote_types(tb, ta)
    assert (lib.ones(2, dtype=ta) + lib.ones(2, dtype=tb)).dtype == getattr(lib, expected)
    assert (lib.ones(2, dtype=tb) * lib.ones(2, dtype=ta)).dtype == getattr(lib, expected)


def test_bfloat16_with_numbers_and_zero_dim_tensors(lib):
    bf = lib.ones(2, dtype=lib.bfloat16)
    assert (bf * 2.5).dtype == lib.bfloat16
    assert (bf * lib.tensor(2.5)).dtype == lib.bfloat16  # a 0-dim float32 does not widen it
    assert (lib.ones(2, dtype=lib.float16) * lib.tensor(2.5, dtype=lib.bfloat16)).dtype == lib.float16
    assert (lib.ones(2, dtype=lib.int8) * 1.5).dtype == lib.float32


def test_int8_arithmetic_wraps_around_like_c(lib):
    assert repr(lib.ones(2, dtype=lib.int8) + 1000) == on_default_device(
        lib, f"tensor([-23, -23], dtype={lib.__name__}.int8)"
    )
    assert lib.tensor([200]).to(lib.int8).tolist() == [-56]
    assert lib.ones(2, dtype=lib.int8).sum().dtype == lib.int64


def test_bfloat16_gradients(lib):
    x = lib.tensor([1.5, 2.0], dtype=lib.bfloat16, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    assert y.dtype == x.grad.dtype == lib.bfloat16 and x.grad.tolist() == [3.0, 4.0]
    w = lib.ones(2, requires_grad=True)  # float32, broadcast against a bfloat16 row: each grad its own dtype
    v = lib.ones(3, 1, dtype=lib.bfloat16, requires_grad=True)
    (w * v).sum().backward()
    assert w.grad.dtype == lib.float32 and v.grad.dtype == lib.bfloat16 and v.grad.tolist() == [[2.0]] * 3


BFLOAT16_OPS = {
    "sigmoid": lambda lib, x, w: x.sigmoid(),
    "reciprocal": lambda lib, x, w: x.reciprocal(),
    "rsub": lambda lib, x, w: 1 - x,
    "var": lambda lib, x, w: x.var(),
    "mean": lambda lib, x, w: x.mean(1),
    "softmax": lambda lib, x, w: x.softmax(1),
    "where": lambda lib, x, w: lib.where(x > 0, x, w),
    "cross_entropy smoothing": lambda lib, x, w: lib.nn.functional.cross_entropy(
        x, lib.tensor([0, -100]), label_smoothing=0.1
    ),
    "leaky_relu": lambda lib, x, w: lib.nn.functional.leaky_relu(x, 0.1),
    "gelu": lambda lib, x, w: lib.nn.functional.gelu(x),
    "linear": lambda lib, x, w: lib.nn.functional.linear(x, w),
    "cat": lambda lib, x, w: lib.cat([x, w]),
    "index": lambda lib, x, w: x[[0, 1], [1, 2]],
    "max": lambda lib, x, w: x.max(),
}


@pytest.mark.parametrize("name", BFLOAT16_OPS, ids=list(BFLOAT16_OPS))
def test_bfloat16_stays_bfloat16_through_ops_and_their_gradients(lib, name):
    x = lib.tensor([[1.5, -2.25, 3.0], [0.5, 1.0, -1.0]], dtype=lib.bfloat16, requires_grad=True)
    w = lib.tensor([[0.5, 1.0, 2.0]], dtype=lib.bfloat16, requires_grad=True)
    y = BFLOAT16_OPS[name](lib, x, w)
    y.sum().backward()
    assert y.dtype == x.grad.dtype == lib.bfloat16
    assert w.grad is None or w.grad.dtype == lib.bfloat16


def test_narrow_integer_dtypes_cannot_require_grad_and_have_no_mean(lib):
    with raises(RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"):
        lib.ones(2, dtype=lib.int8, requires_grad=True)
    with raises(
        RuntimeError,
        "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
        "Got: Char",
    ):
        lib.ones(2, dtype=lib.int8).mean()
    with raises(
        RuntimeError,
        "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
        "Got: Long",
    ):
        lib.ones(2, dtype=lib.long).mean()


def test_bfloat16_has_no_numpy_array(lib):
    with raises(TypeError, "Got unsupported ScalarType BFloat16"):
        lib.ones(2, dtype=lib.bfloat16).numpy()


# --------------------------------------------------------------------- random creators


@pytest.mark.parametrize(
    "name, scalar_type",
    [
        ("long", "Long"),
        ("int32", "Int"),
        ("int16", "Short"),
        ("int8", "Char"),
        ("uint8", "Byte"),
        ("bool", "Bool"),
    ],
)
def test_random_floats_of_an_integer_dtype_raise_torchs_error(lib, name, scalar_type):
    dt = getattr(lib, name)
    like = lib.zeros(2, dtype=dt)
    normal_kernel = f"normal_kernel_{like.device.type}"  # torch's CUDA kernel is normal_kernel_cuda
    for make, kernel in (
        (lambda: lib.randn(2, dtype=dt), normal_kernel),
        (lambda: lib.randn(2, 3, dtype=dt, requires_grad=True), normal_kernel),
        (lambda: lib.randn_like(like), normal_kernel),
        (lambda: lib.rand(2, dtype=dt), "check_uniform_bounds"),
        (lambda: lib.rand_like(like), "check_uniform_bounds"),
    ):
        with raises(NotImplementedError, f"\"{kernel}\" not implemented for '{scalar_type}'"):
            make()
    assert isinstance(NotImplementedError(), RuntimeError)  # so `except RuntimeError` catches it, as in torch
    assert lib.randn(0, dtype=dt).shape == (0,)  # nothing drawn, nothing refused
    assert lib.randn_like(like, dtype=lib.float32).dtype == lib.float32


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float64"])
def test_random_creators_of_float_dtypes(lib, name):
    dt = getattr(lib, name)
    for t in (
        lib.randn(3, dtype=dt),
        lib.rand(3, dtype=dt),
        lib.randint(3, (3,), dtype=dt),
        lib.randperm(3, dtype=dt),
    ):
        assert t.dtype == dt and t.shape == (3,)


def test_randint_and_randperm_dtypes(lib):
    assert lib.randint(3, (2,), dtype=lib.int8).dtype == lib.int8
    assert lib.randperm(3, dtype=lib.int16).dtype == lib.int16
    with raises(RuntimeError, "to - 1 is out of bounds for bool"):
        lib.randint(3, (2,), dtype=lib.bool)
    with raises(NotImplementedError, "\"randperm\" not implemented for 'Bool'"):
        lib.randperm(3, dtype=lib.bool)


# ------------------------------------------------------------------- memory overlap

INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory "
    "location. Please clone() the tensor before performing the operation."
)
PARTIAL_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
    "memory location. Please clone() the tensor before performing the operation."
)
WRITES_INTO_EXPANDED = {
    "add_": lambda lib, e: e.add_(1),
    "mul_": lambda lib, e: e.mul_(2),
    "+=": lambda lib, e: e.__iadd__(1),
    "exp_": lambda lib, e: e.exp_(),
    "neg_": lambda lib, e: e.neg_(),
    "clamp_": lambda lib, e: e.clamp_(0, 1),
    "pow_": lambda lib, e: e.pow_(2),
    "copy_": lambda lib, e: e.copy_(lib.ones(4, 3)),
    "copy_ broadcast": lambda lib, e: e.copy_(lib.ones(3)),
    "[None].add_": lambda lib, e: e[None].add_(lib.ones(3)),
}


@pytest.mark.parametrize("write", WRITES_INTO_EXPANDED, ids=list(WRITES_INTO_EXPANDED))
def test_writing_into_an_expanded_tensor_raises_torchs_error(lib, write):
    expanded = lib.randn(1, 3).clone().expand(4, 3)
    with raises(RuntimeError, INTERNAL_OVERLAP):
        WRITES_INTO_EXPANDED[write](lib, expanded)


def test_writing_into_an_expanded_tensor_that_requires_grad(lib):
    base = lib.ones(3, requires_grad=True).clone()
    with raises(RuntimeError, INTERNAL_OVERLAP):
        base.expand(2, 3).mul_(2)
    a = lib.zeros(3, requires_grad=True)
    b = a.clone()
    b.expand(2, 3).fill_(1)  # allowed, as the plain fill is; but its gradient would be written twice
    assert b.tolist() == [1.0, 1.0, 1.0] and type(b.grad_fn).__name__ == "CopySlices"
    with raises(RuntimeError, INTERNAL_OVERLAP):
        b.sum().backward()


def test_fills_and_row_writes_reach_the_shared_storage(lib):
    t = lib.zeros(3)
    t.expand(2, 3).fill_(2)
    assert t.tolist() == [2.0, 2.0, 2.0]
    t.expand(2, 3).zero_()
    assert t.tolist() == [0.0, 0.0, 0.0]
    e = t.expand(2, 3)
    e[0] = lib.tensor([1.0, 2.0, 3.0])
    assert t.tolist() == [1.0, 2.0, 3.0] and e.tolist() == [[1.0, 2.0, 3.0]] * 2
    e[1, 0] = 7
    assert t.tolist() == [7.0, 2.0, 3.0]
    copied = lib.randn(1, 3).expand(4, 3).clone()  # a clone of an expanded tensor owns its elements
    copied.add_(1)
    assert copied.stride() == (3, 1)


def test_index_put_on_an_expanded_tensor_only_warns(lib):
    t = lib.zeros(3)
    e = t.expand(2, 3)
    with pytest.warns(UserWarning) as record:
        e[lib.tensor([0])] = 1.0
    message = str(record[0].message)
    assert message.startswith(
        "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before performing this "
        "operation. This also applies to advanced indexing e.g. tensor[indices] = tensor"
    )
    assert record[0].filename == __file__
    assert t.tolist() == [1.0, 1.0, 1.0]
    with pytest.warns(UserWarning):
        e[lib.tensor([1]), lib.tensor([2])] = 5.0
    assert t.tolist() == [1.0, 1.0, 5.0]


PARTIAL_WRITES = {
    "t[None].add_(t)": lambda lib, t: t[None].add_(t),
    "shifted add_": lambda lib, t: t[1:].add_(t[:-1]),
    "shifted sub_": lambda lib, t: t[1:].sub_(t[:-1], alpha=2),
    "shifted mul_": lambda lib, t: t[1:].mul_(t[:-1]),
    "shifted copy_": lambda lib, t: t[1:].copy_(t[:-1]),
    "shifted clamp_": lambda lib, t: t[1:].clamp_(t[:-1]),
    "shifted pow_": lambda lib, t: t[1:].pow_(t[:-1]),
    "div_ by an element": lambda lib, t: t.div_(t[0]),
    "transposed": lambda lib, t: t.view(2, 2).add_(t.view(2, 2).t()),
    "index_put of itself": lambda lib, t: t.__setitem__(lib.tensor([1, 2]), t[:2]),
}


@pytest.mark.parametrize("write", PARTIAL_WRITES, ids=list(PARTIAL_WRITES))
def test_inputs_sharing_part_of_the_written_memory_raise_torchs_error(lib, write):
    t = lib.randn(4)
    with raises(RuntimeError, PARTIAL_OVERLAP):
        PARTIAL_WRITES[write](lib, t)


def test_inputs_that_are_the_written_tensor_or_miss_it_are_fine(lib):
    t = lib.tensor([1.0, 2.0, 3.0, 4.0])
    t.add_(t)  # the same memory, the same layout
    assert t.tolist() == [2.0, 4.0, 6.0, 8.0]
    t.add_(t.expand(1, 4)[0])  # another view with the same layout
    assert t.tolist() == [4.0, 8.0, 12.0, 16.0]
    t[:2].add_(t[2:])  # disjoint
    t[::2].add_(t[1::2])  # interleaved: not dense, so not checked, as ATen does
    assert t.tolist() == [40.0, 24.0, 28.0, 16.0]
    m = lib.zeros(2, 3)
    m[0].add_(m[1])


# ------------------------------------------------------------------- in-place view ops

VIEW_OPS = {
    # name: (op, input shape, node, shape after)
    "t_": (lambda x: x.t_(), (2, 3), "TBackward1", (3, 2)),
    "transpose_": (lambda x: x.transpose_(0, 1), (2, 3), "TransposeBackward1", (3, 2)),
    "swapdims_": (lambda x: x.swapdims_(0, 1), (2, 3), "TransposeBackward1", (3, 2)),
    "swapaxes_": (lambda x: x.swapaxes_(0, -1), (2, 3), "TransposeBackward1", (3, 2)),
    "squeeze_()": (lambda x: x.squeeze_(), (2, 1), "SqueezeBackward3", (2,)),
    "squeeze_(dim)": (lambda x: x.squeeze_(1), (2, 1), "SqueezeBackward4", (2,)),
    "squeeze_(dims)": (lambda x: x.squeeze_((1,)), (2, 1), "SqueezeBackward5", (2,)),
    "unsqueeze_": (lambda x: x.unsqueeze_(0), (2, 3), "UnsqueezeBackward1", (1, 2, 3)),
    "as_strided_": (lambda x: x.as_strided_((3,), (2,)), (2, 3), "AsStridedBackward1", (3,)),
}


@pytest.mark.parametrize("name", VIEW_OPS, ids=list(VIEW_OPS))
def test_in_place_view_op_rebases_the_tensor_itself(lib, name):
    op, shape, node, after = VIEW_OPS[name]
    a = lib.randn(*shape, requires_grad=True)
    b = a * 1
    before = b.data_ptr()
    assert op(b) is b
    assert tuple(b.shape) == after and b.data_ptr() == before and b._version == 1
    assert chain(b) == [node, "MulBackward0", "AccumulateGrad"]
    assert not b._is_view() and not b.is_leaf
    (b * lib.arange(float(b.numel())).view(after)).sum().backward()
    weights = np.zeros(a.numel())
    if name == "as_strided_":
        weights[[0, 2, 4]] = [0.0, 1.0, 2.0]  # elements 0, 2, 4 of the storage
    else:
        weights = np.arange(float(a.numel())).reshape(after)
        weights = weights.T if len(after) == 2 else weights
    assert a.grad.numpy().reshape(-1).tolist() == weights.reshape(-1).tolist()


@pytest.mark.parametrize("name", VIEW_OPS, ids=list(VIEW_OPS))
def test_in_place_view_op_on_a_view_keeps_it_a_view_and_leaves_the_base(lib, name):
    op, shape, node, after = VIEW_OPS[name]
    a = lib.randn(*shape, requires_grad=True)
    b = a * 1
    c = b[:, :]  # a view of b (sliced, or aliased: the engine skips a slice of everything)
    op(c)
    assert c._base is b and c._version == b._version == 1 and tuple(c.shape) == after
    assert chain(c)[0] == node and chain(b) == ["MulBackward0", "AccumulateGrad"]


@pytest.mark.parametrize("name", VIEW_OPS, ids=list(VIEW_OPS))
def test_in_place_view_op_errors_and_modes(lib, name):
    op, shape, node, after = VIEW_OPS[name]
    with raises(RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation."):
        op(lib.randn(*shape, requires_grad=True))
    plain = lib.randn(*shape)
    op(plain)
    assert plain._version == 1 and tuple(plain.shape) == after and plain.grad_fn is None
    b = lib.randn(*shape, requires_grad=True) * 1
    with lib.no_grad():
        op(b)
    assert chain(b) == ["MulBackward0", "AccumulateGrad"] and b._version == 1


def test_saved_tensor_changed_by_an_in_place_view_op(lib):
    a = lib.randn(2, 3, requires_grad=True)
    b = a * 1
    c = b * b
    b.t_()
    with raises(
        RuntimeError,
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[{type_name(lib, b, 'FloatTensor')} [3, 2]], which is output 0 of T1, is at version 1; expected version 0 "
        f"instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
        f"with {lib.__name__}.autograd.set_detect_anomaly(True, check_nan=False).",
    ):
        c.sum().backward()


def test_views_follow_their_base_through_in_place_view_ops(lib):
    a = lib.arange(6.0, requires_grad=True)
    b = (a * 1).view(2, 3)
    v = b[0]
    b.t_()  # b itself is a view: v still sees row 0 of the original layout
    v.mul_(2)
    assert b.tolist() == [[0.0, 3.0], [2.0, 4.0], [4.0, 5.0]]
    (b * lib.arange(6.0).view(3, 2)).sum().backward()
    assert a.grad.tolist() == [0.0, 4.0, 8.0, 1.0, 3.0, 5.0]

    a = lib.arange(6.0, requires_grad=True)
    b = a * 1
    c = b.view(2, 3)
    b.unsqueeze_(0)  # b is the base of c: c re-derives itself from b's new shape
    c.mul_(2)
    assert chain(b)[:2] == ["CopySlices", "UnsqueezeBackward1"]
    (b * lib.arange(6.0)).sum().backward()
    assert a.grad.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]


def test_in_place_view_op_argument_errors(lib):
    with raises(RuntimeError, "t_() expects a tensor with <= 2 dimensions, but self is 3D"):
        lib.zeros(2, 2, 2).t_()
    with raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 5)"):
        lib.zeros(2, 2).transpose_(0, 5)
    with raises(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 5)"):
        lib.zeros(2, 2).unsqueeze_(5)
    assert lib.zeros(3).t_().shape == (3,)


def test_as_strided_(lib):
    t = lib.arange(4.0)
    with raises(
        RuntimeError,
        "setStorage: sizes [3], strides [2], storage offset 0, and itemsize 4 requiring a storage size of 20 are "
        "out of bounds for storage of size 16",
    ):
        t.as_strided_((3,), (2,))
    with raises(
        RuntimeError, "as_strided: Negative strides are not supported at the moment, got strides: [-1]"
    ):
        t.as_strided_((2,), (-1,), 3)
    with raises(RuntimeError, "mismatch in length of strides and shape"):
        t.as_strided_((2, 2), (1,))
    assert lib.arange(4.0)[1:].as_strided_((2,), (1,)).tolist() == [1.0, 2.0]  # from its own offset
    assert (lib.arange(4.0)[1:].storage_offset(), lib.arange(6.0).view(2, 3)[1].storage_offset()) == (1, 3)
    assert lib.arange(4.0).as_strided_((2, 2), (0, 1)).tolist() == [[0.0, 1.0], [0.0, 1.0]]

    a = lib.arange(4.0, requires_grad=True)
    b = a * 1
    b.as_strided_((2, 2), (0, 1))  # overlapping: both rows' gradients reach elements 0 and 1
    b.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0, 0.0, 0.0]

    a = lib.arange(6.0, requires_grad=True)
    c = (a * 1)[1:]
    c.as_strided_((2,), (2,))
    c.sum().backward()
    assert c.tolist() == [1.0, 3.0] and c.storage_offset() == 1
    assert a.grad.tolist() == [0.0, 1.0, 0.0, 1.0, 0.0, 0.0]

    a = lib.arange(6.0, requires_grad=True)
    c = (a * 1)[2:4]
    c.as_strided_((2,), (1,), 0)  # outside the view it was: no gradient reaches it through c
    c.sum().backward()
    assert c.tolist() == [0.0, 1.0] and a.grad.tolist() == [0.0] * 6


# ----------------------------------------------------------------------------- resize_


def test_resize_(lib):
    a = lib.arange(6.0)
    assert a.resize_(2, 2) is a and a.tolist() == [[0.0, 1.0], [2.0, 3.0]] and a._version == 1
    a.resize_((2, 2))
    assert a._version == 1  # the same size: nothing changes
    a.resize_(2, 3)  # the storage still holds six elements
    assert a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    grown = lib.arange(4.0).resize_(2, 3)
    assert grown.shape == (2, 3) and grown.view(-1)[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert lib.arange(6.0).resize_(()).tolist() == 0.0 and lib.arange(6.0).resize_(0).shape == (0,)
    assert lib.arange(4.0).resize_as_(lib.zeros(2, 2)).shape == (2, 2)
    t = lib.arange(6.0).view(2, 3).t()
    t.resize_(3, 2)  # the same size: the strides stay
    assert t.stride() == (1, 3)


def test_resize_of_views_and_through_data(lib):
    a = lib.arange(4.0)
    b = a[1:]
    b.resize_(2)
    assert b.tolist() == [1.0, 2.0] and b._base is a
    b.fill_(9)
    assert a.tolist() == [0.0, 9.0, 9.0, 3.0]
    a = lib.arange(4.0)
    a.data.resize_(2, 2)  # .data is another tensor: a keeps its shape and version
    assert a.shape == (4,) and a._version == 0


def test_resize_errors(lib):
    for t in (lib.arange(4.0, requires_grad=True), lib.arange(4.0, requires_grad=True) * 1):
        with raises(RuntimeError, "cannot resize variables that require grad"):
            t.resize_(2, 2)
    with raises(RuntimeError, "cannot resize variables that require grad"):
        with lib.no_grad():
            lib.arange(4.0, requires_grad=True).resize_(4)
    with raises(RuntimeError, "numel: integer multiplication overflow"):
        lib.arange(6.0).resize_(2, -1)
    with raises(TypeError, "resize_(): argument 'size' (position 1) must be tuple of ints, not float"):
        lib.arange(6.0).resize_(2.0)


# ---------------------------------------------------------------------------- Tensor.new


def options(dtype: str, device) -> str:
    return (
        f"TensorOptions(dtype={dtype}, device={device}, layout=Strided, requires_grad=false (default), "
        "pinned_memory=false (default), memory_format=(nullopt))"
    )


def test_new_makes_tensors_of_self_s_dtype_and_device(lib):
    x = lib.randn(2, 3, dtype=lib.float64)
    assert repr(x.new()) == on_default_device(lib, f"tensor([], dtype={lib.__name__}.float64)")
    assert x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype == lib.float64
    assert x.new(lib.Size([2, 3])).shape == (2, 3) and x.new(0).shape == (0,)
    assert x.new((2, 3)).tolist() == [2.0, 3.0]  # a plain tuple is data
    assert x.new([[1, 2]]).tolist() == [[1.0, 2.0]] and x.new(np.array([1, 2])).dtype == lib.float64
    assert x.new([]).shape == (0,) and x.new(()).shape == (0,)
    assert x.new(2, device="cpu").shape == (2,)
    assert lib.tensor([1, 2]).new([1.5, 2]).tolist() == [1, 2]
    assert not lib.randn(2, requires_grad=True).new(2).requires_grad


def test_new_of_a_tensor_is_an_alias(lib):
    x = lib.randn(3, dtype=lib.float64)
    y = x.new(x)
    assert y is not x and y.data_ptr() == x.data_ptr() and y._base is x
    y.add_(1)
    assert x._version == y._version == 1
    r = lib.randn(3, requires_grad=True)
    assert type(r.new(r).grad_fn).__name__ == "AliasBackward0"


def test_new_errors(lib):
    x = lib.randn(2, 3, dtype=lib.float64)
    with raises(TypeError, f"expected {options('double', x.device)} (got {options('float', x.device)})"):
        x.new(lib.tensor([1.0, 2.0]))
    with raises(TypeError, f"expected {options('double', x.device)} (got {options('long int', x.device)})"):
        x.new(lib.tensor([1, 2]))
    for value, kind in ((2.5, "float"), (True, "bool")):
        with raises(TypeError, f"new(): data must be a sequence (got {kind})"):
            x.new(value)
    for args, kind in (((3, 2.0), "float"), ((2, None), "NoneType")):
        with raises(
            TypeError,
            f"new(): argument 'size' failed to unpack the object at pos 2 with error \"type must be tuple of "
            f'ints,but got {kind}"',
        ):
            x.new(*args)
    name = lib.__name__
    signatures = (
        f" * (*, {name}.device device = None)\n{{}} * ({name}.Storage storage)\n * (Tensor other)\n"
        f" * (tuple of ints size, *, {name}.device device = None)\n * (object data, *, {name}.device device = None)\n"
    )
    with raises(
        TypeError,
        f"new() received an invalid combination of arguments - got (int, dtype={name}.dtype), but expected one of:\n"
        + signatures.format("      didn't match because some of the keywords were incorrect: dtype\n"),
    ):
        x.new(2, dtype=lib.int32)
    with raises(
        TypeError,
        "new() received an invalid combination of arguments - got (Tensor, int), but expected one of:\n"
        + signatures.format(
            "      didn't match because some of the arguments have invalid types: (!Tensor!, !int!)\n"
        ),
    ):
        x.new(lib.randn(2), 2)
