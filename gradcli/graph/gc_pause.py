"""Python's cyclic garbage collector paused around work that allocates many acyclic objects.

Building and rendering a 100,000-node graph makes millions of small records, dicts and strings,
none in a cycle: each generation-2 collection walks all of them, for nothing (half of
`--format json`'s time on a long chain). Reference counting still frees them.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collections inside; the collector's state as it was after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
