"""The records of a diff: where two arrays part ways, the findings, and each pair's result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..program.running import LoadError

#: (rtol, atol) by dtype when not given: torch.testing.assert_close's defaults, made to compare two
#: computations of one thing; two sides of different dtypes use the less precise one's.
TOLERANCES = {
    "float64": (1e-7, 1e-7),
    "float32": (1.3e-6, 1e-5),
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
}
PRECISION = ("float64", "float32", "float16", "bfloat16")


def default_tolerance(*dtypes: str) -> tuple[float, float]:
    """(rtol, atol) for comparing values of `dtypes`: the least precise one's."""
    known = [d for d in dtypes if d in TOLERANCES]
    return TOLERANCES[max(known, key=PRECISION.index, default="float64")]


@dataclass
class Difference:
    """How far two arrays are apart: the largest difference, where, and how many entries are off."""

    largest: float
    at: list[int]
    reference: float
    candidate: float
    differing: int
    size: int


@dataclass
class NodeSide:
    """A node as the report names it: the op, its forward line and module, its output's shape."""

    name: str
    where: str | None = None
    source: str | None = None
    module: str | None = None
    shape: list[int] | None = None


@dataclass
class Finding:
    """A place where the two sides part ways: a node on each side (None: that side has none), what
    was compared there (`output 0`, `incoming gradient 0`, `outgoing gradient 1`) and how far apart."""

    kind: str  # "forward" | "backward"
    what: str
    reference: NodeSide
    candidate: NodeSide
    difference: Difference | None  # None: the shapes differ
    reference_shape: list[int] | None = None
    candidate_shape: list[int] | None = None


@dataclass
class Gap:
    """Ops on one side with no counterpart on the other, at the same place in both graphs."""

    reference: list[NodeSide]
    candidate: list[NodeSide]


@dataclass
class GradientRow:
    """One leaf (input or parameter), or the output: its shape and how far the two sides are apart."""

    name: str
    shape: list[int] | None
    status: str  # "agree" | "differ" | "missing" (no gradient on one side) | "none" (on neither)
    difference: Difference | None = None


@dataclass
class PairResult:
    """One pair compared: its verdict, its findings and the gradient table."""

    name: str
    file: str
    reference_label: str
    candidate_label: str
    rtol: float
    atol: float
    dtypes: tuple[str, str] = ("", "")
    error: str | None = None
    nodes: tuple[int, int] = (0, 0)
    output: GradientRow | None = None
    forward: Finding | None = None
    backward: Finding | None = None
    structure: list[Gap] = field(default_factory=list)
    gradients: list[GradientRow] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        """Whether the values part ways (forward, gradients, output); a structure alone does not."""
        rows = [*self.gradients, *([self.output] if self.output else [])]
        return bool(self.forward or self.backward or any(r.status in ("differ", "missing") for r in rows))

    @property
    def verdict(self) -> str:
        return "error" if self.error else "differ" if self.differs else "agree"


@dataclass
class Compared:
    """The results, what could not be loaded, the files skipped (torch missing), and -k's count."""

    results: list[PairResult] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    skipped: list[LoadError] = field(default_factory=list)
    deselected: int = 0
