"""torch's TORCH_WARN_ONCE: a warning given the first time only, or every time once
`set_warn_always(True)` asks for it (torch.set_warn_always)."""

from __future__ import annotations

import warnings

_always = [False]
_given: set = set()


def set_warn_always(b: bool) -> None:
    """When True, warnings given once per process are given every time."""
    _always[0] = bool(b)


def is_warn_always_enabled() -> bool:
    return _always[0]


def warn_once(message: str, category: type[Warning] = UserWarning, stacklevel: int = 2) -> None:
    """Warn with `message` the first time it is asked for (every time under set_warn_always(True))."""
    if _always[0] or message not in _given:
        _given.add(message)
        warnings.warn(message, category, stacklevel=stacklevel + 1)
