"""The JSON Schemas (draft 2020-12) of gradcli's machine-readable documents, shipped as package data.

Each command's `--format json` document names its schema (`"schema": "gradcli.check/1"`); the
files here are that contract, `gradcli schema NAME` prints one, and the tests validate every
document the commands write against them.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

#: The schema of each command's document, by command name; error: any command's, when it stopped.
NAMES = ("check", "graph", "anomaly", "diff", "error")


def schema_text(name: str) -> str:
    """The schema of command `name`'s document, as shipped (KeyError for an unknown name)."""
    if name not in NAMES:
        raise KeyError(name)
    return resources.files(__package__).joinpath(f"{name}.json").read_text(encoding="utf-8")


def schema(name: str) -> dict[str, Any]:
    """The schema of command `name`'s document, parsed."""
    return json.loads(schema_text(name))
