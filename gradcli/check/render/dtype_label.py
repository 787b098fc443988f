"""How a report names the dtype a case was checked in."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..results import CaseResult


def dtype_label(result: CaseResult) -> str:
    """'float64 (upcast)': float32 code checked in float64; 'float32 (native, float64 reference)':
    the analytical gradient in float32 against a float64 numerical one (--dtype native)."""
    if result.settings.dtype == "native":
        return f"{result.dtype} (native, {result.reference} reference)"
    return result.dtype + (" (upcast)" if result.upcast else "")
