"""`gradcli graph`'s tree at 60, 80, 120 and 200 columns: no line wider than the terminal, the
guides unbroken where a label wraps, numbers whole, and the defaults only under --verbose."""

import re
import textwrap

import pytest
from typer.testing import CliRunner

from gradcli.cli.app import app

GUIDES = "│├└"
# A model with long names, saved tensors, a stale one and a deep chain: every kind of line.
SCRIPT = """
import engine
from engine import nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.projection_with_a_rather_long_name = nn.Linear(3, 5)
        self.activation = nn.Tanh()

    def forward(self, x):
        return self.activation(self.projection_with_a_rather_long_name(x))

model = nn.Sequential(Block(), nn.Linear(5, 2))
input_features_of_the_first_batch = engine.randn(4, 3, requires_grad=True)
hidden = input_features_of_the_first_batch
for _ in range(8):
    hidden = hidden * 1.0001
output_of_the_whole_sequential_model = model(hidden)
loss = (output_of_the_whole_sequential_model ** 2).mean()
"""


def tree(tmp_path, monkeypatch, width: int, *args: str) -> list[str]:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(SCRIPT))
    monkeypatch.setenv("COLUMNS", str(width))
    result = CliRunner().invoke(app, ["graph", str(path), "--show-saved", *args])
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def guides_connect(lines: list[str]) -> list[str]:
    """Lines whose guide characters do not hang from a guide or a label start on the line above."""
    broken = []
    for above, line in zip(lines, lines[1:]):
        for column, char in enumerate(line):
            if char not in GUIDES:
                if char not in " ─":
                    break  # the label: guides only come before it
                continue
            over = above[column] if column < len(above) else " "
            label_start = over not in GUIDES + " ─" and (column == 0 or above[column - 1] == " ")
            if over not in "│├" and not label_start:
                broken.append(f"{above}\n{line}")
    return broken


@pytest.mark.parametrize("width", [60, 80, 120, 200])
def test_no_line_wider_than_the_terminal_and_the_guides_intact(tmp_path, monkeypatch, width):
    lines = tree(tmp_path, monkeypatch, width)
    assert max(len(line) for line in lines) <= width
    assert not guides_connect(lines)
    assert not any("…" in line for line in lines)
    text = "\n".join(lines)
    for shape in ("(4, 3)", "(5, 3)", "(2, 5)"):  # shapes whole on one line
        assert shape in text
    if width >= 120:  # the leaf 14 levels down is drawn, its name whole
        assert "input_features_of_the_first_batch" in text


def test_a_narrow_terminal_draws_the_levels_that_fit_and_says_so(tmp_path, monkeypatch):
    narrow = tree(tmp_path, monkeypatch, 60)
    assert any("levels deep of" in line and "all that fit 60 columns" in line for line in narrow)
    wide = tree(tmp_path, monkeypatch, 200)
    assert not any("levels deep of" in line for line in wide)


def test_a_wrapped_label_continues_under_its_own_guide(tmp_path, monkeypatch):
    lines = tree(tmp_path, monkeypatch, 60)
    k = next(i for i, line in enumerate(lines) if line.rstrip().endswith("AccumulateGrad"))
    column = lines[k].index("AccumulateGrad")
    assert re.match(r"[ │]*$", lines[k + 1][:column])
    # broken after a dot, not inside a word; the shape whole
    assert lines[k + 1].endswith(" model.0.") and lines[k + 2].endswith(
        " projection_with_a_rather_long_name."
    )
    assert lines[k + 3].endswith(" bias  (5,) float32 cpu")


def test_defaults_are_hidden_unless_verbose(tmp_path, monkeypatch):
    plain = "\n".join(tree(tmp_path, monkeypatch, 200))
    for default in ("retains_grad=False", "requires_grad=True", "is_leaf=True", "grad=None"):
        assert default not in plain
    verbose = "\n".join(tree(tmp_path, monkeypatch, 200, "--verbose"))
    assert "retains_grad=False" in verbose and "requires_grad=True is_leaf=True grad=None" in verbose
