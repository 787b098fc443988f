"""Where values leave the autograd graph, recorded while a case's forward runs again.

A value leaves the graph where the user's code turns a tensor that depends on a checked input
into a tensor that does not require grad (`.detach()`, `.detach_()`, `.data`, `tensor(t)`,
`as_tensor(t)`, `.new_tensor(t)`, any op run under `no_grad`) or into something that is not a
tensor at all (`.numpy()`, `.item()`, `.tolist()`, `float(t)`, a numpy function reading it
through `__array__`). The library's observer (cut_recording_engine.py, cut_recording_torch.py)
shows the `Recorder` each call the user's code makes into the library; which checked inputs a
value depends on is read from its graph: the AccumulateGrad leaves behind its grad_fn.

A replay can also nudge the values that one kind of cut at one line lets out (by about
sqrt(eps) of their dtype, relative): if the case's outputs change, that cut's value reaches them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any

from ...program.probing import attribute

#: Kinds whose result is a tensor that must no longer require grad for the call to be a cut.
TENSOR_KINDS = frozenset({"detach", "detach_", "data", "tensor", "as_tensor", "new_tensor", "no_grad"})
#: Kinds that may follow a cut on its own line and are shown with it (`.detach().numpy()`).
CHAINED_KINDS = frozenset({"detach", "data", "numpy", "item", "tolist"})
#: The code that cut, as shown (tensor/as_tensor name their library).
SHOWN = {
    "detach": ".detach()",
    "detach_": ".detach_()",
    "data": ".data",
    "numpy": ".numpy()",
    "item": ".item()",
    "tolist": ".tolist()",
    "float": "float()",
    "array": "__array__",
    "new_tensor": ".new_tensor()",
    "tensor": "{library}.tensor()",
    "as_tensor": "{library}.as_tensor()",
    "no_grad": "no_grad",
}


@dataclass
class CutEvent:
    """One place a value left the graph: how, where, and the positions of the inputs it came from."""

    kind: str
    how: str
    inputs: frozenset[int]
    file: str
    line: int


@dataclass(frozen=True)
class Nudge:
    """What a replay nudges: the cuts of `kind` at file:line whose value depends on input `position`."""

    kind: str
    file: str
    line: int
    position: int

    @classmethod
    def of(cls, event: CutEvent, position: int) -> Nudge:
        return cls(event.kind, event.file, event.line, position)


@dataclass
class Call:
    """A call that may cut, between the observer's `begin` and `end`."""

    kind: str
    inputs: frozenset[int]
    file: str
    line: int
    nudged: bool
    mark: int  # events recorded before it began: a no_grad call with no_grad cuts inside is theirs
    eps: float  # the largest machine epsilon of its sources' dtypes: what a nudge moves by


@dataclass
class TensorOps:
    """What the recorder asks of a tensor library."""

    library: str
    is_tensor: Callable[[Any], bool]
    eps: Callable[[Any], float]  # the machine epsilon of a float tensor's dtype
    host: Callable[[Any], Any]  # a tensor's values as a numpy array of its own (outputs compared)


class Recorder:
    """Collects `CutEvent`s from the calls an observer shows it; `nudge` marks the calls to nudge."""

    def __init__(self, checked: Sequence[Any], ops: TensorOps, nudge: Nudge | None = None):
        self.ops = ops
        self.nudge = nudge
        self.events: list[CutEvent] = []
        self.broken = False  # the recording itself failed (the forward went on unrecorded)
        self._positions = {id(x): k for k, x in enumerate(checked) if ops.is_tensor(x)}
        self._checked = checked  # kept alive: positions are by id
        self._behind: dict[int, tuple[Any, frozenset[int]]] = {}  # node id -> (node, input positions)
        self._results: dict[int, tuple[Any, CutEvent]] = {}  # a cut's own result -> its event
        self._off_in: FrameType | None = None  # the user's frame that last turned grad mode off
        from engine.autograd.anomaly import is_internal_file

        self._internal = is_internal_file

    def begin(self, kind: str, sources: list[Any], file: str, line: int, grad_on: bool) -> Call | None:
        """A call of `kind` on `sources` at the user's file:line; a Call when it may cut (never while
        the library's own code holds grad mode off)."""
        if not grad_on and self._off_in is None:
            return None
        if kind in CHAINED_KINDS and len(sources) == 1:
            known = self._results.get(id(sources[0]))
            if known is not None and (known[1].file, known[1].line) == (file, line):
                known[1].how += SHOWN[kind]
                return None
        inputs: frozenset[int] = frozenset()
        eps = 0.0
        for source in sources:
            if self.ops.is_tensor(source) and _differentiable(source):
                inputs |= self.inputs_behind(source)
                eps = max(eps, self.ops.eps(source))
        if not inputs:
            return None
        nudge = self.nudge
        nudged = (
            nudge is not None
            and (nudge.kind, nudge.file, nudge.line) == (kind, file, line)
            and nudge.position in inputs
        )
        return Call(kind, inputs, file, line, nudged, len(self.events), eps)

    def end(self, call: Call, result: Any) -> None:
        """The call returned `result`: a cut when its value no longer carries the graph."""
        if call.kind in TENSOR_KINDS:
            carried = [t for t in tensors_in(result, self.ops) if _float(t) and not t.requires_grad]
            inner = call.kind == "no_grad" and any(e.kind == "no_grad" for e in self.events[call.mark :])
            if not carried or inner:  # a module's call under no_grad: the ops inside it were the cuts
                return
        elif result is None:  # it raised (a profiler sees no difference)
            return
        else:
            carried = [result]
        how = SHOWN[call.kind].format(library=self.ops.library)
        event = CutEvent(call.kind, how, call.inputs, call.file, call.line)
        self.events.append(event)
        for value in carried:
            self._results[id(value)] = (value, event)

    def grad_switched(self, on: bool, by: FrameType | None) -> None:
        """Grad mode was just turned on or off; off by the user's frame `by`, or (None) by the
        library's own code, a custom Function's forward say, where nothing is a cut."""
        self._off_in = None if on else by

    def no_grad_line(self, frame: FrameType | None) -> tuple[str, int] | None:
        """For an op under no_grad called from `frame`: the line running in the user's frame that
        turned grad mode off (its `with no_grad():` block) while that frame is on the stack, else
        the op's own user line; None when the library turned grad mode off (not a cut)."""
        off_in = self._off_in
        if off_in is None:
            return None
        own = None
        while frame is not None:
            if frame is off_in:
                return frame.f_code.co_filename, frame.f_lineno
            if own is None and not self._internal(frame.f_code.co_filename):
                own = frame
            frame = frame.f_back
        return None if own is None else (own.f_code.co_filename, own.f_lineno)

    def inputs_behind(self, tensor: Any) -> frozenset[int]:
        """Positions of the checked inputs `tensor`'s graph reaches (itself, if it is one)."""
        position = self._positions.get(id(tensor))
        if position is not None:
            return frozenset((position,))
        node = attribute(tensor, "grad_fn")  # a user's grad_fn property may raise
        return frozenset() if node is None else self._behind_node(node)

    def _behind_node(self, root: Any) -> frozenset[int]:
        """Post-order over the graph, each node's answer kept: a graph is walked once per replay."""
        known = self._behind
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in known:
                continue
            children = [edge[0] for edge in node.next_functions if edge[0] is not None]
            if not expanded:
                stack.append((node, True))
                stack.extend((child, False) for child in children if id(child) not in known)
                continue
            found: frozenset[int] = frozenset()
            if type(node).__name__ == "AccumulateGrad":  # a leaf's: its variable may be an input
                position = self._positions.get(id(getattr(node, "variable", None)))
                found = frozenset() if position is None else frozenset((position,))
            for child in children:
                found |= known[id(child)][1]
            known[id(node)] = (node, found)
        return known[id(root)][1]


def nudged(value: Any, eps: float) -> Any:
    """`value` moved by sqrt(eps) relative (plus as much absolute): arrays, tensors, numbers, lists."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(nudged(v, eps) for v in value)
    if isinstance(value, complex):
        return value + eps**0.5 * (1 + abs(value))
    if isinstance(value, float):
        return value + eps**0.5 * (1 + abs(value))
    if isinstance(value, int):
        return value
    moved = value + eps**0.5 * (1 + abs(value))
    if hasattr(moved, "astype"):
        return moved.astype(value.dtype, copy=False)
    return moved.to(value.dtype)


def tensors_in(value: Any, ops: TensorOps) -> list[Any]:
    """The tensors of a call's argument or result: itself, or those of a list, tuple or dict."""
    if ops.is_tensor(value):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [v for v in value if ops.is_tensor(v)]
    return []


def _float(tensor: Any) -> bool:
    dtype = tensor.dtype
    return dtype.is_floating_point or dtype.is_complex


def _differentiable(tensor: Any) -> bool:
    return _float(tensor) and tensor.requires_grad
