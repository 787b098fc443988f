"""Forward-mode transforms: `jvp` and `linearize` (torch.func's), on the engine's forward AD.

The function runs on dual tensors at a dual level the transform opens; as in PyTorch 2.13's
forward AD one level is open at a time, so a jvp inside a running jvp (jacfwd of jacfwd) is
refused by `enter_dual_level`, while jvp over reverse-mode transforms (jacfwd of jacrev) works.
"""

from __future__ import annotations

from collections.abc import Callable

from ..autograd import forward_ad
from ..ops.creation import zeros_like
from ..tensor import Tensor
from .pytree import tree_flatten, tree_unflatten

JVP = "jvp(f, primals, tangents)"


def _check_tensors(values: list, argname: str) -> None:
    if not values:
        raise RuntimeError(f"{JVP}: Expected {argname} to contain at least one Tensor.")
    for value in values:
        if not isinstance(value, Tensor):
            raise RuntimeError(f"{JVP}: Expected {argname} to only contain Tensors, got {type(value)}")


def _check_outputs(outputs: list) -> None:
    if not outputs or (len(outputs) == 1 and outputs[0] is None):
        raise RuntimeError(
            f"{JVP}: Expected f to be a function that has non-empty output (got output = {outputs})"
        )
    for value in outputs:
        if not isinstance(value, Tensor):
            raise RuntimeError(
                f"{JVP}: expected f(*primals) to return only tensors, got unsupported type {type(value)}"
            )


def _unpack(dual: Tensor, strict: bool) -> tuple[Tensor, Tensor]:
    primal, tangent = forward_ad.unpack_dual(dual)
    if tangent is None:
        if strict:
            raise RuntimeError(
                "jvp(f, primals, tangents, strict=True): The output of f is independent of the inputs. "
                "This is not allowed with strict=True."
            )
        tangent = zeros_like(primal)
    return primal, tangent


def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """(func(*primals), the Jacobian of func at primals times tangents[, aux]): forward-mode AD."""
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    flat_primals, primals_spec = tree_flatten(primals)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(
            f"{JVP}: Expected primals and tangents to have the same python structure. For example, if primals "
            f"is a tuple of 3 tensors, tangents also must be. Got primals with structure {primals_spec} and "
            f"tangents with structure {tangents_spec}"
        )
    _check_tensors(flat_primals, "primals")
    _check_tensors(flat_tangents, "tangents")
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(flat_primals, flat_tangents)]
        output = func(*tree_unflatten(duals, primals_spec))
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(
                    f"{JVP}: output of function f should be a tuple: (output, aux) if has_aux is True"
                )
            output, aux = output
        flat_out, out_spec = tree_flatten(output)
        _check_outputs(flat_out)
        pairs = [_unpack(dual, strict) for dual in flat_out]
    result = tree_unflatten([p for p, _ in pairs], out_spec), tree_unflatten([t for _, t in pairs], out_spec)
    return (*result, aux) if has_aux else result
