"""Each torch script of tests/anomaly_scripts runs as written and as its engine twin (`torch` read as
`engine`, whose API mirrors it): `library` is "torch" or "engine", `script(name)` the path to run."""

from __future__ import annotations

from pathlib import Path

import pytest
from paths import TESTS

SCRIPTS = TESTS / "anomaly_scripts"


@pytest.fixture(params=["torch", "engine"])
def library(request) -> str:
    if request.param == "torch":
        pytest.importorskip("torch")
    return request.param


@pytest.fixture
def script(library, tmp_path):
    """`script(name)`: the torch script, or its engine twin written beside the test."""

    def make(name: str) -> Path:
        path = SCRIPTS / name
        if library == "torch":
            return path
        twin = tmp_path / name.removeprefix("torch_")
        twin.write_text(path.read_text().replace("torch", "engine"))
        return twin

    return make
