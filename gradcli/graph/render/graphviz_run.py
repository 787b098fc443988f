"""Running Graphviz's `dot` program: DOT source in, svg/png/pdf out.

gradcli needs no Python package for it; the `dot` binary does the layout, as torchviz's does.
A missing or failing `dot` is an `OutputError` (exit 2) that says how to install it.
"""

from __future__ import annotations

import shutil
import subprocess

#: Image formats `dot -T` writes for `gradcli graph --format`.
IMAGE_FORMATS = ("svg", "png", "pdf")


class OutputError(Exception):
    """The graph cannot be written as asked (no Graphviz, unwritable path): exit code 2."""


def graphviz_hint(fmt: str) -> str:
    return (
        f"--format {fmt} needs Graphviz's `dot` program, which is not installed (or not on PATH). "
        "Install Graphviz (apt install graphviz, brew install graphviz, conda install graphviz, or "
        "https://graphviz.org/download/), or use --format dot, which writes the Graphviz source "
        f"without it (render it later with `dot -T{fmt} graph.dot -o graph.{fmt}`)."
    )


def run_dot(source: str, fmt: str, *, timeout: float = 600.0) -> bytes:
    """`dot -T<fmt>` on `source`; OutputError when the program is missing or fails."""
    program = shutil.which("dot")
    if program is None:
        raise OutputError(graphviz_hint(fmt))
    try:
        done = subprocess.run(
            [program, f"-T{fmt}"],
            input=source.encode(errors="backslashreplace"),  # a name that was not UTF-8 shown escaped
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OutputError(
            f"running Graphviz ({program} -T{fmt}) failed: {exc}; --format dot works without it"
        ) from None
    if done.returncode != 0:
        stderr = done.stderr.decode(errors="replace").strip()
        detail = stderr.splitlines()[-1] if stderr else f"exit code {done.returncode}"
        raise OutputError(
            f"Graphviz ({program} -T{fmt}) failed: {detail}; --format dot writes the source instead"
        )
    return done.stdout


def dot_text(source: str, fmt: str) -> str:
    """`run_dot` for a text format (svg): its output decoded; OutputError if it is not UTF-8."""
    data = run_dot(source, fmt)
    try:
        return data.decode()
    except UnicodeDecodeError as exc:
        raise OutputError(
            f"Graphviz (dot -T{fmt}) wrote output that is not UTF-8 ({exc.reason} at byte {exc.start}); "
            "--format dot writes the source instead"
        ) from None
