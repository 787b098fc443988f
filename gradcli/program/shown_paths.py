"""A user's file as the reports show it: relative to the working folder when it lies below it."""

from __future__ import annotations

import os


def display_path(path: str) -> str:
    """`path` relative to the working folder, or as it is when that would climb out of it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative
