"""Forward-AD tangents of views and of tensors changed in place (the tangents live in
autograd/forward_grad.py).

As in PyTorch, a view's tangent is the same view of its base's tangent, and an in-place op writes its
result's tangent into the tensor's tangent, so the base and the other views see it.
"""

from __future__ import annotations

from ..autograd import forward_grad
from ..backend import xp_of
from ..tensor import Tensor, wrap


def tangent_of(x: Tensor):
    """x's tangent; for a view whose base got a tangent after the view was made, the view of it."""
    t = forward_grad.tangent_of(x)
    if t is None and x._base is not None and x._view_fn is not None:
        base_tangent = forward_grad.tangent_of(x._base)
        if base_tangent is not None:
            t = wrap(x._view_fn(xp_of(base_tangent._data), base_tangent._data))
            forward_grad.set_tangent(x, t)
    return t


def write_inplace(t: Tensor, result: Tensor) -> None:
    """After `t.op_(...)`: `result`'s tangent becomes t's, written into t's own tangent (or its base's)."""
    new = forward_grad.tangent_of(result)
    if new is None:
        return
    old = tangent_of(t)
    if old is None and t._base is not None and t._view_fn is not None:
        base = t._base
        forward_grad.set_tangent(base, wrap(xp_of(base._data).zeros_like(base._data)))
        old = tangent_of(t)
    if old is None or not getattr(old._data, "flags", None) or not old._data.flags.writeable:
        forward_grad.set_tangent(t, new)
        return
    old._data[...] = new._data
