"""Looking at the objects of a user's module without running their code.

Collection looks at every top-level object (is it a tensor, a module, decorated?). An object
whose attribute access raises (a `__getattr__`, a property, even `__class__` as a property,
which `isinstance` reads) is simply not what gradcli looks for: it is skipped, never a crash.
"""

from __future__ import annotations

from typing import Any


def instance_of(value: Any, classes: type | tuple[type, ...]) -> bool:
    """isinstance by the real type: never reads a user-defined `__class__`."""
    return issubclass(type(value), classes)


def attribute(value: Any, name: str, default: Any = None) -> Any:
    """getattr(value, name, default), with `default` also when the lookup raises anything else."""
    try:
        return getattr(value, name, default)
    except Exception:  # a user's __getattr__ or property: not the attribute gradcli looks for
        return default
