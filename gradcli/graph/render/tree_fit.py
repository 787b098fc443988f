"""Fitting tree lines (guides, then styled segments) to a width without breaking the guides.

A line too long for the width continues on the next line under a hanging indent that carries
the guides on (`│` where the tree goes on below), so a wrapped label never cuts through them.
Lines break between segments (a name list, a shape and dtype, a note), never inside one
unless a single segment is wider than the room left; rich's `Text.wrap` folds that one.
"""

from __future__ import annotations

import io
import re

from rich.console import Console
from rich.text import Text

Segment = tuple[str, str]  # (text, rich style)

#: Columns a label always keeps beside its guides; deeper levels are not drawn at that width.
MIN_LABEL = 24
GUIDE_WIDTH = 4
_GUIDE_CHARS = set("├└│─|`- ")
_FOLDER = Console(file=io.StringIO(), width=10_000, highlight=False, markup=False, emoji=False)


def fitting_depth(width: int) -> int:
    """Levels whose guides leave MIN_LABEL columns for the label (the '... below' line included)."""
    return max(1, (width - MIN_LABEL) // GUIDE_WIDTH)


def fit_lines(lines: list[list[Segment]], width: int, *, ascii_only: bool = False) -> list[list[Segment]]:
    """Each line as it is when it fits, else wrapped between segments under a hanging indent."""
    pipe, tee, elbow = ("|   ", "|-- ", "`-- ") if ascii_only else ("│   ", "├── ", "└── ")
    prefixes = [_prefix(line) for line in lines]
    fitted: list[list[Segment]] = []
    for k, line in enumerate(lines):
        if sum(len(chunk) for chunk, _ in line) <= width:
            fitted.append(line)
            continue
        prefix = prefixes[k]
        if prefix is None:
            hang, body = "  ", line
        else:
            head = prefix[:-GUIDE_WIDTH] if len(prefix) >= GUIDE_WIDTH else ""
            last = prefix[len(head) :]
            last = pipe if last == tee else ("    " if last == elbow else last)
            below = prefixes[k + 1] if k + 1 < len(prefixes) else None
            deeper = below is not None and len(below) > len(prefix)
            hang = head + last + (pipe if deeper else "    ")
            body = line[1:]
        first = prefix if prefix is not None else ""
        fitted.extend(_wrap(first, hang, body, width))
    return fitted


def _prefix(line: list[Segment]) -> str | None:
    """The guide prefix of a tree line; None for lines that are not part of the tree."""
    if line and set(line[0][0]) <= _GUIDE_CHARS and not line[0][1]:
        return line[0][0]
    return None


def _wrap(first: str, hang: str, body: list[Segment], width: int) -> list[list[Segment]]:
    room = max(1, width - len(hang))
    out: list[list[Segment]] = [[(first, "")]] if first else [[]]
    used = len(first)
    for text, style in body:
        if used + len(text) > width and used > len(hang if len(out) > 1 else first):
            out.append([(hang, "")])
            used = len(hang)
            text = text.lstrip()
        if len(text) <= width - used:
            out[-1].append((text, style))
            used += len(text)
            continue
        for n, piece in enumerate(_pieces(text.lstrip(), room)):
            if n or used > len(hang):
                out.append([(hang, "")])
            out[-1].append((piece, style))
            used = len(hang) + len(piece)
    return out


def _pieces(text: str, room: int) -> list[str]:
    """`text` in lines of at most `room`, broken after a dot, comma or space where it can be
    (`model.0.` / `weight`); a token still too long is folded by rich."""
    pieces = [""]
    for token in re.findall(r"[^.,\s]*[.,\s]*", text):
        if not token:
            continue
        if len(pieces[-1]) + len(token.rstrip()) <= room:
            pieces[-1] += token
            continue
        folded = [line.plain for line in Text(token).wrap(_FOLDER, room, overflow="fold")]
        pieces.extend(folded)
    return [piece.rstrip() for piece in pieces if piece.strip()]
