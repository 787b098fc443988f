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


def imported_modules(source: str) -> set[str]:
    """The top-level modules a file's source imports, anywhere in it (`import a.b` names `a`);
    empty when it cannot be parsed."""
    found: set[str] = set()
    tree = parsed(source)
    if tree is None:
        return found
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found.update(name.split(".")[0] for name in names)
    return found
