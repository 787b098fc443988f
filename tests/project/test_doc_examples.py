"""The docs' `$ gradcli ...` examples print what the docs show (scripts/doc_examples.py rewrites them)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from paths import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

import doc_examples  # noqa: E402

DOCS = [ROOT / "docs" / "verdicts.md", ROOT / "docs" / "diff.md"]
EXAMPLES = [
    (path, command, shown) for path in DOCS for command, shown in doc_examples.examples(path.read_text())
]


def test_every_verdict_class_has_an_example():
    text = (ROOT / "docs" / "verdicts.md").read_text()
    headings = {line[3:] for line in text.splitlines() if line.startswith("## ")}
    from gradcli.check.verdicts import CLASSES

    assert headings == set(CLASSES)


@pytest.mark.parametrize(("path", "command", "shown"), EXAMPLES, ids=[c for _, c, _ in EXAMPLES])
def test_the_example_prints_what_the_docs_show(path: Path, command: str, shown: str):
    assert doc_examples.comparable(doc_examples.output_of(command)) == doc_examples.comparable(shown)
