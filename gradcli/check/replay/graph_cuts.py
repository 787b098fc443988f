"""Why a failing input's gradient is lost: the places its value left the graph, said for people.

A `GraphCut` is reported under a failed case when the value of a checked input that a failing
pair involves left the autograd graph (cut_recording.py) and that value still reaches an output
the pair involves (a replay that nudges it changes the output: failure_replay.py). A detach for
logging, or a value only compared or printed, changes no output and is not reported. Inputs that
get no gradient at all are named too (`no_gradient`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cut_recording import CutEvent, Nudge

#: What a cut does, said once after each.
CONSEQUENCE = "the value leaves the graph; no gradient flows back through it"


@dataclass
class GraphCut:
    """Where input `input`'s value left the graph on its way to an output: `how` at file:line."""

    input: str
    how: (
        str  # the code that cut: `.detach()`, `.detach().numpy()`, `.item()`, `torch.tensor()`, `no_grad` ...
    )
    file: str
    line: int
    source: str | None = None  # the line's code, for people (not in the JSON)

    def describe(self) -> str:
        """'x's gradient is cut at f.py:13: `.numpy()` (the value leaves the graph; ...)'."""
        if self.how == "no_grad":
            what = "an op run under `no_grad`"
        elif self.how == "__array__":
            what = "a numpy function reads the tensor (`__array__`)"
        else:
            what = f"`{self.how}`"
        return f"{self.input}'s gradient is cut at {self.file}:{self.line}: {what} ({CONSEQUENCE})"


def no_gradient_text(name: str) -> str:
    """The plain statement for an input that gets no gradient at all."""
    return f"{name} gets no gradient at all: its analytical gradient is zero or missing, its numerical one is not"


def failing_inputs(pairs: Iterable[Any], differentiable: Sequence[int], outputs_need_grad: bool) -> dict:
    """Input position -> the output positions its failing pairs involve (None: any output).

    Order-2 pairs involve any output (theirs are gradients) and their extra inputs (the random
    grad_outputs gradgradcheck adds) none; a case whose outputs do not require grad at all
    involves every differentiable input."""
    wanted: dict[int, set[int] | None] = {}
    failing = [pair for pair in pairs if not pair.passed]
    for pair in failing:
        if pair.input_index not in differentiable:
            continue
        outputs = wanted.get(pair.input_index, set())
        if pair.order != 1 or outputs is None:
            wanted[pair.input_index] = None
        else:
            wanted[pair.input_index] = outputs | {pair.output_index}
    if not failing and not outputs_need_grad:
        wanted = dict.fromkeys(differentiable)
    return wanted


def candidates(events: Sequence[CutEvent], wanted: dict) -> list[tuple[Nudge, CutEvent]]:
    """One nudge per (kind, line, failing input) among the cuts, in the order they happened."""
    from .cut_recording import Nudge

    found: dict[Nudge, CutEvent] = {}
    for event in events:
        for position in sorted(event.inputs):
            if position in wanted:
                found.setdefault(Nudge.of(event, position), event)
    return list(found.items())


def explains(changed: set[int] | None, outputs: set[int] | None) -> bool:
    """Whether a nudged cut changed an output the failing pairs involve (`changed` None: can't tell)."""
    if changed is None:
        return True
    return bool(changed) if outputs is None else bool(changed & outputs)


def no_gradient(pairs: Sequence[Any], wanted: dict, reached: set[int]) -> list[int]:
    """Positions of the failing inputs that get no gradient: the outputs' graph does not reach them,
    or each of their first-order pairs has an analytical Jacobian of zeros."""
    positions = []
    for position in wanted:
        own = [pair for pair in pairs if pair.input_index == position and pair.order == 1]
        jacobians = [pair.analytical_jacobian for pair in own]
        zero = bool(own) and all(j is not None and not j.any() for j in jacobians)
        if position not in reached or zero:
            positions.append(position)
    return positions
