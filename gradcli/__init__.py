"""gradcli: a gradient checker and autograd graph debugger for PyTorch code and for `engine`.

Only the pieces a check file needs live here (`gradcli.case`, `gradcli.pair`), so that
`import gradcli` in a user's file stays cheap: the CLI, typer and rich are
imported by `gradcli.cli` alone, and `assert_gradients` (which needs the
engine and rich) is imported on first use.
"""

from typing import Any

from .check.cases import Case, case
from .check.kink_warnings import GradcliWarning, NondifferentiableWarning
from .diff.pairs import Pair, pair
from .version import __version__

__all__ = [
    "Case",
    "GradcliWarning",
    "NondifferentiableWarning",
    "Pair",
    "__version__",
    "assert_gradients",
    "case",
    "pair",
]


def __getattr__(name: str) -> Any:
    """`gradcli.assert_gradients`, imported when first asked for."""
    if name == "assert_gradients":
        from .check.asserting import assert_gradients

        return assert_gradients
    raise AttributeError(f"module 'gradcli' has no attribute {name!r}")
