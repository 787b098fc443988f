"""The threads a user's script starts: something set up in each before its code runs."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def in_new_threads(setup: Callable[[], object]) -> Iterator[None]:
    """`setup()` run in every thread started with `threading` during the block, before its target.

    Through `threading.setprofile`, the one place threading calls into every new thread: the
    profile function runs once, puts back any profiler the script set, and calls `setup`. What
    `setup` enters stays for the thread's life (thread-local state goes with the thread)."""
    previous = threading.getprofile()

    def starting(frame, event, arg):
        sys.setprofile(previous)
        setup()
        if previous is not None:
            previous(frame, event, arg)

    threading.setprofile(starting)
    try:
        yield
    finally:
        threading.setprofile(previous)


@contextmanager
def thread_errors(taken: Callable[[BaseException], bool]) -> Iterator[None]:
    """Uncaught errors of the script's threads during the block: those `taken(error)` accepts are the
    caller's to report (threading does not print them); the rest go to the hook in place before."""
    previous = threading.excepthook

    def hook(args) -> None:
        error = args.exc_value
        if error is None or not taken(error):
            previous(args)

    threading.excepthook = hook
    try:
        yield
    finally:
        threading.excepthook = previous
