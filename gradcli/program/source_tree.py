"""The AST of a user's file for a first look (imports, top-level names), never an error.

compile_file already said why a file cannot run; a file Python compiles may still be too deep
for `ast.parse` (a 100,000-term `+` chain), so a look that cannot be had is simply skipped.
"""

from __future__ import annotations

import ast


def parsed(source: str | bytes) -> ast.Module | None:
    """The module's AST (bytes are decoded as Python does: BOM, coding cookie), or None."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
