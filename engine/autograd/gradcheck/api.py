"""The public functions: gradcheck and gradgradcheck (torch's), and check_gradients (the report).

gradcheck runs one strict `Check`; gradgradcheck runs gradcheck on the second-order
problem. check_gradients runs non-strict checks of both orders into one report, upcasting
lower-precision inputs to float64 instead of warning.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

from .check import Check
from .messages import NON_DOUBLE_WARNING
from .report import (
    ERROR,
    MAX_MISMATCHES,
    USER_ERRORS,
    GradcheckError,
    GradcheckReport,
    describe_exception,
    empty_report,
    record,
)
from .second_order import gradgrad_problem
from .state import Abort, Options, Reference
from .tensors import ENGINE, Tensors
from .util import as_tuple, stacklevel_outside


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    fast_mode: bool = False,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
) -> bool:
    """torch.autograd.gradcheck: True, or GradcheckError (False with raise_exception=False).

    As in torch, errors raised by `func` or its backward, and invalid inputs, propagate
    as they are whatever `raise_exception` says. The batched checks compare gradients of a
    batch of vectors taken at once through engine.func.vmap with the same vectors one by one
    (batched_checks.py). Neither mode leaves nothing to check: torch's AssertionError.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    tupled = as_tuple(inputs)
    _warn_non_double(ENGINE, tupled)
    opts = Options(
        eps,
        atol,
        rtol,
        nondet_tol,
        check_undefined_grad,
        fast_mode,
        check_grad_dtypes,
        check_forward_ad,
        check_backward_ad,
        check_batched_grad=check_batched_grad,
        check_batched_forward_grad=check_batched_forward_grad,
    )
    report = empty_report(ENGINE, tupled, fast_mode, upcast=False)
    try:
        Check(func, tupled, opts, report, order=1, strict=True).run()
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    fast_mode: bool = False,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
) -> bool:
    """torch.autograd.gradgradcheck: gradcheck of (inputs, grad_outputs) -> first-order grads;
    `check_fwd_over_rev` checks that gradient's forward-mode Jacobian too.

    Random grad_outputs (uniform in [-1, 1), requiring grad) come from a fixed-seed
    generator, so the user's random state is untouched and reruns agree. `check_rev_over_rev`
    is gradcheck's `check_backward_ad` of that gradient, `check_fwd_over_rev` its `check_forward_ad`.
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    for option, name in (
        (check_undefined_grad, "check_undefined_grad"),
        (check_batched_grad, "check_batched_grad"),
    ):
        if option and not check_rev_over_rev:
            raise AssertionError(f"Setting {name}=True requires check_rev_over_rev to be True")
    new_func, new_inputs = gradgrad_problem(func, as_tuple(inputs), grad_outputs, gen_non_contig_grad_outputs)
    return gradcheck(
        new_func,
        new_inputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        fast_mode=fast_mode,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
    )


def check_gradients(
    func: Callable[..., Any],
    inputs: Any,
    *,
    order: int = 1,
    fast_mode: bool = False,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    upcast: bool = True,
    tensors: Tensors = ENGINE,
    max_mismatches: int = MAX_MISMATCHES,
    progress: Callable[[int, int], None] | None = None,
    reference: Reference | None = None,
    modes: tuple[str, ...] = ("rev",),
) -> GradcheckReport:
    """Run gradcheck (and with order=2 gradgradcheck) and report everything it finds.

    Never raises for errors in user code. With `upcast`, inputs requiring grad in a lower
    precision are checked as float64 copies (fresh leaves, same requires_grad) instead of
    warning that the check will likely fail; the caller's tensors are not touched.
    `tensors` is the library the inputs belong to (tensors.py; the engine's by default).
    Each pair lists its `max_mismatches` largest errors (and counts them all). `progress(done,
    total)` is called after each input element the numerical Jacobians perturb (full mode, or a
    fast-mode pair localised), counting the elements of every input of the check (per order).
    `reference` (state.Reference) computes the numerical Jacobians elsewhere, say in float64 for
    a float32 function: the inputs are then checked as they are (no upcast, no warning); at
    order 2 the reference's second-order problem gets float64 copies of the grad_outputs.
    `modes`: "rev" compares reverse mode's Jacobians (VJPs), "fwd" forward mode's (JVPs; at order
    2, the first-order gradient's: "JVP of VJP"), both by default in gradcli. Code forward AD cannot run (a custom
    Function without jvp) leaves a note in `report.notes`, not a failure.
    """
    if order not in (1, 2):
        raise ValueError(f"order must be 1 or 2, got {order!r}")
    if not modes or not set(modes) <= {"rev", "fwd"}:
        raise ValueError(f"modes must name 'rev', 'fwd' or both, got {modes!r}")
    start = time.perf_counter()
    tupled = as_tuple(inputs)
    upcasting = upcast and reference is None and _needs_upcast(tensors, tupled)
    if upcasting:
        tupled = _float64_copies(tensors, tupled)
    elif reference is None:
        _warn_non_double(tensors, tupled)
    opts = Options(
        eps,
        atol,
        rtol,
        nondet_tol,
        check_undefined_grad,
        fast_mode,
        check_forward_ad="fwd" in modes,
        check_backward_ad="rev" in modes,
        max_mismatches=max_mismatches,
    )
    report = empty_report(tensors, tupled, fast_mode, upcast=upcasting)
    first = Check(
        func,
        tupled,
        opts,
        report,
        order=1,
        strict=False,
        tensors=tensors,
        progress=progress,
        reference=reference,
    )
    _run_collecting(first)
    if order == 2 and first.forward_ran and report.forward_drift is None:
        report.order = 2
        try:
            new_func, new_inputs = gradgrad_problem(func, tupled, None, False, tensors)
            second_reference = _second_order(reference, new_inputs[len(tupled) :], tensors)
        except USER_ERRORS as exc:
            record(report, describe_exception("second order: forward (making grad_outputs)", exc), ERROR)
        else:
            second = Check(
                new_func,
                new_inputs,
                opts,
                report,
                order=2,
                strict=False,
                tensors=tensors,
                progress=progress,
                reference=second_reference,
            )
            _run_collecting(second)
    report.pairs.sort(key=lambda p: (p.order, p.mode != "rev", p.output_index, p.input_index))
    report.elapsed = time.perf_counter() - start
    return report


def _second_order(reference: Reference | None, grad_outputs: tuple, tensors: Tensors) -> Reference | None:
    """The reference's own second-order problem, its grad_outputs float64 copies of the check's."""
    if reference is None:
        return None
    twins = tuple(tensors.float64_leaf(g) for g in grad_outputs)
    ref_func, ref_inputs = gradgrad_problem(reference.func, reference.inputs, twins, False, tensors)
    return Reference(ref_func, ref_inputs, reference.scope)


def _run_collecting(check: Check) -> None:
    """Run a non-strict check; anything unexpected (even a bug here) becomes a problem."""
    try:
        check.run()
    except Abort:
        pass
    except USER_ERRORS as exc:
        record(check.report, check.label(describe_exception("gradcheck", exc)), ERROR)


def _warn_non_double(tensors: Tensors, inputs: tuple) -> None:
    """torch's warning for inputs requiring grad in less than double precision."""
    for idx, a in enumerate(inputs):
        if tensors.is_tensor(a) and a.requires_grad and tensors.dtype_name(a) != "float64":
            warnings.warn(NON_DOUBLE_WARNING.format(idx=idx), UserWarning, stacklevel=stacklevel_outside())


def _lower_precision_float(tensors: Tensors, a: Any) -> bool:
    return tensors.is_tensor(a) and a.dtype.is_floating_point and tensors.dtype_name(a) != "float64"


def _needs_upcast(tensors: Tensors, inputs: tuple) -> bool:
    return any(_lower_precision_float(tensors, a) and a.requires_grad for a in inputs)


def _float64_copies(tensors: Tensors, inputs: tuple) -> tuple:
    """Lower-precision float tensors as float64 leaves (same requires_grad); others as they are."""
    return tuple(tensors.float64_leaf(a) if _lower_precision_float(tensors, a) else a for a in inputs)
