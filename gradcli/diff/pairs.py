"""`@gradcli.pair`: a candidate declared against its reference, and the `Pair` record the loader collects.

Kept free of typer, rich and the engine, so that a file can `import gradcli` for free.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


@dataclass
class Pair:
    """Two callables run on the same inputs: `candidate` is compared with `reference`.

    `inputs` is a tuple of arguments, or a zero-argument callable returning one (built once, seeded,
    and copied for each side). Callables may be modules: their parameters are matched by name and
    the candidate's set to the reference's values.
    """

    name: str
    reference: Any
    candidate: Any
    inputs: tuple | Callable[[], tuple]
    file: str | None = None
    line: int | None = None


_collectors: list[list[Pair]] = []


@contextmanager
def collecting() -> Iterator[list[Pair]]:
    """Collect every pair declared while the block runs (the loader wraps a file's execution)."""
    found: list[Pair] = []
    _collectors.append(found)
    try:
        yield found
    finally:
        del _collectors[next(i for i, c in enumerate(_collectors) if c is found)]


def pair(*, reference: Any, inputs: Any, name: str | None = None) -> Callable[[Callable], Callable]:
    """Declare the decorated function (or module class instance) a candidate for `reference`.

    `gradcli diff FILE` runs both on `inputs` (a tuple, or a function returning one) and reports
    where their forward values or gradients first differ. The function is returned unchanged.
    """
    if not callable(reference):
        raise TypeError(f"gradcli.pair(reference=...) must be callable, not {type(reference).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"gradcli.pair(name=...) must be a string, not {type(name).__name__}")
    declared = (
        inputs if callable(inputs) else tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    )
    caller = sys._getframe(1)
    file, line = caller.f_code.co_filename, caller.f_lineno

    def decorate(candidate: Callable) -> Callable:
        if not callable(candidate):
            raise TypeError(f"@gradcli.pair must decorate a callable, not {type(candidate).__name__}")
        record = Pair(
            name or getattr(candidate, "__name__", "pair"), reference, candidate, declared, file, line
        )
        if _collectors:
            _collectors[-1].append(record)
        return candidate

    return decorate
