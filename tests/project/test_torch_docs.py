"""docs/pytorch.md: every `$ gradcli ...` example prints what the page shows."""

from __future__ import annotations

import re
import shlex
import sys

import pytest
from paths import ROOT

pytest.importorskip("torch")
pytestmark = pytest.mark.torch_parity

from typer.testing import CliRunner  # noqa: E402

from gradcli.cli.app import app  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts"))

import doc_examples  # noqa: E402  (elapsed times and round-off differ between runs and machines)


def torch_examples() -> list[tuple[str, str]]:
    section = (ROOT / "docs" / "pytorch.md").read_text()
    examples = []
    for block in re.findall(r"```text\n(.*?)```", section, flags=re.S):
        if block.startswith("$ gradcli "):
            command, shown = block.split("\n", 1)
            examples.append((command[2:], shown))
    return examples


def test_the_page_has_an_example_of_each_command():
    commands = {shlex.split(c)[1] for c, _ in torch_examples()}
    assert commands == {"check", "graph", "anomaly"}


@pytest.mark.parametrize("command, shown", torch_examples(), ids=[c for c, _ in torch_examples()])
def test_the_example_runs_as_shown(command: str, shown: str, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, shlex.split(command)[1:])
    assert "internal error" not in result.output
    assert doc_examples.comparable(result.output) == doc_examples.comparable(shown)
