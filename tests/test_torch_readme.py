"""The README's PyTorch section: every `$ gradcli ...` example prints what the README shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from gradcli.cli import app  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TIMES = re.compile(r"\d+\.\d+s\b")  # elapsed times differ between runs
ERRORS = re.compile(r"\d\.\d\de[-+]\d\d")
INDEX = re.compile(r"\[[\d, ]*\]")


def comparable(text: str) -> str:
    """The output without what differs between runs and machines: elapsed times, and a passing
    row's errors and worst index, float64 rounding noise that torch's CPU kernels (chosen by the
    CPU's instruction set) round differently."""
    lines = []
    for line in TIMES.sub("T", text).rstrip("\n").splitlines():
        if re.search(r"\bPASS\b", line):
            line = INDEX.sub(lambda m: re.sub(r"\d", "#", m.group()), ERRORS.sub("#.##e-##", line))
        lines.append(line)
    return "\n".join(lines)


def torch_examples() -> list[tuple[str, str]]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## PyTorch files\n", 1)[1].split("\n## ", 1)[0]
    examples = []
    for block in re.findall(r"```text\n(.*?)```", section, flags=re.S):
        if block.startswith("$ gradcli "):
            command, shown = block.split("\n", 1)
            examples.append((command[2:], shown))
    return examples


def test_the_section_has_an_example_of_each_command():
    commands = {shlex.split(c)[1] for c, _ in torch_examples()}
    assert commands == {"check", "graph", "anomaly"}


@pytest.mark.parametrize("command, shown", torch_examples(), ids=[c for c, _ in torch_examples()])
def test_readme_example_runs_as_shown(command: str, shown: str, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, shlex.split(command)[1:])
    assert "internal error" not in result.output
    assert comparable(result.output) == comparable(shown)
