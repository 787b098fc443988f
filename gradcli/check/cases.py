"""Check cases: the `@gradcli.case` decorator and the `Case` record the loader collects.

Kept free of typer/rich (and of engine) so a check file can `import gradcli` for free.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

#: Per-case options a case may set; each overrides the matching CLI option for that case.
OPTION_NAMES = ("eps", "atol", "rtol", "order", "modes", "fast", "nondet_tol", "dtype", "reference")
#: What `modes` names: reverse mode's Jacobians (VJPs), forward mode's (JVPs).
MODE_CHOICES = ("rev", "fwd")
#: What `dtype` and `reference` take: the check in float64, or in the case's own dtype.
DTYPE_CHOICES = ("float64", "native")


@dataclass
class Case:
    """One thing to check: a function and the inputs to call it with.

    `inputs` is a tuple, or a zero-argument callable returning one (built only when the case
    is selected, with the seed freshly set). For the model form, `model` is the callable
    object whose `.parameters()` are checked along with the inputs; `modules` are the modules
    a decorated case named, whose parameters are checked too. `inputs_line` is where the
    inputs were written when that is not `line` (the top-level `inputs = ...`).
    """

    name: str
    func: Callable[..., Any]
    inputs: tuple | Callable[[], tuple]
    options: dict[str, Any] = field(default_factory=dict)
    file: str | None = None
    line: int | None = None
    model: Any = None
    inputs_line: int | None = None
    modules: tuple = ()


_collectors: list[list[Case]] = []


@contextmanager
def collecting() -> Iterator[list[Case]]:
    """Collect every case declared while the block runs (the loader wraps a file's execution).

    Blocks nest (the pytest plugin records a whole session, `gradcli check` a file inside it):
    the innermost gets the cases. Each block removes its own list by identity, since two lists
    of cases compare equal whenever both are empty.
    """
    found: list[Case] = []
    _collectors.append(found)
    try:
        yield found
    finally:
        del _collectors[next(i for i, c in enumerate(_collectors) if c is found)]


def validate_options(options: dict[str, Any]) -> dict[str, Any]:
    """Reject misspelt or out-of-range options where they are written, not at check time."""
    for key, value in list(options.items()):
        if key not in OPTION_NAMES:
            raise TypeError(
                f"gradcli.case() got an unexpected option {key!r}; options are {', '.join(OPTION_NAMES)}"
            )
        if key == "order" and value not in (1, 2):
            raise ValueError(f"gradcli.case(order=...) must be 1 or 2, not {value!r}")
        if key == "modes":
            options = {**options, "modes": parse_modes(value, "gradcli.case(modes=...)")}
        if key in ("dtype", "reference") and (not isinstance(value, str) or value not in DTYPE_CHOICES):
            raise ValueError(f'gradcli.case({key}=...) must be "float64" or "native", not {value!r}')
        if key == "fast" and value not in (True, False, None):
            raise ValueError(f"gradcli.case(fast=...) must be True, False or None, not {value!r}")
        if key in ("eps", "atol", "rtol", "nondet_tol"):
            # `not 0 <= value < inf` also refuses NaN, which every comparison lets through
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise ValueError(
                    f"gradcli.case({key}=...) must be a finite non-negative number, not {value!r}"
                )
            if key == "eps" and value == 0:
                raise ValueError("gradcli.case(eps=...) must be positive")
    return dict(options)


def parse_modes(value: Any, where: str) -> tuple[str, ...]:
    """`"rev,fwd"` or a sequence of "rev" / "fwd" as a tuple in gradcli's order ("rev" first)."""
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ValueError(f'{where} must be "rev", "fwd" or "rev,fwd", not {value!r}')
    chosen = {n.strip() for n in names}
    if not chosen or not chosen <= set(MODE_CHOICES):
        raise ValueError(f'{where} must be "rev", "fwd" or "rev,fwd", not {value!r}')
    return tuple(m for m in MODE_CHOICES if m in chosen)


def validate_modules(modules: Any) -> tuple:
    """`modules=`: one module or a tuple (or list) of them, each an object with .parameters()."""
    listed = tuple(modules) if isinstance(modules, (tuple, list)) else (modules,)
    for index, module in enumerate(listed):
        if isinstance(module, type) or not callable(getattr(module, "parameters", None)):
            what = f"the class {module.__name__}" if isinstance(module, type) else type(module).__name__
            raise TypeError(
                f"gradcli.case(modules=...) takes modules (objects with .parameters()), "
                f"but item {index} is {what}"
            )
    return listed


def case(
    *inputs: Any, name: str | None = None, modules: Any = (), **options: Any
) -> Callable[[Callable], Callable]:
    """Declare a gradient check of the decorated function at `inputs`.

    `inputs` are the positional arguments (tensors and plain values), or a single zero-argument
    callable returning a fresh tuple of them. `modules` (a module or a tuple of them) adds
    their parameters to what is checked, named after the modules' variables (`m1.fc.weight`).
    `options` (eps, atol, rtol, order, fast, nondet_tol, dtype, reference) override the
    command-line settings for this case only. Decorators stack: each one declares its own case. The function itself
    is returned unchanged.
    """
    if name is not None and not isinstance(name, str):
        raise TypeError(f"gradcli.case(name=...) must be a string, not {type(name).__name__}")
    options = validate_options(options)
    modules = validate_modules(modules)
    if len(inputs) == 1 and callable(inputs[0]):
        declared: tuple | Callable[[], tuple] = inputs[0]
    else:
        declared = tuple(inputs)
    caller = sys._getframe(1)
    file, line = caller.f_code.co_filename, caller.f_lineno

    def decorate(func: Callable) -> Callable:
        if not callable(func):
            raise TypeError(f"@gradcli.case must decorate a function, not {type(func).__name__}")
        record = Case(
            name=name or getattr(func, "__name__", "case"),
            func=func,
            inputs=declared,
            options=options,
            file=file,
            line=line,
            modules=modules,
        )
        cases = getattr(func, "__gradcli_cases__", None)
        if cases is None:
            cases = []
            try:
                func.__gradcli_cases__ = cases
            except (AttributeError, TypeError):
                pass
        cases.append(record)
        if _collectors:
            _collectors[-1].append(record)
        return func

    return decorate
