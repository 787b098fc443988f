"""`[tool.gradcli]` in pyproject.toml: a project's own defaults, found as pytest finds its config.

Options are taken from the case first, then from the command line (or `assert_gradients`'s
keywords), then from `[tool.gradcli]`, then gradcli's defaults: `starting_settings` merges the
last three, for the CLI and for checks in a process that imported the case alike (a case's own
options come on top in `run_case`). The table holds the check
options a case may set (`eps`, `atol`, `rtol`, `order`, `fast`, `nondet_tol`, `dtype`,
`reference`) and `files`: the glob patterns a directory is searched with (default
`check_*.py`, `*_check.py`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..program.running import LoadError
from .cases import OPTION_NAMES, validate_options
from .results import Settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, before it joined the standard library
    import tomli as tomllib

DEFAULT_FILES = ("check_*.py", "*_check.py")
KEYS = (*OPTION_NAMES, "files")


@dataclass(frozen=True)
class ProjectConfig:
    """The `[tool.gradcli]` table of the nearest pyproject.toml (path None: there is none)."""

    path: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    files: tuple[str, ...] = DEFAULT_FILES


def find_pyproject(start: str) -> str | None:
    """The nearest pyproject.toml at or above `start` (a folder or a file)."""
    folder = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(os.path.abspath(start)))
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def load_config(start: str) -> ProjectConfig:
    """The project's `[tool.gradcli]` for `start`; a malformed one is a LoadError naming the file."""
    path = find_pyproject(start)
    if path is None:
        return ProjectConfig()
    try:
        with open(path, "rb") as handle:
            table = tomllib.load(handle).get("tool", {}).get("gradcli", {})
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise LoadError(f"cannot read [tool.gradcli]: {exc}", path) from None
    except UnicodeDecodeError as exc:
        raise LoadError(
            f"cannot read [tool.gradcli]: not UTF-8 (byte {exc.start}: {exc.reason})", path
        ) from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise LoadError("cannot read [tool.gradcli]: nested too deeply for the TOML parser", path) from None
    if not isinstance(table, dict):
        raise LoadError("[tool.gradcli] must be a table", path)
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise LoadError(
            f"[tool.gradcli] has unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
            f"keys are {', '.join(KEYS)}",
            path,
        )
    options = {k: v for k, v in table.items() if k != "files"}
    try:
        options = validate_options(options)
    except (TypeError, ValueError) as exc:
        raise LoadError(f"[tool.gradcli]: {str(exc).replace('gradcli.case(', '(')}", path) from None
    files = table.get("files", DEFAULT_FILES)
    if not isinstance(files, (list, tuple)) or not all(isinstance(f, str) for f in files):
        raise LoadError('[tool.gradcli] files must be a list of glob patterns, e.g. ["check_*.py"]', path)
    return ProjectConfig(path, options, tuple(files))


def starting_settings(project: dict[str, Any], given: dict[str, Any]) -> Settings:
    """What a file's cases start from: `given` (the command line, or keywords) over `project` (its
    `[tool.gradcli]`) over the defaults."""
    return Settings().with_options({**project, **given})


def run_settings(paths: list[str], given: dict[str, Any]) -> Settings:
    """What a run's files started from: their project's settings when they share one `[tool.gradcli]`
    (whether or not any case was selected), else `given` over the defaults (each case shows its
    own). A table that cannot be read is left out: it is reported with its file."""
    tables = set()
    for path in paths:
        try:
            tables.add(tuple(sorted(load_config(path).options.items())))
        except LoadError:
            continue
    return starting_settings(dict(next(iter(tables))) if len(tables) == 1 else {}, given)


def inputs_of(paths: Iterable[str]) -> list[str]:
    """The files a run reads: `paths` and the pyproject.toml nearest each (its `[tool.gradcli]`)."""
    found = []
    for path in paths:
        if not os.path.isdir(path):
            found.append(path)
        project = find_pyproject(path)
        if project is not None:
            found.append(project)
    return found
