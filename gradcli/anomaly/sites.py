"""Lines of the user's code: raw `(code, lineno)` sites and tracebacks turned into Locations.

Frames of the engine, gradcli, the standard library and site-packages are not the user's and
are trimmed from tracebacks: the engine's one rule, `engine.autograd.anomaly.is_internal_file`,
with gradcli's folder registered (`gradcli.running`).
"""

from __future__ import annotations

import linecache
import os
import types

from .findings import Location


class Sites:
    """Turns raw `(code, lineno)` pairs into Locations, with paths as the user gave them."""

    def __init__(self, script_abspath: str, script_path: str):
        self.script_abspath = script_abspath
        self.script_path = script_path
        self.cwd = os.getcwd()

    def path(self, filename: str) -> str:
        absolute = os.path.abspath(filename) if not filename.startswith("<") else filename
        if absolute == self.script_abspath:
            return self.script_path
        if filename.startswith("<"):
            return filename
        relative = os.path.relpath(absolute, self.cwd)
        return absolute if relative.startswith("..") else relative

    def location(self, site: tuple | None, role: str = "") -> Location | None:
        if site is None:
            return None
        code, lineno = site
        return self.at(code.co_filename, lineno, code.co_name, role)

    def at(self, filename: str, lineno: int, function: str | None, role: str = "") -> Location:
        source = linecache.getline(filename, lineno).strip() or None
        return Location(self.path(filename), lineno, function, source, role)


def node_site(node) -> tuple | None:
    """Where the forward op that created `node` ran, or None: the engine's anomaly mode records it in
    `_trace`, the torch instrument in the node's metadata (`torch_instrument.SITE_KEY`)."""
    trace = getattr(node, "_trace", None)
    if trace:
        return trace[0]
    metadata = getattr(node, "metadata", None)
    return metadata.get("gradcli.site") if isinstance(metadata, dict) else None


def _is_user_file(filename: str) -> bool:
    from engine.autograd import anomaly

    return not anomaly.is_internal_file(filename)


def user_tb_frames(tb) -> list[tuple[types.FrameType, int]]:
    """The (frame, lineno) of each traceback entry in the user's files, outermost first."""
    out = []
    while tb is not None:
        if _is_user_file(tb.tb_frame.f_code.co_filename):
            out.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return out


def raised_in(tb) -> tuple[str, str]:
    """(module name, function) of the frame that raised."""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_globals.get("__name__", ""), tb.tb_frame.f_code.co_name


def user_traceback(exc: BaseException, sites: Sites) -> list[Location]:
    """The user's frames of the exception's traceback, outermost first."""
    return [
        sites.at(frame.f_code.co_filename, lineno, frame.f_code.co_name)
        for frame, lineno in user_tb_frames(exc.__traceback__)
    ]


def raise_site(exc: BaseException, sites: Sites) -> Location | None:
    """The innermost line of the user's code in the exception's traceback."""
    frames = user_tb_frames(exc.__traceback__)
    if not frames:
        return None
    frame, lineno = frames[-1]
    return sites.at(frame.f_code.co_filename, lineno, frame.f_code.co_name)
