"""One failed case as text, for reports that are not gradcli's own output (pytest, AssertionError).

The block is exactly what `gradcli check` prints under a failure (`check.print_failures`), made
by a console on a string: plain unless the caller's own output is coloured.
"""

from __future__ import annotations

import io

from rich.console import Console

from ...render.console import PLAIN_WIDTH
from ..results import CaseResult
from .report import print_failures


def failure_report(result: CaseResult, *, color: bool = False, width: int = PLAIN_WIDTH) -> str:
    """A one-line reason, then the worst entries side by side, the problems and the backward's source."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=color,
        color_system="standard" if color else None,
        highlight=False,
        markup=False,
        emoji=False,
    )
    print_failures(console, [result])
    return f"{failure_reason(result)}\n\n{buffer.getvalue().rstrip()}"


def failure_reason(result: CaseResult) -> str:
    """Why the case failed, in a line (pytest's short summary shows the first line of the report)."""
    return f"gradient check of {result.name} failed: {result.verdict}: {result.reason}"
