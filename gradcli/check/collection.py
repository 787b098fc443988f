"""What `gradcli check` runs: its arguments (files, directories, `file.py::case` node ids) and -k.

As pytest collects: a directory is searched recursively for check files (the patterns of
`[tool.gradcli] files`, default `check_*.py` and `*_check.py`; hidden folders, `__pycache__`
and virtual environments are skipped), and no other file in it is executed; a file named on
the command line runs whatever its name; `file.py::case` keeps that case (and `case[0]`,
`case[1]` ... of stacked decorators) and names an unknown case as an error; -k then keeps the
cases whose names (the case's and its file's) match the expression.

A file found in a directory that imports torch where torch is not installed is skipped, not an
error: `gradcli check examples/` on an install without torch checks the engine files and says
which it left out. Named on the command line, such a file is an error (exit 2).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..libraries import is_missing_torch
from ..program.isolation import fresh_files
from ..program.running import LoadError
from ..render.error import UsageError
from .config import load_config
from .loading import LoadedFile, PreparedCase, load_file, prepare
from .selection import Matcher

#: Folders never searched, as pytest's default `norecursedirs` (plus hidden ones and venvs).
SKIPPED_FOLDERS = ("__pycache__", "node_modules", "venv", "build", "dist", "*.egg", "*.egg-info", "CVS")


@dataclass
class Target:
    """A check file to load, the case names its node ids asked for (None: every case), and
    whether only a directory search found it (never named: it may be skipped)."""

    path: str
    names: list[str] | None = None
    searched: bool = False


@dataclass
class Collection:
    """The cases to check, what could not be loaded, the files skipped (torch missing) and how
    many cases -k left out."""

    prepared: list[PreparedCase] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    skipped: list[LoadError] = field(default_factory=list)
    deselected: int = 0

    def add(self, other: Collection) -> None:
        self.prepared += other.prepared
        self.errors += other.errors
        self.skipped += other.skipped
        self.deselected += other.deselected


def targets(arguments: list[str]) -> tuple[list[Target], list[LoadError]]:
    """The check files the arguments name, in order, each once (node ids of one file merged).

    A directory whose `[tool.gradcli]` cannot be read is an error, gathered; the others go on.
    `FILE::` (no case after it) is a UsageError.
    """
    found: dict[str, Target] = {}
    errors: list[LoadError] = []
    for argument in arguments:
        path, separator, name = argument.partition("::")
        if separator and not name:
            raise UsageError(f"node id {argument!r} names no case: give FILE::CASE, or FILE for every case")
        searched = os.path.isdir(path) and not name
        try:
            paths = search(path) if searched else [path]
        except LoadError as exc:
            errors.append(exc)
            continue
        for file in paths:
            target = found.setdefault(os.path.abspath(file), Target(file, [], searched))
            target.searched = target.searched and searched
            if target.names is not None:
                target.names = target.names + [name] if name else None
    return list(found.values()), errors


def search(folder: str) -> list[str]:
    """The check files under `folder`, sorted, by the patterns of its project's `[tool.gradcli] files`."""
    patterns = load_config(folder).files
    found = []
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if not _skipped(os.path.join(root, f)))
        for name in sorted(files):
            if name.endswith(".py") and any(fnmatch.fnmatch(name, p) for p in patterns):
                found.append(os.path.normpath(os.path.join(root, name)))
    return found


def _skipped(folder: str) -> bool:
    name = os.path.basename(folder)
    return (
        name.startswith(".")
        or any(fnmatch.fnmatch(name, p) for p in SKIPPED_FOLDERS)
        or os.path.isfile(os.path.join(folder, "pyvenv.cfg"))
    )


def collect(chosen: list[Target], matcher: Matcher, *, seed: int = 0) -> Collection:
    """Load the target files, select their cases, build the selected cases' inputs (see each_file)."""
    collection = Collection()
    for part in each_file(chosen, matcher, seed=seed):
        collection.add(part)
    return collection


def each_file(
    chosen: list[Target], matcher: Matcher, *, seed: int = 0, timeout: float | None = None
) -> Iterator[Collection]:
    """Each target file loaded, its cases selected and their inputs built, one file at a time.

    Every file starts from the state the run started in (`isolation`); a file's cases should be
    run before the next one is asked for, so that they run in the state their file left (grad
    mode, default dtype ...) and not in a later file's. Every loading error is gathered
    (LoadError, from a file or from its `[tool.gradcli]`); an inputs factory that runs past
    `timeout` seconds is one.
    """
    with fresh_files() as fresh:
        for target in chosen:
            fresh()
            yield _collect_file(target, matcher, seed, timeout)


def _collect_file(target: Target, matcher: Matcher, seed: int, timeout: float | None) -> Collection:
    collection = Collection()
    try:
        loaded = load_file(target.path, seed=seed)
        loaded.project_options = load_config(target.path).options
        cases = _named_cases(loaded, target.names)
    except LoadError as exc:
        torch_missing = target.searched and exc.cause is not None and is_missing_torch(exc.cause)
        (collection.skipped if torch_missing else collection.errors).append(exc)
        return collection
    for case in cases:
        if not matcher([case.name, os.path.basename(loaded.path)]):
            collection.deselected += 1
            continue
        try:
            collection.prepared.append(prepare(loaded, case, seed=seed, timeout=timeout))
        except LoadError as exc:
            collection.errors.append(exc)
    return collection


def _named_cases(loaded: LoadedFile, names: list[str] | None) -> list:
    """The file's cases, or those its node ids name (`case` also names `case[0]`, `case[1]`...)."""
    return named(loaded.cases, names, loaded.path)


def named(records: list, names: list[str] | None, path: str, kind: str = "case") -> list:
    """`records` (anything with a `name`), or those the node ids' `names` name; a LoadError naming
    the ones no record has (`case` also names `case[0]`, `case[1]`...)."""
    if names is None:
        return list(records)
    unknown = [n for n in names if not any(_is_named(c.name, n) for c in records)]
    if unknown:
        listed = ", ".join(c.name for c in records)
        raise LoadError(
            f"no {kind} named {', '.join(map(repr, unknown))} (node id {path}::{unknown[0]}); "
            f"its {kind}s are {listed}",
            path,
        )
    return [c for c in records if any(_is_named(c.name, n) for n in names)]


def _is_named(case_name: str, wanted: str) -> bool:
    return case_name == wanted or (case_name.startswith(wanted + "[") and case_name.endswith("]"))
