"""What one check knows (options, inputs, outputs, cached Jacobians) and how it records failures.

The numerical, analytical, comparison and backward-check functions all take this state;
`Check` (check.py) adds the order in which they run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy

from .report import (
    BUG,
    ERROR,
    MAX_MISMATCHES,
    USER_ERRORS,
    GradcheckError,
    GradcheckReport,
    describe_exception,
)
from .tensors import ENGINE, Tensors


@dataclass(frozen=True)
class Options:
    eps: float
    atol: float
    rtol: float
    nondet_tol: float
    check_undefined_grad: bool
    fast_mode: bool
    check_grad_dtypes: bool = False
    check_forward_ad: bool = False  # compare forward mode's Jacobians (forward.py)
    check_backward_ad: bool = True  # compare reverse mode's
    check_batched_grad: bool = False  # reverse mode's gradients of a batch through vmap (batched_checks.py)
    check_batched_forward_grad: bool = False  # forward mode's, likewise
    max_mismatches: int = MAX_MISMATCHES  # entries a PairReport lists, largest error first


class Reference(NamedTuple):
    """Where the numerical side of a check is computed, when not where the analytical one is.

    `func` at `inputs` (one per input of the check, in the same order: float64 copies, say)
    gives the outputs whose finite differences are the numerical Jacobians; the inputs
    perturbed are these copies, each standing for the check's input at the same position.
    `scope()`, if given, is a context manager entered around each of its calls (at order 2,
    around the whole first-order gradient, backward included): where the caller makes what
    `func` reads match `inputs` (float64 parameters, say). The analytical Jacobians stay
    those of the check's own function and inputs.
    """

    func: Callable
    inputs: tuple
    scope: Callable[[], Any] | None = None

    def scoped(self) -> Callable:
        """`func`, each call inside `scope()`."""
        if self.scope is None:
            return self.func
        func, scope = self.func, self.scope

        def within(*args: Any) -> Any:
            with scope():
                return func(*args)

        return within


class Abort(Exception):
    """Ends the current check: a failure that makes the rest of it meaningless was recorded."""


class CheckState:
    """One gradcheck of `func` at `inputs`, writing pairs and failures into `report`.

    `strict` is gradcheck's behaviour: raise at the first failure (GradcheckError) and let
    exceptions from user code propagate. Otherwise failures are recorded and the check
    goes on with whatever does not depend on the failed step.

    Outputs and inputs are addressed by rank (torch's numbering: among differentiable
    outputs / inputs requiring grad); `outputs` and `diff_inputs` pair each with its
    position in the output / input tuple. `tensors` is the tensor library (tensors.py).
    `reference` moves the numerical side to another function and inputs (see Reference).
    """

    def __init__(
        self,
        func,
        inputs: tuple,
        opts: Options,
        report: GradcheckReport,
        *,
        order: int,
        strict: bool,
        tensors: Tensors = ENGINE,
        progress: Callable[[int, int], None] | None = None,
        reference: Reference | None = None,
    ):
        self.func = func
        self.inputs = inputs
        # the numerical side (numerical.py, batched.py): the reference's function and inputs, if any
        self.reference = reference
        self.numerical_func = func if reference is None else reference.scoped()
        self.numerical_inputs = inputs if reference is None else reference.inputs
        self._twins = {} if reference is None else {id(a): b for a, b in zip(inputs, reference.inputs)}
        self.opts = opts
        self.report = report
        self.order = order
        self.strict = strict
        self.tensors = tensors
        self.diff_inputs = [(i, a) for i, a in enumerate(inputs) if tensors.is_tensor(a) and a.requires_grad]
        self.outputs: list[tuple[int, Any]] = []  # (position, tensor) of differentiable outputs
        self.output_count: int | None = None  # how many outputs the first forward returned
        self.forward_ran = False
        self.backward_failed = False
        self.numerics_need_grad = False
        self.numerical_cache: dict[int, list[numpy.ndarray]] = {}  # by input rank
        self.centre_cache: list[numpy.ndarray] | None = None  # numerical.centre_values
        self.analytical_cache: dict[int, list[numpy.ndarray | None]] = {}  # by output rank
        self.forward_cache: dict[int, list[numpy.ndarray]] = {}  # forward mode's, by input rank
        self.kink_cache: dict[tuple[int, int], list[numpy.ndarray] | None] = {}  # by (input rank, element)
        self.noise_cache: dict[tuple[int, int], list[numpy.ndarray] | None] = {}  # likewise
        self.progress = progress
        self.columns_done = 0

    def numerical_twin(self, t: Any) -> Any:
        """The tensor the numerical side perturbs for input `t` (t itself without a reference)."""
        return self._twins.get(id(t), t)

    def column_done(self) -> None:
        """One input element perturbed: `progress(done, total)` over the elements of every input."""
        if self.progress is not None:
            self.columns_done += 1
            self.progress(self.columns_done, sum(self.tensors.numel(t) for _, t in self.diff_inputs))

    def fail(self, message: str, problem: str | None = None, kind: str | None = BUG) -> None:
        """Record a failure (problem: text for report.problems, kind: its verdict class, None for an
        error in user code); strict mode raises it."""
        self.report.passed = False
        self.report._messages.append(message)
        if problem is not None:
            self.report.problems.append(self.label(problem))
            self.report.problem_kinds.append(kind)
        if self.strict:
            raise GradcheckError(message)

    def error(self, exc: Exception) -> None:
        """A failure torch reports with another exception type (bad inputs, bad outputs)."""
        if self.strict:
            raise exc
        self.fail(str(exc), str(exc), kind=ERROR)
        raise Abort

    def user(self, context: str, fn: Callable, *args, **kwargs):
        """Call into user code: strict mode lets its exceptions through, else they are recorded."""
        try:
            return fn(*args, **kwargs)
        except USER_ERRORS as exc:
            if self.strict:
                raise
            text = describe_exception(context, exc)
            self.fail(text, text, kind=ERROR)
            raise Abort from exc

    def label(self, problem: str) -> str:
        return problem if self.order == 1 else f"second order: {problem}"
