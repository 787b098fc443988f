"""Numerical derivatives: central differences (full Jacobians) and directional ones (fast mode).

Inputs are perturbed in place, through the tensor's own array: views and the graph of the
reference forward see the change, and no version counter moves. Every perturbed element is
set back to its saved bits, and the whole array is restored once more at the end, even
when the function raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

from .batched import batched_differences
from .messages import NUMERICAL_NOT_ZERO, output_count_error, perturbed_outputs_error, same_shape_error
from .report import USER_ERRORS, describe_exception
from .state import Abort, CheckState
from .util import FAST_MODE_SEED, as_tuple, unit_vector


def numerics_need_grad(state: CheckState, reference: list[tuple[int, Any]]) -> bool:
    """Whether the numerical forwards must run in grad mode.

    no_grad forwards are cheaper, but a function that differentiates internally (as
    gradgradcheck's does) needs grad mode for its values: if a no_grad forward fails or
    gives other values than the reference forward, grad mode is used. With a `Reference`,
    its own grad-mode forward is what the no_grad one must match.
    """
    tensors = state.tensors
    func, inputs = state.numerical_func, state.numerical_inputs
    try:
        if state.reference is not None:
            with tensors.enable_grad():
                outs = as_tuple(func(*inputs))
            reference = [(k, outs[k]) for k, _ in reference]
        with tensors.no_grad():
            outs = as_tuple(func(*inputs))
        for k, ref in reference:
            other = outs[k]
            if not tensors.is_tensor(other) or not numpy.array_equal(
                tensors.values(other), tensors.values(ref), equal_nan=True
            ):
                return True
    except Exception:
        return True
    return False


def numerical_jacobians(state: CheckState, in_rank: int) -> list[numpy.ndarray]:
    """The numerical Jacobians of every differentiable output wrt one input (computed once)."""
    cached = state.numerical_cache.get(in_rank)
    if cached is None:
        pos, tensor = state.diff_inputs[in_rank]
        cached = state.numerical_cache[in_rank] = central_differences(state, pos, tensor, state.outputs)
    return cached


def central_differences(
    state: CheckState, pos: int, tensor: Any, outputs: list[tuple[int, Any]]
) -> list[numpy.ndarray]:
    """Central differences wrt each element of one input: a Jacobian per output.

    Each element is set to x - eps and x + eps in the input's own array and set back to its
    saved bits; the whole array is restored once more at the end. Where the function's rows
    can be replayed on a batch of perturbations (batched.py), that runs instead, same values.
    """
    numel = state.tensors.numel
    tensor = state.numerical_twin(tensor)
    batched = batched_differences(state, tensor, outputs)
    if batched is not None:
        n = numel(tensor)
        return [
            ((p - m) / (2 * state.opts.eps)).reshape(n, numel(o)).T for m, p, (_, o) in zip(*batched, outputs)
        ]
    shape = state.tensors.shape
    array = state.tensors.storage(tensor)
    n = array.size
    minus = [numpy.empty((n, *shape(o))) for _, o in outputs]
    plus = [numpy.empty((n, *shape(o))) for _, o in outputs]
    saved = array.copy()
    original = saved.reshape(-1)
    flat = array.reshape(-1) if array.flags.c_contiguous else None
    index = range(n) if flat is not None else list(numpy.ndindex(array.shape))
    target = flat if flat is not None else array
    run, store = _evaluator(state, outputs)
    eps = state.opts.eps
    try:
        with _forward_mode(state):
            for row, idx in enumerate(index):
                x0 = original[row]
                target[idx] = x0 - eps
                below = run()
                unlike = store(minus, row, below)  # now: an output may alias the input
                target[idx] = x0 + eps
                above = run()
                unlike = store(plus, row, above) or unlike
                target[idx] = x0
                check_perturbed_outputs(state, below, above, eps, lambda row=row: _position(row, array.shape))
                if unlike is not None:
                    raise same_shape_error(state.tensors, eps, *unlike)
                state.column_done()
    except USER_ERRORS as exc:
        _numerical_failed(state, pos, exc)
    finally:
        array[...] = saved
    return [((p - m) / (2 * eps)).reshape(n, numel(o)).T for p, m, (_, o) in zip(plus, minus, outputs)]


def numerical_jvps(
    state: CheckState, pos: int, tensor: Any, u: numpy.ndarray, outputs: list[tuple[int, Any]]
) -> list[numpy.ndarray]:
    """J u per output by central differences along u (fast mode: two forwards)."""
    shape = state.tensors.shape
    array = state.tensors.storage(state.numerical_twin(tensor))
    step = state.tensors.array_like((state.opts.eps * u).reshape(array.shape), array)
    minus = [numpy.empty((1, *shape(o))) for _, o in outputs]
    plus = [numpy.empty((1, *shape(o))) for _, o in outputs]
    saved = array.copy()
    run, store = _evaluator(state, outputs)
    try:
        with _forward_mode(state):
            array[...] = saved - step
            below = run()
            unlike = store(minus, 0, below)
            array[...] = saved + step
            above = run()
            unlike = store(plus, 0, above) or unlike
            check_perturbed_outputs(state, below, above, state.opts.eps)
            if unlike is not None:
                raise same_shape_error(state.tensors, state.opts.eps, *unlike)
    except USER_ERRORS as exc:
        _numerical_failed(state, pos, exc)
    finally:
        array[...] = saved
    return [((p - m) / (2 * state.opts.eps)).reshape(-1) for p, m in zip(plus, minus)]


def values_along(
    state: CheckState, tensor: Any, element: int, steps: tuple[float, ...], outputs: list[tuple[int, Any]]
) -> list[numpy.ndarray]:
    """Every output's values with one input element (flat index) moved to x + k eps, per k in `steps`.

    A list per output of arrays (len(steps), output numel). The element is set back to its
    saved bits after each forward, and the whole array restored at the end. For reports only
    (kinks.py): an exception here propagates to the caller, which keeps the entry as it was.
    """
    array = state.tensors.storage(state.numerical_twin(tensor))
    saved = array.copy()
    x0 = saved.reshape(-1)[element]
    idx = element if array.flags.c_contiguous else _position(element, array.shape)
    target = array.reshape(-1) if array.flags.c_contiguous else array
    numel = state.tensors.numel
    buffers = [numpy.empty((len(steps), *state.tensors.shape(o))) for _, o in outputs]
    run, store = _evaluator(state, outputs)
    try:
        with _forward_mode(state):
            for row, k in enumerate(steps):
                target[idx] = x0 + k * state.opts.eps
                unlike = store(buffers, row, run())  # before restoring: an output may alias the input
                target[idx] = x0
                if unlike is not None:
                    raise ValueError("an output changed shape under perturbation")
    finally:
        array[...] = saved
    return [b.reshape(len(steps), numel(o)) for b, (_, o) in zip(buffers, outputs)]


def centre_values(state: CheckState) -> list[numpy.ndarray]:
    """Each differentiable output's values (1, numel) at the unperturbed inputs, as the numerical
    side computes them: the reference forward's, or with a `Reference` its function's (run once)."""
    cached = state.centre_cache
    if cached is None:
        numel = state.tensors.numel
        if state.reference is None:
            outs = [o for _, o in state.outputs]
        else:
            with _forward_mode(state):
                computed = as_tuple(state.numerical_func(*state.numerical_inputs))
            outs = [computed[k] for k, _ in state.outputs]
        cached = [
            numpy.asarray(state.tensors.values(o), dtype=numpy.float64).reshape(1, numel(o)) for o in outs
        ]
        state.centre_cache = cached
    return cached


def check_numerical_is_zero(state: CheckState, float_outputs: list[tuple[int, Any]]) -> None:
    """No differentiable output: the function must then be numerically constant (torch)."""
    if not float_outputs:
        return
    rng = numpy.random.default_rng(FAST_MODE_SEED)
    for pos, t in state.diff_inputs:
        if state.opts.fast_mode:
            jvps = numerical_jvps(state, pos, t, unit_vector(rng, state.tensors.numel(t)), float_outputs)
            bad = any(j.size and numpy.abs(j).max() > state.opts.nondet_tol for j in jvps)
        else:
            bad = any(numpy.any(j != 0) for j in central_differences(state, pos, t, float_outputs))
        if bad:
            state.fail(NUMERICAL_NOT_ZERO, f"{NUMERICAL_NOT_ZERO} (no output requires grad)")
            return


def _forward_mode(state: CheckState):
    return state.tensors.enable_grad() if state.numerics_need_grad else state.tensors.no_grad()


def _evaluator(state: CheckState, outputs: list[tuple[int, Any]]) -> tuple[Callable, Callable]:
    """(run, store): one forward at the current inputs, its outputs as a tuple; and output k's
    values into buffers[k][row], or (the reference's shape, the output) for one that does not fit.

    This runs once per perturbation, so it does no more than it must: buffers are
    shaped (rows, *output shape) to take the values without a reshape.
    """
    func, inputs = state.numerical_func, state.numerical_inputs
    is_tensor, shape_of, values = state.tensors.is_tensor, state.tensors.shape, state.tensors.values
    specs = [(k, shape_of(o)) for k, o in outputs]

    def run() -> tuple:
        outs = func(*inputs)
        outs = (outs,) if is_tensor(outs) else as_tuple(outs)
        if state.output_count is not None and len(outs) != state.output_count:
            raise output_count_error(state.output_count, len(outs))
        return outs

    def store(buffers: list[numpy.ndarray], row: int, outs: tuple) -> tuple | None:
        for (k, shape), buf in zip(specs, buffers):
            o = outs[k] if k < len(outs) else None
            if not is_tensor(o) or shape_of(o) != shape:
                return shape, o
            buf[row] = values(o)
        return None

    return run, store


def check_perturbed_outputs(
    state: CheckState, below: tuple, above: tuple, eps: float, position: Callable | None = None
) -> None:
    """torch's check that moving an input by -eps and +eps gives outputs of one shape and dtype.

    `position()`: the perturbed element's index, named in full mode's message."""
    tensors = state.tensors
    for a, b in zip(below, above):
        if not (tensors.is_tensor(a) and tensors.is_tensor(b)):
            continue
        if tensors.shape(a) != tensors.shape(b) or a.dtype != b.dtype:
            raise perturbed_outputs_error(tensors, a, b, eps, None if position is None else position())


def _position(row: int, shape: tuple) -> tuple:
    """The index of the row-th element (in C order) of an array of `shape`, as torch prints it."""
    return tuple(int(i) for i in numpy.unravel_index(row, shape))


def _numerical_failed(state: CheckState, pos: int, exc: BaseException) -> None:
    if state.strict:
        raise exc
    text = describe_exception(f"forward (numerical, perturbing input {pos})", exc)
    state.fail(text, text)
    raise Abort from exc
