"""Running a script under anomaly mode with extra instrumentation, and collecting findings.

`run_script` executes the user's script as `__main__` (argv, device and seed set) with
engine's anomaly mode on and an `Instrument` installed as `engine.autograd.anomaly.observer`.
The engine tells the instrument about every op (recorded or not), backward run, node backward,
freed graph, gradient accumulation and non-leaf `.grad` read; the instrument keeps what a
finding will need (raw frames, weak references, small counters) and turns it into plain
dataclasses only when something is found. The first error stops the script, as it would
under Python; warnings are collected until the end.

Errors: inplace-modified-saved, leaf-inplace, no-grad-view-inplace, nan-in-backward, inf-in-backward,
nan-in-where-branch, nan-in-forward / inf-in-forward (with `check_forward`), backward-twice,
implicit-grad-nonscalar, backward-error (anything else raised inside a node's backward),
autograd-error (any other error raised by engine.autograd). Warnings: grad-accumulation,
nonleaf-grad-read, unused-parameter.

Modules, from the entry point down:

- `runner`: `run_script`, the script as `__main__`, how it ended -> `Report`
- `instrument`: the engine `Observer` that records what findings need; `instrumented`
- `error_kinds`: the exception that ended the script -> an error `Finding` (`classify`)
- `warning_kinds`: what the instrument gathered -> warning findings (`collect_warnings`)
- `nonfinite`: the nan/inf-in-forward, nan/inf-in-backward and nan-in-where-branch findings
- `causes`: why a value is not finite, from the values the op saw (`details["cause"]`)
- `shared_output`: the module output that fed two losses, when a second backward finds it freed
- `names`: the user's names for tensors, where they are defined, a node's forward op
- `sites`: `(code, lineno)` sites and tracebacks -> `Location`s in the user's files
- `stats`: shapes and NaN/Inf counts of tensor values
- `findings`: the dataclasses (`Finding`, `Location`, `Report`, ...), kinds and severities
"""

from .error_kinds import classify
from .findings import (
    ERROR,
    ERROR_KINDS,
    WARNING,
    WARNING_KINDS,
    AnomalyFound,
    Finding,
    Location,
    Report,
    ScriptFailure,
    TensorStats,
)
from .instrument import MAX_FREED, Instrument, instrumented
from .runner import run_script
from .stats import tensor_stats
from .warning_kinds import collect_warnings

__all__ = [
    "ERROR",
    "ERROR_KINDS",
    "MAX_FREED",
    "WARNING",
    "WARNING_KINDS",
    "AnomalyFound",
    "Finding",
    "Instrument",
    "Location",
    "Report",
    "ScriptFailure",
    "TensorStats",
    "classify",
    "collect_warnings",
    "instrumented",
    "run_script",
    "tensor_stats",
]
