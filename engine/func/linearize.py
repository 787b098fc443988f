"""`linearize` (torch.func's): func's output at primals, and its Jacobian-vector product there as a function.

torch traces the jvp once into a graph; here jvp_fn runs `jvp` at the fixed primals on each call.
"""

from __future__ import annotations

from collections.abc import Callable

from .jvp import jvp
from .pytree import tree_flatten


def linearize(func: Callable, *primals) -> tuple:
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian of func at primals times tangents."""
    output = func(*primals)
    flat_primals, primals_spec = tree_flatten(primals)

    def jvp_fn(*tangents):
        flat_tangents, tangents_spec = tree_flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(
                f"Expected the tangents {tangents_spec} to have the same argspec as the primals {primals_spec}"
            )
        for k, (t, p) in enumerate(zip(flat_tangents, flat_primals)):
            for what in ("shape", "device", "dtype"):
                if getattr(t, what) != getattr(p, what):
                    raise RuntimeError(
                        f"tangent:{k} with {what} {getattr(t, what)} in flattened pytree doesn't match the {what} "
                        f"{getattr(p, what)} of the corresponding primal."
                    )
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn
