"""What autograd keeps per thread, as torch 2.13 keeps it in its thread-local state.

A new thread starts with grad mode on, no saved-tensor hooks (and none disabled), and no
node's backward running, whatever the thread that started it was doing; anomaly mode, the
open forward-AD level and the default dtype are process-wide, as in torch (docs/engine.md
has the table measured on torch). Each thread's numpy error state is quieted on its first
read, so ops need no check of their own.

The op path reads the thread's state once per op, through its dict (`this_thread.__dict__`,
the cheapest read of a threading.local: ops/op.py); elsewhere `this_thread.grad_enabled` reads well.
"""

from __future__ import annotations

import threading

from .. import backend


class _ThisThread(threading.local):
    """Each thread's own autograd state; `__init__` runs in every thread at its first read."""

    def __init__(self) -> None:
        backend.quiet_numpy()
        self.grad_enabled = True
        #: The registered (pack_hook, unpack_hook) pairs, innermost last (saved_hooks.py).
        self.saved_hooks: list = []
        #: The message registering saved-tensor hooks raises while they are disabled, else None.
        self.hooks_disabled: str | None = None
        #: The nodes whose backward is running, innermost last (torch's current node).
        self.running: list = []

    def snapshot(self) -> tuple:
        """This thread's state, for a worker that continues its work (a handed-off backward)."""
        return (self.grad_enabled, self.saved_hooks[:], self.hooks_disabled, self.running[:])

    def adopt(self, snapshot: tuple) -> None:
        """Take on another thread's `snapshot`, as torch's worker threads take on the caller's state."""
        grad_enabled, hooks, disabled, running = snapshot
        self.grad_enabled, self.hooks_disabled = grad_enabled, disabled
        self.saved_hooks[:] = hooks
        self.running[:] = running


this_thread = _ThisThread()
