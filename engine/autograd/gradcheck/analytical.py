"""Analytical derivatives: Jacobian rows as vector-Jacobian products through the user's backward.

Every VJP runs twice, to check that backward is deterministic (torch's reentrancy check),
and the gradients' dtypes and shapes are checked against their inputs'.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy

from .messages import FAILED_NONDET_MSG, NOT_REENTRANT
from .report import NONDETERMINISTIC_BACKWARD
from .state import Abort, CheckState
from .util import max_abs


def checked_analytical(state: CheckState, out_rank: int) -> list[numpy.ndarray | None]:
    """The full analytical Jacobians of one output, with torch's attribute checks."""
    n = state.tensors.numel(state.outputs[out_rank][1])
    jacobians = checked_vjps(state, out_rank, lambda: _basis(state, out_rank), n)
    state.analytical_cache[out_rank] = jacobians
    return jacobians


def checked_vjps(
    state: CheckState, out_rank: int, seeds: Callable[[], Iterable[numpy.ndarray]], rows: int
) -> list[numpy.ndarray | None]:
    """VJPs computed twice (torch's reentrancy check), then its dtype / size checks.

    Returns one matrix per input requiring grad, None where the gradient had the wrong size.
    """
    first, wrong_shape, wrong_dtype = _vjps(state, out_rank, seeds(), rows)
    second, _, _ = _vjps(state, out_rank, seeds(), rows)
    pos = state.outputs[out_rank][0]
    if wrong_dtype and state.opts.check_grad_dtypes:
        details = ", ".join(f"input {state.diff_inputs[j][0]} got {d}" for j, d in wrong_dtype.items())
        state.fail("Gradient has dtype mismatch", f"Gradient has dtype mismatch ({details})")
    if wrong_shape:
        details = ", ".join(
            f"input {state.diff_inputs[j][0]} expected {tuple(state.diff_inputs[j][1].shape)}, got {s}"
            for j, s in wrong_shape.items()
        )
        state.fail(
            "Analytical gradient has incorrect size",
            f"Analytical gradient has incorrect size (backward of output {pos}: {details})",
        )
    for j, (a, b) in enumerate(zip(first, second)):
        spread = max_abs(a - b)
        if spread > state.opts.nondet_tol:
            message = NOT_REENTRANT.format(nondet_tol=state.opts.nondet_tol)
            detail = (
                f" (output {pos} with respect to input {state.diff_inputs[j][0]}: "
                f"two runs differ by up to {spread:.6g})"
            )
            state.fail(message + FAILED_NONDET_MSG, message + detail, kind=NONDETERMINISTIC_BACKWARD)
            break
    return [None if j in wrong_shape else m for j, m in enumerate(first)]


def full_analytical(state: CheckState, out_rank: int) -> list[numpy.ndarray | None]:
    """The full analytical Jacobians of one output, once (for localising fast mode)."""
    cached = state.analytical_cache.get(out_rank)
    if cached is None:
        n = state.tensors.numel(state.outputs[out_rank][1])
        matrices, wrong_shape, _ = _vjps(state, out_rank, _basis(state, out_rank), n)
        cached = [None if j in wrong_shape else m for j, m in enumerate(matrices)]
        state.analytical_cache[out_rank] = cached
    return cached


def _vjps(state: CheckState, out_rank: int, seeds: Iterable[numpy.ndarray], rows: int):
    """One backward per seed (a flat grad_output); row r of each input's matrix is its VJP.

    Returns (matrices, wrong_shape, wrong_dtype): an input never reached keeps zero rows;
    gradients of the wrong shape are left out and named in wrong_shape.
    """
    pos, output = state.outputs[out_rank]
    lib = state.tensors
    tensors = [t for _, t in state.diff_inputs]
    matrices = [numpy.zeros((rows, lib.numel(t))) for t in tensors]
    wrong_shape: dict[int, tuple] = {}
    wrong_dtype: dict[int, Any] = {}
    for r, seed in enumerate(seeds):
        grad_output = lib.tensor(seed, output)
        try:
            grads = state.user(f"backward of output {pos}", lib.grad, [output], tensors, [grad_output])
        except Abort:
            state.backward_failed = True
            raise
        for j, (g, t) in enumerate(zip(grads, tensors)):
            if g is None:
                continue
            if lib.shape(g) != lib.shape(t):
                wrong_shape[j] = tuple(g.shape)
                continue
            if g.dtype != t.dtype:
                wrong_dtype[j] = g.dtype
            matrices[j][r] = lib.values(g).reshape(-1)
    return matrices, wrong_shape, wrong_dtype


def _basis(state: CheckState, out_rank: int) -> Iterable[numpy.ndarray]:
    """The unit grad_outputs e_0, e_1, ... of one output (one row of J each)."""
    n = state.tensors.numel(state.outputs[out_rank][1])
    for r in range(n):
        seed = numpy.zeros(n)
        seed[r] = 1.0
        yield seed
