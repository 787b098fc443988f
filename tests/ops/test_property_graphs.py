"""Random expression graphs over the engine's ops, checked against finite differences (first and
second order) and, where torch is installed, against torch: the same values and gradients, or the
same error.

A graph is a list of integers: the first picks the leaves' shapes, then each pair one op and its
operands, so the same list builds the same graph in either library (`build`). CI runs a few hundred
derandomized examples; `GRADCLI_PROPERTY_EXAMPLES=N` runs N random ones.
"""

from __future__ import annotations

import importlib
import os

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine

EXAMPLES = int(os.environ.get("GRADCLI_PROPERTY_EXAMPLES", "0"))
SETTINGS = settings(
    max_examples=EXAMPLES or 300,
    deadline=None,
    derandomize=not EXAMPLES,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SHAPES = [(2, 3), (3,), (1, 3), (2, 1)]


def _fits(a, b) -> bool:
    try:
        return numpy.broadcast_shapes(tuple(a.shape), tuple(b.shape)) == tuple(a.shape)
    except ValueError:
        return False


def _partner(a, b):
    """b, or its sum where it does not broadcast against a."""
    try:
        numpy.broadcast_shapes(tuple(a.shape), tuple(b.shape))
        return b
    except ValueError:
        return b.sum()


def _inplace(lib, a, b, c):
    y = a * 1.0  # a non-leaf
    if c % 2 and _fits(y, b):
        y.mul_(b)
    else:
        y.add_(b.sum())
    return y


def _inplace_view(lib, a, b, c):
    y = a * 1.0
    if y.dim():
        y[..., :1].mul_(b.sum().tanh())  # CopySlices on y
    return y


def _inplace_view_0d(lib, a, b, c):
    y = a.sum() * 1.0  # 0-d: its views are (1,)-shaped
    if c % 2:
        y.unsqueeze(0).mul_(b.sum().tanh())
    else:
        y.flatten()[0] = b.sum().tanh()  # replaces y's value: no gradient reaches a through y
    return y


def _inplace_view_saving_result(lib, a, b, c):
    y = a * 1.0
    if y.dim():
        getattr(y[..., :1], "tanh_" if c % 2 else "sigmoid_")()  # the row saves its result: the view
    return y


def _int_then_gather(lib, a, b, c):
    """An int and a list index apart (torch selects first: the list's dim stays in place)."""
    if a.dim() == 3 and a.shape[-1]:
        return a[0, :, [0, -1]]
    return a[-1, [0]] if a.dim() == 2 and a.shape[-1] else a


def _hooked(lib, a, b, c):
    y = a * 1.0
    hooks = (lambda g: g * 2, lambda g: None, lambda g: g.sum(), lambda g: g.double())
    y.register_hook(hooks[c % 4])  # the last two change the gradient's size or type: refused alike
    return y


def _modify_pool_entry(lib, a, b, c):
    a.mul_(1.5)  # may change a tensor saved for backward (or a leaf): both libraries must refuse alike
    return a


OPS = {
    "tanh": lambda lib, a, b, c: a.tanh(),
    "sin": lambda lib, a, b, c: a.sin(),
    "sigmoid": lambda lib, a, b, c: a.sigmoid(),
    "relu": lambda lib, a, b, c: lib.relu(a),
    "softplus": lambda lib, a, b, c: lib.nn.functional.softplus(a),
    "square": lambda lib, a, b, c: a * a,
    "sqrt": lambda lib, a, b, c: (a * a + 1).sqrt(),
    "add": lambda lib, a, b, c: a + _partner(a, b),
    "mul": lambda lib, a, b, c: a * _partner(a, b),
    "div": lambda lib, a, b, c: a / (_partner(a, b) ** 2 + 1),
    "rsub": lambda lib, a, b, c: 2.0 - a,
    "transpose": lambda lib, a, b, c: a.transpose(0, 1) if a.dim() == 2 else a,
    "expand": lambda lib, a, b, c: a.unsqueeze(0).expand(2, *a.shape),
    "flatten": lambda lib, a, b, c: a.reshape(-1),
    "select": lambda lib, a, b, c: a[c % a.shape[0]] if a.dim() and a.shape[0] else a,
    "slice": lambda lib, a, b, c: a[..., 1:] if a.dim() and a.shape[-1] > 1 else a,
    "gather": lambda lib, a, b, c: a[..., [0, -1, 0]] if a.dim() and a.shape[-1] else a,
    "int_then_gather": _int_then_gather,
    "max_axis": lambda lib, a, b, c: a.max(axis=-1).values if a.dim() and a.shape[-1] else a,
    "sum_dim": lambda lib, a, b, c: a.sum(dim=c % a.dim()) if a.dim() else a,
    "mean": lambda lib, a, b, c: a.mean(),
    "std": lambda lib, a, b, c: a.std() if a.numel() > 1 else a,
    "cat": lambda lib, a, b, c: lib.cat([a.reshape(-1), b.reshape(-1)]),
    "matmul": lambda lib, a, b, c: (
        a @ b.transpose(0, 1) if a.dim() == b.dim() == 2 and a.shape[1] == b.shape[1] else a
    ),
    "softmax": lambda lib, a, b, c: lib.softmax(a, c % a.dim()) if a.dim() else a,
    "log_softmax": lambda lib, a, b, c: lib.log_softmax(a, -1) if a.dim() else a,
    "empty_slice": lambda lib, a, b, c: a[..., :0] if a.dim() else a,
    "inplace": _inplace,
    "inplace_view_0d": _inplace_view_0d,
    "inplace_view_saving_result": _inplace_view_saving_result,
    "hook": _hooked,
    "inplace_view": _inplace_view,
    "modify_pool_entry": _modify_pool_entry,
}
NAMES = sorted(OPS)
#: Without kinks (relu at 0, std of equal values, max of ties), hooks that change gradients or empty
#: slices (whose mean is NaN), for finite differences.
SMOOTH = [name for name in NAMES if name not in ("relu", "std", "max_axis", "hook", "empty_slice")]


def build(lib, leaves, program: list[int], names: list[str] = NAMES):
    """The graph `program` describes, over `leaves`, in `lib` (engine or torch): a scalar."""
    pool = list(leaves)
    for k in range(0, len(program) - 2, 3):
        name = names[program[k] % len(names)]
        a, b = pool[program[k + 1] % len(pool)], pool[program[k + 2] % len(pool)]
        if name == "modify_pool_entry" and any(a is x for x in leaves):
            continue  # a leaf: refused at once, as both libraries do (tested elsewhere); not a.grad_fn,
            # which is None under no_grad too, where gradcheck runs the function
        pool.append(OPS[name](lib, a, b, program[k + 1] // 7))
    return sum((p * p).sum() * (0.5 + 0.1 * i) for i, p in enumerate(pool[len(leaves) :])) + pool[-1].sum()


def leaves_of(lib, program: list[int], values: list[float]):
    shapes = [SHAPES[program[0] % len(SHAPES)], SHAPES[(program[0] // 4) % len(SHAPES)]]
    out, at = [], 0
    for shape in shapes:
        n = int(numpy.prod(shape))
        data = numpy.array(values[at : at + n], dtype=numpy.float64).reshape(shape)
        at += n
        out.append(lib.tensor(data, dtype=lib.float64, requires_grad=True))
    return out


def run(lib, program, values):
    """(value, gradients, second-order gradients) of the graph, or the error it raised."""
    leaves = leaves_of(lib, program, values)
    try:
        out = build(lib, leaves, program[1:])
        grads = lib.autograd.grad(out, leaves, create_graph=True, allow_unused=True)
        used = [(g, x) for g, x in zip(grads, leaves) if g is not None and g.requires_grad]
        second = (
            lib.autograd.grad(sum((g * g).sum() for g, _ in used), [x for _, x in used], allow_unused=True)
            if used
            else ()
        )
    except (RuntimeError, ValueError, TypeError, IndexError) as exc:
        return exc
    return out, grads, second


programs = st.lists(st.integers(0, 10_000), min_size=4, max_size=22)
values = st.lists(st.floats(-2, 2, allow_nan=False).map(lambda v: round(v, 3)), min_size=12, max_size=12)


@SETTINGS
@given(programs, values)
def test_random_graphs_agree_with_finite_differences(program, numbers):
    leaves = leaves_of(engine, program, numbers)
    try:
        build(engine, leaves, program[1:], SMOOTH).backward()
    except RuntimeError:
        return  # an in-place change of a saved tensor: compared with torch below
    for check in (engine.autograd.gradcheck, engine.autograd.gradgradcheck):
        assert check(lambda *xs: build(engine, xs, program[1:], SMOOTH), tuple(leaves), atol=1e-5, rtol=1e-4)


def _array(t):
    return None if t is None else numpy.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def _same(a, b) -> bool:
    if a is None or b is None:
        return (a is None) == (b is None) or not numpy.asarray(_array(a if a is not None else b)).any()
    return numpy.allclose(_array(a), _array(b), rtol=1e-7, atol=1e-9, equal_nan=True)


@pytest.mark.torch_parity
@SETTINGS
@given(programs, values)
def test_random_graphs_agree_with_torch(program, numbers):
    torch = importlib.import_module("torch")
    ours, theirs = run(engine, program, numbers), run(torch, program, numbers)
    if isinstance(ours, Exception) or isinstance(theirs, Exception):
        assert type(ours) is type(theirs), (ours, theirs)
        assert str(ours).replace("engine.", "torch.") == str(theirs)
        return
    assert _same(ours[0], theirs[0])
    assert all(_same(a, b) for a, b in zip(ours[1], theirs[1]))
    assert [g is None or g.requires_grad for g in ours[1]] == [
        g is None or g.requires_grad for g in theirs[1]
    ]
    assert all(_same(a, b) for a, b in zip(ours[2], theirs[2]))
