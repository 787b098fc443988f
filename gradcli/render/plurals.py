"""Counted nouns for messages ("1 case", "3 cases"), so no message builds its plural by hand."""

from __future__ import annotations


def noun(count: int, word: str, words: str | None = None) -> str:
    """`word` for a count of 1, else `words` (default: `word` + "s")."""
    if count == 1:
        return word
    return words if words is not None else word + "s"


def plural(count: int, word: str, words: str | None = None, *, thousands: bool = False) -> str:
    """'1 case', '3 cases', '0 cases'; `words` for irregular plurals, `thousands` writes 1,000."""
    number = f"{count:,}" if thousands else str(count)
    return f"{number} {noun(count, word, words)}"
