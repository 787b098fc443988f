"""The forward line that made each node: recorded while the user's file runs, read per node.

Engine nodes: `engine.autograd.anomaly.record_sites`, anomaly mode reduced to the innermost
user frame per node (a walk of a few frames per op, no NaN check, no changed message), kept
in `node._trace`. Torch nodes: a `TorchFunctionMode`, installed once the file imports torch,
walks to the same frame per torch call and stamps the nodes the call created in
`grad_fn.metadata` (the key `gradcli anomaly` uses), with the nodes behind them that the call
made too. torch's own anomaly mode would record it
too (`metadata["traceback_"]`), but formats the whole stack as text for every node and checks
every backward for NaN: many times the cost, for one line of it.

Both are read back by `gradcli.anomaly.sites.node_site`; only `--format json`, `html` and the
`--verbose` tree ask for them, so the default tree pays nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from engine.autograd.anomaly import record_sites, user_site

from ..anomaly.sites import Sites, node_site
from ..anomaly.torch_instrument import SITE_KEY
from ..frameworks import after_torch_import
from .model import ForwardLine


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


class ForwardLines:
    """Each node's `ForwardLine`, with paths as the user gave them (the file's own as given)."""

    def __init__(self, path: str):
        self._sites = Sites(os.path.abspath(path), path)

    def of(self, node: Any) -> ForwardLine | None:
        where = self._sites.location(node_site(node))
        return None if where is None else ForwardLine(where.file, where.line, where.source)
