"""What a command imports: only what it needs, so start-up stays a small multiple of `import numpy`.

Each probe runs in a fresh interpreter and lists the heavy packages in sys.modules when it exits.
"""

import json
import os
import subprocess
import sys

import pytest
from paths import ROOT

#: typer (0.28, with its own copy of click) parses; pydantic, which typer 0.29 requires, must not load.
HEAVY = ("rich", "pygments", "pydantic", "numpy", "engine", "matplotlib")

PROBE = """
import atexit, json, runpy, sys
atexit.register(lambda: sys.stderr.write("MODULES " + json.dumps(sorted(sys.modules)) + "\\n"))
sys.argv = ["gradcli", *sys.argv[1:]]
runpy.run_module("gradcli", run_name="__main__")
"""


def _modules(*args: str) -> set[str]:
    """The modules loaded by the time `gradcli ARGS` exits, in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


def _heavy(modules: set[str]) -> set[str]:
    return {name for name in modules if name.split(".")[0] in HEAVY}


def test_importing_the_cli_loads_neither_rich_nor_the_engine():
    probe = "import sys, gradcli.cli; print(sorted(sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    modules = set(eval(done.stdout))
    assert "gradcli.cli" in modules
    assert _heavy(modules) == set()
    assert not {"gradcli.check.render", "gradcli.check.jacobians", "gradcli.check.collection"} & modules


def test_version_loads_nothing_heavy():
    modules = _modules("--version")
    assert "gradcli.cli" in modules
    assert _heavy(modules) == set()


def test_schema_loads_neither_rich_nor_the_engine():
    modules = _modules("schema", "check")
    assert "gradcli.schemas" in modules
    assert not {"rich", "engine", "numpy"} & {name.split(".")[0] for name in modules}


@pytest.mark.parametrize("path", ["examples/model.py"])
def test_a_passing_check_loads_the_engine_core_and_no_more(path):
    modules = _modules("check", path)
    assert {"engine", "engine.autograd.gradcheck", "rich.console"} <= modules  # it did run the check
    # nothing the run does not use: syntax colouring (a failure's source), plots, engine.optim
    assert not {"pygments", "matplotlib", "engine.optim", "gradcli.check.jacobians"} & modules
    assert "pydantic" not in {name.split(".")[0] for name in modules}  # typer 0.28 parses, alone
    assert "click" not in {name.split(".")[0] for name in modules}  # typer's own copy of click
