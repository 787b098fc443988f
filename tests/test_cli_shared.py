"""The CLI's shared pieces: counted nouns, JSON numbers, exit codes, running a file, the user-frame rule."""

from __future__ import annotations

from gradcli.plurals import noun, plural


def test_plural_counts_and_irregular_forms():
    assert plural(1, "case") == "1 case"
    assert plural(3, "case") == "3 cases"
    assert plural(0, "error") == "0 errors"
    assert plural(1, "leaf", "leaves") == "1 leaf" and plural(2, "leaf", "leaves") == "2 leaves"
    assert plural(12345, "node", thousands=True) == "12,345 nodes"
    assert plural(1000, "node") == "1000 nodes"
    assert noun(1, "was", "were") == "was" and noun(4, "was", "were") == "were"
    assert noun(2, "gradient") == "gradients"
