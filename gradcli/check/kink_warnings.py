"""Kinks outside the CLI: a passing check with KINK entries warns through Python's warnings.

The pytest plugin and `assert_gradients` have no report of their own for a case that passes,
so the kink explanation `gradcli check` prints as WARNING lines becomes a warning, visible in
pytest's warnings summary and filterable by its category (`-W error::gradcli.GradcliWarning`).
Standard library only: `import gradcli` stays cheap.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .results import CaseResult


class GradcliWarning(UserWarning):
    """The base of gradcli's warnings."""


class NondifferentiableWarning(GradcliWarning):
    """Entries set apart as kinks (KINK): the numerical derivative there means nothing."""


def warn_kinks(result: CaseResult, file: str | None = None, line: int | None = None) -> None:
    """One NondifferentiableWarning per kink warning of `result`, placed at the case's line."""
    for text in result.warnings:
        warnings.warn_explicit(
            f"{result.name}: {text}",
            NondifferentiableWarning,
            file or result.file or "<gradcli>",
            line or result.line or 1,
        )
