"""Where an op's public names come from, said once beside the op.

`@public` makes a function both `engine.<name>` and `Tensor.<name>` (the common case in
PyTorch); `function=False` or `method=False` keeps it to one of the two. A unary row
applied in place (`Tensor.exp_`) needs only its name in `IN_PLACE`. ops/tensor_methods.py
installs the methods; a module of ops ends with `__all__ = exported(__name__)`, and
engine/__init__.py star-imports it.
"""

from __future__ import annotations

from collections.abc import Callable

FUNCTIONS: dict[str, Callable] = {}  # engine.<name>
METHODS: dict[str, Callable] = {}  # Tensor.<name>
IN_PLACE: dict[str, object] = {}  # Tensor.<name>_ -> the unary row it applies in place


def public(
    fn: Callable | None = None, *, function: bool = True, method: bool = True, name: str | None = None
):
    """Register `fn` as `engine.<name>` and/or `Tensor.<name>` (usable bare, or with options)."""

    def register(f: Callable) -> Callable:
        key = name or f.__name__
        if function:
            FUNCTIONS[key] = f
        if method:
            METHODS[key] = f
        return f

    return register if fn is None else register(fn)


def exported(module: str) -> list[str]:
    """The `engine.<name>` functions registered by `module`: that module's `__all__`."""
    return sorted(name for name, f in FUNCTIONS.items() if f.__module__ == module)
