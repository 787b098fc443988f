"""`check --timeout`: a case that runs too long is stopped where it is and fails.

The clock is the process's real-time interval timer (`signal.setitimer(ITIMER_REAL)`), whose
SIGALRM handler raises `TimedOut` in whatever Python code is running, user code included.
That needs POSIX and the main thread: elsewhere (Windows, the pytest plugin run in a worker
thread) `time_limit` sets no timer and the case runs unbounded; `available()` says which.
`TimedOut` is a BaseException so that a user's `except Exception` cannot swallow it; code in
C (a long numpy or torch call) is interrupted when it returns to Python.
"""

from __future__ import annotations

import math
import os
import signal
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager


class TimedOut(BaseException):
    """Raised into a case that ran past its time limit (private to this module and checking)."""

    def __init__(self, seconds: float, where: str | None):
        at = f" (at {where})" if where else ""
        super().__init__(f"timed out after {seconds:g} s{at}")


def available() -> bool:
    """Whether a time limit can be set here: POSIX, in the main thread."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Run the block for at most `seconds` (None or inf: no limit), else raise TimedOut in it."""
    if seconds is None or math.isinf(seconds) or not available():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise TimedOut(seconds, None)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except TimedOut as exc:
        raise TimedOut(seconds, user_line(exc)).with_traceback(exc.__traceback__) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def user_line(exc: BaseException) -> str | None:
    """file:line of the innermost frame of the user's code the exception passed through."""
    from engine.autograd.anomaly import is_internal_file

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not is_internal_file(f.filename)]
    return f"{os.path.abspath(frames[-1].filename)}:{frames[-1].lineno}" if frames else None
