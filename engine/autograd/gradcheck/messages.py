"""torch.autograd.gradcheck's failure texts, word for word, and the builders that fill them in.

These are what gradcheck raises (and `GradcheckReport.message()` returns); the longer
problem texts of `check_gradients` are written where the failures are found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy

from .report import MAX_MISMATCHES, PairReport
from .util import max_abs

if TYPE_CHECKING:
    from .tensors import Tensors

NON_DOUBLE_WARNING = (
    "Input #{idx} requires gradient and is not a double precision floating point or complex. "
    "This check will likely fail if all the inputs are not of double precision floating point "
    "or complex. "
)
BATCHED_GRAD_UNSUPPORTED = (
    "check_batched_grad=True is not supported: the engine has no vmap to compute batched gradients with. "
    "Call {name} with check_batched_grad=False (the default)."
)
NO_INPUT_REQUIRES_GRAD = (
    "gradcheck expects at least one input tensor to require gradient, but none of them have "
    "requires_grad=True."
)
STRIDE_ZERO = (
    "The {idx}th input has a dimension with stride 0. gradcheck only supports inputs that are "
    "non-overlapping to be able to compute the numerical gradients correctly. You should call "
    ".contiguous on the input before passing it to gradcheck."
)
NOT_REENTRANT = (
    "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
    "times gives different values, although analytical gradient matches numerical gradient."
    "The tolerance for nondeterminism was {nondet_tol}."
)
FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""
FAST_MODE_NOTE = (
    "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
    "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
    "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
)
FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()
NUMERICAL_NOT_ZERO = "Numerical gradient for function expected to be zero"
UNDEFINED_GRAD_FAILED = (
    "Expected backward function to handle undefined output grads. Please look at "
    '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
)
UNDEFINED_GRAD_BC_WARNING = (
    "Backwards compatibility: New undefined gradient support checking feature is enabled by "
    "default, but it may break existing callers of this function. If this is true for you, you "
    'can call this function with "check_undefined_grad=False" to disable the feature'
)
UNDEFINED_GRAD_NONZERO = (
    "Expected all input grads to be undefined or zero when all output grads are undefined "
    'or zero. Please look at "Notes about undefined output gradients" in '
    '"tools/autograd/derivatives.yaml"'
)


FORWARD_MODE = "computed with forward mode "  # torch's words in a forward-mode mismatch


def jacobian_mismatch(
    tensors: Tensors,
    out_rank: int,
    in_rank: int,
    num: numpy.ndarray,
    ana: numpy.ndarray,
    output: Any,
    input: Any,
    forward: bool = False,
) -> str:
    """torch's text: the Jacobians printed as (input numel, output numel) tensors."""
    return (
        f"Jacobian {FORWARD_MODE if forward else ''}mismatch for output {out_rank:d} with respect to input {in_rank:d},\n"
        f"numerical:{jacobian_text(tensors, num, output)}\n"
        f"analytical:{jacobian_text(tensors, ana, input)}\n"
    )


def fast_mode_mismatch(
    tensors: Tensors,
    out_rank: int,
    in_rank: int,
    fast_num: float,
    fast_ana: float,
    num: numpy.ndarray,
    ana: numpy.ndarray,
    output: Any,
    input: Any,
    forward: bool = False,
) -> str:
    """torch's text for a fast-mode failure: the projections, then the slow-mode Jacobians."""
    return (
        f"Jacobian {FORWARD_MODE if forward else ''}mismatch for output {out_rank:d} with respect to input {in_rank:d},\n"
        f"numerical:{fast_num}\nanalytical:{fast_ana}\n"
        + FAST_MODE_NOTE
        + f"Numerical:\n {jacobian_text(tensors, num, output)}\n"
        + f"Analytical:\n{jacobian_text(tensors, ana, input)}\n\n"
        + f"The max per-element difference (slow mode) is: {max_abs(num - ana)}.\n"
    )


def bisection_mismatch(
    out_rank: int, in_rank: int, fast_num: float, fast_ana: float, pair: PairReport
) -> str:
    """A fast-mode failure localised by bisection: torch's first lines, then the entries located."""
    head = (
        f"Jacobian mismatch for output {out_rank:d} with respect to input {in_rank:d},\n"
        f"numerical:{fast_num}\nanalytical:{fast_ana}\n"
        f"\nThe Jacobian has {pair.jacobian_shape[0] * pair.jacobian_shape[1]} entries: its wrong entries "
        "were located by bisection, not by recomputing it in slow mode.\n"
    )
    if not pair.mismatches:
        return head + "No single entry located is outside the tolerance.\n"
    count = pair.mismatch_count
    lines = [
        f"At least {count} {'entry differs' if count == 1 else 'entries differ'}; "
        f"showing the first {len(pair.mismatches)} located, worst first:"
    ]
    for out_idx, in_idx, num, ana in pair.mismatches:
        lines.append(
            f"  output{list(out_idx)} / input{list(in_idx)}: numerical {num:.8g}, analytical {ana:.8g}"
        )
    return head + "\n".join(lines) + "\n"


def jacobian_text(tensors: Tensors, jacobian: numpy.ndarray, like: Any) -> str:
    """A Jacobian printed as torch prints its own (transposed, in `like`'s dtype, on its device)."""
    return tensors.text(jacobian.T, like)


def mismatch_listing(pair: PairReport) -> str:
    """What fast mode adds to torch's text: the entries that disagree, worst first."""
    lines = [f"\nEntries that disagree (worst first, up to {MAX_MISMATCHES}):"]
    for out_idx, in_idx, num, ana in pair.mismatches:
        lines.append(
            f"  output{list(out_idx)} / input{list(in_idx)}: numerical {num:.8g}, analytical {ana:.8g}"
        )
    return "\n".join(lines) + "\n"


def output_count_error(first: int, now: int) -> RuntimeError:
    """A function whose number of outputs changes between calls (torch has no message for it):
    its Jacobian has no fixed shape, so the check cannot go on."""

    def outputs(n: int) -> str:
        return f"{n} output" if n == 1 else f"{n} outputs"

    return RuntimeError(f"the function returned {outputs(first)}, then {outputs(now)}")


def same_shape_error(tensors: Tensors, eps: float, shape: tuple, got: Any) -> AssertionError:
    """torch's error for a function whose output changes shape under perturbation."""
    found = tensors.size_text(tensors.shape(got)) if tensors.is_tensor(got) else type(got).__name__
    return AssertionError(
        "Expected `func` to return outputs with the same shape when inputs are perturbed "
        f"by {eps}, but got: shapes {tensors.size_text(shape)} and {found}."
    )


def perturbed_outputs_error(
    tensors: Tensors, below: Any, above: Any, eps: float, index: tuple | None
) -> AssertionError:
    """torch's error for an output whose shape (checked first) or dtype differs between the
    input moved by -eps and by +eps; full mode names the perturbed element's index."""
    on_index = f"on index {index} " if index is not None else ""
    if tensors.shape(below) != tensors.shape(above):
        what = f"shape when inputs are perturbed {on_index}by {eps}, but got: shapes "
        got = f"{tensors.size_text(tensors.shape(below))} and {tensors.size_text(tensors.shape(above))}"
    else:
        what = f"dtype when inputs are perturbed {on_index}by {eps}, but got: dtypes "
        got = f"{below.dtype} and {above.dtype}"
    return AssertionError(f"Expected `func` to return outputs with the same {what}{got}.")
