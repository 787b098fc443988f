"""gradcli: a gradient checker and autograd graph debugger for `engine`.

Only the pieces a check file needs live here (`gradcli.case`), so that
`import gradcli` in a user's file stays cheap: the CLI, typer and rich are
imported by `gradcli.cli` alone.
"""

from .cases import Case, case

__all__ = ["Case", "case"]
__version__ = "0.1.0"
