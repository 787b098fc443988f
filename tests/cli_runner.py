"""Running gradcli's commands in-process, as the CLI tests do: the click result, checked for what a
user must never see, whatever the test then asserts.

- `run_gradcli("check", path, "--json")`: the result; an exception escaping the command (rather than
  an exit code) fails the test, and so do a raw traceback and "internal error" in the output,
  unless the test expects them (`traceback=True`: --debug; `internal=True`: gradcli's own bug).
- `run_gradcli_json(...)`: (exit code, the JSON document, validated against its shipped schema).
"""

from __future__ import annotations

from typing import Any

from json_contract import validated
from typer.testing import CliRunner, Result

from gradcli.cli.app import app


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
