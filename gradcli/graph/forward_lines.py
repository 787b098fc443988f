"""Each node's forward line as the graph shows it, read from what `program.sites.recording` kept."""

from __future__ import annotations

import os
from typing import Any

from ..program.sites import Sites, node_site
from .model import ForwardLine


class ForwardLines:
    """Each node's `ForwardLine`, with paths as the user gave them (the file's own as given)."""

    def __init__(self, path: str):
        self._sites = Sites(os.path.abspath(path), path)

    def of(self, node: Any) -> ForwardLine | None:
        where = self._sites.location(node_site(node))
        return None if where is None else ForwardLine(where.file, where.line, where.source)
