"""Lines of the user's code, for every command: where each node's forward ran, and tracebacks.

Recording (`recording`): engine nodes through `engine.autograd.anomaly.record_sites`, anomaly mode
reduced to the innermost user frame per node (a walk of a few frames per op, no NaN check, no
changed message), kept in `node._trace`. Torch nodes: a `TorchFunctionMode`, installed once the
file imports torch, walks to the same frame per torch call and stamps the nodes the call created
in `grad_fn.metadata[SITE_KEY]` (the key `gradcli anomaly`'s torch instrument stamps too), with
the nodes behind them that the call made too. torch's own anomaly mode would record it too
(`metadata["traceback_"]`), but formats the whole stack as text for every node and checks every
backward for NaN: many times the cost, for one line of it. `gradcli graph` records only for
`--format json`, `html` and the `--verbose` tree, so the default tree pays nothing.

Reading (`node_site`, `Sites`): raw `(code, lineno)` sites and tracebacks turned into Locations.
Frames of the engine, gradcli, the standard library and site-packages are not the user's and
are trimmed from tracebacks: the engine's one rule, `engine.autograd.anomaly.is_internal_file`,
with gradcli's folder registered (`gradcli.program.running`).
"""

from __future__ import annotations

import linecache
import os
import types
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from engine.autograd.anomaly import record_sites, user_site

from ..libraries import after_torch_import

#: Where a torch node's forward line is kept, in its `grad_fn.metadata`.
SITE_KEY = "gradcli.site"


@dataclass
class Location:
    """A line of the user's code; `role` says what it is for a related line."""

    file: str
    line: int
    function: str | None = None
    source: str | None = None
    role: str = ""

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


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
    `_trace`, the torch instrument in the node's metadata (`SITE_KEY`)."""
    trace = getattr(node, "_trace", None)
    if trace:
        return trace[0]
    metadata = getattr(node, "metadata", None)
    return metadata.get(SITE_KEY) if isinstance(metadata, dict) else None


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


@contextmanager
def recording(enabled: bool = True) -> Iterator[None]:
    """For the block: every node made (engine or torch) remembers its forward line."""
    if not enabled:
        yield
        return
    with ExitStack() as stack:
        stack.enter_context(record_sites())
        stack.enter_context(after_torch_import(lambda torch: stack.enter_context(_torch_sites(torch))))
        yield


@contextmanager
def _torch_sites(torch: Any) -> Iterator[None]:
    from torch.overrides import TorchFunctionMode

    tensor = torch.Tensor

    class SiteStamping(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            outputs = out if type(out) in (tuple, list) else (out,)
            _stamp([t.grad_fn for t in outputs if isinstance(t, tensor)], user_site())
            return out

    with SiteStamping():
        yield


def _stamp(nodes: list[Any], site: tuple | None) -> None:
    """Give `site` to the nodes the call made: its outputs' and those behind them not stamped yet
    (`F.linear` makes `AddmmBackward0`, `TBackward0` ... under its output's node). Each node is
    stamped once, so the walks stop at older nodes and cost the graph's size in all."""
    stack = [n for n in nodes if n is not None]
    while stack:
        node = stack.pop()
        meta = node.metadata
        if SITE_KEY in meta:
            continue
        meta[SITE_KEY] = site
        stack.extend(n for n, _ in node.next_functions if n is not None)
