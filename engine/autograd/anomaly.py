"""Anomaly mode: remember where each node was created, and check backward for NaN.

Off by default; when off, nodes pay one list lookup (`state[0]`) and nothing else.
"""

from __future__ import annotations

import os
import sys
import traceback
import warnings

# state[0]: anomaly mode on; state[1]: check for NaN in backward outputs.
state = [False, True]

_ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_anomaly_enabled() -> bool:
    return state[0]


def is_anomaly_check_nan_enabled() -> bool:
    return state[1]


def _is_internal(filename: str) -> bool:
    return filename.startswith(_ENGINE_DIR)


def creation_trace() -> traceback.StackSummary:
    """The stack of the forward call that is creating a node, without engine frames."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        if not _is_internal(frame.f_code.co_filename):
            frames.append((frame, frame.f_lineno))
        frame = frame.f_back
    frames.reverse()
    return traceback.StackSummary.extract(frames, lookup_lines=False)


# id(version counter) -> [(new version, FrameSummary of the user's line)], anomaly mode only.
_bumps: dict[int, list] = {}


def user_frame() -> traceback.FrameSummary | None:
    """The innermost frame outside the engine: the user's line."""
    frame = sys._getframe(1)
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    return traceback.FrameSummary(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def record_bump(tensor) -> None:
    """Remember where a tensor's version changed, so a stale saved tensor can name the line."""
    _bumps.setdefault(id(tensor._vc), []).append((tensor._vc[0], user_frame()))


def bumps_of(tensor) -> list:
    return _bumps.get(id(tensor._vc), [])


def warn_with_trace(node) -> None:
    """Print the forward trace of the node whose backward failed, as torch does."""
    trace = getattr(node, "_trace", None)
    if trace is None:
        return
    text = "".join(traceback.format_list(trace))
    warnings.warn(
        f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{text}",
        UserWarning,
        stacklevel=2,
    )


class set_detect_anomaly:
    """Turn anomaly mode on or off (a function call or a context manager)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = (state[0], state[1])
        state[0] = bool(mode)
        state[1] = bool(check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        state[0], state[1] = self._prev
        return False


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly mode on, as torch's."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        self._prev = None
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime "
            "and should only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self):
        self._prev = (state[0], state[1])
        state[0], state[1] = True, self.check_nan
        return None

    def __exit__(self, *exc):
        state[0], state[1] = self._prev
        return False

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper


def check_nan(node, outputs) -> None:
    """torch's anomaly-mode check: a backward that returns NaN fails at that node."""
    for i, g in enumerate(outputs):
        if g is None:
            continue
        data = getattr(g, "_data", g)
        if bool((data != data).any()):
            warn_with_trace(node)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
