"""Forward-mode transforms: `jvp` and `linearize` (torch.func's), on the engine's forward AD.

The function runs on dual tensors at a dual level the transform opens. As in PyTorch 2.13's
forward AD one level is open at a time, so a jvp inside a running jvp (jacfwd of jacfwd) takes
J·v by reverse mode instead, as the vjp of a vjp: g(u) = Jᵀu is linear in u, and its vjp against v
is J·v. Every step is a recorded op, so the outer level's tangents flow through it (forward over
reverse) and the outer jvp differentiates the inner one.
"""

from __future__ import annotations

from collections.abc import Callable

from ..autograd import forward_ad, forward_grad
from ..autograd.backward import grad as autograd_grad
from ..autograd.function import functorch_rules
from ..autograd.grad_mode import enable_grad
from ..ops.creation import zeros_like
from ..tensor import Tensor
from .grad import differentiable, finished, reverse_transform
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


def _or_zeros(tangent: Tensor | None, primal: Tensor, strict: bool) -> Tensor:
    """An output's tangent; one that does not depend on the inputs has none: zeros, or refused if strict."""
    if tangent is not None:
        return tangent
    if strict:
        raise RuntimeError(
            "jvp(f, primals, tangents, strict=True): The output of f is independent of the inputs. "
            "This is not allowed with strict=True."
        )
    return zeros_like(primal)


def _unpack(dual: Tensor, strict: bool) -> tuple[Tensor, Tensor]:
    primal, tangent = forward_ad.unpack_dual(dual)
    return primal, _or_zeros(tangent, primal, strict)


def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """(func(*primals), the Jacobian of func at primals times tangents[, aux]): forward-mode AD."""
    with functorch_rules():
        return forward_jvp(func, primals, tangents, strict=strict, has_aux=has_aux)


def forward_jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """`jvp` without torch.func's rules for custom Functions: autograd.functional's forward AD, as torch's."""
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
    if forward_grad.level[0] >= 0:
        return _jvp_by_reverse_mode(func, flat_primals, primals_spec, flat_tangents, strict, has_aux)
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(flat_primals, flat_tangents)]
        output, aux = _split_aux(func(*tree_unflatten(duals, primals_spec)), has_aux)
        flat_out, out_spec = tree_flatten(output)
        _check_outputs(flat_out)
        pairs = [_unpack(dual, strict) for dual in flat_out]
    result = finished(
        (tree_unflatten([p for p, _ in pairs], out_spec), tree_unflatten([t for _, t in pairs], out_spec))
    )
    return (*result, aux) if has_aux else result


def _split_aux(output, has_aux: bool) -> tuple:
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{JVP}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _jvp_by_reverse_mode(func, flat_primals, primals_spec, flat_tangents, strict, has_aux):
    """jvp while a dual level is open: J·v as the vjp, against v, of u ↦ Jᵀu (module docstring)."""
    inputs = [differentiable(p) for p in flat_primals]
    with enable_grad(), reverse_transform():
        output, aux = _split_aux(func(*tree_unflatten(inputs, primals_spec)), has_aux)
        flat_out, out_spec = tree_flatten(output)
        _check_outputs(flat_out)
        used = [o for o in flat_out if o.requires_grad]
        cotangents = [zeros_like(o).requires_grad_(True) for o in used]
        pulled = autograd_grad(used, inputs, cotangents, create_graph=True, allow_unused=True) if used else []
        pairs = [(g, v) for g, v in zip(pulled, flat_tangents) if g is not None and g.requires_grad]
        pushed = (
            autograd_grad(
                [g for g, _ in pairs], cotangents, [v for _, v in pairs], create_graph=True, allow_unused=True
            )
            if pairs
            else [None] * len(used)
        )
    by_output = {id(o): t for o, t in zip(used, pushed)}
    tangents_out = [_or_zeros(by_output.get(id(o)), o, strict) for o in flat_out]
    result = finished((tree_unflatten(flat_out, out_spec), tree_unflatten(tangents_out, out_spec)))
    return (*result, aux) if has_aux else result
