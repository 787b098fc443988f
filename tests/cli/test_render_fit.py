"""render/fit.py: a fitted table prints the lines it was measured in, laid out once, not twice."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.padding import Padding
from rich.table import Table

from gradcli.check.render.fit import LaidOut, fitted, number


def _build(dropped: frozenset[str]) -> Table:
    table = Table()
    columns = [c for c in ("case", "input", "max abs err", "note") if c not in dropped]
    for name in columns:
        table.add_column(name)
    for i in range(3):
        cells = {"case": f"case_{i}", "input": "weight", "max abs err": number(f"{i * 1.5e-9:.3e}")}
        cells["note"] = "a long remark that takes room " * 2
        table.add_row(*(cells[c] for c in columns))
    return table


def _console(width: int) -> Console:
    return Console(file=io.StringIO(), width=width, color_system=None)


def _printed(console: Console, renderable) -> str:
    console.print(renderable)
    return console.file.getvalue()


@pytest.mark.parametrize("width", [40, 60, 80, 140])
def test_a_fitted_table_prints_as_a_fresh_layout_of_the_same_build_would(width):
    console = _console(width)
    result = fitted(console, _build, ["note", "input"])
    plain = result.renderable if isinstance(result, LaidOut) else result
    assert _printed(console, result) == _printed(_console(width), plain)


def test_a_fitted_table_is_laid_out_once_when_it_fits(monkeypatch):
    layouts = []
    original = Table.__rich_console__

    def counting(self, console, options):
        layouts.append(options.max_width)
        return original(self, console, options)

    monkeypatch.setattr(Table, "__rich_console__", counting)
    console = _console(140)
    _printed(console, fitted(console, _build, ["note", "input"]))
    assert layouts == [140]


def test_printed_in_less_room_than_it_was_measured_in_it_is_laid_out_again():
    console = _console(140)
    result = fitted(console, _build, ["note"])
    assert isinstance(result, LaidOut)
    narrow = _console(50)
    assert _printed(narrow, Padding(result, (0, 0, 0, 4))) == _printed(
        _console(50), Padding(result.renderable, (0, 0, 0, 4))
    )
