"""Why an op's output or gradient is not finite, decided from the values the op saw.

Never from the op's name alone: a `log` whose input held no 0 is not "log of 0". The values are
numpy arrays (or the numbers an op keeps, like pow's exponent), handed over by either
library's instrument; `sources` names the op that made each input (`softmax` for `log(softmax(x))`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy

#: What `details["cause"]` may say (gradcli.anomaly/1).
CAUSES = (
    "log-at-zero",
    "log-of-softmax",
    "log-of-sigmoid",
    "log-of-negative",
    "sqrt-at-zero",
    "sqrt-of-negative",
    "pow-at-zero",
    "division-by-zero",
    "exp-overflow",
    "nonfinite-input",
)


@dataclass
class Cause:
    """A named cause: what happened at the bad entries, and the fix."""

    name: str  # one of CAUSES
    why: str
    fix: str


def _log_at_zero(source: str | None) -> Cause:
    if source == "softmax":
        return Cause(
            "log-of-softmax",
            "log's input is a softmax that rounded to 0 (its logits are far apart), and log is -inf at 0 "
            "with an infinite derivative",
            "take log_softmax(logits, dim) instead of log(softmax(logits, dim)) (or cross_entropy on the "
            "logits): it never rounds to 0",
        )
    if source == "sigmoid":
        return Cause(
            "log-of-sigmoid",
            "log's input is a sigmoid that rounded to 0, and log is -inf at 0 with an infinite derivative",
            "take logsigmoid(x) instead of log(sigmoid(x)) (or binary_cross_entropy_with_logits on the logits)",
        )
    return Cause(
        "log-at-zero",
        "log's input is 0 there: log(0) = -inf and d/dx log(x) = 1/x is infinite",
        "keep the input away from 0: log(x.clamp(min=eps)) or log(x + eps), or mask it before the log",
    )


_SQRT_AT_ZERO = Cause(
    "sqrt-at-zero",
    "sqrt's input is 0 there, and d/dx sqrt(x) = 1/(2 sqrt(x)) is infinite at 0",
    "add an eps inside (sqrt(x + eps)), or mask the zeros before the sqrt (a distance is 0 where two points meet)",
)
_DIVISION_BY_ZERO = Cause(
    "division-by-zero",
    "the denominator is 0 there",
    "add an eps to the denominator (a / (b + eps)), or mask the entries where it is 0 before dividing",
)
_EXP_OVERFLOW = Cause(
    "exp-overflow",
    "exp overflowed to inf: its input is larger than the dtype's largest exponent (about 88.7 in float32)",
    "subtract the maximum first (exp(x - x.max())), or use logsumexp, softmax or log_softmax, which do",
)
_LOG_OF_NEGATIVE = Cause(
    "log-of-negative",
    "log's input is negative there: log of a negative number is nan",
    "clamp the input (x.clamp(min=eps)), or find why it goes below 0",
)


def _pow_at_zero(exponent: float) -> Cause:
    return Cause(
        "pow-at-zero",
        f"the base is 0 there and the exponent {exponent:g} is below 1: d/dx x**p = p x**(p-1) is infinite at 0",
        "add an eps to the base ((x + eps) ** p), or mask the zeros before the power",
    )


def backward_cause(
    op: str, saved: dict[str, Any], grad_input: Any, sources: list[str | None]
) -> Cause | None:
    """Why `op`'s backward returned the non-finite `grad_input`, from the values it saved."""
    bad = ~numpy.isfinite(grad_input)
    x, result = saved.get("self"), saved.get("result")
    if op == "log" and _any(x, bad, lambda v: v == 0):
        return _log_at_zero(sources[0] if sources else None)
    if op == "sqrt" and _any(result, bad, lambda v: v == 0):
        return _SQRT_AT_ZERO
    exponent = saved.get("exponent")
    if op == "pow" and isinstance(exponent, (int, float)) and exponent < 1 and _any(x, bad, lambda v: v == 0):
        return _pow_at_zero(exponent)
    if (op == "div" and _any(saved.get("other"), bad, lambda v: v == 0)) or (
        op == "reciprocal" and _any(result, bad, numpy.isinf)
    ):
        return _DIVISION_BY_ZERO
    if op == "exp" and _any(result, bad, lambda v: v == numpy.inf):
        return _EXP_OVERFLOW
    for name, value in saved.items():
        if _any(value, bad, lambda v: ~numpy.isfinite(v)):
            return Cause(
                "nonfinite-input",
                f"its saved {name} already held NaN/Inf from the forward",
                "rerun with --check-forward to stop at the op that first made them",
            )
    return None


def made_here(op: str, saved: dict[str, Any], source: str | None) -> Cause | None:
    """Why `op`'s forward made non-finite values, read from what its node saved (its input or its
    result), for a NaN that reached backward through the forward: None if its values were fine."""
    x, result = saved.get("self"), saved.get("result")
    everywhere = numpy.array(True)
    if op == "exp" and _any(result, everywhere, lambda v: v == numpy.inf):
        return _EXP_OVERFLOW
    if op == "log" and _any(x, everywhere, lambda v: v == 0):
        return _log_at_zero(source)
    if op == "log" and _any(x, everywhere, lambda v: v < 0):
        return _LOG_OF_NEGATIVE
    if (op == "div" and _any(saved.get("other"), everywhere, lambda v: v == 0)) or (
        op == "reciprocal" and _any(result, everywhere, numpy.isinf)
    ):
        return _DIVISION_BY_ZERO
    return None


def forward_cause(op: str, inputs: list[Any], output: Any, sources: list[str | None]) -> Cause | None:
    """Why `op`'s forward made the non-finite `output` from finite `inputs`."""
    bad = ~numpy.isfinite(output)
    first = inputs[0] if inputs else None
    if op == "log":
        if _any(first, bad, lambda v: v == 0):
            return _log_at_zero(sources[0] if sources else None)
        if _any(first, bad, lambda v: v < 0):
            return _LOG_OF_NEGATIVE
    if op == "sqrt" and _any(first, bad, lambda v: v < 0):
        return Cause(
            "sqrt-of-negative",
            "sqrt's input is negative there: sqrt of a negative number is nan",
            "clamp the input (x.clamp(min=0)), or find why it goes below 0",
        )
    if (op == "div" and len(inputs) > 1 and _any(inputs[1], bad, lambda v: v == 0)) or (
        op == "reciprocal" and _any(first, bad, lambda v: v == 0)
    ):
        return _DIVISION_BY_ZERO
    if op == "exp" and _any(output, bad, lambda v: v == numpy.inf):
        return _EXP_OVERFLOW
    return None


def _any(value: Any, bad: Any, test) -> bool:
    """Whether `test` holds for `value` at the bad entries (anywhere in it, where it was broadcast)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = numpy.asarray(value)
    if not hasattr(value, "dtype") or value.dtype.kind not in "fiu":
        return False
    picked = value[bad] if value.shape == bad.shape and bad.ndim else value
    return bool(numpy.any(test(picked)))
