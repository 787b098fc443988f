"""What `gradcli check` reports about a case, as plain dataclasses: what the renderers, the JSON,
JUnit and the pytest plugin read (checking.py fills them).

Not subclasses of the engine's reports: importing those would import the engine (numpy) whenever
the CLI starts, `--help` included.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .replay.graph_cuts import GraphCut

if TYPE_CHECKING:
    from engine.autograd.gradcheck.report import PairReport

#: Below this many differentiable input elements a case is checked in full mode by default:
#: the full Jacobian is cheap there, and its report points at every wrong entry.
FULL_MODE_BELOW = 1000
#: Failing entries shown per input in a failure's side-by-side table (--show N); here, not in
#: check.render.report, so that the CLI's help reads it without importing rich.
MISMATCH_ROWS = 5
#: Entries each failing pair lists by default (--show N), in the JSON.
SHOW_DEFAULT = 10


def entry_name(name: str, index: tuple | None) -> str:
    """`x[1, 2]`: an entry of a named tensor, as every report writes it (`x` alone for a scalar)."""
    return f"{name}[{', '.join(str(i) for i in index)}]" if index else name


@dataclass
class Settings:
    """Tolerances and mode for a check; `fast=None` means automatic (see FULL_MODE_BELOW).

    `dtype`: "float64" (inputs and everything the case reaches checked as float64) or "native"
    (the case's own dtype; `reference`: its numerical side in "float64", the default, or
    "native" too). eps, atol, rtol None: not given, chosen from the dtype (`resolved`)."""

    order: int = 1
    modes: tuple[str, ...] = ("rev", "fwd")
    fast: bool | None = None
    eps: float | None = None
    atol: float | None = None
    rtol: float | None = None
    nondet_tol: float = 0.0
    dtype: str = "float64"
    reference: str | None = None

    def with_options(self, options: dict[str, Any]) -> Settings:
        """These settings overridden by a case's own options."""
        return dataclasses.replace(self, **options)

    def resolved(self, dtype: str = "float64") -> Settings:
        """Every choice made, for a check whose least precise dtype is `dtype` (tolerances.py)."""
        from .tolerances import native_defaults

        native = self.dtype == "native"
        reference = (self.reference or "float64") if native else "float64"
        eps, atol, rtol = native_defaults(dtype if native else "float64", reference)
        return dataclasses.replace(
            self,
            eps=eps if self.eps is None else self.eps,
            atol=atol if self.atol is None else self.atol,
            rtol=rtol if self.rtol is None else self.rtol,
            reference=reference,
        )

    def for_run(self) -> Settings:
        """The run's settings as reported: float64's defaults filled in; with --dtype native the
        tolerances not given stay None, each case's coming from its own dtype."""
        if self.dtype == "native":
            return dataclasses.replace(self, reference=self.reference or "float64")
        return self.resolved()


@dataclass
class Mismatch:
    """One failing Jacobian entry: d output[output_index] / d input[input_index]."""

    output_index: tuple
    input_index: tuple
    numerical: float
    analytical: float


@dataclass
class NoisyEntry:
    """An entry that disagreed at eps but agrees with `estimate`, found `how` (noise.py)."""

    output_index: tuple
    input_index: tuple
    numerical: float
    analytical: float
    estimate: float
    how: str


@dataclass
class PairResult:
    """The engine's `PairReport` of one (output, input) Jacobian block, with names for people.

    `input` and `output` are names: the argument's (`x`, `model.fc1.weight`), `out` or
    `out<k>`; at order 2 the outputs are first-order gradients (`grad(x)`) and the extra
    inputs the random grad_outputs that gradgradcheck adds (`grad_out`). The other fields are
    the report's (see `named`), in the order of the JSON schema.
    """

    input: str
    output: str
    input_index: int
    output_index: int
    order: int
    mode: str  # "rev" or "fwd": the analytical side's
    comparison: str  # "VJP", "JVP", "VJP of VJP", "JVP of VJP" (order and mode, as JAX names them)
    passed: bool
    input_shape: tuple
    output_shape: tuple
    jacobian_shape: tuple
    max_abs_err: float
    max_rel_err: float
    worst_input_index: tuple | None
    worst_output_index: tuple | None
    numerical: float | None
    analytical: float | None
    mismatch_count: int = 0
    mismatch_count_exact: bool = True  # False: located by bisection, the count is a lower bound
    mismatches: list[Mismatch] = field(default_factory=list)
    nondifferentiable: list[Mismatch] = field(default_factory=list)  # kinks: not failures
    noise: list[NoisyEntry] = field(default_factory=list)  # agree at another step: not failures
    estimates_tried: list[str] = field(default_factory=list)  # what a BUG's entries also disagree with
    verdict: str = "PASS"  # the pair's class: PASS, NOISE, KINK or BUG (verdicts.py)
    # A failing pair's full Jacobians (--dump, --plot, heatmaps), or once trimmed (`keep_jacobians=False`)
    # only the heatmap's block grid; never in the JSON (CASE_JSON_LEAVES_OUT).
    numerical_jacobian: Any = field(default=None, repr=False, compare=False)
    analytical_jacobian: Any = field(default=None, repr=False, compare=False)
    blocks: Any = field(default=None, repr=False, compare=False)

    def heatmap_grid(self, *, rtol: float, atol: float):
        """The terminal heatmap's `BlockGrid`, or None for a pair that kept no Jacobians."""
        if self.blocks is not None:
            return self.blocks
        num, ana = self.numerical_jacobian, self.analytical_jacobian
        if num is None or ana is None or num.size == 0:
            return None
        from .jacobian_blocks import block_grid

        return block_grid(num, ana, rtol=rtol, atol=atol)

    def trim_jacobians(self, *, rtol: float, atol: float) -> None:
        """Keep only the heatmap's grid of a Jacobian too big to draw cell by cell, so a run's
        memory per failing pair is bounded by the grid, not by the Jacobian."""
        from .jacobian_blocks import fits

        if self.numerical_jacobian is None or fits(self.jacobian_shape):
            return
        self.blocks = self.heatmap_grid(rtol=rtol, atol=atol)
        self.numerical_jacobian = self.analytical_jacobian = None

    @classmethod
    def named(cls, report: PairReport, input: str, output: str) -> PairResult:
        """Every field of `report`, its mismatch tuples as `Mismatch` records, and the two names.

        A field the engine adds fails here, loudly.
        """
        values = {f.name: getattr(report, f.name) for f in dataclasses.fields(report)}
        values["mismatches"] = [Mismatch(*entry) for entry in report.mismatches]
        values["nondifferentiable"] = [Mismatch(*entry) for entry in report.nondifferentiable]
        values["noise"] = [NoisyEntry(*entry) for entry in report.noise]
        return cls(input=input, output=output, **values)


@dataclass
class SourceLocation:
    """Where a custom Function's backward is written, with its source for display."""

    function: str
    file: str
    line: int
    source: list[str] = field(default_factory=list)


@dataclass
class Problem:
    """A failure other than a Jacobian mismatch; file/line when the text names the user's line.

    `kind` is the failure's verdict class when the problem decides it (render/verdicts: "DTYPE",
    "NONDETERMINISTIC BACKWARD", ...); None leaves the class to the case's other findings."""

    message: str
    file: str | None = None
    line: int | None = None
    source: str | None = None
    kind: str | None = None


@dataclass
class CaseResult:
    """Everything reported about one case (fields in the order of the JSON schema)."""

    file: str
    name: str
    line: int | None
    passed: bool
    order: int
    mode: str
    localized: bool
    device: str
    dtype: str
    upcast: bool
    elapsed: float
    differentiable_elements: int
    settings: Settings  # after the case's own options
    verdict: str = "ERROR"  # the case's class (verdicts.py): PASS, BUG, NOISE, KINK, RANDOM FORWARD, ...
    reason: str = ""  # why, in one sentence
    problems: list[Problem] = field(default_factory=list)
    backwards: list[SourceLocation] = field(default_factory=list)
    graph_cuts: list[GraphCut] = field(default_factory=list)  # where a failing input's value left the graph
    no_gradient: list[str] = field(default_factory=list)  # failing inputs that get no gradient at all
    pairs: list[PairResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # kinks: why the numerical side was set aside
    notes: list[str] = field(default_factory=list)  # noise: which other estimate agreed
    traceback: str | None = None
    #: the dtype of the numerical Jacobian: "float64", or the native dtype (--reference native)
    reference: str = "float64"
