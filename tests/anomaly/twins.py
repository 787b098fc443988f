"""Reading `gradcli anomaly`'s one finding on a marked script (`# mark: NAME` on a line)."""

from __future__ import annotations

from pathlib import Path

from cli_runner import run_gradcli
from json_contract import validated


def line_of(path: Path, marker: str) -> int:
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# mark: {marker}"):
            return number
    raise AssertionError(f"{path.name} has no marker {marker!r}")


def only_finding(path: Path, kind: str, *options: str) -> dict:
    """The script's one finding, of `kind`, with exit code 1 (JSON checked against its schema)."""
    result = run_gradcli("anomaly", "--json", *options, path, traceback=True)
    doc = validated(result.stdout)
    assert [f["kind"] for f in doc["findings"]] == [kind], doc["findings"]
    assert result.exit_code == 1 == doc["exit_code"]
    return doc["findings"][0]


def at(path: Path, marker: str) -> tuple[str, int]:
    return str(path), line_of(path, marker)


def where(location: dict) -> tuple[str, int]:
    return location["file"], location["line"]
