"""What a check produces: GradcheckError, the PairReport / GradcheckReport records, and how
failures and user-code exceptions are written into a report."""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import anomaly

if TYPE_CHECKING:
    import numpy

    from .tensors import Tensors

MAX_MISMATCHES = 10  # entries listed in PairReport.mismatches, worst first

# Verdict classes: what a finding means, whichever form it takes (docs/verdicts.md).
PASS = "PASS"
BUG = "BUG"  # analytical and numerical disagree beyond noise, at several step sizes; or backward misbehaves
NOISE = "NOISE"  # disagreed at eps, agree with another step or by Richardson extrapolation: a pass
KINK = "KINK"  # not differentiable within eps (one-sided differences disagree): a pass
RANDOM_FORWARD = "RANDOM FORWARD"  # the forward follows the random numbers it draws
NONDETERMINISTIC_FORWARD = "NONDETERMINISTIC FORWARD"  # changes on the same inputs and random state
NONDETERMINISTIC_BACKWARD = "NONDETERMINISTIC BACKWARD"  # two backwards of the same graph differ
DTYPE = "DTYPE"  # the forward mixes dtypes the check could not make float64
ERROR = "ERROR"  # user code raised, or the case could not be checked
_ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def comparison(order: int, mode: str) -> str:
    """A pair's comparison as JAX's check_grads names it: "VJP", "JVP", "VJP of VJP", "JVP of VJP"
    (order 2 differentiates the first-order gradient, a VJP, in `mode`)."""
    outer = "JVP" if mode == "fwd" else "VJP"
    return outer if order == 1 else f"{outer} of VJP"


class GradcheckError(RuntimeError):
    """Raised by gradcheck / gradgradcheck when a check fails (torch's class of the same name)."""


@dataclass
class PairReport:
    """How one (output, input) Jacobian compared; see the package docstring for the indexing.

    The worst entry is the one with the largest absolute error |num - ana| (NaN first);
    `mismatches` lists the worst few of the `mismatch_count` entries outside the tolerance,
    largest error first. A failing pair keeps its full Jacobians (rows: output entries,
    columns: input entries) for dumps and heatmaps; a passing one keeps none, so memory
    grows with the failures only. In fast mode without a mismatch there are no entries,
    only the projections v^T J u (numerical / analytical) and their difference; a large pair
    that disagrees there is localised by bisection, and its counts are lower bounds. A pair whose
    only mismatches are kinks passes (check_gradients only; see kinks.py).
    """

    output_index: int
    input_index: int
    input_shape: tuple
    output_shape: tuple
    jacobian_shape: tuple
    max_abs_err: float
    max_rel_err: float  # inf where it is undefined: a numerical derivative of 0, an analytical one not
    worst_input_index: tuple | None
    worst_output_index: tuple | None
    numerical: float | None
    analytical: float | None
    mismatches: list
    passed: bool
    order: int = 1
    # "rev": the analytical side is reverse mode (VJPs); "fwd": forward mode (JVPs)
    mode: str = "rev"
    # "VJP", "JVP", "VJP of VJP" or "JVP of VJP": order and mode in JAX's words (set from them)
    comparison: str = field(init=False)
    mismatch_count: int = 0
    # False where entries were located by bisection (bisection.py): mismatch_count and the
    # errors are then lower bounds, and there are no full Jacobians
    mismatch_count_exact: bool = True
    # kinks (kinks.py): entries whose mismatch the function's non-differentiability explains,
    # (output index, input index, numerical, analytical), worst first; not in `mismatches`
    nondifferentiable: list = field(default_factory=list)
    # noise (noise.py): entries that disagreed at eps but agree with another estimate,
    # (output index, input index, numerical, analytical, estimate, how), worst first
    noise: list = field(default_factory=list)
    # what the remaining mismatches were also compared with (noise.py), for BUG's reason
    estimates_tried: list = field(default_factory=list)
    numerical_jacobian: numpy.ndarray | None = field(default=None, repr=False, compare=False)
    analytical_jacobian: numpy.ndarray | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.comparison = comparison(self.order, self.mode)


@dataclass
class GradcheckReport:
    """Everything one `check_gradients` call found: the pairs compared and other failures."""

    passed: bool
    order: int
    mode: str
    device: str
    dtype: str
    upcast: bool
    pairs: list
    problems: list
    elapsed: float
    localized: bool = False
    # the verdict class of each problem (None: user code raised), aligned with `problems`
    problem_kinds: list = field(default_factory=list)
    # a forward that changed between calls (determinism.py): the check stopped before any Jacobian
    forward_drift: Any = None
    # what was not checked and why, not a failure (forward mode a function cannot run under)
    notes: list = field(default_factory=list)

    def __post_init__(self) -> None:
        # torch-style failure texts in the order torch would have raised them; not a field,
        # so dataclasses.asdict (JSON output) leaves it out.
        self._messages: list[str] = []

    def message(self) -> str:
        """The text gradcheck would have raised for the first failure ("" when passed)."""
        if self.passed:
            return ""
        if self._messages:
            return self._messages[0]
        for pair in self.pairs:
            if not pair.passed:
                forward = "computed with forward mode " if pair.mode == "fwd" else ""
                return (
                    f"Jacobian {forward}mismatch for output {pair.output_index:d} with respect to input "
                    f"{pair.input_index:d},\nnumerical:{pair.numerical}\nanalytical:{pair.analytical}\n"
                )
        return self.problems[0] if self.problems else "gradcheck failed"


def empty_report(tensors: Tensors, inputs: tuple, fast_mode: bool, *, upcast: bool) -> GradcheckReport:
    """A passing report, described by the inputs that require grad (device, dtypes)."""
    checked = [a for a in inputs if tensors.is_tensor(a) and a.requires_grad]
    dtypes = list(dict.fromkeys(tensors.dtype_name(a) for a in checked))
    return GradcheckReport(
        passed=True,
        order=1,
        mode="fast" if fast_mode else "full",
        device=str(checked[0].device) if checked else "cpu",
        dtype="/".join(dtypes) if dtypes else "float64",
        upcast=upcast,
        pairs=[],
        problems=[],
        elapsed=0.0,
    )


def record(report: GradcheckReport, problem: str, kind: str | None = None) -> None:
    """A failure found outside a check (its problem text is also its message)."""
    report.passed = False
    report.problems.append(problem)
    report.problem_kinds.append(kind)
    report._messages.append(problem)


#: What user code may raise that a non-strict check reports as a failure: `sys.exit()` in a
#: backward is the user's bug too. KeyboardInterrupt alone stops the check.
USER_ERRORS = (Exception, SystemExit, GeneratorExit)


def message_of(exc: BaseException) -> str:
    """`str(exc)`, or `<unprintable X object>` when the exception's own `__str__` fails."""
    try:
        return str(exc)
    except Exception:  # __str__ raised, or returned a non-string
        return f"<unprintable {type(exc).__name__} object>"


def describe_exception(context: str, exc: BaseException, first_line: bool = False) -> str:
    """'<context> raised Type: message (at file:line)', the line being the user's; `first_line`
    keeps the message's first line (a library's error, whose rest asks to file an issue)."""
    message = message_of(exc)
    if first_line and message:
        message = message.splitlines()[0]
    text = f"{context} raised {type(exc).__name__}" + (f": {message}" if message else "")
    where = _user_frame(exc)
    return f"{text} (at {where})" if where else text


def _user_frame(exc: BaseException) -> str | None:
    """file:line of the innermost traceback frame in the user's code (anomaly.is_internal_file,
    the engine's one rule), else the innermost outside engine/ (a library's)."""
    frames = traceback.extract_tb(exc.__traceback__)
    outside = [f for f in frames if not os.path.abspath(f.filename).startswith(_ENGINE_DIR)]
    preferred = [f for f in outside if not anomaly.is_internal_file(f.filename)]
    chosen = preferred or outside
    return f"{chosen[-1].filename}:{chosen[-1].lineno}" if chosen else None
