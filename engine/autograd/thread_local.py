"""What autograd keeps per thread, as torch 2.13 keeps it in its thread-local state.

A new thread starts with grad mode on, no saved-tensor hooks (and none disabled), no node's
backward running and no torch.func transform running (functorch keeps its transform stack per
thread), whatever the thread that started it was doing; anomaly mode, the open forward-AD level
and the default dtype are process-wide, as in torch (docs/engine.md has the table measured on torch). Each thread's numpy error state is quieted on its first
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
        #: The torch.func transforms running in this thread (engine/func): how rows apply while a
        #: vmap runs (ops/op.py reads it per op; None outside vmap), how a comparison and an in-place
        #: op meet batched tensors, and the transforms' own counts and levels.
        self.batched_apply = None
        self.batched_elementwise = None
        self.batched_inplace = None
        self.transforms = Transforms()

    def snapshot(self) -> tuple:
        """This thread's state, for a worker that continues its work (a handed-off backward)."""
        batching = (self.batched_apply, self.batched_elementwise, self.batched_inplace)
        return (
            self.grad_enabled,
            self.saved_hooks[:],
            self.hooks_disabled,
            self.running[:],
            batching,
            self.transforms,
            backend.draws.snapshot(),
        )

    def adopt(self, snapshot: tuple) -> None:
        """Take on another thread's `snapshot`, as torch's worker threads take on the caller's state
        (functorch's transforms included)."""
        grad_enabled, hooks, disabled, running, batching, transforms, draws = snapshot
        self.grad_enabled, self.hooks_disabled = grad_enabled, disabled
        self.saved_hooks[:] = hooks
        self.running[:] = running
        self.batched_apply, self.batched_elementwise, self.batched_inplace = batching
        self.transforms = transforms
        backend.draws.adopt(draws)


class Transforms:
    """The torch.func transforms one thread is running (a handed-off backward shares its caller's)."""

    __slots__ = ("functorch", "vmap_functorch", "reverse", "levels", "different", "per_example")

    def __init__(self) -> None:
        #: Transforms running, and vmaps among them: custom Functions then run under torch.func's rules.
        self.functorch = 0
        self.vmap_functorch = 0
        #: Reverse-mode transforms (grad, vjp, jacrev) running.
        self.reverse = 0
        #: The vmap levels running, innermost last; (level, batch size) of those whose draws differ.
        self.levels: list[int] = []
        self.different: list[tuple] = []
        #: vmaps running their function once per example (views into the batch's storage).
        self.per_example = 0


this_thread = _ThisThread()
