"""Forward mode: Jacobian columns as Jacobian-vector products through the library's forward AD.

As torch's `_get_analytical_jacobian_forward_ad`: inside one dual level every input requiring
grad becomes a dual tensor (a detached copy with a tangent), all tangents zero but one input's,
which is a unit vector (one column of J per forward) or, in fast mode, the direction u. The
outputs' tangents are the columns; an output without one has a zero column.

A function that cannot run under forward AD at all (a custom Function without `jvp`, an op
without a forward rule) raises the library's error: gradcheck lets it through, as torch does;
check_gradients records it as a note, forward mode unsupported, and the reverse-mode verdict
stands (see `unsupported`).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

import numpy

from .report import USER_ERRORS, describe_exception
from .state import Abort, CheckState
from .util import as_tuple


class ForwardModeUnsupported(RuntimeError):
    """Raised by a caller's function (gradcli's) for code it knows forward mode cannot check."""


#: What the libraries' errors for code forward AD cannot run say (torch's and the engine's texts).
UNSUPPORTED_MARKERS = (
    "must implement the jvp function",
    "use it with forward mode AD",
    "forward AD with",
    "does not support forward AD",
    "not implemented for forward AD",
    "that does not support it because it has not been implemented yet",
)


#: How the note about code forward AD cannot run begins (the library's error follows).
UNSUPPORTED_NOTE = "forward mode not checked: the forward under forward-mode AD"


def forward_jacobians(state: CheckState, in_rank: int) -> list[numpy.ndarray]:
    """Input `in_rank`'s forward-mode Jacobian with every output, (output numel, input numel) each."""
    cached = state.forward_cache.get(in_rank)
    if cached is None:
        n = state.tensors.numel(state.diff_inputs[in_rank][1])
        columns = _jvps(state, in_rank, _basis(n))
        cached = [
            numpy.stack(cols, axis=1) if cols else _empty(state, k, n) for k, cols in enumerate(columns)
        ]
        state.forward_cache[in_rank] = cached
    return cached


def forward_jvps(state: CheckState, in_rank: int, u: numpy.ndarray) -> list[numpy.ndarray]:
    """J u of input `in_rank` along u, per output (fast mode: one forward)."""
    return [cols[0] for cols in _jvps(state, in_rank, [u])]


def _jvps(state: CheckState, in_rank: int, tangents: Iterable[numpy.ndarray]) -> list[list[numpy.ndarray]]:
    """One forward under a dual level per tangent of input `in_rank`; each output's flat tangent."""
    lib = state.tensors
    columns: list[list[numpy.ndarray]] = [[] for _ in state.outputs]
    active = state.diff_inputs[in_rank][0]
    with lib.dual_level():
        for tangent in tangents:
            duals = []
            for i, a in enumerate(state.inputs):
                if lib.is_tensor(a) and a.requires_grad:
                    t = tangent if i == active else numpy.zeros(lib.numel(a))
                    a = lib.make_dual(a, lib.tensor(t, a))
                duals.append(a)
            outs = as_tuple(_user_forward(state, duals))
            for k, (pos, o) in enumerate(state.outputs):
                got = lib.tangent(outs[pos]) if pos < len(outs) and lib.is_tensor(outs[pos]) else None
                columns[k].append(numpy.zeros(lib.numel(o)) if got is None else lib.values(got).reshape(-1))
    return columns


def _user_forward(state: CheckState, duals: list) -> Any:
    """The function on dual inputs; a library error saying forward AD cannot run it ends the
    forward-mode check as unsupported (strict mode: raised, as torch's gradcheck does)."""
    try:
        return state.func(*duals)
    except USER_ERRORS as exc:
        if state.strict:
            raise
        if unsupported(exc):
            state.report.notes.append(state.label(_unsupported_note(exc)))
            raise Abort from exc
        text = describe_exception("forward (forward mode AD)", exc)
        state.fail(text, text)
        raise Abort from exc


def _unsupported_note(exc: BaseException) -> str:
    """Why forward mode was not checked: the caller's own reason, a Function without `jvp`, or the
    library's error with the user's line."""
    if isinstance(exc, ForwardModeUnsupported):
        return f"forward mode not checked: {exc}"
    return _missing_jvp(exc) or describe_exception(UNSUPPORTED_NOTE, exc, first_line=True)


def _missing_jvp(exc: BaseException) -> str | None:
    """The note for the commonest case, a custom Function without `jvp`, naming the Function and
    where it is defined: the default `jvp` that raised holds its ctx, whose `_forward_cls` (torch's
    and the engine's) is the Function."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None or tb.tb_frame.f_code.co_name != "jvp":
        return None
    function = getattr(tb.tb_frame.f_locals.get("ctx"), "_forward_cls", None)
    if not isinstance(function, type):
        return None
    try:  # the file as the forward's code names it: the path the user gave, as in tracebacks
        file = getattr(function.forward, "__code__", None)
        where = f" (at {file.co_filename}:{inspect.getsourcelines(function)[1]})" if file else ""
    except (OSError, TypeError):
        where = ""
    name = function.__qualname__.rsplit("<locals>.", 1)[-1]
    return f"forward mode not checked: {name} has no jvp, which forward-mode AD needs{where}"


def unsupported(exc: BaseException) -> bool:
    """Whether `exc` is the library saying forward AD cannot run this code (not a bug in it)."""
    if isinstance(exc, ForwardModeUnsupported):
        return True
    text = str(exc)
    return isinstance(exc, (RuntimeError, NotImplementedError)) and any(
        m in text for m in UNSUPPORTED_MARKERS
    )


def _basis(n: int) -> Iterable[numpy.ndarray]:
    for c in range(n):
        e = numpy.zeros(n)
        e[c] = 1.0
        yield e


def _empty(state: CheckState, out_rank: int, n: int) -> numpy.ndarray:
    return numpy.zeros((state.tensors.numel(state.outputs[out_rank][1]), n))
