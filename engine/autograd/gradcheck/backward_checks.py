"""torch's checks of backward beyond the Jacobians: zero grad_outputs, undefined grad_outputs.

Zero grad_outputs must give zero gradients of the inputs' shapes and dtypes. Undefined
output gradients must not break backward: every output undefined (custom Functions that
don't materialise grads are called with None, as torch's engine would), then one output
at a time, the others zero.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy

from .messages import UNDEFINED_GRAD_BC_WARNING, UNDEFINED_GRAD_FAILED, UNDEFINED_GRAD_NONZERO
from .report import USER_ERRORS, GradcheckError, describe_exception
from .state import Abort, CheckState
from .util import differentiable_outputs, host, stacklevel_outside


def check_zero_grad_outputs(state: CheckState) -> None:
    """Zero grad_outputs must give zero gradients of the inputs' dtypes and shapes."""
    lib = state.tensors
    outputs = [o for _, o in state.outputs]
    zeros = [lib.tensor(numpy.zeros(lib.shape(o)), o) for o in outputs]
    tensors = [t for _, t in state.diff_inputs]
    try:
        grads = state.user("backward with zero grad_outputs", lib.grad, outputs, tensors, zeros)
    except Abort:
        return
    for (pos, t), g in zip(state.diff_inputs, grads):
        if g is None:
            continue
        if numpy.any(lib.values(g) != 0):
            state.fail(
                "backward not multiplied by grad_output",
                f"backward not multiplied by grad_output (zero grad_outputs gave a nonzero gradient for input {pos})",
            )
        elif g.dtype != t.dtype:
            state.fail(
                "grad is incorrect type",
                f"grad is incorrect type (input {pos} is {lib.dtype_name(t)}, its gradient {lib.dtype_name(g)})",
            )
        elif g.device != t.device:
            state.fail(
                "grad is incorrect device",
                f"grad is incorrect device (input {pos} is on {t.device}, its gradient on {g.device})",
            )
        elif lib.shape(g) != lib.shape(t):
            state.fail(
                "grad is incorrect size",
                f"grad is incorrect size (input {pos} has shape {tuple(t.shape)}, its gradient {tuple(g.shape)})",
            )


def check_undefined_grads(state: CheckState) -> None:
    """torch's check that backward copes with undefined (None) output gradients.

    As torch does, on fresh outputs of the function, through the executor: every output's
    gradient undefined, then (with several outputs) one at a time, the others zero. Nodes get
    what torch's engine gives them (custom Functions that don't materialise grads get None).
    Backward must not fail and must give gradients that are None or zero.
    """
    configurations = [None]  # None: every output undefined
    if len(state.outputs) > 1:
        configurations += list(range(len(state.outputs)))
    lib = state.tensors
    tensors = tuple(t for _, t in state.diff_inputs)
    for undefined in configurations:
        outputs = differentiable_outputs(lib, state.user("forward", state.func, *state.inputs))
        grads = [
            None if undefined is None or k == undefined else lib.tensor(numpy.zeros(lib.shape(o)), o)
            for k, o in enumerate(outputs)
        ]
        context = (
            "backward with every output gradient undefined"
            if undefined is None
            else f"backward with the gradient of output {state.outputs[undefined][0]} undefined"
        )
        try:
            captured = lib.grad_with_undefined(outputs, grads, tensors)
        except USER_ERRORS as exc:
            _undefined_failed(state, context, exc)
            return
        if not _undefined_gave_zeros(state, captured, context):
            return


def _undefined_failed(state: CheckState, context: str, exc: BaseException) -> None:
    """torch turns a RuntimeError here into its message and lets other errors through."""
    if state.strict:
        if isinstance(exc, RuntimeError):
            warnings.warn(UNDEFINED_GRAD_BC_WARNING, UserWarning, stacklevel=stacklevel_outside())
            raise GradcheckError(UNDEFINED_GRAD_FAILED) from exc
        raise exc
    state.fail(UNDEFINED_GRAD_FAILED, f"{UNDEFINED_GRAD_FAILED}: {describe_exception(context, exc)}")


def _undefined_gave_zeros(state: CheckState, grads: Iterable, context: str) -> bool:
    for g in grads:
        if g is not None and numpy.any(_values(state, g) != 0):
            if state.strict:
                warnings.warn(UNDEFINED_GRAD_BC_WARNING, UserWarning, stacklevel=stacklevel_outside())
            state.fail(UNDEFINED_GRAD_NONZERO, f"{UNDEFINED_GRAD_NONZERO} ({context})")
            return False
    return True


def _values(state: CheckState, g) -> numpy.ndarray:
    """A gradient's values on the host, whatever a backward returned (a tensor, an array, a scalar)."""
    if state.tensors.is_tensor(g):
        return state.tensors.values(g)
    return host(g)
