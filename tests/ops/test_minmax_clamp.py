"""Elementwise maximum / minimum, clamp with tensor bounds, and the `.grad =` checks.

The module under test is ENGINE_MODULE ("engine" by default); ENGINE_MODULE=torch runs the
same expectations against PyTorch 2.13 (none of these messages names the module). Values,
first and second derivatives against finite differences are samples of the registry (tests/ops/);
this file pins what finite differences cannot see: node names, the gradient at ties, NaN,
dtypes, and the errors. `test_*_match_torch` compare with PyTorch itself where it is installed.
"""

import importlib
import os
import re

import numpy as np
import pytest

torch = pytest.importorskip(os.environ.get("ENGINE_MODULE", "engine"))
nan = float("nan")


def exact(message):
    return "^" + re.escape(message) + "$"


def leaf(values, dtype=None):
    return torch.tensor(values, dtype=dtype or torch.float64, requires_grad=True)


def grads_of(out, *inputs, upstream=None):
    out.backward(torch.ones_like(out) if upstream is None else upstream)
    return [t.grad.tolist() for t in inputs]


# ------------------------------------------------------------------- maximum / minimum


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda a, b: torch.maximum(a, b), "MaximumBackward0"),
        (lambda a, b: a.maximum(b), "MaximumBackward0"),
        (lambda a, b: torch.max(a, b), "MaximumBackward0"),
        (lambda a, b: a.max(b), "MaximumBackward0"),
        (lambda a, b: a.max(other=b), "MaximumBackward0"),
        (lambda a, b: torch.minimum(a, b), "MinimumBackward0"),
        (lambda a, b: a.minimum(b), "MinimumBackward0"),
        (lambda a, b: torch.min(a, b), "MinimumBackward0"),
        (lambda a, b: a.min(b), "MinimumBackward0"),
    ],
)
def test_binary_max_min_node_and_saved_inputs(call, name):
    a, b = leaf([1.0, 5.0]), leaf([3.0, 2.0])
    out = call(a, b)
    assert out.grad_fn.name() == name
    assert out.grad_fn._saved_self.tolist() == [1.0, 5.0]
    assert out.grad_fn._saved_other.tolist() == [3.0, 2.0]


def test_reductions_keep_their_nodes():
    x = leaf([[1.0, 5.0], [3.0, 2.0]])
    assert x.max().grad_fn.name() == "MaxBackward1"
    assert x.min().grad_fn.name() == "MinBackward1"
    assert torch.max(x, 1)[0].grad_fn.name() == "MaxBackward0"
    assert x.min(dim=0).values.grad_fn.name() == "MinBackward0"
    assert x.max(1, keepdim=True).indices.tolist() == [[1], [0]]


@pytest.mark.parametrize("op", ["maximum", "max"])
def test_a_tie_splits_the_gradient_in_half(op):
    a, b = leaf([1.0, 2.0, 3.0]), leaf([3.0, 2.0, 1.0])
    assert grads_of(getattr(torch, op)(a, b), a, b) == [[0.0, 0.5, 1.0], [1.0, 0.5, 0.0]]
    a, b = leaf([1.0, 2.0, 3.0]), leaf([3.0, 2.0, 1.0])
    assert grads_of(torch.minimum(a, b), a, b) == [[1.0, 0.5, 0.0], [0.0, 0.5, 1.0]]


def test_a_tie_under_broadcasting_sums_the_halves():
    a, b = leaf([2.0]), leaf([[2.0, 1.0, 3.0], [2.0, 2.0, 0.0]])
    assert grads_of(torch.maximum(a, b), a, b) == [[3.5], [[0.5, 0.0, 1.0], [0.5, 0.5, 0.0]]]


def test_nan_propagates_and_both_sides_get_the_gradient():
    a, b = leaf([nan, 1.0, 4.0]), leaf([1.0, nan, 2.0])
    out = torch.maximum(a, b)
    assert np.isnan(out.detach().numpy()[:2]).all() and out.tolist()[2] == 4.0
    assert grads_of(out, a, b) == [[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]]


def test_dtypes_promote_and_gradients_come_back_in_each_inputs_dtype():
    a, b = leaf([2.0, 1.0], torch.float32), leaf([2.0, 3.0], torch.float64)
    out = torch.minimum(a, b)
    assert out.dtype == torch.float64
    out.sum().backward()
    assert a.grad.dtype == torch.float32 and b.grad.dtype == torch.float64
    assert a.grad.tolist() == [0.5, 1.0] and b.grad.tolist() == [0.5, 0.0]


def test_integer_and_bool_tensors_without_grad():
    assert torch.maximum(torch.tensor([1, 5]), torch.tensor([3, 2])).tolist() == [3, 5]
    both = torch.minimum(torch.tensor([True, False]), torch.tensor([True, True]))
    assert both.tolist() == [True, False] and both.grad_fn is None


MAX_FUNCTION = (
    "{op}() received an invalid combination of arguments - got (Tensor, float), but expected one of:\n"
    " * (Tensor input, *, Tensor out = None)\n"
    " * (Tensor input, Tensor other, *, Tensor out = None)\n"
    " * (Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)\n"
)
MAX_METHOD = (
    "{op}() received an invalid combination of arguments - got (float), but expected one of:\n"
    " * ()\n"
    "      didn't match because some of the arguments have invalid types: (!float!)\n"
    " * (Tensor other)\n"
    "      didn't match because some of the arguments have invalid types: (!float!)\n"
    " * (int dim, bool keepdim = False)\n"
)


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda x: torch.maximum(x, 2.0),
            "maximum(): argument 'other' (position 2) must be Tensor, not float",
        ),
        (lambda x: torch.minimum(x, 2), "minimum(): argument 'other' (position 2) must be Tensor, not int"),
        (
            lambda x: torch.maximum(2.0, x),
            "maximum(): argument 'input' (position 1) must be Tensor, not float",
        ),
        (lambda x: x.maximum(2.0), "maximum(): argument 'other' (position 1) must be Tensor, not float"),
        (lambda x: x.minimum(None), "minimum(): argument 'other' (position 1) must be Tensor, not NoneType"),
        (lambda x: torch.max(x, 2.0), MAX_FUNCTION.format(op="max")),
        (lambda x: torch.min(x, 2.0), MAX_FUNCTION.format(op="min")),
        (lambda x: x.max(2.0), MAX_METHOD.format(op="max")),
        (lambda x: x.min(0.5), MAX_METHOD.format(op="min")),
        (lambda x: x.min(2.0, True), "min(): argument 'dim' (position 1) must be int, not float"),
        (lambda x: x.max(x, True), "max(): argument 'dim' (position 1) must be int, not Tensor"),
    ],
)
def test_a_python_number_as_other_is_a_type_error(call, message):
    x = leaf([1.0, 2.0])
    with pytest.raises(TypeError, match=exact(message)):
        call(x)


def test_shapes_that_do_not_broadcast():
    message = "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"
    with pytest.raises(RuntimeError, match=exact(message)):
        torch.maximum(leaf([1.0, 2.0]), leaf([1.0, 2.0, 3.0]))


# ------------------------------------------------------------------ clamp, tensor bounds


def test_clamp_node_is_clampbackward0_for_tensor_bounds_and_clampbackward1_for_numbers():
    x, lo, hi = leaf([-2.0, 0.5, 3.0]), leaf([0.0, 0.0, 0.0]), leaf([1.0, 1.0, 1.0])
    for out in (x.clamp(lo, hi), torch.clamp(x, lo, hi), torch.clip(x, lo, hi), x.clip(lo, hi)):
        assert out.grad_fn.name() == "ClampBackward0"
        assert out.grad_fn._saved_min.tolist() == [0.0] * 3 and out.grad_fn._saved_max.tolist() == [1.0] * 3
        assert out.grad_fn._saved_self.tolist() == [-2.0, 0.5, 3.0]
    only_min = x.clamp(min=lo)
    assert only_min.grad_fn.name() == "ClampBackward0" and only_min.grad_fn._saved_max is None
    only_max = torch.clamp(x, None, hi)
    assert only_max.grad_fn.name() == "ClampBackward0" and only_max.grad_fn._saved_min is None
    numbers = x.clamp(0, 1)
    assert numbers.grad_fn.name() == "ClampBackward1"
    assert numbers.grad_fn._saved_min == 0 and numbers.grad_fn._saved_max == 1
    assert x.clamp(min=-1.0).grad_fn.name() == "ClampBackward1"


def test_clamp_gradients_for_x_and_both_bounds():
    # x equal to a bound is inside: its gradient goes to x, not to the bound
    x, lo, hi = leaf([-2.0, 0.0, 0.5, 1.0, 3.0]), leaf([0.0] * 5), leaf([1.0] * 5)
    out = x.clamp(lo, hi)
    assert out.tolist() == [0.0, 0.0, 0.5, 1.0, 1.0]
    assert grads_of(out, x, lo, hi) == [[0.0, 1.0, 1.0, 1.0, 0.0], [1.0, 0, 0, 0, 0], [0, 0, 0, 0, 1.0]]


def test_clamp_min_above_max_gives_max_and_its_gradient():
    x, lo, hi = leaf([-1.0, 0.5, 2.0]), leaf([1.0] * 3), leaf([0.0] * 3)
    out = torch.clamp(x, lo, hi)
    assert out.tolist() == [0.0, 0.0, 0.0]
    assert grads_of(out, x, lo, hi) == [[0.0] * 3, [0.0] * 3, [1.0] * 3]


def test_clamp_nan_anywhere_gives_nan_and_no_gradient():
    x, lo, hi = leaf([nan, 0.5, 0.5]), leaf([0.0, nan, 0.0]), leaf([1.0, 1.0, nan])
    out = x.clamp(lo, hi)
    assert np.isnan(out.detach().numpy()).all()
    assert grads_of(out, x, lo, hi) == [[0.0] * 3] * 3


def test_clamp_bounds_broadcast_and_gradients_sum_back():
    x, lo = leaf([[-2.0, 0.5, 3.0]]), leaf([[0.0], [1.0]])
    out = x.clamp(lo)
    assert out.tolist() == [[0.0, 0.5, 3.0], [1.0, 1.0, 3.0]]
    assert grads_of(out, x, lo) == [[[0.0, 1.0, 2.0]], [[1.0], [2.0]]]


def test_clamp_bound_of_another_dtype():
    x, lo = leaf([-2.0, 0.5, 3.0], torch.float32), leaf([0.0, 0.0, 0.0])
    out = x.clamp(lo)
    assert out.dtype == torch.float64
    out.sum().backward()
    assert x.grad.dtype == torch.float32 and x.grad.tolist() == [0.0, 1.0, 1.0]
    assert lo.grad.dtype == torch.float64 and lo.grad.tolist() == [1.0, 0.0, 0.0]


def test_clamp_in_place_with_tensor_bounds():
    x, lo, hi = leaf([-2.0, 0.0, 0.5, 1.0, 3.0]), leaf([0.0, 0.0, 0.6, 0.0, 0.0]), leaf([1.0] * 5)
    y = x * 1
    assert y.clamp_(lo, hi) is y
    assert y._version == 1 and y.grad_fn.name() == "ClampBackward0"
    assert y.tolist() == [0.0, 0.0, 0.6, 1.0, 1.0]
    assert grads_of(y, x, lo, hi) == [[0.0, 1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0, 0.0], [0, 0, 0, 0, 1.0]]
    message = "output with shape [2] doesn't match the broadcast shape [3, 2]"
    with pytest.raises(RuntimeError, match=exact(message)):
        torch.ones(2).clamp_(torch.zeros(3, 2))


def test_clamp_saved_bound_changed_in_place_breaks_backward():
    x, lo = leaf([-2.0, 0.5]), torch.zeros(2, dtype=torch.float64)
    out = x.clamp(lo)
    lo.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


CLAMP_METHOD = (
    "{op}() received an invalid combination of arguments - got ({a}, {b}), but expected one of:\n"
    " * (Tensor min = None, Tensor max = None)\n"
    "      didn't match because some of the arguments have invalid types: (!{a}!, !{b}!)\n"
    " * (Number min = None, Number max = None)\n"
    "      didn't match because some of the arguments have invalid types: (!{a}!, !{b}!)\n"
)
CLAMP_FUNCTION = (
    "{op}() received an invalid combination of arguments - got (Tensor, {a}, {b}), but expected one of:\n"
    " * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
    " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n"
)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x, t: x.clamp(t, 0.5), CLAMP_METHOD.format(op="clamp", a="Tensor", b="float")),
        (lambda x, t: x.clamp(0, t), CLAMP_METHOD.format(op="clamp", a="int", b="Tensor")),
        (lambda x, t: x.clip(t, 1.0), CLAMP_METHOD.format(op="clip", a="Tensor", b="float")),
        (lambda x, t: (x * 1).clamp_(t, 1.0), CLAMP_METHOD.format(op="clamp_", a="Tensor", b="float")),
        (lambda x, t: torch.clamp(x, t, 1), CLAMP_FUNCTION.format(op="clamp", a="Tensor", b="int")),
        (lambda x, t: torch.clip(x, 0.0, t), CLAMP_FUNCTION.format(op="clip", a="float", b="Tensor")),
    ],
)
def test_clamp_mixing_a_tensor_and_a_number_is_a_type_error(call, message):
    x, t = leaf([1.0, 2.0]), torch.zeros(2, dtype=torch.float64)
    with pytest.raises(TypeError, match=exact(message)):
        call(x, t)


def test_clamp_errors_for_no_bounds_and_bounds_that_do_not_broadcast():
    message = "torch.clamp: At least one of 'min' or 'max' must not be None"
    for call in (lambda x: x.clamp(), lambda x: torch.clamp(x, None, None), lambda x: (x * 1).clamp_()):
        with pytest.raises(RuntimeError, match=exact(message)):
            call(leaf([1.0]))
    message = "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
    with pytest.raises(RuntimeError, match=exact(message)):
        torch.clamp(torch.ones(2, 1), torch.zeros(3), torch.zeros(4))
    message = "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"
    with pytest.raises(RuntimeError, match=exact(message)):
        torch.clamp(torch.ones(2), torch.zeros(3))
    # Shapes fold in turn, each pair compared from its trailing dimension.
    message = "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
    with pytest.raises(RuntimeError, match=exact(message)):
        torch.zeros(3).clamp(torch.zeros(2, 3), torch.zeros(3, 4))
    message = "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 2"
    with pytest.raises(RuntimeError, match=exact(message)):
        torch.zeros(5, 1, 3) * torch.zeros(4, 2)


# ------------------------------------------------------------------------- .grad = ...

GRAD_DTYPE = (
    "attempting to assign a gradient with dtype '{grad}' to a tensor with grad_dtype '{tensor}'. The "
    "gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
    "tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with "
    "caution. Diverging the dtypes of a tensor and its gradient may break downstream systems that assume "
    "they match."
)


@pytest.mark.parametrize(
    "tensor_dtype, grad_dtype, grad_name, tensor_name",
    [
        ("float32", "float64", "double", "Float"),
        ("float64", "float32", "float", "Double"),
        ("float32", "float16", "c10::Half", "Float"),
        ("float16", "float32", "float", "Half"),
        ("float32", "int64", "long int", "Float"),
        ("float32", "int32", "int", "Float"),
        ("float32", "uint8", "unsigned char", "Float"),
        ("float32", "bool", "bool", "Float"),
        ("int64", "float32", "float", "Long"),
    ],
)
def test_grad_of_another_dtype_is_refused(tensor_dtype, grad_dtype, grad_name, tensor_name):
    x = torch.zeros(2, dtype=getattr(torch, tensor_dtype))
    message = GRAD_DTYPE.format(grad=grad_name, tensor=tensor_name)
    with pytest.raises(RuntimeError, match=exact(message)):
        x.grad = torch.zeros(2, dtype=getattr(torch, grad_dtype))
    assert x.grad is None


def test_grad_dtype_is_checked_before_size_and_the_right_grad_is_accepted():
    x = torch.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=exact(GRAD_DTYPE.format(grad="double", tensor="Float"))):
        x.grad = torch.zeros(3, dtype=torch.float64)
    message = (
        "attempting to assign a gradient of size '[3]' to a tensor of size '[2]'. Please ensure that the "
        "gradient and the tensor are the same size"
    )
    with pytest.raises(RuntimeError, match=exact(message)):
        x.grad = torch.zeros(3)
    x.grad = torch.ones(2)
    assert x.grad.tolist() == [1.0, 1.0]
    y = x * 2  # a non-leaf is checked the same way
    with pytest.raises(RuntimeError, match=exact(GRAD_DTYPE.format(grad="double", tensor="Float"))):
        y.grad = torch.zeros(2, dtype=torch.float64)


def test_a_tensor_cannot_be_its_own_grad():
    x = torch.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=exact("can't assign Variable as its own grad")):
        x.grad = x


# ------------------------------------------------------------- against PyTorch itself


def _run(lib, fn, arrays, dtypes):
    inputs = [lib.tensor(a, dtype=getattr(lib, dt), requires_grad=True) for a, dt in zip(arrays, dtypes)]
    out = fn(lib, *inputs)
    upstream = lib.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)), dtype=out.dtype)
    out.backward(upstream)
    return (
        out.grad_fn.name(),
        str(out.dtype),
        out.detach().numpy(),
        [(t.grad.numpy(), str(t.grad.dtype)) for t in inputs],
    )


TORCH_CASES = {
    "maximum": (lambda lib, a, b: lib.maximum(a, b), [(3, 4), (3, 4)]),
    "minimum_bcast": (lambda lib, a, b: lib.minimum(a, b), [(3, 1), (4,)]),
    "max_method": (lambda lib, a, b: a.max(b), [(4,), (3, 4)]),
    "min_function": (lambda lib, a, b: lib.min(a, b), [(), (3, 4)]),
    "clamp_both": (lambda lib, x, lo, hi: x.clamp(lo, hi), [(3, 4), (3, 4), (3, 4)]),
    "clamp_bcast": (lambda lib, x, lo, hi: lib.clamp(x, lo, hi), [(3, 1), (4,), (3, 4)]),
    "clamp_min": (lambda lib, x, lo: x.clamp(min=lo), [(3, 4), (4,)]),
    "clip_max": (lambda lib, x, hi: lib.clip(x, None, hi), [(3, 4), (3, 1)]),
    "clamp_inplace": (lambda lib, x, lo, hi: (x * 1).clamp_(lo, hi), [(3, 4), (4,), (3, 4)]),
}


@pytest.mark.parametrize(
    "dtypes", [("float64",) * 3, ("float32", "float64", "float32")], ids=["f64", "mixed"]
)
@pytest.mark.torch_parity
@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_values_gradients_and_ties_match_torch(name, dtypes):
    """Small integers, so ties are everywhere; torch's results and ours must agree exactly."""
    real = importlib.import_module("torch")
    if torch is real:
        pytest.skip("the module under test is torch")
    fn, shapes = TORCH_CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    arrays = [rng.integers(-2, 3, shape).astype(np.float64) for shape in shapes]
    ours, theirs = _run(torch, fn, arrays, dtypes), _run(real, fn, arrays, dtypes)
    assert ours[0] == theirs[0]
    assert ours[1].split(".")[-1] == theirs[1].split(".")[-1]
    np.testing.assert_array_equal(ours[2], theirs[2])
    for (g, gdt), (h, hdt) in zip(ours[3], theirs[3]):
        assert gdt.split(".")[-1] == hdt.split(".")[-1]
        np.testing.assert_array_equal(g, h)
