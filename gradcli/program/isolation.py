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
from contextlib import contextmanager
from typing import Any

from ..libraries import after_torch_import, torch_module


def _engine_state() -> tuple:
    import engine
    from engine.autograd import anomaly

    return (
        engine.is_grad_enabled(),
        (anomaly.is_anomaly_enabled(), anomaly.is_anomaly_check_nan_enabled()),
        engine.get_default_dtype(),
        engine.get_default_device(),
    )


def _set_engine_state(saved: tuple) -> None:
    import engine
    from engine.autograd import anomaly

    grad, detect, dtype, device = saved
    engine.set_grad_enabled(grad)
    anomaly.set_detect_anomaly(*detect)  # what the user asks: a tool holding the mode keeps it
    engine.set_default_dtype(dtype)
    engine.set_default_device(device)


def _torch_state(torch: Any) -> tuple:
    anomaly = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
    return torch.is_grad_enabled(), anomaly, torch.get_default_dtype(), _torch_device(torch)


def _torch_device(torch: Any) -> Any:
    """torch's default device; None when it cannot be read (torch makes a tensor on it to
    resolve "cuda" to "cuda:0", which fails where CUDA is not available)."""
    try:
        return torch.get_default_device()
    except Exception:
        return None


def _set_torch_state(torch: Any, saved: tuple) -> None:
    grad, (detect, check_nan), dtype, device = saved
    torch.set_grad_enabled(grad)
    torch.set_anomaly_enabled(detect, check_nan)
    torch.set_default_dtype(dtype)
    if device is not None and _torch_device(torch) != device:
        torch.set_default_device(None if device.type == "cpu" else device)


@contextmanager
def fresh_files() -> Iterator[Callable[[], None]]:
    """For the block: a function that restores the state the block started in, for the next file;
    called once more at the end. Grad and anomaly mode, default dtype and device (engine's, and
    torch's once imported), and the working directory."""
    cwd, engine_state = os.getcwd(), _engine_state()
    torch_state: list[tuple] = []

    def restore() -> None:
        os.chdir(cwd)
        _set_engine_state(engine_state)
        torch = torch_module()
        if torch is not None and torch_state:
            _set_torch_state(torch, torch_state[0])

    with after_torch_import(lambda torch: torch_state.append(_torch_state(torch))):
        try:
            yield restore
        finally:
            restore()
