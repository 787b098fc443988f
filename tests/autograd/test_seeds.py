"""Seed-note examples (/work/shared/seeds/*.txt) run against ``engine``.

One test per code example in the five study notes, named ``test_<note>_<topic>``.
Each runs the note's code with ``import engine as torch`` and asserts what the note
prints, as produced by real PyTorch 2.13 where the note (written for older versions)
differs.  Random values and object addresses are asserted structurally.  Error and
warning texts are PyTorch 2.13's, with ``torch`` replaced by ``engine`` where the
message names the module/type.  A few tests (marked "bullet" in their docstring)
cover rules that note 004 states in prose rather than code.
"""

import math
import re
import warnings
from contextlib import contextmanager
from types import SimpleNamespace

import numpy as np
import pytest

import engine
import engine as torch

# --------------------------------------------------------------------------- #
# Expected messages (PyTorch 2.13 text, "torch" -> "engine").
# --------------------------------------------------------------------------- #
NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
    "Its .grad attribute won't be populated during autograd.backward(). "
    "If you indeed want the .grad field to be populated for a non-leaf Tensor, "
    "use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor "
    "by mistake, make sure you access the leaf Tensor instead. "
    "See github.com/pytorch/pytorch/pull/30531 for more information."
)
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
MODIFIED_BY_INPLACE = (
    "one of the variables needed for gradient computation has been modified by an "
    "inplace operation: [engine.FloatTensor [2]], which is output 0 of "
    "engine::autograd::CopySlices, is at version 1; expected version 0 instead. "
    "Hint: enable anomaly detection to find the operation that failed to compute "
    "its gradient, with engine.autograd.set_detect_anomaly(True, check_nan=False)."
)
SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)
IMPLICIT_SCALAR = "grad can be implicitly created only for scalar outputs"
HOOK_NO_GRAD = "cannot register a hook on a tensor that doesn't require gradient"
NON_LEAF_REQUIRES_GRAD_FALSE = (
    "you can only change requires_grad flags of leaf variables. If you want to use "
    "a computed variable in a subgraph that doesn't require differentiation use "
    "var_no_grad = var.detach()."
)
NON_LEAF_REQUIRES_GRAD_TRUE = "you can only change requires_grad flags of leaf variables."
INT_FACTORY_REQUIRES_GRAD = "Only Tensors of floating point and complex dtype can require gradients"
INT_REQUIRES_GRAD_ = "only Tensors of floating point dtype can require gradients"
INT_SET_REQUIRES_GRAD = "only Tensors of floating point and complex dtype can require gradients"

ADDR = r"0x[0-9a-fA-F]+"
NUMBER = re.compile(r"[-+]?(?:inf|nan|\d+\.?\d*(?:e[-+]\d+)?)")


# --------------------------------------------------------------------------- #
# Helpers
# --------------------------------------------------------------------------- #
def exact(msg):
    """Regex for pytest.raises(match=...) that matches ``msg`` exactly."""
    return "^" + re.escape(msg) + "$"


def node(name):
    """Regex for the repr of a graph node object, e.g. <MulBackward0 object at 0x..>."""
    return "<" + re.escape(name) + " object at " + ADDR + ">"


@contextmanager
def no_warnings():
    """Fail if the block emits any warning (PyTorch emits none there)."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        yield
    assert [str(w.message) for w in record] == []


@contextmanager
def non_leaf_grad_warnings(count):
    """Expect exactly ``count`` non-leaf ``.grad`` UserWarnings."""
    with pytest.warns(UserWarning, match="^" + re.escape(NON_LEAF_GRAD_WARNING)) as rec:
        yield
    hits = [
        w
        for w in rec
        if issubclass(w.category, UserWarning) and str(w.message).startswith(NON_LEAF_GRAD_WARNING)
    ]
    assert len(hits) == count


def printed_numbers(text):
    return [float(n) for n in NUMBER.findall(text)]


def assert_printed_close(text, values):
    """Numbers printed (4 significant decimals) match the tensor's values."""
    nums = printed_numbers(text)
    assert len(nums) == len(values), (text, values)
    for p, v in zip(nums, values):
        assert math.isclose(p, v, rel_tol=1e-3, abs_tol=1e-4), (text, values)


def flat(t):
    return np.asarray(t.tolist(), dtype=np.float64).ravel().tolist()


def fullmatch_lines(out, patterns):
    lines = out.rstrip("\n").split("\n")
    assert len(lines) == len(patterns), out
    for line, pat in zip(lines, patterns):
        assert re.fullmatch(pat, line), (line, pat)


# --------------------------------------------------------------------------- #
# 000: computation graph, leaves, retain_grad, hooks, in-place, _version
# --------------------------------------------------------------------------- #
def test_000_randn_print_and_tolist(capsys):
    # The note uses device='cuda'; run on CPU and expect no device in the repr.
    x = torch.randn(2, requires_grad=True)
    print(x)
    out = capsys.readouterr().out
    m = re.fullmatch(r"tensor\(\[(.*)\], requires_grad=True\)\n", out)
    assert m, out
    values = x.tolist()
    assert isinstance(values, list) and len(values) == 2
    assert all(type(v) is float for v in values)
    assert values == [x[0].item(), x[1].item()]
    assert_printed_close(m.group(1), values)


def test_000_exp_grad_fn_repr():
    a = torch.tensor(2.0, requires_grad=True)
    b = a.exp()
    assert repr(b) == "tensor(7.3891, grad_fn=<ExpBackward0>)"


def _forward_graph(inp_requires_grad):
    inp = torch.ones([2, 2], requires_grad=inp_requires_grad)
    w1 = torch.tensor(2.0, requires_grad=True)
    w2 = torch.tensor(3.0, requires_grad=True)
    w3 = torch.tensor(4.0, requires_grad=True)
    l1 = inp * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = l4.mean()
    return SimpleNamespace(inp=inp, w1=w1, w2=w2, w3=w3, l1=l1, l2=l2, l3=l3, l4=l4, loss=loss)


def test_000_graph_before_backward(capsys):
    g = _forward_graph(True)
    inp, w1, l1, loss = g.inp, g.w1, g.l1, g.loss
    with no_warnings():
        print(w1.data, w1.grad, w1.grad_fn)
    with non_leaf_grad_warnings(1):
        print(l1.data, l1.grad, l1.grad_fn)
    with non_leaf_grad_warnings(1):
        print(loss.data, loss.grad, loss.grad_fn)
    with no_warnings():
        print(inp.grad)
    out = capsys.readouterr().out
    fullmatch_lines(
        out,
        [
            re.escape("tensor(2.) None None"),
            re.escape("tensor([[2., 2.],"),
            re.escape("        [2., 2.]]) None ") + node("MulBackward0"),
            re.escape("tensor(40.) None ") + node("MeanBackward0"),
            "None",
        ],
    )


def test_000_leaf_grads_after_backward(capsys):
    g = _forward_graph(True)
    inp, w1, w2, w3 = g.inp, g.w1, g.w2, g.w3
    l1, l2, l3, l4, loss = g.l1, g.l2, g.l3, g.l4, g.loss
    loss.backward()
    with no_warnings():
        print(w1.grad, w2.grad, w3.grad)
    with non_leaf_grad_warnings(5):
        print(l1.grad, l2.grad, l3.grad, l4.grad, loss.grad)
    with no_warnings():
        print(inp.grad)
    assert capsys.readouterr().out == (
        "tensor(28.) tensor(8.) tensor(10.)\n"
        "None None None None None\n"
        "tensor([[14., 14.],\n"
        "        [14., 14.]])\n"
    )
    assert [t.is_leaf for t in (inp, w1, w2, w3)] == [True] * 4
    assert [t.is_leaf for t in (l1, l2, l3, l4, loss)] == [False] * 5


def test_000_is_leaf_without_requires_grad(capsys):
    a = torch.ones([2, 2], requires_grad=False)
    print(a.is_leaf)
    assert capsys.readouterr().out == "True\n"


def test_000_retain_grad():
    g = _forward_graph(False)
    w1, l1, l4, loss = g.w1, g.l1, g.l4, g.loss
    l1.retain_grad()
    l4.retain_grad()
    loss.retain_grad()
    loss.backward()
    with no_warnings():
        assert repr(loss.grad) == "tensor(1.)"
        assert repr(l4.grad) == "tensor([[0.2500, 0.2500],\n        [0.2500, 0.2500]])"
        assert repr(l1.grad) == "tensor([[7., 7.],\n        [7., 7.]])"
    assert [l1.retains_grad, l4.retains_grad, loss.retains_grad] == [True] * 3
    assert w1.retains_grad is False


def test_000_register_hook(capsys):
    g = _forward_graph(False)
    l1, l4, loss = g.l1, g.l4, g.loss
    l1.register_hook(lambda grad: print("l1 grad: ", grad))
    l4.register_hook(lambda grad: print("l4 grad: ", grad))
    loss.register_hook(lambda grad: print("loss grad: ", grad))
    loss.backward()
    with non_leaf_grad_warnings(1):
        print(loss.grad)
    assert capsys.readouterr().out == (
        "loss grad:  tensor(1.)\n"
        "l4 grad:  tensor([[0.2500, 0.2500],\n"
        "        [0.2500, 0.2500]])\n"
        "l1 grad:  tensor([[7., 7.],\n"
        "        [7., 7.]])\n"
        "None\n"
    )


def test_000_id_new_object_is_not_inplace():
    a = torch.tensor([3.0, 1.0])
    id_before = id(a)
    a = a.exp()
    assert id(a) != id_before


def test_000_id_setitem_is_inplace(capsys):
    a = torch.tensor([3.0, 1.0])
    print(id(a))
    a[0] = 10
    print(id(a), a)
    first, second = capsys.readouterr().out.rstrip("\n").split("\n")
    assert first == str(id(a))
    assert second == f"{id(a)} tensor([10.,  1.])"


def test_000_version_counter(capsys):
    a = torch.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    print(b._version)
    loss = (b * b).mean()
    b[0] = 1000.0
    print(b._version)
    assert capsys.readouterr().out == "0\n1\n"
    assert loss.requires_grad


def test_000_backward_after_inplace_modification_error():
    a = torch.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b[0] = 1000.0
    # PyTorch 2.13: b's grad_fn is now CopySlices (the note's 1.x text said
    # AddBackward0) and the hint mentions check_nan=False.
    assert repr(b) == "tensor([1000.,    5.], grad_fn=<CopySlices>)"
    with pytest.raises(RuntimeError, match=exact(MODIFIED_BY_INPLACE)):
        loss.backward()


def test_000_leaf_inplace_error():
    a = torch.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=exact(LEAF_INPLACE)):
        a.add_(10.0)
    assert a._version == 0
    assert repr(a) == "tensor([10.,  5.,  2.,  3.], requires_grad=True)"


# --------------------------------------------------------------------------- #
# 001: retain_graph, gradient=, create_graph, accumulation, propagation
# --------------------------------------------------------------------------- #
def test_001_manual_seed_and_version():
    # The note shows torch.__version__ == '1.3.0'; only its type is asserted.
    assert isinstance(torch.__version__, str)
    torch.manual_seed(0)
    first = torch.randn(3).tolist()
    torch.manual_seed(0)
    assert torch.randn(3).tolist() == first


def _wx_graph():
    w = torch.tensor([1.0], requires_grad=True)
    x = torch.tensor([2.0], requires_grad=True)
    a = torch.add(w, x)
    b = torch.add(w, 1)
    return SimpleNamespace(w=w, x=x, a=a, b=b)


def test_001_retain_graph(capsys):
    g = _wx_graph()
    w, x, a, b = g.w, g.x, g.a, g.b
    y = torch.mul(a, b)
    y.backward(retain_graph=True)
    print(w.grad)
    y.backward()
    print(w.grad)
    assert capsys.readouterr().out == "tensor([5.])\ntensor([10.])\n"
    assert repr(x.grad) == "tensor([4.])"


def test_001_backward_gradient_weights(capsys):
    g = _wx_graph()
    w, x, a, b = g.w, g.x, g.a, g.b
    y0 = torch.mul(a, b)  # y0 = (x + w) * (w + 1)  dy0/dw = 5
    y1 = torch.add(a, b)  # y1 = (x + w) + (w + 1)  dy1/dw = 2
    loss = torch.cat([y0, y1], dim=0)  # [y0, y1]
    grad_tensors = torch.tensor([1.0, 2.0])
    loss.backward(gradient=grad_tensors)
    print(w.grad)
    assert capsys.readouterr().out == "tensor([9.])\n"
    assert repr(loss) == "tensor([6., 5.], grad_fn=<CatBackward0>)"
    assert repr(x.grad) == "tensor([4.])"


def test_001_create_graph_second_derivative(capsys):
    x = torch.tensor([3.0], requires_grad=True)
    y = torch.pow(x, 2)  # y = x^2
    grad_1 = torch.autograd.grad(y, x, create_graph=True)
    print(grad_1)
    grad_2 = torch.autograd.grad(grad_1[0], x)
    print(grad_2)
    assert capsys.readouterr().out == ("(tensor([6.], grad_fn=<MulBackward0>),)\n(tensor([2.]),)\n")
    assert isinstance(grad_1, tuple) and isinstance(grad_2, tuple)
    assert repr(y) == "tensor([9.], grad_fn=<PowBackward0>)"
    assert x.grad is None  # autograd.grad does not accumulate into .grad


def test_001_grad_accumulates_until_zero(capsys):
    w = torch.tensor([1.0], requires_grad=True)
    x = torch.tensor([2.0], requires_grad=True)
    for _ in range(4):
        a = torch.add(w, x)
        b = torch.add(w, 1)
        y = torch.mul(a, b)
        y.backward()
        print(w.grad)
        w.grad.zero_()
    assert capsys.readouterr().out == "tensor([5.])\n" * 4
    assert repr(w.grad) == "tensor([0.])"
    assert repr(x.grad) == "tensor([8.])"  # never zeroed: 4 * 2


def test_001_requires_grad_propagation(capsys):
    g = _wx_graph()
    a, b = g.a, g.b
    y = torch.mul(a, b)
    print(a.requires_grad, b.requires_grad, y.requires_grad)
    assert capsys.readouterr().out == "True True True\n"


def test_001_id_inplace_add(capsys):
    a = torch.ones((1,))
    print(id(a), a)
    a = a + torch.ones((1,))
    print(id(a), a)
    a += torch.ones((1,))  # in-place
    print(id(a), a)
    a.add_(torch.ones((1,)))  # in-place
    print(id(a), a)
    lines = capsys.readouterr().out.rstrip("\n").split("\n")
    ids = [line.split(" ", 1)[0] for line in lines]
    reprs = [line.split(" ", 1)[1] for line in lines]
    assert reprs == ["tensor([1.])", "tensor([2.])", "tensor([3.])", "tensor([4.])"]
    assert ids[0] != ids[1]
    assert ids[1] == ids[2] == ids[3] == str(id(a))
    assert a._version == 2


def test_001_leaf_inplace_error():
    g = _wx_graph()
    w, a, b = g.w, g.a, g.b
    y = torch.mul(a, b)
    with pytest.raises(RuntimeError, match=exact(LEAF_INPLACE)):
        w.add_(1)
    assert w._version == 0
    y.backward()
    assert repr(w.grad) == "tensor([5.])"


# --------------------------------------------------------------------------- #
# 002: grad_fn, is_leaf, torch.autograd.backward
# --------------------------------------------------------------------------- #
def test_002_leaf_grad_fn_none(capsys):
    x = torch.ones(2, 2, requires_grad=True)
    print(x.grad_fn)
    assert capsys.readouterr().out == "None\n"


def test_002_add_grad_fn_and_is_leaf(capsys):
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    print(y.grad_fn)
    print(x.is_leaf, y.is_leaf)  # True False
    fullmatch_lines(capsys.readouterr().out, [node("AddBackward0"), "True False"])


def test_002_mean_backward(capsys):
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y
    out = z.mean()
    out.backward()
    print(x.grad)
    assert capsys.readouterr().out == ("tensor([[1.5000, 1.5000],\n        [1.5000, 1.5000]])\n")


def test_002_autograd_backward_function():
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y
    out = z.mean()
    assert torch.autograd.backward(out, retain_graph=True) is None
    assert repr(x.grad) == "tensor([[1.5000, 1.5000],\n        [1.5000, 1.5000]])"
    torch.autograd.backward(z, grad_tensors=torch.ones(2, 2))
    assert repr(x.grad) == "tensor([[7.5000, 7.5000],\n        [7.5000, 7.5000]])"
    with pytest.raises(RuntimeError, match=exact(SECOND_BACKWARD)):
        torch.autograd.backward([out], [torch.tensor(2.0)])


# --------------------------------------------------------------------------- #
# 003: reprs, requires_grad_, backward(v), no_grad, custom Function
# --------------------------------------------------------------------------- #
def test_003_tensor_and_grad_fn_reprs(capsys):
    x = torch.ones(2, 2, requires_grad=True)
    print(x)
    y = x + 2
    print(y)
    print("y.grad_fn: ", y.grad_fn)
    z = y * y * 3
    out = z.mean()
    print(z)
    print(out)
    fullmatch_lines(
        capsys.readouterr().out,
        [
            re.escape("tensor([[1., 1.],"),
            re.escape("        [1., 1.]], requires_grad=True)"),
            re.escape("tensor([[3., 3.],"),
            re.escape("        [3., 3.]], grad_fn=<AddBackward0>)"),
            re.escape("y.grad_fn:  ") + node("AddBackward0"),
            re.escape("tensor([[27., 27.],"),
            re.escape("        [27., 27.]], grad_fn=<MulBackward0>)"),
            re.escape("tensor(27., grad_fn=<MeanBackward0>)"),
        ],
    )


def test_003_requires_grad_(capsys):
    with no_warnings():  # 1/0 -> inf silently, as in PyTorch
        a = torch.ones(2, 2)
        a = (a * 3) / (a - 1)
        print(a.requires_grad)
        a.requires_grad_(True)
        print(a.requires_grad)
        b = (a * a).sum()
        print(b.grad_fn)
    fullmatch_lines(capsys.readouterr().out, ["False", "True", node("SumBackward0")])
    assert a.is_leaf
    assert repr(b) == "tensor(inf, grad_fn=<SumBackward0>)"


def test_003_backward_grad(capsys):
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    out.backward()
    print(x.grad)
    assert capsys.readouterr().out == ("tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n")


def test_003_vector_jacobian_product(capsys):
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    print(y)
    gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
    y.backward(gradients)
    print(x.grad)
    y_line, grad_line = capsys.readouterr().out.rstrip("\n").split("\n")

    m = re.fullmatch(r"tensor\(\[(.*)\], grad_fn=<MulBackward0>\)", y_line)
    assert m, y_line
    assert_printed_close(m.group(1), y.tolist())

    # y = x * 2**k exactly; the loop stops at the first k with ||y|| >= 1000.
    xs, ys = x.tolist(), y.tolist()
    scale = ys[0] / xs[0]
    k = round(math.log2(scale))
    assert k >= 1 and scale == 2.0**k
    assert all(yv == xv * scale for xv, yv in zip(xs, ys))
    assert float(y.data.norm()) >= 1000
    assert k == 1 or float((y.data / 2).norm()) < 1000

    expected = np.float32(scale) * np.array([0.1, 1.0, 0.0001], dtype=np.float32)
    assert x.grad.tolist() == expected.tolist()
    # max/min ratio is 1e4 > 1000, so PyTorch prints in scientific notation.
    assert grad_line == "tensor([" + ", ".join(f"{v:.4e}" for v in expected.tolist()) + "])"


def test_003_no_grad(capsys):
    x = torch.randn(3, requires_grad=True)
    print(x.requires_grad)
    print((x**2).requires_grad)
    with torch.no_grad():
        print(x.requires_grad)
        print((x**2).requires_grad)
    assert capsys.readouterr().out == "True\nTrue\nTrue\nFalse\n"


def test_003_custom_function_mul_constant(capsys):
    from engine.autograd.function import Function

    class MulConstant(Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, None

    a = torch.rand(3, 3, requires_grad=True)
    b = MulConstant.apply(a, 5)
    print("a:" + str(a))
    print("b:" + str(b))
    out = capsys.readouterr().out
    m = re.fullmatch(
        r"a:tensor\(\[\[(.*)\],\n        \[(.*)\],\n        \[(.*)\]\], "
        r"requires_grad=True\)\n"
        r"b:tensor\(\[\[(.*)\],\n        \[(.*)\],\n        \[(.*)\]\], "
        r"grad_fn=<MulConstantBackward>\)\n",
        out,
    )
    assert m, out
    assert_printed_close(", ".join(m.groups()[:3]), flat(a))
    assert_printed_close(", ".join(m.groups()[3:]), flat(b))
    assert flat(b) == flat(a * 5)
    assert all(0.0 <= v < 1.0 for v in flat(a))
    assert b.requires_grad and not b.is_leaf
    assert b.grad_fn.name() == "MulConstantBackward"

    b.backward(torch.ones_like(a))
    assert repr(a.grad) == ("tensor([[1., 1., 1.],\n        [1., 1., 1.],\n        [1., 1., 1.]])")


# --------------------------------------------------------------------------- #
# 004: the mechanism in brief
# --------------------------------------------------------------------------- #
def test_004_no_grad_view_inplace_update():
    # The note's fragment, made concrete: y is a leaf parameter with a .grad.
    y = torch.ones(5, 5, requires_grad=True)
    (y * y).sum().backward()
    with torch.no_grad():
        v = y.view(5, 5)
        v.sub_(y.grad * 0.1)
        assert (v._version, y._version) == (1, 1)  # views share the counter
        assert v._base is y
        assert v.requires_grad
        y.sub_(0.1 * y.grad)
    assert (v._version, y._version) == (2, 2)
    assert y.is_leaf and y.requires_grad and y.grad_fn is None
    row = "[0.6000, 0.6000, 0.6000, 0.6000, 0.6000]"
    assert repr(y) == ("tensor([" + ",\n        ".join([row] * 5) + "], requires_grad=True)")


def test_004_retain_grad_loop():
    # The note's loop, with concrete y (leaf), x and b.
    y = torch.tensor([0.1, 0.2, 0.3, 0.4, 0.5], requires_grad=True)
    x = torch.eye(5) * 0.5 + 0.1
    b = torch.tensor([0.0, 0.1, -0.1, 0.2, -0.2])
    y0 = y
    with no_warnings():
        for i in range(100):
            y.retain_grad()
            z = torch.matmul(y, x) + b  # linear layer
            output = torch.sigmoid(z)
            label = torch.Tensor([0, 0, 1, 0, 0])
            loss = (output - label).var()  # l2 loss
            loss.backward()
            assert y.grad is not None
            assert y.is_leaf == (i == 0)
            y = y - 0.1 * y.grad  # y becomes a non-leaf
    assert label.dtype == torch.float32
    assert y.grad_fn.name() == "SubBackward0"
    assert loss.grad_fn.name() == "VarBackward0"
    np.testing.assert_allclose(loss.item(), 0.18444766104221344, rtol=1e-4)
    np.testing.assert_allclose(
        y.tolist(),
        [-0.0045665353536605835, 0.07554366439580917, 0.7837483882904053,
         0.2531985938549042, 0.39543360471725464],
        rtol=1e-4, atol=1e-6,
    )  # fmt: skip
    # every iteration's backward reaches the original leaf through SubBackward0s
    np.testing.assert_allclose(
        y0.grad.tolist(),
        [1.0456653833389282, 1.2445636987686157, -4.837484359741211,
         1.4680143594741821, 1.0456653833389282],
        rtol=1e-4, atol=1e-6,
    )  # fmt: skip


def test_004_grad_hook_list():
    grad_list = []

    def aa(grad):
        grad_list.append(grad)
        # return 0.001*grad

    a = torch.Tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match=exact(HOOK_NO_GRAD)):
        a.register_hook(aa)
    a.requires_grad_()
    a.register_hook(aa)
    c = torch.Tensor([4, 5, 6])
    b = a.mul(c)
    with pytest.raises(RuntimeError, match=exact(IMPLICIT_SCALAR)):
        b.backward()
    b.backward(torch.ones(3))
    assert repr(grad_list) == "[tensor([4., 5., 6.])]"
    assert repr(a.grad) == "tensor([4., 5., 6.])"

    # the commented-out variant: a hook that returns a new gradient replaces it
    a2 = torch.Tensor([1, 2, 3]).requires_grad_()
    a2.register_hook(lambda grad: 0.001 * grad)
    a2.mul(c).sum().backward()
    assert repr(a2.grad) == "tensor([0.0040, 0.0050, 0.0060])"


@pytest.mark.skipif(not hasattr(engine, "nn"), reason="engine.nn not implemented yet")
def test_004_fully_connected_bce_with_logits(capsys):
    x = torch.ones(5)  # input tensor
    y = torch.zeros(3)  # expected output
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    print(f"Gradient function for z = {z.grad_fn}")
    print(f"Gradient function for loss = {loss.grad_fn}")
    loss.backward()
    print(w.grad)
    print(b.grad)
    lines = capsys.readouterr().out.rstrip("\n").split("\n")
    assert len(lines) == 2 + 5 + 1, lines
    assert re.fullmatch(re.escape("Gradient function for z = ") + node("AddBackward0"), lines[0])
    assert re.fullmatch(
        re.escape("Gradient function for loss = ") + node("BinaryCrossEntropyWithLogitsBackward0"),
        lines[1],
    )
    zs = np.asarray(z.tolist(), dtype=np.float64)
    dz = 1.0 / (1.0 + np.exp(-zs)) / 3.0  # d mean(BCE(z, 0)) / dz
    np.testing.assert_allclose(b.grad.tolist(), dz, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(w.grad.tolist(), np.tile(dz, (5, 1)), rtol=1e-5, atol=1e-7)
    assert_printed_close(" ".join(lines[2:7]), flat(w.grad))
    assert_printed_close(lines[7], flat(b.grad))
    assert lines[2].startswith("tensor([[") and lines[6].endswith("]])")
    assert lines[7].startswith("tensor([") and lines[7].endswith("])")


def test_004_no_grad_matmul(capsys):
    x = torch.ones(5)
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    z = torch.matmul(x, w) + b
    print(z.requires_grad)
    with torch.no_grad():
        z = torch.matmul(x, w) + b
    print(z.requires_grad)
    assert capsys.readouterr().out == "True\nFalse\n"
    assert z.grad_fn is None


def test_004_requires_grad_rules(capsys):
    x = torch.rand(5, 5)
    y = torch.rand(5, 5)
    z = torch.rand((5, 5), requires_grad=True)
    a = x + y
    print(f"Does `a` require gradients? : {a.requires_grad}")
    b = x + z
    print(f"Does `b` require gradients?: {b.requires_grad}")
    assert capsys.readouterr().out == (
        "Does `a` require gradients? : False\nDoes `b` require gradients?: True\n"
    )


def test_004_non_scalar_output_backward(capsys):
    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp + 1).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"First call\n{inp.grad}")
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"\nSecond call\n{inp.grad}")
    inp.grad.zero_()
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"\nCall after zeroing gradients\n{inp.grad}")
    assert capsys.readouterr().out == (
        "First call\n"
        "tensor([[4., 2., 2., 2., 2.],\n"
        "        [2., 4., 2., 2., 2.],\n"
        "        [2., 2., 4., 2., 2.],\n"
        "        [2., 2., 2., 4., 2.]])\n"
        "\n"
        "Second call\n"
        "tensor([[8., 4., 4., 4., 4.],\n"
        "        [4., 8., 4., 4., 4.],\n"
        "        [4., 4., 8., 4., 4.],\n"
        "        [4., 4., 4., 8., 4.]])\n"
        "\n"
        "Call after zeroing gradients\n"
        "tensor([[4., 2., 2., 2., 2.],\n"
        "        [2., 4., 2., 2., 2.],\n"
        "        [2., 2., 4., 2., 2.],\n"
        "        [2., 2., 2., 4., 2.]])\n"
    )
    assert repr(out) == (
        "tensor([[4., 1., 1., 1.],\n"
        "        [1., 4., 1., 1.],\n"
        "        [1., 1., 4., 1.],\n"
        "        [1., 1., 1., 4.],\n"
        "        [1., 1., 1., 1.]], grad_fn=<TBackward0>)"
    )


def test_004_custom_exp_function():
    from engine.autograd import Function

    class Exp(Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    input = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    output = Exp.apply(input)
    assert repr(output) == "tensor([1.0000, 2.7183, 7.3891], grad_fn=<ExpBackward>)"
    output.sum().backward()
    assert repr(input.grad) == "tensor([1.0000, 2.7183, 7.3891])"


def test_004_grad_fn_saved_self_other():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    c = a * b
    assert c.grad_fn._saved_self is a
    assert c.grad_fn._saved_other is b
    assert repr(c.grad_fn._saved_self) == "tensor([1., 2.], requires_grad=True)"
    c.sum().backward()
    with pytest.raises(RuntimeError, match=exact(SECOND_BACKWARD)):
        _ = c.grad_fn._saved_self


def test_004_implicit_grad_only_for_scalars():
    """bullet: 标量的梯度才能被隐式创建."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match=exact(IMPLICIT_SCALAR)):
        y.backward()
    y.sum().backward()
    assert repr(x.grad) == "tensor([2., 2.])"


def test_004_cannot_change_requires_grad_of_non_leaf():
    """bullet: 我们不能改变一个非叶子节点的 requires_grad."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match=exact(NON_LEAF_REQUIRES_GRAD_FALSE)):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match=exact(NON_LEAF_REQUIRES_GRAD_TRUE)):
        y.requires_grad = True
    with pytest.raises(RuntimeError, match=exact(NON_LEAF_REQUIRES_GRAD_FALSE)):
        y.requires_grad_(False)
    assert y.requires_grad_() is y  # no-op on a non-leaf that requires grad


def test_004_only_floating_point_can_require_grad():
    """bullet: 只有浮点、复数可以设置 requires_grad."""
    with pytest.raises(RuntimeError, match=exact(INT_FACTORY_REQUIRES_GRAD)):
        torch.ones(2, dtype=torch.int64, requires_grad=True)
    with pytest.raises(RuntimeError, match=exact(INT_FACTORY_REQUIRES_GRAD)):
        torch.tensor([1, 2], requires_grad=True)
    t = torch.ones(2, dtype=torch.int64)
    with pytest.raises(RuntimeError, match=exact(INT_REQUIRES_GRAD_)):
        t.requires_grad_()
    with pytest.raises(RuntimeError, match=exact(INT_SET_REQUIRES_GRAD)):
        t.requires_grad = True
    assert t.requires_grad_(False) is t


def test_004_freeze_weights():
    """bullet: 冻结权重 .requires_grad = False."""
    x = torch.ones(5)
    w = torch.ones(5, 3, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)
    w.requires_grad = False
    z = torch.matmul(x, w) + b
    assert z.requires_grad
    z.sum().backward()
    assert w.grad is None
    assert repr(b.grad) == "tensor([1., 1., 1.])"
    b.requires_grad = False
    assert torch.matmul(x, w).add(b).requires_grad is False


def test_004_multi_path_grad_accumulation():
    """bullet: 多条路径：梯度累加; 多次 backward 也累加, 用 grad.zero_() 清零."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3 + x * x  # two paths from x
    y.sum().backward()
    assert repr(x.grad) == "tensor([5., 7.])"
    (x * 3).sum().backward()
    assert repr(x.grad) == "tensor([ 8., 10.])"
    x.grad.zero_()
    assert repr(x.grad) == "tensor([0., 0.])"
