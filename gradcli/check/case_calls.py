"""How a prepared case is called, wherever gradcli calls it (the check, a failure's replays, the
causes of a drifting forward): with its checked parameters as extra inputs, in its library's grad
mode, and with Ctrl-C reported at the case."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..libraries import is_tensor
from ..program.running import interrupted
from .loading import PreparedCase


def callable_and_inputs(prepared: PreparedCase) -> tuple[Callable, tuple]:
    """Checked parameters (model, modules=) become extra inputs of a wrapper that ignores them."""
    case = prepared.case
    if not prepared.params:
        return case.func, prepared.inputs
    func, count = case.func, len(prepared.inputs)
    params = tuple(p for _, p in prepared.params)
    return (lambda *xs: func(*xs[:count])), prepared.inputs + params


def interrupted_in(prepared: PreparedCase, exc: KeyboardInterrupt) -> BaseException:
    return interrupted(f"while running {prepared.file.path}::{prepared.case.name}", exc)


def grad_enabled(prepared: PreparedCase) -> Any:
    return prepared.library.enable_grad()


def wants_grad(value: Any) -> bool:
    return is_tensor(value) and value.dtype.is_floating_point and value.requires_grad
