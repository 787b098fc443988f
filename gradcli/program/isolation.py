"""Each file of a run starts from the same state, whatever the files before it did.

A check file's top level may turn grad mode off, switch on anomaly mode, change the default
dtype or device, or `os.chdir`: Python-wide state that would otherwise leak into the next
file of `gradcli check a.py b.py`. `fresh_files()` takes the state the run starts in (torch's
when torch is first imported) and puts it back before each file and at the end. A file's own
cases run right after it loads (collection.each_file), so they see the state their file left.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from ..libraries import LIBRARIES


@contextmanager
def fresh_files() -> Iterator[Callable[[], None]]:
    """For the block: a function that restores the state the block started in, for the next file;
    called once more at the end. Grad and anomaly mode, default dtype and device (engine's, and
    torch's once imported), and the working directory."""
    cwd = os.getcwd()
    with ExitStack() as states:
        restores = [states.enter_context(library.saved_state()) for library in LIBRARIES]

        def restore() -> None:
            os.chdir(cwd)
            for put_back in restores:
                put_back()

        try:
            yield restore
        finally:
            restore()
