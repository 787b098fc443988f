"""Option values several commands check the same way, refused as usage errors (exit 2)."""

from typing import Any

from ..render.error import UsageError


def finite(**flags: float | None) -> None:
    """Refuse a number given as nan or inf (typer's `min=0.0` lets both in); keywords name the flags."""
    for name, value in flags.items():
        if value is not None and not value - value == 0:
            raise UsageError(f"--{name.replace('_', '-')} must be a finite number, not {value}")


def selection(pattern: str | None) -> Any:
    """-k's expression, compiled (`check.selection.Matcher`)."""
    from ..check.selection import ExpressionError, compile_expression

    try:
        return compile_expression(pattern)
    except ExpressionError as exc:
        raise UsageError(f"-k {pattern!r}: {exc}") from None
