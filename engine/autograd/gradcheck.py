"""gradcheck / gradgradcheck: PyTorch's finite-difference checks, plus a structured report.

`gradcheck` and `gradgradcheck` keep torch.autograd's signatures, order of checks and
messages (they return True or raise `GradcheckError`). `check_gradients` runs the same
checks without stopping at the first failure and never raises for errors in user code:
everything it finds goes into a `GradcheckReport`, which the CLI renders.

How a check runs (one `_Check` per order):

- Full mode compares the whole Jacobian of every (differentiable output, input requiring
  grad) pair. Numerically: central differences, perturbing one input element at a time
  in place through the tensor's array (no version bump, so the graph of the reference
  forward stays valid) and restoring it bit for bit; the forwards run under `no_grad`
  unless the function needs grad mode for its values (e.g. it calls autograd.grad).
  Analytically: one vector-Jacobian product per output element, run twice to check that
  backward is deterministic.
- Fast mode compares v^T J u for random unit vectors u (per input) and v (per output):
  two forwards per input and one backward per output. A pair that disagrees is
  localised: its full Jacobians are computed and the entries that disagree reported.
- Then, as in torch, backward with zero grad_outputs must give zero gradients of the
  inputs' shapes and dtypes, and (check_undefined_grad) undefined output gradients must
  not break backward: every output undefined (custom Functions that don't materialise
  grads are called with None, as torch's engine would), then one output at a time.

Jacobians are (output numel, input numel) float64 numpy arrays. Messages number outputs
and inputs as torch does (among differentiable outputs / inputs requiring grad), while
`PairReport` indices are positions in the output and input tuples.
"""

from __future__ import annotations

import math
import os
import sys
import sysconfig
import time
import traceback
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy

from .. import backend
from ..tensor import Tensor, wrap
from . import grad_mode
from .backward import grad as autograd_grad
from .backward import run as run_graph
from .function import BackwardCFunction
from .node import edge_of

__all__ = [
    "GradcheckError",
    "GradcheckReport",
    "PairReport",
    "check_gradients",
    "gradcheck",
    "gradgradcheck",
]

# ------------------------------------------------------------------------ torch's messages

NON_DOUBLE_WARNING = (
    "Input #{idx} requires gradient and is not a double precision floating point or complex. "
    "This check will likely fail if all the inputs are not of double precision floating point "
    "or complex. "
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

_FAST_MODE_SEED = 67280421310721  # torch.Generator's default seed: fixed, so reruns agree
_GRAD_OUTPUTS_SEED = 0
_MAX_MISMATCHES = 10
_TINY = numpy.finfo(numpy.float64).tiny
_ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIBRARY_DIRS = tuple(
    {os.path.abspath(sysconfig.get_paths()[key]) + os.sep for key in ("stdlib", "purelib", "platlib")}
)


# ------------------------------------------------------------------------------ results


class GradcheckError(RuntimeError):
    """Raised by gradcheck / gradgradcheck when a check fails (torch's class of the same name)."""


@dataclass
class PairReport:
    """How one (output, input) Jacobian compared; see the module docstring for the indexing.

    The worst entry is the one furthest outside its tolerance, |num - ana| / (atol +
    rtol |num|); in fast mode without a mismatch there are no entries, only the projections
    v^T J u (numerical / analytical) and their difference.
    """

    output_index: int
    input_index: int
    input_shape: tuple
    output_shape: tuple
    jacobian_shape: tuple
    max_abs_err: float
    max_rel_err: float
    worst_input_index: tuple | None
    worst_output_index: tuple | None
    numerical: float | None
    analytical: float | None
    mismatches: list
    passed: bool
    order: int = 1


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
                return (
                    f"Jacobian mismatch for output {pair.output_index:d} with respect to input "
                    f"{pair.input_index:d},\nnumerical:{pair.numerical}\nanalytical:{pair.analytical}\n"
                )
        return self.problems[0] if self.problems else "gradcheck failed"


@dataclass(frozen=True)
class _Options:
    eps: float
    atol: float
    rtol: float
    nondet_tol: float
    check_undefined_grad: bool
    fast_mode: bool
    check_grad_dtypes: bool = False


class _Abort(Exception):
    """Ends the current check: a failure that makes the rest of it meaningless was recorded."""


# -------------------------------------------------------------------------- public API


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
) -> bool:
    """torch.autograd.gradcheck: True, or GradcheckError (False with raise_exception=False).

    As in torch, errors raised by `func` or its backward, and invalid inputs, propagate
    as they are whatever `raise_exception` says.
    """
    tupled = _as_tuple(inputs)
    _warn_non_double(tupled)
    opts = _Options(eps, atol, rtol, nondet_tol, check_undefined_grad, fast_mode, check_grad_dtypes)
    report = _empty_report(tupled, fast_mode, upcast=False)
    try:
        _Check(func, tupled, opts, report, order=1, strict=True).run()
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
) -> bool:
    """torch.autograd.gradgradcheck: gradcheck of (inputs, grad_outputs) -> first-order grads.

    Random grad_outputs (uniform in [-1, 1), requiring grad) come from a fixed-seed
    generator, so the user's random state is untouched and reruns agree.
    """
    new_func, new_inputs = _gradgrad_problem(
        func, _as_tuple(inputs), grad_outputs, gen_non_contig_grad_outputs
    )
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
) -> GradcheckReport:
    """Run gradcheck (and with order=2 gradgradcheck) and report everything it finds.

    Never raises for errors in user code. With `upcast`, inputs requiring grad in a lower
    precision are checked as float64 copies (fresh leaves, same requires_grad) instead of
    warning that the check will likely fail; the caller's tensors are not touched.
    """
    if order not in (1, 2):
        raise ValueError(f"order must be 1 or 2, got {order!r}")
    start = time.perf_counter()
    tupled = _as_tuple(inputs)
    upcasting = upcast and _needs_upcast(tupled)
    if upcasting:
        tupled = _float64_copies(tupled)
    else:
        _warn_non_double(tupled)
    opts = _Options(eps, atol, rtol, nondet_tol, check_undefined_grad, fast_mode)
    report = _empty_report(tupled, fast_mode, upcast=upcasting)
    first = _Check(func, tupled, opts, report, order=1, strict=False)
    _run_collecting(first)
    if order == 2 and first.forward_ran:
        report.order = 2
        try:
            new_func, new_inputs = _gradgrad_problem(func, tupled, None, False)
        except Exception as exc:
            _record(report, _describe_exception("second order: forward (making grad_outputs)", exc))
        else:
            _run_collecting(_Check(new_func, new_inputs, opts, report, order=2, strict=False))
    report.pairs.sort(key=lambda p: (p.order, p.output_index, p.input_index))
    report.elapsed = time.perf_counter() - start
    return report


# ------------------------------------------------------------------------ one check


class _Check:
    """One gradcheck of `func` at `inputs`, writing pairs and failures into `report`.

    `strict` is gradcheck's behaviour: raise at the first failure (GradcheckError) and let
    exceptions from user code propagate. Otherwise failures are recorded and the check
    goes on with whatever does not depend on the failed step.
    """

    def __init__(
        self, func, inputs: tuple, opts: _Options, report: GradcheckReport, *, order: int, strict: bool
    ):
        self.func = func
        self.inputs = inputs
        self.opts = opts
        self.report = report
        self.order = order
        self.strict = strict
        self.diff_inputs = [(i, a) for i, a in enumerate(inputs) if isinstance(a, Tensor) and a.requires_grad]
        self.outputs: list[tuple[int, Tensor]] = []  # (position, tensor) of differentiable outputs
        self.forward_ran = False
        self.backward_failed = False
        self.numerics_need_grad = False
        self._numerical: dict[int, list[numpy.ndarray]] = {}
        self._analytical: dict[int, list[numpy.ndarray | None]] = {}

    # -- running ------------------------------------------------------------------------
    def run(self) -> None:
        """torch's order: inputs, forward, Jacobians, zero grad_outputs, undefined grads."""
        self._validate_inputs()
        out = self._user("forward", self.func, *self.inputs)
        self.forward_ran = True
        outs = _as_tuple(out)
        if not any(isinstance(o, Tensor) for o in outs):
            self._error(
                TypeError(
                    f"gradcheck expects func to return a Tensor or a tuple of Tensors, got {type(out).__name__}"
                )
            )
        self.outputs = [(k, o) for k, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
        float_outputs = [
            (k, o) for k, o in enumerate(outs) if isinstance(o, Tensor) and o.dtype.is_floating_point
        ]
        self.numerics_need_grad = self._numerics_need_grad(float_outputs)
        if not self.outputs:
            self._check_numerical_is_zero(float_outputs)
            return
        if self.opts.fast_mode:
            self._fast_mode()
        else:
            self._full_mode()
        if not self.backward_failed:
            self._check_zero_grad_outputs()
            if self.opts.check_undefined_grad:
                self._check_undefined_grads()

    def _validate_inputs(self) -> None:
        """torch's _check_inputs: something must require grad; no stride-0 (expanded) input."""
        for idx, t in self.diff_inputs:
            array = t._data
            if array.size > 1 and any(st == 0 and n > 1 for st, n in zip(array.strides, array.shape)):
                self._error(RuntimeError(STRIDE_ZERO.format(idx=idx)))
        if not self.diff_inputs:
            self._error(ValueError(NO_INPUT_REQUIRES_GRAD))

    def _full_mode(self) -> None:
        """Every entry of every Jacobian: numerical for all inputs first, then per output."""
        numerical = [self._numerical_jacobians(rank) for rank in range(len(self.diff_inputs))]
        for out_rank in range(len(self.outputs)):
            try:
                analytical = self._checked_analytical(out_rank)
            except _Abort:
                continue
            for in_rank, ana in enumerate(analytical):
                if ana is not None:
                    self._compare_full(out_rank, in_rank, numerical[in_rank][out_rank], ana)

    def _fast_mode(self) -> None:
        """v^T J u per pair (torch's fast mode); a pair that disagrees is localised."""
        rng = numpy.random.default_rng(_FAST_MODE_SEED)
        us = [_unit_vector(rng, t._data.size) for _, t in self.diff_inputs]
        vs = [_unit_vector(rng, o._data.size) for _, o in self.outputs]
        numerical = [
            [float(v @ ju) for v, ju in zip(vs, self._numerical_jvps(pos, t, u, self.outputs))]
            for (pos, t), u in zip(self.diff_inputs, us)
        ]
        analytical = []
        for out_rank, v in enumerate(vs):
            try:
                vjps = self._checked_vjps(out_rank, lambda v=v: [v], 1)
            except _Abort:
                analytical.append(None)
                continue
            analytical.append([None if vj is None else float(vj[0] @ u) for vj, u in zip(vjps, us)])
        for in_rank, u in enumerate(us):
            for out_rank, v in enumerate(vs):
                if analytical[out_rank] is None or analytical[out_rank][in_rank] is None:
                    continue
                atol = self.opts.atol * float(u.sum()) * float(v.sum())
                self._compare_fast(
                    out_rank, in_rank, numerical[in_rank][out_rank], analytical[out_rank][in_rank], atol
                )

    # -- failures -----------------------------------------------------------------------
    def _fail(self, message: str, problem: str | None = None) -> None:
        """Record a failure (problem: text for report.problems); strict mode raises it."""
        self.report.passed = False
        self.report._messages.append(message)
        if problem is not None:
            self.report.problems.append(self._label(problem))
        if self.strict:
            raise GradcheckError(message)

    def _error(self, exc: Exception) -> None:
        """A failure torch reports with another exception type (bad inputs, bad outputs)."""
        if self.strict:
            raise exc
        self._fail(str(exc), str(exc))
        raise _Abort

    def _user(self, context: str, fn: Callable, *args, **kwargs):
        """Call into user code: strict mode lets its exceptions through, else they are recorded."""
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if self.strict:
                raise
            text = _describe_exception(context, exc)
            self._fail(text, text)
            raise _Abort from exc

    def _label(self, problem: str) -> str:
        return problem if self.order == 1 else f"second order: {problem}"

    # -- numerical ----------------------------------------------------------------------
    def _numerics_need_grad(self, reference: list[tuple[int, Tensor]]) -> bool:
        """Whether the numerical forwards must run in grad mode.

        no_grad forwards are cheaper, but a function that differentiates internally (as
        gradgradcheck's does) needs grad mode for its values: if a no_grad forward fails or
        gives other values than the reference forward, grad mode is used.
        """
        try:
            with grad_mode.no_grad():
                outs = _as_tuple(self.func(*self.inputs))
            for k, ref in reference:
                other = outs[k]
                if not isinstance(other, Tensor) or not numpy.array_equal(
                    _host(other._data), _host(ref._data), equal_nan=True
                ):
                    return True
        except Exception:
            return True
        return False

    def _forward_mode(self):
        return grad_mode.enable_grad() if self.numerics_need_grad else grad_mode.no_grad()

    def _evaluator(self, outputs: list[tuple[int, Tensor]]) -> Callable:
        """f(buffers, row): one forward at the current inputs, output k's values into buffers[k][row].

        This runs once per perturbation, so it does no more than it must: buffers are
        shaped (rows, *output shape) to take the values without a reshape.
        """
        func, inputs = self.func, self.inputs
        specs = [(k, o._data.shape) for k, o in outputs]
        check = self._same_shape_error

        def evaluate(buffers: list[numpy.ndarray], row: int) -> None:
            outs = func(*inputs)
            if isinstance(outs, Tensor) and len(specs) == 1 and specs[0][0] == 0:
                data = outs._data
                if data.shape != specs[0][1]:
                    raise check(specs[0][1], outs)
                buffers[0][row] = _host(data)
                return
            outs = _as_tuple(outs)
            for (k, shape), buf in zip(specs, buffers):
                o = outs[k] if k < len(outs) else None
                if not isinstance(o, Tensor) or o._data.shape != shape:
                    raise check(shape, o)
                buf[row] = _host(o._data)

        return evaluate

    def _same_shape_error(self, shape: tuple, got: Any) -> AssertionError:
        """torch's error for a function whose output changes shape under perturbation."""
        found = _size(got._data.shape) if isinstance(got, Tensor) else type(got).__name__
        return AssertionError(
            "Expected `func` to return outputs with the same shape when inputs are perturbed "
            f"by {self.opts.eps}, but got: shapes {_size(shape)} and {found}."
        )

    def _numerical_jacobians(self, in_rank: int) -> list[numpy.ndarray]:
        """The numerical Jacobians of every differentiable output wrt one input (computed once)."""
        cached = self._numerical.get(in_rank)
        if cached is None:
            pos, tensor = self.diff_inputs[in_rank]
            cached = self._numerical[in_rank] = self._central_differences(pos, tensor, self.outputs)
        return cached

    def _central_differences(
        self, pos: int, tensor: Tensor, outputs: list[tuple[int, Tensor]]
    ) -> list[numpy.ndarray]:
        """Central differences wrt each element of one input: a Jacobian per output.

        Each element is set to x - eps and x + eps in the input's own array (so views and
        the reference graph see it, and no version counter moves) and set back to its saved
        bits; the whole array is restored once more at the end, even when func raises.
        """
        array = tensor._data
        n = array.size
        minus = [numpy.empty((n, *o._data.shape)) for _, o in outputs]
        plus = [numpy.empty((n, *o._data.shape)) for _, o in outputs]
        saved = array.copy()
        original = saved.reshape(-1)
        flat = array.reshape(-1) if array.flags.c_contiguous else None
        index = range(n) if flat is not None else list(numpy.ndindex(array.shape))
        target = flat if flat is not None else array
        evaluate = self._evaluator(outputs)
        eps = self.opts.eps
        try:
            with self._forward_mode():
                for row, idx in enumerate(index):
                    x0 = original[row]
                    target[idx] = x0 - eps
                    evaluate(minus, row)
                    target[idx] = x0 + eps
                    evaluate(plus, row)
                    target[idx] = x0
        except Exception as exc:
            self._numerical_failed(pos, exc)
        finally:
            array[...] = saved
        return [
            ((p - m) / (2 * eps)).reshape(n, o._data.size).T for p, m, (_, o) in zip(plus, minus, outputs)
        ]

    def _numerical_jvps(
        self, pos: int, tensor: Tensor, u: numpy.ndarray, outputs: list[tuple[int, Tensor]]
    ) -> list[numpy.ndarray]:
        """J u per output by central differences along u (fast mode: two forwards)."""
        array = tensor._data
        step = backend.xp_of(array).asarray((self.opts.eps * u).reshape(array.shape))
        minus = [numpy.empty((1, *o._data.shape)) for _, o in outputs]
        plus = [numpy.empty((1, *o._data.shape)) for _, o in outputs]
        saved = array.copy()
        evaluate = self._evaluator(outputs)
        try:
            with self._forward_mode():
                array[...] = saved - step
                evaluate(minus, 0)
                array[...] = saved + step
                evaluate(plus, 0)
        except Exception as exc:
            self._numerical_failed(pos, exc)
        finally:
            array[...] = saved
        return [((p - m) / (2 * self.opts.eps)).reshape(-1) for p, m in zip(plus, minus)]

    def _numerical_failed(self, pos: int, exc: Exception) -> None:
        if self.strict:
            raise exc
        text = _describe_exception(f"forward (numerical, perturbing input {pos})", exc)
        self._fail(text, text)
        raise _Abort from exc

    def _check_numerical_is_zero(self, float_outputs: list[tuple[int, Tensor]]) -> None:
        """No differentiable output: the function must then be numerically constant (torch)."""
        if not float_outputs:
            return
        rng = numpy.random.default_rng(_FAST_MODE_SEED)
        for pos, t in self.diff_inputs:
            if self.opts.fast_mode:
                jvps = self._numerical_jvps(pos, t, _unit_vector(rng, t._data.size), float_outputs)
                bad = any(j.size and numpy.abs(j).max() > self.opts.nondet_tol for j in jvps)
            else:
                bad = any(numpy.any(j != 0) for j in self._central_differences(pos, t, float_outputs))
            if bad:
                self._fail(NUMERICAL_NOT_ZERO, f"{NUMERICAL_NOT_ZERO} (no output requires grad)")
                return

    # -- analytical ---------------------------------------------------------------------
    def _vjps(self, out_rank: int, seeds: Iterable[numpy.ndarray], rows: int):
        """One backward per seed (a flat grad_output); row r of each input's matrix is its VJP.

        Returns (matrices, wrong_shape, wrong_dtype): an input never reached keeps zero rows;
        gradients of the wrong shape are left out and named in wrong_shape.
        """
        pos, output = self.outputs[out_rank]
        tensors = [t for _, t in self.diff_inputs]
        matrices = [numpy.zeros((rows, t._data.size)) for t in tensors]
        wrong_shape: dict[int, tuple] = {}
        wrong_dtype: dict[int, Any] = {}
        xp = backend.xp_of(output._data)
        for r, seed in enumerate(seeds):
            grad_output = wrap(xp.array(seed.reshape(output._data.shape), dtype=output._data.dtype))
            try:
                grads = self._user(
                    f"backward of output {pos}",
                    autograd_grad,
                    output,
                    tensors,
                    grad_output,
                    retain_graph=True,
                    allow_unused=True,
                )
            except _Abort:
                self.backward_failed = True
                raise
            for j, (g, t) in enumerate(zip(grads, tensors)):
                if g is None:
                    continue
                if g._data.shape != t._data.shape:
                    wrong_shape[j] = tuple(g.shape)
                    continue
                if g.dtype is not t.dtype:
                    wrong_dtype[j] = g.dtype
                matrices[j][r] = _host(g._data).reshape(-1)
        return matrices, wrong_shape, wrong_dtype

    def _basis(self, out_rank: int) -> Iterable[numpy.ndarray]:
        """The unit grad_outputs e_0, e_1, ... of one output (one row of J each)."""
        n = self.outputs[out_rank][1]._data.size
        for r in range(n):
            seed = numpy.zeros(n)
            seed[r] = 1.0
            yield seed

    def _checked_analytical(self, out_rank: int) -> list[numpy.ndarray | None]:
        """The full analytical Jacobians of one output, with torch's attribute checks."""
        n = self.outputs[out_rank][1]._data.size
        jacobians = self._checked_vjps(out_rank, lambda: self._basis(out_rank), n)
        self._analytical[out_rank] = jacobians
        return jacobians

    def _checked_vjps(
        self, out_rank: int, seeds: Callable[[], Iterable[numpy.ndarray]], rows: int
    ) -> list[numpy.ndarray | None]:
        """VJPs computed twice (torch's reentrancy check), then its dtype / size checks.

        Returns one matrix per input requiring grad, None where the gradient had the wrong size.
        """
        first, wrong_shape, wrong_dtype = self._vjps(out_rank, seeds(), rows)
        second, _, _ = self._vjps(out_rank, seeds(), rows)
        pos = self.outputs[out_rank][0]
        if wrong_dtype and self.opts.check_grad_dtypes:
            details = ", ".join(f"input {self.diff_inputs[j][0]} got {d}" for j, d in wrong_dtype.items())
            self._fail("Gradient has dtype mismatch", f"Gradient has dtype mismatch ({details})")
        if wrong_shape:
            details = ", ".join(
                f"input {self.diff_inputs[j][0]} expected {tuple(self.diff_inputs[j][1].shape)}, got {s}"
                for j, s in wrong_shape.items()
            )
            self._fail(
                "Analytical gradient has incorrect size",
                f"Analytical gradient has incorrect size (backward of output {pos}: {details})",
            )
        for j, (a, b) in enumerate(zip(first, second)):
            spread = _max_abs(a - b)
            if spread > self.opts.nondet_tol:
                message = NOT_REENTRANT.format(nondet_tol=self.opts.nondet_tol)
                detail = (
                    f" (output {pos} with respect to input {self.diff_inputs[j][0]}: "
                    f"two runs differ by up to {spread:.6g})"
                )
                self._fail(message + FAILED_NONDET_MSG, message + detail)
                break
        return [None if j in wrong_shape else m for j, m in enumerate(first)]

    def _full_analytical(self, out_rank: int) -> list[numpy.ndarray | None]:
        """The full analytical Jacobians of one output, once (for localising fast mode)."""
        cached = self._analytical.get(out_rank)
        if cached is None:
            n = self.outputs[out_rank][1]._data.size
            matrices, wrong_shape, _ = self._vjps(out_rank, self._basis(out_rank), n)
            cached = [None if j in wrong_shape else m for j, m in enumerate(matrices)]
            self._analytical[out_rank] = cached
        return cached

    # -- comparing ----------------------------------------------------------------------
    def _compare_full(
        self, out_rank: int, in_rank: int, num: numpy.ndarray, ana: numpy.ndarray
    ) -> PairReport:
        pair = self._pair(out_rank, in_rank, num, ana)
        self.report.pairs.append(pair)
        if not pair.passed:
            self._fail(self._mismatch_message(out_rank, in_rank, num, ana))
        return pair

    def _compare_fast(self, out_rank: int, in_rank: int, num: float, ana: float, atol: float) -> None:
        """torch's fast-mode comparison; on a mismatch the pair's full Jacobians replace it."""
        if numpy.isclose(ana, num, rtol=self.opts.rtol, atol=atol):
            self.report.pairs.append(self._fast_pair(out_rank, in_rank, num, ana))
            return
        self._localize(out_rank, in_rank, num, ana)

    def _localize(self, out_rank: int, in_rank: int, fast_num: float, fast_ana: float) -> None:
        """Full mode for one pair that failed in fast mode: the entries that disagree."""
        try:
            num = self._numerical_jacobians(in_rank)[out_rank]
            ana = self._full_analytical(out_rank)[in_rank]
        except _Abort:
            return
        if ana is None:  # a gradient of the wrong size: already reported
            return
        self.report.localized = True
        pair = self._pair(out_rank, in_rank, num, ana)
        self.report.pairs.append(pair)
        message = (
            f"Jacobian mismatch for output {out_rank:d} with respect to input {in_rank:d},\n"
            f"numerical:{fast_num}\nanalytical:{fast_ana}\n"
            + FAST_MODE_NOTE
            + f"Numerical:\n {self._jacobian_text(num, self.outputs[out_rank][1])}\n"
            + f"Analytical:\n{self._jacobian_text(ana, self.diff_inputs[in_rank][1])}\n\n"
            + f"The max per-element difference (slow mode) is: {_max_abs(num - ana)}.\n"
        )
        if pair.passed:
            message += FAST_FAIL_SLOW_OK_MSG
            problem = (
                f"fast mode: v^T J u mismatch for output {pair.output_index} with respect to input "
                f"{pair.input_index} (numerical {fast_num:.6g}, analytical {fast_ana:.6g}), but every "
                "Jacobian entry is within tolerance: full mode would pass"
            )
        else:
            message += _mismatch_listing(pair)
            problem = None
        self._fail(message, problem)

    def _pair(self, out_rank: int, in_rank: int, num: numpy.ndarray, ana: numpy.ndarray) -> PairReport:
        (out_pos, out), (in_pos, inp) = self.outputs[out_rank], self.diff_inputs[in_rank]
        return _pair_report(
            num, ana, out_pos, in_pos, tuple(out._data.shape), tuple(inp._data.shape), self.opts, self.order
        )

    def _fast_pair(self, out_rank: int, in_rank: int, num: float, ana: float) -> PairReport:
        """A pair known only through v^T J u: no entries, the projections as its values."""
        (out_pos, out), (in_pos, inp) = self.outputs[out_rank], self.diff_inputs[in_rank]
        err = abs(num - ana)
        return PairReport(
            output_index=out_pos,
            input_index=in_pos,
            input_shape=tuple(inp._data.shape),
            output_shape=tuple(out._data.shape),
            jacobian_shape=(out._data.size, inp._data.size),
            max_abs_err=err,
            max_rel_err=0.0 if err == 0 else err / max(abs(num), _TINY),
            worst_input_index=None,
            worst_output_index=None,
            numerical=num,
            analytical=ana,
            mismatches=[],
            passed=True,
            order=self.order,
        )

    def _mismatch_message(self, out_rank: int, in_rank: int, num: numpy.ndarray, ana: numpy.ndarray) -> str:
        """torch's text: the Jacobians printed as (input numel, output numel) tensors."""
        return (
            f"Jacobian mismatch for output {out_rank:d} with respect to input {in_rank:d},\n"
            f"numerical:{self._jacobian_text(num, self.outputs[out_rank][1])}\n"
            f"analytical:{self._jacobian_text(ana, self.diff_inputs[in_rank][1])}\n"
        )

    @staticmethod
    def _jacobian_text(jacobian: numpy.ndarray, like: Tensor) -> str:
        """A Jacobian printed as torch prints its own (transposed, in `like`'s dtype)."""
        return repr(wrap(numpy.ascontiguousarray(jacobian.T).astype(like._data.dtype)))

    # -- torch's backward-mode extras ----------------------------------------------------
    def _check_zero_grad_outputs(self) -> None:
        """Zero grad_outputs must give zero gradients of the inputs' dtypes and shapes."""
        outputs = [o for _, o in self.outputs]
        zeros = [wrap(backend.xp_of(o._data).zeros_like(o._data)) for o in outputs]
        tensors = [t for _, t in self.diff_inputs]
        try:
            grads = self._user(
                "backward with zero grad_outputs",
                autograd_grad,
                outputs,
                tensors,
                zeros,
                retain_graph=True,
                allow_unused=True,
            )
        except _Abort:
            return
        for (pos, t), g in zip(self.diff_inputs, grads):
            if g is None:
                continue
            if numpy.any(_host(g._data) != 0):
                self._fail(
                    "backward not multiplied by grad_output",
                    f"backward not multiplied by grad_output (zero grad_outputs gave a nonzero gradient for input {pos})",
                )
            elif g.dtype is not t.dtype:
                self._fail(
                    "grad is incorrect type",
                    f"grad is incorrect type (input {pos} is {t.dtype.name}, its gradient {g.dtype.name})",
                )
            elif g._data.shape != t._data.shape:
                self._fail(
                    "grad is incorrect size",
                    f"grad is incorrect size (input {pos} has shape {tuple(t.shape)}, its gradient {tuple(g.shape)})",
                )

    def _check_undefined_grads(self) -> None:
        """torch's check that backward copes with undefined (None) output gradients.

        First every output undefined, then (with several outputs) one at a time, the others
        zero. Backward must not fail and must give gradients that are None or zero.
        """
        self._undefined_everywhere()
        if len(self.outputs) < 2:
            return
        roots = [edge_of(o) for _, o in self.outputs]
        tensors = tuple(t for _, t in self.diff_inputs)
        for undefined, (pos, _) in enumerate(self.outputs):
            # autograd.grad has no way to pass an undefined grad_output: drive the executor.
            grads = [
                None if k == undefined else backend.xp_of(o._data).zeros_like(o._data)
                for k, (_, o) in enumerate(self.outputs)
            ]
            context = f"backward with the gradient of output {pos} undefined"
            try:
                captured = run_graph(roots, grads, True, False, inputs=tensors, capture=True)
            except Exception as exc:
                self._undefined_failed(context, exc)
                return
            if not self._undefined_gave_zeros(captured, context):
                return

    def _undefined_everywhere(self) -> None:
        """Every output gradient undefined, as torch runs it.

        The engine never calls a node whose gradients are all undefined, where torch calls
        it with None for custom Functions that set_materialize_grads(False) (and zeros for
        the others, whose results are then defined). Those backwards are called directly,
        walking the graph as far as undefined gradients would reach.
        """
        stack = [o.grad_fn for _, o in self.outputs if o.grad_fn is not None]
        seen: set = set()
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            if isinstance(node, BackwardCFunction):
                if node.materialize_grads:
                    continue  # it gets zeros: defined gradients from here on
                context = f"{node.name()}.backward with every output gradient undefined"
                try:
                    with grad_mode.no_grad():
                        result = type(node)._forward_cls.backward(node, *([None] * node.num_outputs))
                except Exception as exc:
                    self._undefined_failed(context, exc)
                    return
                result = [r for r in _as_tuple(result) if r is not None]
                if result:
                    if not self._undefined_gave_zeros(result, context):
                        return
                    continue
            stack.extend(child for child, _ in node.next_functions if child is not None)

    def _undefined_failed(self, context: str, exc: Exception) -> None:
        """torch turns a RuntimeError here into its message and lets other errors through."""
        if self.strict:
            if isinstance(exc, RuntimeError):
                warnings.warn(UNDEFINED_GRAD_BC_WARNING, UserWarning, stacklevel=_stacklevel_outside())
                raise GradcheckError(UNDEFINED_GRAD_FAILED) from exc
            raise exc
        self._fail(UNDEFINED_GRAD_FAILED, f"{UNDEFINED_GRAD_FAILED}: {_describe_exception(context, exc)}")

    def _undefined_gave_zeros(self, grads: Iterable, context: str) -> bool:
        for g in grads:
            if g is not None and numpy.any(_values(g) != 0):
                if self.strict:
                    warnings.warn(UNDEFINED_GRAD_BC_WARNING, UserWarning, stacklevel=_stacklevel_outside())
                self._fail(UNDEFINED_GRAD_NONZERO, f"{UNDEFINED_GRAD_NONZERO} ({context})")
                return False
        return True


# ------------------------------------------------------------------------------ helpers


def _pair_report(
    num: numpy.ndarray,
    ana: numpy.ndarray,
    output_index: int,
    input_index: int,
    output_shape: tuple,
    input_shape: tuple,
    opts: _Options,
    order: int,
) -> PairReport:
    """Compare two Jacobians entry by entry, vectorised, as torch.allclose(ana, num) does.

    The worst entry is the one furthest outside its tolerance, |num - ana| / (atol +
    rtol |num|) (NaN counts as infinitely far), and mismatches are listed worst first.
    """
    m, n = num.shape
    where = dict(
        output_index=output_index,
        input_index=input_index,
        input_shape=input_shape,
        output_shape=output_shape,
        jacobian_shape=(m, n),
        order=order,
    )
    if num.size == 0:
        return PairReport(
            **where,
            max_abs_err=0.0,
            max_rel_err=0.0,
            worst_input_index=None,
            worst_output_index=None,
            numerical=None,
            analytical=None,
            mismatches=[],
            passed=True,
        )
    close = numpy.isclose(ana, num, rtol=opts.rtol, atol=opts.atol)
    with numpy.errstate(all="ignore"):
        diff = numpy.where(num == ana, 0.0, numpy.abs(num - ana))
        rel = numpy.where(diff == 0, 0.0, diff / numpy.maximum(numpy.abs(num), _TINY))
        score = numpy.where(diff == 0, 0.0, diff / (opts.atol + opts.rtol * numpy.abs(num)))
    score = numpy.where(numpy.isnan(score), numpy.inf, score).reshape(-1)
    worst = int(numpy.argmax(score))
    bad = numpy.flatnonzero(~close.reshape(-1))
    bad = bad[numpy.argsort(-score[bad], kind="stable")][:_MAX_MISMATCHES]
    flat_num, flat_ana = num.reshape(-1), ana.reshape(-1)

    def entry(k: int) -> tuple[tuple, tuple]:
        """(output multi-index, input multi-index) of flat Jacobian entry k."""
        r, c = divmod(k, n)
        return _unravel(r, output_shape), _unravel(c, input_shape)

    worst_out, worst_in = entry(worst)
    return PairReport(
        **where,
        max_abs_err=float(diff.max()),
        max_rel_err=float(rel.max()),
        worst_input_index=worst_in,
        worst_output_index=worst_out,
        numerical=float(flat_num[worst]),
        analytical=float(flat_ana[worst]),
        mismatches=[(*entry(int(k)), float(flat_num[k]), float(flat_ana[k])) for k in bad],
        passed=bool(close.all()),
    )


def _mismatch_listing(pair: PairReport) -> str:
    """What fast mode adds to torch's text: the entries that disagree, worst first."""
    lines = [f"\nEntries that disagree (worst first, up to {_MAX_MISMATCHES}):"]
    for out_idx, in_idx, num, ana in pair.mismatches:
        lines.append(
            f"  output{list(out_idx)} / input{list(in_idx)}: numerical {num:.8g}, analytical {ana:.8g}"
        )
    return "\n".join(lines) + "\n"


def _unravel(flat_index: int, shape: tuple) -> tuple:
    return tuple(int(i) for i in numpy.unravel_index(flat_index, shape)) if shape else ()


def _max_abs(a: numpy.ndarray) -> float:
    return float(numpy.abs(a).max()) if a.size else 0.0


def _unit_vector(rng: numpy.random.Generator, n: int) -> numpy.ndarray:
    """torch's fast-mode direction: uniform [0, 1) entries, scaled to unit norm."""
    vec = rng.random(n)
    norm = numpy.linalg.norm(vec)
    return vec / norm if norm > 0 else vec


def _host(array):
    """A numpy view of an array (copied from the GPU when it lives there)."""
    return array if array.__class__ is numpy.ndarray else backend.to_device(array, backend.CPU)


def _values(g) -> numpy.ndarray:
    """A gradient's values on the host, whatever a backward returned (Tensor, array, scalar)."""
    if isinstance(g, Tensor):
        return _host(g._data)
    return _host(g) if backend.is_array(g) else numpy.asarray(g)


def _size(shape: tuple) -> str:
    return repr(wrap(numpy.empty(shape)).shape)


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(x) -> tuple:
    return tuple(o for o in _as_tuple(x) if isinstance(o, Tensor) and o.requires_grad)


def _warn_non_double(inputs: tuple) -> None:
    """torch's warning for inputs requiring grad in less than double precision."""
    for idx, a in enumerate(inputs):
        if isinstance(a, Tensor) and a.requires_grad and a.dtype is not backend.float64:
            warnings.warn(NON_DOUBLE_WARNING.format(idx=idx), UserWarning, stacklevel=_stacklevel_outside())


def _stacklevel_outside() -> int:
    """The stacklevel that points a warning at the first caller outside this module."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
        level += 1
    return level


def _needs_upcast(inputs: tuple) -> bool:
    return any(
        isinstance(a, Tensor)
        and a.requires_grad
        and a.dtype.is_floating_point
        and a.dtype is not backend.float64
        for a in inputs
    )


def _float64_copies(inputs: tuple) -> tuple:
    """Lower-precision float tensors as float64 leaves (same requires_grad); others as they are."""
    out = []
    for a in inputs:
        if isinstance(a, Tensor) and a.dtype.is_floating_point and a.dtype is not backend.float64:
            copy = wrap(backend.xp_of(a._data).array(a._data, dtype=numpy.float64, copy=True))
            copy.requires_grad_(a.requires_grad)
            a = copy
        out.append(a)
    return tuple(out)


def _empty_report(inputs: tuple, fast_mode: bool, *, upcast: bool) -> GradcheckReport:
    """A passing report, described by the inputs that require grad (device, dtypes)."""
    checked = [a for a in inputs if isinstance(a, Tensor) and a.requires_grad]
    dtypes = list(dict.fromkeys(a.dtype.name for a in checked))
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


def _record(report: GradcheckReport, problem: str) -> None:
    report.passed = False
    report.problems.append(problem)
    report._messages.append(problem)


def _run_collecting(check: _Check) -> None:
    """Run a non-strict check; anything unexpected (even a bug here) becomes a problem."""
    try:
        check.run()
    except _Abort:
        pass
    except Exception as exc:
        _record(report=check.report, problem=check._label(_describe_exception("gradcheck", exc)))


def _describe_exception(context: str, exc: BaseException) -> str:
    """'<context> raised Type: message (at file:line)', the line being the user's."""
    text = f"{context} raised {type(exc).__name__}: {exc}"
    where = _user_frame(exc)
    return f"{text} (at {where})" if where else text


def _user_frame(exc: BaseException) -> str | None:
    """file:line of the innermost traceback frame outside engine/ (and the Python libraries)."""
    frames = traceback.extract_tb(exc.__traceback__)
    outside = [f for f in frames if not os.path.abspath(f.filename).startswith(_ENGINE_DIR)]
    preferred = [f for f in outside if not os.path.abspath(f.filename).startswith(_LIBRARY_DIRS)]
    chosen = preferred or outside
    return f"{chosen[-1].filename}:{chosen[-1].lineno}" if chosen else None


# ------------------------------------------------------------------------ second order


def _gradgrad_problem(func: Callable, inputs: tuple, grad_outputs: Any, non_contiguous: bool):
    """torch's construction: a function of (inputs, grad_outputs) returning first-order grads."""
    if grad_outputs is None:
        with grad_mode.enable_grad():
            outputs = _differentiable_outputs(func(*inputs))
        rng = numpy.random.default_rng(_GRAD_OUTPUTS_SEED)
        grad_outputs = tuple(_random_like(o, rng, non_contiguous) for o in outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(grad_outputs)
    diff_positions = [i for i, a in enumerate(inputs) if isinstance(a, Tensor) and a.requires_grad]

    def first_order_grads(*args):
        with grad_mode.enable_grad():  # the numerical forwards run under no_grad otherwise
            input_args = args[: len(args) - num_outputs]
            outputs = _differentiable_outputs(func(*input_args))
            grads = autograd_grad(
                outputs,
                [input_args[i] for i in diff_positions],
                args[len(args) - num_outputs :],
                create_graph=True,
                allow_unused=True,
            )
        return tuple(g for g in grads if g is not None)

    return first_order_grads, tuple(inputs) + grad_outputs


def _random_like(t: Tensor, rng: numpy.random.Generator, non_contiguous: bool) -> Tensor:
    """A grad_output like torch.testing.make_tensor(low=-1, high=1, requires_grad=True)."""
    dtype = t._data.dtype if t.dtype.is_floating_point else numpy.float64
    shape = tuple(t._data.shape)
    if non_contiguous and math.prod(shape) > 1:
        wide = rng.uniform(-1.0, 1.0, shape[:-1] + (2 * shape[-1],)).astype(dtype)
        values = wide[..., ::2]
    else:
        values = rng.uniform(-1.0, 1.0, shape).astype(dtype)
    out = wrap(backend.xp_of(t._data).asarray(values))
    out.requires_grad_(True)
    return out
