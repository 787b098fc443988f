"""Is the forward a function? Finite differences mean something only if it is.

A numerical derivative (f(x + eps) - f(x - eps)) / (2 eps) divides the change of the output by
2 eps = 2e-6: an output that moves by 1e-3 between two calls for any other reason (dropout's
mask, noise added in the forward, a counter or global that drifts, an input the forward writes
to) gives "derivatives" of order 1e+3 that say nothing about the gradient, and one-sided
differences that disagree like a kink's. So before any finite difference, check_gradients runs
the forward twice more on the reference inputs:

1. with the random state put back to what the reference forward started from: an output that
   differs now changes with something other than the random numbers (state, or an input the
   forward changed in place, which is checked directly too);
2. with the random state left where the previous call put it: an output that differs only now
   depends on the random numbers drawn, and the draws are recorded (random_calls.py).

Outputs are compared entry by entry; differences up to `nondet_tol` are tolerated (as torch's
gradcheck tolerates them between two backwards). A forward that changes is reported as
`ForwardDrift`, and no Jacobian is computed: kinks and mismatches are only ever looked for on a
deterministic forward. gradcheck / gradgradcheck (strict, torch's behaviour) do not probe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy

from .random_calls import RandomCall
from .report import USER_ERRORS, describe_exception
from .util import as_tuple

#: ForwardDrift.kind values
RANDOM, STATE, INPUT = "random", "state", "input"


@dataclass
class ForwardDrift:
    """How the forward failed to be a function of its inputs.

    kind: "random" (the output follows the random numbers drawn), "state" (it changes on the same
    inputs and random state: a counter, a global, an attribute), or "input" (the forward writes to
    an input it was given, `inputs_changed`). The output that changed first is `output_index`,
    with `changed` of its `total` entries differing by up to `max_abs_diff`; `raised` is what a
    repeated call raised where the first did not.
    """

    kind: str
    output_index: int | None = None
    changed: int = 0
    total: int = 0
    max_abs_diff: float = 0.0
    inputs_changed: list[int] = field(default_factory=list)
    random_calls: list[RandomCall] = field(default_factory=list)
    raised: str | None = None


class ForwardProbe:
    """Taken before the reference forward (random state, input values); `drift` after it."""

    def __init__(self, state: Any):
        self.state = state
        tensors = state.tensors
        self.random_state = tensors.random_state()
        self.input_values = [
            (pos, numpy.array(tensors.values(a), copy=True))
            for pos, a in enumerate(state.inputs)
            if tensors.is_tensor(a) and a.dtype.is_floating_point
        ]

    def drift(self, reference: tuple) -> ForwardDrift | None:
        """Run the forward again (same inputs and random state; then random state moved on)."""
        tensors = self.state.tensors
        expected = self._values(reference)
        written = self._inputs_written()
        after_reference = tensors.random_state()
        if self.random_state is not None:
            tensors.set_random_state(self.random_state)
            found = self._compare(expected, STATE)
            if found is not None:
                return _with_inputs(found, written)
            tensors.set_random_state(after_reference)
        with tensors.watching_random() as calls:
            found = self._compare(expected, RANDOM)
        if found is not None:
            found.random_calls = calls
            if self.random_state is None:  # draws and state cannot be told apart
                found.kind = RANDOM if calls else STATE
            return _with_inputs(found, written)
        if written:
            return ForwardDrift(INPUT, inputs_changed=written)
        return None

    def _compare(self, expected: list, kind: str) -> ForwardDrift | None:
        """The forward once more on the saved inputs: how its outputs differ from `expected`."""
        self._restore_inputs()
        try:
            got = self._values(as_tuple(self.state.func(*self.state.inputs)))
        except USER_ERRORS as exc:
            return ForwardDrift(kind, raised=describe_exception("the forward, called again", exc))
        finally:
            self._restore_inputs()
        if len(got) != len(expected):
            first = f"{len(expected)} output" + ("s" if len(expected) != 1 else "")
            return ForwardDrift(kind, raised=f"the forward returned {first}, then {len(got)}")
        for k, (a, b) in enumerate(zip(expected, got)):
            if a is None or b is None:
                continue
            if a.shape != b.shape:
                return ForwardDrift(
                    kind, output_index=k, total=a.size, changed=a.size, max_abs_diff=numpy.inf
                )
            with numpy.errstate(all="ignore"):
                diff = numpy.where(_same(a, b), 0.0, numpy.abs(a - b))
            diff = numpy.where(numpy.isnan(diff), numpy.inf, diff)
            moved = diff > self.state.opts.nondet_tol
            if moved.any():
                return ForwardDrift(
                    kind,
                    output_index=k,
                    changed=int(moved.sum()),
                    total=a.size,
                    max_abs_diff=float(diff.max()),
                )
        return None

    def _values(self, outputs: tuple) -> list:
        tensors = self.state.tensors
        return [
            numpy.array(tensors.values(o), dtype=numpy.float64, copy=True)
            if tensors.is_tensor(o) and o.dtype.is_floating_point
            else None
            for o in outputs
        ]

    def _inputs_written(self) -> list[int]:
        values = self.state.tensors.values
        inputs = self.state.inputs
        return [pos for pos, before in self.input_values if not _same(values(inputs[pos]), before).all()]

    def _restore_inputs(self) -> None:
        tensors = self.state.tensors
        for pos, before in self.input_values:
            storage = tensors.storage(self.state.inputs[pos])
            storage[...] = tensors.array_like(before, storage)


def describe(drift: ForwardDrift) -> str:
    """The problem text of a drifting forward (gradcli adds the cause: the draw, the line)."""
    if drift.kind == INPUT:
        which = ", ".join(str(i) for i in drift.inputs_changed)
        return (
            f"the forward writes to input {which} in place: each call starts from other values, so "
            "finite differences mean nothing; no Jacobian was computed"
        )
    if drift.raised is not None:
        what = drift.raised
    else:
        what = (
            f"{drift.changed} of {drift.total} entries of output {drift.output_index} changed "
            f"(by up to {drift.max_abs_diff:.3g})"
        )
    if drift.kind == RANDOM:
        return (
            f"the forward is random: called again on the same inputs, {what}; with the random state "
            "put back they do not. Finite differences of a random function mean nothing; no Jacobian "
            "was computed"
        )
    return (
        f"the forward is not deterministic: called again on the same inputs and random state, {what}. "
        "Finite differences mean nothing; no Jacobian was computed"
    )


def _same(a: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray:
    """Equal entries, NaN equal to NaN."""
    return (a == b) | (numpy.isnan(a) & numpy.isnan(b))


def _with_inputs(found: ForwardDrift, written: list[int]) -> ForwardDrift:
    """An input the forward wrote to explains a changed output best."""
    if written:
        found.kind = INPUT
        found.inputs_changed = written
    return found
