"""What `gradcli anomaly` reports: findings, their locations and tensor statistics, the run's report.

Plain dataclasses holding no engine objects, so `gradcli.anomaly.render` needs nothing else.
`AnomalyFound` is how the instrument stops the script at an anomaly the engine would not raise for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..program.sites import Location

ERROR, WARNING = "error", "warning"

ERROR_KINDS = (
    "inplace-modified-saved",
    "leaf-inplace",
    "no-grad-view-inplace",
    "nan-in-backward",
    "inf-in-backward",
    "nan-in-where-branch",
    "nan-in-forward",
    "inf-in-forward",
    "backward-twice",
    "implicit-grad-nonscalar",
    "backward-error",
    "autograd-error",
)
WARNING_KINDS = ("grad-accumulation", "nonleaf-grad-read", "unused-parameter")


@dataclass
class TensorStats:
    """How many NaN / Inf a tensor (a gradient, a saved value, an output) holds, and its range."""

    name: str
    shape: list[int]
    dtype: str
    numel: int
    nan: int
    posinf: int
    neginf: int
    min: float | None  # over the finite values; None when there are none
    max: float | None

    @property
    def nonfinite(self) -> int:
        return self.nan + self.posinf + self.neginf


@dataclass
class Finding:
    """One anomaly: its kind, what happened, the culprit line, and the lines related to it.

    Fields are in the order of the JSON schema (`gradcli.anomaly.render`), which is `asdict` of this.
    """

    kind: str
    severity: str  # ERROR or WARNING
    message: str
    location: Location | None
    related: list[Location] = field(default_factory=list)
    hint: str | None = None
    count: int = 1  # how many times it happened (a warning in a loop)
    details: dict[str, Any] = field(default_factory=dict)
    stats: list[TensorStats] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.related = unique_locations(self.related)


def unique_locations(locations: list[Location]) -> list[Location]:
    """`locations` without repeats of the same (file, line, role), first kept."""
    seen = set()
    out = []
    for location in locations:
        key = (location.file, location.line, location.role)
        if key not in seen:
            seen.add(key)
            out.append(location)
    return out


@dataclass
class ScriptFailure:
    """Why the script could not run, or the exception unrelated to autograd that ended it (fields in
    the JSON schema's order)."""

    reason: (
        str  # "not-found", "not-a-file", "unreadable", "syntax-error", "exception", "exit-status", "device"
    )
    message: str
    exception: str | None = None  # the exception's type name
    location: Location | None = None
    traceback: list[Location] = field(default_factory=list)  # the user's frames, outermost first


@dataclass
class Report:
    """Everything `gradcli anomaly` found in one run of a script."""

    script: str
    argv: list[str]
    device: str
    seed: int | None  # engine.manual_seed before the script; None: not seeded
    check_forward: bool
    findings: list[Finding] = field(default_factory=list)
    failure: ScriptFailure | None = None
    notes: list[str] = field(default_factory=list)  # what the instrument stepped aside from, and where
    completed: bool = False  # the script ran to its end (or exited with status 0)
    elapsed: float = 0.0

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == WARNING]

    def exit_code(self, strict: bool = False) -> int:
        """2: the script could not run or failed for another reason; 1: an anomaly; else 0."""
        if self.failure is not None:
            return 2
        if self.errors or (strict and self.warnings):
            return 1
        return 0


class AnomalyFound(RuntimeError):
    """Raised by the instrument to stop the script at an anomaly PyTorch would not raise for."""

    def __init__(self, message: str, finding: Finding):
        super().__init__(message)
        self.finding = finding
