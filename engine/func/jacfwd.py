"""`jacfwd` and `hessian`: the Jacobian by forward mode, its columns the jvp of each basis vector,
all at once through vmap (the basis is a batched tangent; ops/forward_mode.py's rules run on it
through the batching rules)."""

from __future__ import annotations

import functools
from collections.abc import Callable

from .basis import standard_basis
from .grad import _argnums, of_argnums
from .jacrev import jacrev
from .jvp import jvp
from .pytree import tree_flatten, tree_unflatten
from .vmap import vmap


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *, randomness: str = "error") -> Callable:
    """A function returning the Jacobian of `func` w.r.t. args[argnums]: output shape, then input shape."""

    @functools.wraps(func)
    def wrapper(*args):
        nums = _argnums(argnums, args)
        primals = tuple(args[n] for n in nums)
        flat_primals, primals_spec = tree_flatten(primals)
        numels = [p.numel() for p in flat_primals]
        of_diff = of_argnums(func, args, nums)

        def push_jvp(basis):
            output = jvp(of_diff, primals, basis, has_aux=has_aux)
            return (output[1], output[2]) if has_aux else output[1]

        results = vmap(push_jvp, randomness=randomness)(
            tree_unflatten(standard_basis(flat_primals), primals_spec)
        )
        if has_aux:
            results, aux = results
            flat_aux, aux_spec = tree_flatten(aux)
            aux = tree_unflatten([value[0] for value in flat_aux], aux_spec)
        columns, out_spec = tree_flatten(results)
        per_output = []
        for column in columns:
            moved, jac, start = column.movedim(0, -1), [], 0
            for n, p in zip(numels, flat_primals):
                jac.append(moved[..., start : start + n].reshape(*column.shape[1:], *p.shape))
                start += n
            per_arg = tree_unflatten(jac, primals_spec)
            per_output.append(per_arg if isinstance(argnums, tuple) else per_arg[0])
        jac = tree_unflatten(per_output, out_spec)
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func: Callable, argnums=0) -> Callable:
    """A function returning the Hessian of `func` w.r.t. args[argnums], forward over reverse."""
    return jacfwd(jacrev(func, argnums), argnums)
