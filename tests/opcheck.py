"""One op, checked every way an op must be (test helper, not a test module).

`check_op(fn, kinds)` runs `fn(lib, *tensors)` with `lib` the engine, and checks:
- its gradient against central finite differences, and its second derivative (`gradgrad`);
- with torch installed: the same call with `lib = torch` on the same float64 inputs gives
  the same values, dtypes, shapes and node name (`grad_fn.name()`), and the same gradients.

`match_torch(fn)` runs `fn(lib)` on both: the same results, or the same exception and message.

`kinds` is one `(domain, shape)` per tensor argument; domains are the keys of DOMAINS (or a
function `rng, n -> values`). Outputs may be one tensor or a tuple/namedtuple (the first
floating output is differentiated). Integer or bool inputs: give an `int` or `bool` domain;
they are built without requires_grad.
"""

from __future__ import annotations

import numpy as np
import pytest
from numgrad import check_grad, check_gradgrad

import engine

try:
    import torch
except ImportError:  # comparisons with torch skip; the finite-difference checks still run
    torch = None


def _distinct(rng, n):
    """Values at least ~0.1 from 0 and from each other: abs, relu, max, sort are smooth there."""
    a = (rng.permutation(n) - n / 2 + 0.5) * 0.3 + rng.uniform(-0.04, 0.04, n)
    a[a == 0] = 0.15
    return a


DOMAINS = {
    "r": lambda rng, n: rng.uniform(-1.5, 1.5, n),  # any real
    "p": lambda rng, n: rng.uniform(0.5, 2.0, n),  # positive (log, sqrt, pow bases)
    "u": lambda rng, n: rng.uniform(-0.8, 0.8, n),  # inside (-1, 1): asin, atanh, erfinv
    "g": lambda rng, n: rng.uniform(1.2, 2.5, n),  # greater than 1: acosh
    "d": _distinct,
    "int": lambda rng, n: rng.integers(-5, 6, n),
    "bool": lambda rng, n: rng.integers(0, 2, n).astype(bool),
}


def make_arrays(kinds, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for domain, shape in kinds:
        n = int(np.prod(shape, dtype=int))
        make = DOMAINS[domain] if isinstance(domain, str) else domain
        arrays.append(np.asarray(make(rng, n)).reshape(shape))
    return arrays


def _tensors(lib, arrays):
    out = []
    for a in arrays:
        floating = np.issubdtype(a.dtype, np.floating)
        data = a.astype(np.float64) if floating else a
        out.append(lib.tensor(data, requires_grad=floating))
    return out


def _first_float(out):
    """The output to differentiate: the tensor, or the first floating tensor of a tuple (else its first)."""
    if isinstance(out, tuple):
        return next((o for o in out if o.is_floating_point()), out[0])
    return out


def _as_list(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _numpy(t) -> np.ndarray:
    """clone() first: torch may hand back a lazy ZeroTensor (sgn's gradient), which refuses .numpy()."""
    return np.asarray(t.detach().clone().cpu().numpy())


def check_op(
    fn,
    kinds,
    *,
    gradgrad: bool = True,
    grad: bool = True,
    seed: int = 0,
    node: str | None = None,
    rtol: float = 1e-7,
    atol: float = 1e-9,
) -> None:
    """Finite differences (first and, with `gradgrad`, second order); torch's values, dtypes and node."""
    arrays = make_arrays(kinds, seed)
    ours = _tensors(engine, arrays)
    out = fn(engine, *ours)
    diff = [t for t in ours if t.requires_grad]
    if node is not None:
        assert _first_float(out).grad_fn.name() == node
    if grad and diff:

        def f(*xs):
            args = list(ours)
            it = iter(xs)
            args = [next(it) if t.requires_grad else t for t in args]
            return _first_float(fn(engine, *args))

        check_grad(f, *diff)
        if gradgrad:
            check_gradgrad(f, *diff)
    if torch is not None:
        compare_with_torch(fn, arrays, rtol=rtol, atol=atol, grad=grad)


def compare_with_torch(fn, arrays, *, rtol: float = 1e-7, atol: float = 1e-9, grad: bool = True) -> None:
    """The same call on torch: values, dtypes, shapes, node names, and the gradients of a random projection."""
    if torch is None:
        pytest.skip("torch is not installed")
    ours, theirs = _tensors(engine, arrays), _tensors(torch, arrays)
    out_e, out_t = fn(engine, *ours), fn(torch, *theirs)
    for e, t in zip(_as_list(out_e), _as_list(out_t), strict=True):
        if not hasattr(t, "dtype"):  # a Python value (allclose, equal, ...)
            assert e == t
            continue
        assert str(e.dtype).replace("engine.", "") == str(t.dtype).replace("torch.", "")
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(_numpy(e), _numpy(t), rtol=rtol, atol=atol, equal_nan=True)
        e_fn, t_fn = getattr(e, "grad_fn", None), getattr(t, "grad_fn", None)
        assert (e_fn is None) == (t_fn is None)
        if e_fn is not None:
            assert e_fn.name() == t_fn.name().replace("torch::", "engine::")  # CopySlices
    diff = [i for i, t in enumerate(theirs) if t.requires_grad]
    first_e, first_t = _first_float(out_e), _first_float(out_t)
    if not (grad and diff and first_t.requires_grad):
        return
    weights = np.random.default_rng(7).standard_normal(tuple(first_t.shape))
    grads_e = engine.autograd.grad(
        (first_e * engine.tensor(weights)).sum(), [ours[i] for i in diff], allow_unused=True
    )
    grads_t = torch.autograd.grad(
        (first_t * torch.tensor(weights)).sum(), [theirs[i] for i in diff], allow_unused=True
    )
    for ge, gt in zip(grads_e, grads_t):
        if gt is None:
            assert ge is None or not _numpy(ge).any()
            continue
        np.testing.assert_allclose(_numpy(ge), _numpy(gt), rtol=rtol, atol=atol)


def _tolerance(dtype_name: str) -> float:
    return {"float16": 1e-3, "float32": 2e-6}.get(dtype_name, 1e-12)


def match_torch(fn, rtol: float | None = None) -> None:
    """`fn(lib)` on the engine behaves as on torch: equal results (values, dtypes, shapes, node names;
    Python values equal), or the same exception type and message, `torch` read as `engine`. Values
    agree to a few units in the last place of their dtype, or to `rtol`."""
    if torch is None:
        pytest.skip("torch is not installed")
    try:
        theirs = fn(torch)
    except Exception as exc:  # torch refuses: so must the engine, in the same words
        with pytest.raises(type(exc)) as ours:
            fn(engine)
        assert str(ours.value) == str(exc).replace("torch", "engine")
        return
    ours = fn(engine)
    for e, t in zip(_as_list(ours), _as_list(theirs), strict=True):
        if not isinstance(t, torch.Tensor):
            assert e == t
            continue
        dtype = str(t.dtype).replace("torch.", "")
        assert str(e.dtype).replace("engine.", "") == dtype
        assert tuple(e.shape) == tuple(t.shape)
        tolerance = _tolerance(dtype) if rtol is None else rtol
        np.testing.assert_allclose(_numpy(e), _numpy(t), rtol=tolerance, atol=0, equal_nan=True)
        assert (e.grad_fn is None) == (t.grad_fn is None)
        if t.grad_fn is not None:
            assert e.grad_fn.name() == t.grad_fn.name().replace("torch", "engine")


def check_error(fn, match_engine: str | None = None, exception=RuntimeError) -> None:
    """`fn(lib)` raises the same exception type on both; the engine's message is torch's, torch -> engine."""
    with pytest.raises(exception) as ours:
        fn(engine)
    if match_engine is not None:
        assert match_engine in str(ours.value)
    if torch is not None:
        with pytest.raises(exception) as theirs:
            fn(torch)
        assert str(ours.value) == str(theirs.value).replace("torch", "engine")
