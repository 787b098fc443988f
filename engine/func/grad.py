"""Reverse-mode transforms: `grad`, `grad_and_value`, `vjp` (torch.func's), on the engine's autograd.

The function runs with its differentiated inputs requiring grad and the gradients are taken with
`create_graph=True`: under vmap the incoming gradients are batched, so every formula step must
run as a recorded op through the batching rules, and a transform nested in another (grad of grad)
needs the graph of the inner gradient. The outermost transform hands back detached results.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..autograd import forward_grad
from ..autograd.backward import grad as autograd_grad
from ..autograd.function import functorch_rules
from ..autograd.grad_mode import enable_grad
from ..autograd.thread_local import this_thread
from ..ops.creation import zeros_like
from ..ops.tangents import tangent_of
from ..tensor import Tensor
from .pytree import tree_flatten, tree_unflatten


def running() -> bool:
    """Whether a reverse-mode transform is running in this thread (its function, or its gradients,
    being computed)."""
    return this_thread.transforms.reverse > 0


@contextmanager
def reverse_transform() -> Iterator[None]:
    """A reverse-mode transform's work: the results of transforms inside it keep their graph for it, and
    custom Functions run under torch.func's rules."""
    transforms = this_thread.transforms
    transforms.reverse += 1
    try:
        with functorch_rules():
            yield
    finally:
        transforms.reverse -= 1


def differentiable(x):
    """x as an input to differentiate: itself when it already requires grad (an enclosing transform's), else a fresh leaf
    (with x's forward-AD tangent: a jvp around the transform sees through it)."""
    if not isinstance(x, Tensor) or x.requires_grad:
        return x
    return _detached(x, lambda t: t).requires_grad_(True)


def _detached(x: Tensor, tangent_as: Callable) -> Tensor:
    out = x.detach()
    tangent = tangent_of(x)
    if tangent is not None:
        forward_grad.set_tangent(out, tangent_as(tangent))
    return out


def finished(tree):
    """The outermost transform's results carry no graph (but their forward-AD tangents); a nested one's keep it for
    the transform around it."""
    if this_thread.transforms.reverse:
        return tree
    leaves, spec = tree_flatten(tree)
    return tree_unflatten(
        [_detached(x, lambda t: t.detach()) if isinstance(x, Tensor) else x for x in leaves], spec
    )


def gradients(outputs: list, inputs: list, cotangents: list | None) -> list:
    """d(outputs)/d(inputs) against `cotangents`, recorded; zeros for an input the outputs do not use."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents or [None] * len(outputs)) if o.requires_grad]
    wanted = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    found = (
        autograd_grad(
            [o for o, _ in pairs],
            wanted,
            None if cotangents is None else [c for _, c in pairs],
            retain_graph=True,
            create_graph=True,
            allow_unused=True,
        )
        if pairs and wanted
        else [None] * len(wanted)
    )
    by_input = {id(x): g for x, g in zip(wanted, found)}
    return [g if (g := by_input.get(id(x))) is not None else zeros_like(x) for x in inputs]


def _check_aux(aux) -> None:
    for value in tree_flatten(aux)[0]:
        if not isinstance(value, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(value)}")


def _argnums(argnums, args) -> tuple:
    many = isinstance(argnums, tuple)
    nums = argnums if many else (argnums,)
    if many and not nums:
        raise RuntimeError("argnums must be non-empty")
    for n in nums:
        if not isinstance(n, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -len(args) <= n < len(args):
            raise RuntimeError(f"Got argnum={n}, but only {len(args)} positional inputs")
    return tuple(n % len(args) for n in nums)


def of_argnums(func: Callable, args: tuple, nums: tuple) -> Callable:
    """`func` as a function of args[nums] alone, the other args fixed."""

    def of_diff(*diff):
        full = list(args)
        for n, value in zip(nums, diff):
            full[n] = value
        return func(*full)

    return of_diff


def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning (the gradient of `func` w.r.t. args[argnums], func's value)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, args)
        args = list(args)
        diff_leaves, specs = [], []
        for n in nums:
            leaves, spec = tree_flatten(args[n])
            leaves = [differentiable(x) for x in leaves]
            args[n] = tree_unflatten(leaves, spec)
            diff_leaves.append(leaves)
            specs.append(spec)
        with reverse_transform():
            with enable_grad():
                output = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) "
                        "if has_aux is True"
                    )
                output, aux = output
                _check_aux(aux)
            if not isinstance(output, Tensor):
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}"
                )
            if output.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
                )
            flat = [x for leaves in diff_leaves for x in leaves]
            found = iter(gradients([output], flat, None))
            grads = [
                tree_unflatten([next(found) for _ in leaves], spec)
                for leaves, spec in zip(diff_leaves, specs)
            ]
        result = grads[0] if not isinstance(argnums, tuple) else tuple(grads)
        value = (output, aux) if has_aux else output
        return finished((result, value))

    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of `func` (a scalar) w.r.t. its args[argnums] (and aux)."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        gradient, value = both(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def vjp(func: Callable, *primals, has_aux: bool = False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives the vector-Jacobian product per primal."""
    leaves, spec = tree_flatten(primals)
    leaves = [differentiable(x) for x in leaves]
    with reverse_transform(), enable_grad():
        output = func(*tree_unflatten(leaves, spec))
    aux = None
    if has_aux:
        if not (isinstance(output, tuple) and len(output) == 2):
            raise RuntimeError(
                "vjp(f, *primals): output of function f should be a tuple: (output, aux) if has_aux is True"
            )
        output, aux = output
        _check_aux(aux)
    flat_out, out_spec = tree_flatten(output)
    for value in flat_out:
        if not isinstance(value, Tensor):
            raise RuntimeError(
                f"vjp(f, *primals): Expected f(*primals) to return only tensors, got unsupported type {type(value)}"
            )

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of outputs to "
                f"the function. cotangents: {cot_spec}, primal output: {out_spec}"
            )
        with reverse_transform():
            found = gradients(flat_out, leaves, flat_cot)
        return finished(tree_unflatten(found, spec))

    result = finished(output)
    return (result, vjp_fn, finished(aux)) if has_aux else (result, vjp_fn)
