"""`jacrev`: the Jacobian by reverse mode, its rows the vjp of each basis vector, all at once through vmap."""

from __future__ import annotations

import functools
from collections.abc import Callable

from .basis import standard_basis
from .grad import _argnums, of_argnums, vjp
from .pytree import tree_flatten, tree_unflatten
from .vmap import vmap


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size: int | None = None) -> Callable:
    """A function returning the Jacobian of `func` w.r.t. args[argnums]: output shape, then input shape."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        nums = _argnums(argnums, args)
        result = vjp(of_argnums(func, args, nums), *(args[n] for n in nums), has_aux=has_aux)
        output, vjp_fn = result[0], result[1]
        flat_out, out_spec = tree_flatten(output)
        sizes = [o.numel() for o in flat_out]
        rows = vmap(vjp_fn, chunk_size=chunk_size)(tree_unflatten(standard_basis(flat_out), out_spec))
        flat_rows, rows_spec = tree_flatten(rows)  # one subtree per differentiated argument
        per_output = []
        start = 0
        for o, n in zip(flat_out, sizes):
            parts = [r[start : start + n].reshape(*o.shape, *r.shape[1:]) for r in flat_rows]
            start += n
            per_arg = tree_unflatten(parts, rows_spec)
            per_output.append(per_arg if isinstance(argnums, tuple) else per_arg[0])
        jac = tree_unflatten(per_output, out_spec)
        return (jac, result[2]) if has_aux else jac

    return wrapper
