"""How the property tests run a sample: its inputs, the output they check, the function they differentiate."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import engine


def tensors(lib, arrays: list[np.ndarray], device: str | None = None) -> list:
    """Float arrays as float64 tensors requiring grad, int and bool ones as they are (on `device`, else
    the default device)."""
    out = []
    for a in arrays:
        floating = np.issubdtype(a.dtype, np.floating)
        kwargs = {} if device is None else {"device": device}
        out.append(lib.tensor(a.astype(np.float64) if floating else a, requires_grad=floating, **kwargs))
    return out


def first_float(out):
    """The output checked: the tensor, or the first floating tensor of a tuple (else its first)."""
    if isinstance(out, (tuple, list)):
        return next((o for o in out if o.is_floating_point()), out[0])
    return out


def differentiated(sample, inputs: list, squared: bool = False) -> tuple[Callable, list]:
    """The function of the differentiable inputs alone, and those inputs (numgrad's check_* take both)."""
    diff = [t for t in inputs if t.requires_grad]

    def f(*xs):
        it = iter(xs)
        args = [next(it) if t.requires_grad else t for t in inputs]
        out = first_float(sample.call(engine, *args))
        return out * out if squared else out

    return f, diff


def graph(t):
    """The node names of t's graph, depth first, as nested tuples (None for a missing edge); the
    engine names AccumulateGrad and CopySlices with a namespace, so names are compared bare."""

    def walk(fn):
        if fn is None:
            return None
        name = type(fn).__name__.split("::")[-1]
        if name == "AccumulateGrad":
            return name
        return (name, tuple(walk(child) for child, _ in fn.next_functions))

    return walk(t.grad_fn)
