"""`vmap`: a function of one example run on a batch, each op through its batching rule (torch.func.vmap)."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy

from .. import backend
from ..autograd import forward_grad
from ..autograd.function import functorch_rules
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.thread_local import this_thread
from ..ops.shaping.core import cat, stack
from ..ops.tangents import tangent_of
from ..tensor import Tensor, wrap
from .batched import BATCHED_WRITES, BatchedTensor, NotBatchable, apply_batched, batched, elementwise_batched
from .pytree import broadcast_prefix, tree_flatten, tree_unflatten

RANDOM_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the 'same' or "
    "'different' randomness flags on vmap or perform the randomness operation out of vmap"
)


def running() -> bool:
    """Whether a vmap's function is being called in this thread."""
    return bool(this_thread.transforms.levels)


def _name(func) -> str:
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


def vmap(
    func: Callable,
    in_dims=0,
    out_dims=0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """`func` over a batch: in_dims says which dim of each input is the batch (None: shared), out_dims where it goes."""
    return _vmap(func, in_dims, out_dims, randomness, chunk_size, functorch=True)


def legacy_vmap(func: Callable, in_dims=0, out_dims=0) -> Callable:
    """torch._vmap_internals._vmap, which autograd.grad(is_grads_batched=True) and gradcheck's batched
    checks run: custom Functions run under it without torch.func's rules for them (autograd/function.py)."""
    return _vmap(func, in_dims, out_dims, "error", None, functorch=False)


def _vmap(func, in_dims, out_dims, randomness: str, chunk_size: int | None, functorch: bool) -> Callable:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}"
        )
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        with functorch_rules(vmap=True, on=functorch):
            return mapped(*args, **kwargs)

    def mapped(*args, **kwargs):
        flat_args, spec = tree_flatten(args)
        flat_in_dims, size = _in_dims(func, in_dims, args, flat_args, spec)
        each = (func, flat_args, flat_in_dims, spec, size, out_dims, randomness, kwargs)
        if any(d is not None and x._rg for x, d in zip(flat_args, flat_in_dims)) and is_grad_enabled():
            return _run_each(*each)
        snapshot = backend.rng_snapshot() if randomness != "error" else None
        try:
            return batched_run(flat_args, flat_in_dims, spec, size, kwargs)
        except (_OutputsNeedGraph, NotBatchable):
            if snapshot is not None:
                backend.rng_restore(snapshot)
            return _run_each(*each)

    def batched_run(flat_args, flat_in_dims, spec, size, kwargs):
        if chunk_size is None or chunk_size >= size:
            return _run(func, flat_args, flat_in_dims, spec, size, out_dims, randomness, kwargs)
        chunks = []
        for start in range(0, size, chunk_size):
            stop = min(start + chunk_size, size)
            sliced = [
                x if d is None else x.narrow(d, start, stop - start) for x, d in zip(flat_args, flat_in_dims)
            ]
            chunks.append(_run(func, sliced, flat_in_dims, spec, stop - start, out_dims, randomness, kwargs))
        return _concat_chunks(chunks, out_dims)

    return wrapped


def _in_dims(func, in_dims, args, flat_args, spec) -> tuple[list, int]:
    """One in_dim per leaf of the inputs, checked as torch checks them, and the batch size."""
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
            f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
            "to vmap over a function with no inputs. The latter is unsupported."
        )
    flat_in_dims = (
        broadcast_prefix(in_dims, spec) if isinstance(in_dims, tuple) else [in_dims] * len(flat_args)
    )
    if flat_in_dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the structure "
            f"of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has structure {spec}."
        )
    for i, (arg, in_dim) in enumerate(zip(flat_args, flat_in_dims)):
        if not isinstance(in_dim, int) and in_dim is not None:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input but "
                "in_dim must be either an integer dimension or None."
            )
        if isinstance(in_dim, int) and not isinstance(arg, Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input but the "
                f"input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, please use None "
                "as the respective in_dim"
            )
        if in_dim is not None and (in_dim < -arg.dim() or in_dim >= arg.dim()):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for some input, but "
                f"that input is a Tensor of dimensionality {arg.dim()} so expected in_dim to satisfy "
                f"-{arg.dim()} <= in_dim < {arg.dim()}."
            )
        if in_dim is not None and in_dim < 0:
            flat_in_dims[i] = in_dim % arg.dim()
    sizes = [arg.shape[d] for arg, d in zip(flat_args, flat_in_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    return flat_in_dims, sizes[0]


def _random_watch(randomness: str) -> Callable:
    def watch(dev) -> None:
        if this_thread.transforms.levels and randomness == "error":
            raise RuntimeError(RANDOM_ERROR)

    return watch


def _refuse_draws(dev) -> None:
    raise RuntimeError(RANDOM_ERROR)


def _as_drawn_batch(tensor: Tensor) -> BatchedTensor:
    """Draws made with every "different" level's batch in front: a batched tensor of those levels."""
    return batched(tensor._data, tuple(level for level, _ in this_thread.transforms.different))


def _draw_batches():
    """What backend.draws.batch holds while this thread's running vmaps are what they are."""
    different = this_thread.transforms.different
    return (tuple(size for _, size in different), _as_drawn_batch) if different else None


def _run(func, flat_args, flat_in_dims, spec, size, out_dims, randomness, kwargs):
    thread, transforms, draws = this_thread, this_thread.transforms, backend.draws
    level = len(transforms.levels) + 1
    inputs = [x if d is None else _add_level(x, d, level) for x, d in zip(flat_args, flat_in_dims)]
    hooks = thread.batched_apply, thread.batched_elementwise, thread.batched_inplace
    watch = _random_watch(randomness)
    transforms.levels.append(level)
    if randomness == "different":
        transforms.different.append((level, size))
    batch = draws.batch
    draws.batch = _draw_batches()
    thread.batched_apply, thread.batched_elementwise = apply_batched, elementwise_batched
    thread.batched_inplace = BATCHED_WRITES
    draws.watchers.append(watch)
    try:
        outputs = func(*tree_unflatten(inputs, spec), **kwargs)
    finally:
        draws.watchers.remove(watch)
        draws.batch = batch
        if randomness == "different":
            transforms.different.pop()
        thread.batched_apply, thread.batched_elementwise, thread.batched_inplace = hooks
        transforms.levels.pop()
    return _unbatch_outputs(func, outputs, out_dims, level, size)


def _add_level(x: Tensor, dim: int, level: int) -> BatchedTensor:
    """x with its dim `dim` as the batch of `level` (after the levels x already has), without x's graph
    (an input whose graph is wanted takes `_run_each` instead)."""
    return _with_tangent(x, _batch(x, dim, level), lambda t: _batch(t, dim, level))


def _batch(x: Tensor, dim: int, level: int) -> BatchedTensor:
    if x.__class__ is BatchedTensor:
        own = len(x._levels)
        return batched(numpy.moveaxis(x._phys, own + dim, own), (*x._levels, level))
    return batched(numpy.moveaxis(x._data, dim, 0), (level,))


def _with_tangent(x: Tensor, out: Tensor, moved: Callable) -> Tensor:
    """`out` carrying x's forward-AD tangent, its batch dims `moved` as x's were: jvp and vmap compose."""
    tangent = tangent_of(x)
    if tangent is not None:
        forward_grad.set_tangent(out, moved(tangent))
    return out


def _unbatch_outputs(func, outputs, out_dims, level, size):
    flat_outputs, spec = tree_flatten(outputs)
    unbatched = []
    for value, out_dim in zip(flat_outputs, _out_dims(func, out_dims, spec, len(flat_outputs))):
        if out_dim is None:
            if value.__class__ is BatchedTensor and level in value._levels:
                name = _name(func)
                raise ValueError(
                    f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
                )
            unbatched.append(value)
            continue
        _check_output(func, value)
        unbatched.append(_remove_level(value, out_dim, level, size))
    return tree_unflatten(unbatched, spec)


def _out_dims(func, out_dims, spec, count: int) -> list:
    """One out_dim per leaf of the outputs, checked as torch checks them."""
    if isinstance(out_dims, (int, type(None))) and not isinstance(out_dims, bool):
        return [out_dims] * count
    name = _name(func)
    if isinstance(out_dims, (tuple, list)):
        flat_out_dims = broadcast_prefix(out_dims, spec)
        if flat_out_dims is None:
            raise ValueError(
                f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                f"structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs "
                f"has structure {spec}."
            )
        return flat_out_dims
    raise ValueError(
        f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
        "collection of ints representing where in the outputs the vmapped dimension should appear."
    )


def _check_output(func, value) -> None:
    if not isinstance(value, Tensor):
        name = _name(func)
        raise ValueError(
            f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(value)}. "
            "Did you mean to set out_dims= to None for output?"
        )


class _OutputsNeedGraph(Exception):
    """An output of the batched run depends on a tensor that requires grad: its graph is wanted."""


def _remove_level(x: Tensor, out_dim: int, level: int, size: int) -> Tensor:
    """x without `level`: that batch moved to logical dim `out_dim` (an unbatched x expanded to it).

    The batched run records no graph of the batch, so an output that needs one is never handed back
    as a constant (whose gradient would silently be zero): the call runs again through `_run_each`.
    """
    if x._rg:
        raise _OutputsNeedGraph
    return _with_tangent(x, _unbatch(x, out_dim, level, size), lambda t: _unbatch(t, out_dim, level, size))


def _unbatch(x: Tensor, out_dim: int, level: int, size: int) -> Tensor:
    rank = x.dim() + 1
    dim = out_dim % rank if -rank <= out_dim < rank else out_dim
    if x.__class__ is not BatchedTensor or level not in x._levels:
        if x.__class__ is BatchedTensor:
            own = len(x._levels)
            phys = numpy.broadcast_to(
                numpy.expand_dims(x._phys, own + dim),
                (*x._phys.shape[: own + dim], size, *x._phys.shape[own + dim :]),
            )
            return batched(numpy.ascontiguousarray(phys), x._levels)
        return wrap(numpy.ascontiguousarray(numpy.broadcast_to(x._data[None], (size, *x.shape)))).movedim(
            0, dim
        )
    k = x._levels.index(level)
    rest = x._levels[:k] + x._levels[k + 1 :]
    phys = numpy.moveaxis(x._phys, k, len(rest) + dim)
    if rest:
        return batched(phys, rest)
    out = wrap(phys)
    return out


def _run_each(func, flat_args, flat_in_dims, spec, size, out_dims, randomness, kwargs):
    """The function called once per example and the results stacked: slower than the batching rules,
    but every step is a recorded op, so gradients flow through vmap's outputs to its inputs and to the
    tensors the function closes over (grad of vmap, jacrev of jacrev), and what the batched run could
    not batch (a row without a rule that fits; indices worked out from values outside the table's rows:
    sort, topk, max_pool) runs on each example, as torch's vmap falls back to a loop. Randomness as vmap's:
    "same" replays one example's draws for every example, "error" refuses a draw."""
    start = backend.rng_snapshot() if randomness == "same" else None
    watchers = [_refuse_draws] if randomness == "error" else []
    results = []
    transforms, draws = this_thread.transforms, backend.draws
    draws.watchers.extend(watchers)
    transforms.per_example += 1
    try:
        for i in range(size):
            if start is not None:
                backend.rng_restore(start)
            example = [x if d is None else x.select(d, i) for x, d in zip(flat_args, flat_in_dims)]
            results.append(tree_flatten(func(*tree_unflatten(example, spec), **kwargs)))
    finally:
        transforms.per_example -= 1
        for watch in watchers:
            draws.watchers.remove(watch)
    leaves, out_spec = results[0]
    flat_out_dims = _out_dims(func, out_dims, out_spec, len(leaves))
    stacked = []
    for k, (value, out_dim) in enumerate(zip(leaves, flat_out_dims)):
        if out_dim is None:
            stacked.append(value)
            continue
        _check_output(func, value)
        examples = [r[0][k] for r in results]
        shapes = sorted({tuple(e.shape) for e in examples})
        if len(shapes) > 1:
            raise RuntimeError(
                f"vmap: {_name(func)} returned an output whose shape differs between examples "
                f"({list(shapes[0])} and {list(shapes[1])}); a batch needs one shape"
            )
        stacked.append(stack(examples, out_dim))
    return tree_unflatten(stacked, out_spec)


def _concat_chunks(chunks: list, out_dims):
    flat = [tree_flatten(chunk)[0] for chunk in chunks]
    spec = tree_flatten(chunks[0])[1]
    dims = (
        broadcast_prefix(out_dims, spec) if isinstance(out_dims, (tuple, list)) else [out_dims] * len(flat[0])
    )
    joined = [parts[0] if dim is None else cat(list(parts), dim) for parts, dim in zip(zip(*flat), dims)]
    return tree_unflatten(joined, spec)
