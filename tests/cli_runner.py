"""Running gradcli's commands in-process, as the CLI tests do: the click result, checked for what a
user must never see, whatever the test then asserts.

- `run_gradcli("check", path, "--json")`: the result; an exception escaping the command (rather than
  an exit code) fails the test, and so do a raw traceback and "internal error" in the output,
  unless the test expects them (`traceback=True`: --debug; `internal=True`: gradcli's own bug).
- `run_gradcli_json(...)`: (exit code, the JSON document, validated against its shipped schema).
- `gradcli_process(...)`: `python -m gradcli ARGS` in a folder, for what needs real file descriptors.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from json_contract import validated
from typer.testing import CliRunner, Result

from gradcli.cli.app import app

ROOT = Path(__file__).resolve().parent.parent


def run_gradcli(*args: Any, traceback: bool = False, internal: bool = False, **invoke: Any) -> Result:
    result = CliRunner().invoke(app, [str(a) for a in args], **invoke)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    if not traceback:
        assert "Traceback (most recent call last)" not in result.output, result.output
    if not internal:
        assert "internal error" not in result.output, result.output
        assert result.exit_code != 3, result.output  # 3: a bug of gradcli
    return result


def run_gradcli_json(*args: Any, **options: Any) -> tuple[int, dict]:
    result = run_gradcli(*args, **options)
    return result.exit_code, validated(result.stdout)


def gradcli_process(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python -m gradcli ARGS` in `cwd`, as a user's shell runs it (real fds, no COLUMNS), with
    this source tree first on PYTHONPATH and `env` on top."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    environment.pop("COLUMNS", None)
    return subprocess.run(
        [sys.executable, "-m", "gradcli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**environment, **(env or {})},
    )
