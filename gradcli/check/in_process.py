"""Checking cases in a Python process that already imported them: pytest's items, assert_gradients.

The CLI runs a check file itself (`loading.load_file`); here the module was imported by pytest
or by the caller, so its cases are checked where they are, through the same `loading.prepare`
and `checking.run_case` as `gradcli check`. Options: the case's own, then the caller's, then
`[tool.gradcli]` of the nearest pyproject.toml, then gradcli's defaults.
"""

from __future__ import annotations

import linecache
import os
from types import ModuleType
from typing import Any

from ..libraries import for_file
from ..program.source_tree import imported_modules
from .cases import Case, validate_options
from .config import load_config, starting_settings
from .loading import LoadedFile, prepare
from .results import CaseResult, Settings
from .run_case import run_case


def loaded_module(module: ModuleType, path: str, abspath: str) -> LoadedFile:
    """An imported module seen as the loader sees a check file it ran (`path` as reports show it)."""
    lines = [line.rstrip("\n") for line in linecache.getlines(abspath)]
    library = for_file(imported_modules("\n".join(lines)))
    return LoadedFile(path, abspath, module, [], lines, library=library)


def project_settings(start: str, **overrides: Any) -> Settings:
    """Defaults, then `[tool.gradcli]` found from `start`, then `overrides` (validated as case options)."""
    return starting_settings(load_config(start).options, validate_options(overrides))


def check_case(loaded: LoadedFile, case: Case, settings: Settings, *, seed: int = 0) -> CaseResult:
    """Build the case's inputs (seeded, as the CLI does) and check it; a LoadError when it cannot run."""
    return run_case(prepare(loaded, case, seed=seed), settings)


def display_path(abspath: str) -> str:
    """`abspath` relative to the working directory when it lies below it, as the CLI shows files."""
    relative = os.path.relpath(abspath)
    return abspath if relative.startswith("..") else relative
