"""engine or torch: the one place gradcli tells the two tensor libraries apart.

gradcli runs engine files and PyTorch files alike. Each library is one object (`ENGINE`,
`TORCH`; `library.py` says what they do), found for a file by its imports (`for_files`) and for
values by their types (`library_of`); everything that differs between the two is a method of
that object, so no other module asks which library it has. torch is never imported by gradcli:
its object notices the user's file importing it (`torch.after_torch_import`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .engine import ENGINE
from .library import Library, PerLibrary
from .random_state import take_random_state
from .torch import TORCH, TORCH_MISSING, after_torch_import, is_missing_torch

#: Every library, engine first (the default).
LIBRARIES: tuple[Library, ...] = (ENGINE, TORCH)

__all__ = [
    "ENGINE",
    "LIBRARIES",
    "TORCH",
    "TORCH_MISSING",
    "Library",
    "MixedTensors",
    "PerLibrary",
    "after_torch_import",
    "for_files",
    "is_missing_torch",
    "is_tensor",
    "is_uninitialized",
    "library_of",
    "loaded",
    "take_random_state",
]


def is_tensor(value: Any) -> bool:
    """A tensor of any library."""
    return any(library.is_tensor(value) for library in LIBRARIES)


def is_uninitialized(value: Any) -> bool:
    """A parameter of any library without a shape yet (a lazy module's, before its first call)."""
    return any(library.is_uninitialized(value) for library in LIBRARIES)


def tensor_library(value: Any) -> Library | None:
    """The library `value` is a tensor of (None: not a tensor)."""
    return next((library for library in LIBRARIES if library.is_tensor(value)), None)


def loaded() -> list[Library]:
    """The libraries imported now (torch only once the user's code imported it)."""
    return [library for library in LIBRARIES if library.loaded()]


def for_files(imported: Iterable[str]) -> list[Library]:
    """The libraries files use, from the top-level modules they import: engine when none is named."""
    names = set(imported)
    return [library for library in LIBRARIES if library.module in names] or [ENGINE]


def for_file(imported: Iterable[str]) -> Library:
    """The library a file's messages should name: torch when it imports torch, else engine."""
    return for_files(imported)[-1]


class MixedTensors(Exception):
    """Values of one case (or one graph) that are both engine and torch tensors."""

    def __init__(self, engine_names: list[str], torch_names: list[str]):
        self.engine_names = engine_names
        self.torch_names = torch_names
        super().__init__(
            f"mixes engine and torch tensors ({_listed(engine_names)} "
            f"{'is an engine.Tensor' if len(engine_names) == 1 else 'are engine.Tensors'}; "
            f"{_listed(torch_names)} {'is a torch.Tensor' if len(torch_names) == 1 else 'are torch.Tensors'}): "
            "gradients cannot flow between the two libraries, use one of them"
        )


def _listed(names: list[str]) -> str:
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def library_of(named: Iterable[tuple[str, Any]]) -> Library | None:
    """The library of the tensors among `named` values (None: no tensor).

    Raises MixedTensors naming both sides when there are tensors of both."""
    found: dict[Library, list[str]] = {}
    for name, value in named:
        library = tensor_library(value)
        if library is not None:
            found.setdefault(library, []).append(name)
    if len(found) > 1:
        raise MixedTensors(found.get(ENGINE, []), found.get(TORCH, []))
    return next(iter(found), None)
