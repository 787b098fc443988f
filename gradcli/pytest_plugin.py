"""The pytest plugin (entry point `pytest11`): each @gradcli.case and each @gradcli.pair in a test
module is a test item.

`test_grads.py::swish` passes or fails with gradcli's report as its failure text, so pytest's
own selection (-k, node ids, --lf), -x, -q, junit XML and xdist work on cases as on tests.
While pytest runs, every case declared is recorded (`cases.collecting`, as `gradcli check`
records a file's), so cases made in a loop, stacked on one function or declared in a class
body are items too. A module's items are the cases its own file declared, found and named by
`loading.find_cases` as `gradcli check` finds and names them (`swish[1]` for a repeated name),
children of the module whatever class their function sits in. The `f`/`model` + `inputs`
forms are no items: in a test module those are ordinary globals, not a request for a check.
Modules without cases pay one attribute lookup per top-level name; the engine and rich are
imported only when a case runs. A pair (`@gradcli.pair` on a candidate) is an item too, named as
`gradcli diff` names it, and fails with its diff report where the two sides differ.
"""

from __future__ import annotations

import math
import os
from contextlib import ExitStack
from dataclasses import replace
from typing import Any

import pytest

from .check.cases import Case, collecting
from .diff.pairs import Pair
from .diff.pairs import collecting as collecting_pairs

_RECORDED = pytest.StashKey[list[Case]]()  # every case declared in this pytest run
_PAIRS = pytest.StashKey[list[Pair]]()  # every pair declared in this pytest run
_LOADED = pytest.StashKey[Any]()  # the module as a LoadedFile, made when its cases are collected
_SCANNED = pytest.StashKey[bool]()  # pytest collected the module's objects (a doctest module's are not)


def cases_of(obj: Any) -> list[Case]:
    """The gradcli cases a decorated function carries; none for anything else, however odd."""
    if isinstance(obj, (staticmethod, classmethod)):
        return _carried(obj) + _carried(obj.__func__)
    return _carried(obj)


def _carried(obj: Any) -> list[Case]:
    try:
        found = obj.__dict__.get("__gradcli_cases__") if callable(obj) else None
    except Exception:  # objects whose __dict__ raises are not ours
        return []
    return found if isinstance(found, list) else []


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Record from before conftests load: one may import a test module, declaring its cases."""
    _record(early_config)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Record from here when the plugin was registered after the initial conftests loaded."""
    _record(config)


def _record(config: pytest.Config) -> None:
    """Record every case declared until the config is cleaned up, so a module's cases are known however made."""
    if _RECORDED not in config.stash:
        stack = ExitStack()
        config.stash[_RECORDED] = stack.enter_context(collecting())
        config.stash[_PAIRS] = stack.enter_context(collecting_pairs())
        config.add_cleanup(stack.close)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: Any) -> list[pytest.Item] | None:
    """A function declaring this module's cases is no test function: its cases are the module's items."""
    module = collector.getparent(pytest.Module)
    if module is None:
        return None
    module.stash[_SCANNED] = True
    return [] if any(_declared_in(c, module) for c in cases_of(obj)) else None


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """A module's items, with its cases among them in source order (once: not again as doctests)."""
    report = yield
    if report.passed and collector.stash.get(_SCANNED, False):
        items = _case_items(collector) + _pair_items(collector)
        items.sort(key=_line)
        if items:
            report.result = _merged(list(report.result), items)
    return report


def _declared_in(case: Case, module: pytest.Module) -> bool:
    return bool(case.file) and os.path.abspath(case.file) == os.path.abspath(str(module.path))


def _case_items(module: pytest.Module) -> list[CaseItem]:
    """One item per case `gradcli check` finds in the module's file (its decorated ones), CLI-named."""
    recorded = module.config.stash.get(_RECORDED, [])
    abspath = os.path.abspath(str(module.path))
    own = [replace(c, file=abspath) for c in recorded if _declared_in(c, module)]
    if not own:
        return []
    from .check.in_process import loaded_module
    from .check.loading import find_cases
    from .program.running import LoadError

    loaded = loaded_module(module.obj, module.nodeid.split("::", 1)[0], abspath)
    module.stash[_LOADED] = loaded
    source = "\n".join(loaded.source_lines)
    try:
        found = find_cases(loaded, list(own), source)
    except LoadError:  # the file's `f`/`model`/`inputs` would stop the CLI; here they are no items
        found = find_cases(loaded, list(own), source, top_level=False)
    mine = {id(c) for c in own}
    return [CaseItem.from_parent(module, name=c.name, case=c) for c in found if id(c) in mine]


def _pair_items(module: pytest.Module) -> list[PairItem]:
    """One item per pair the module's file declared, named as `gradcli diff` names them."""
    abspath = os.path.abspath(str(module.path))
    own = [p for p in module.config.stash.get(_PAIRS, []) if p.file and os.path.abspath(p.file) == abspath]
    if not own:
        return []
    from .check.in_process import loaded_module
    from .check.loading import unique_names
    from .diff.loading import DiffFile

    path = module.nodeid.split("::", 1)[0]
    loaded = module.stash.get(_LOADED, None) or loaded_module(module.obj, path, abspath)
    module.stash[_LOADED] = loaded
    pairs = [replace(p, file=path) for p in sorted(own, key=lambda p: p.line or 0)]
    unique_names(pairs)
    diff_file = DiffFile(loaded, pairs)
    return [PairItem.from_parent(module, name=p.name, pair=p, diff_file=diff_file) for p in pairs]


def _merged(nodes: list[Any], items: list[CaseItem]) -> list[Any]:
    """`items` (in source order) put among pytest's own nodes by line, pytest's order kept."""
    merged: list[Any] = []
    pending = list(items)
    for node in nodes:
        line = _line(node)
        while pending and _line(pending[0]) <= line:
            merged.append(pending.pop(0))
        merged.append(node)
    return merged + pending


def _line(node: Any) -> float:
    """Where a node is written (0-based, as reportinfo gives it); last when that is unknown."""
    try:
        line = node.reportinfo()[1]
    except Exception:  # a third party's node may not know
        return math.inf
    return line if isinstance(line, int) else math.inf


class CaseFailed(Exception):
    """A gradient check that failed; its text is gradcli's failure report."""


class ReportItem(pytest.Item):
    """An item that fails with gradcli's report as its whole failure text."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)


class CaseItem(ReportItem):
    """One gradcli case, checked when pytest runs the item."""

    def __init__(self, *, case: Case, **kwargs: Any):
        super().__init__(**kwargs)
        self.case = case
        marks = [m for m in getattr(case.func, "pytestmark", []) if isinstance(m, pytest.Mark)]
        self.own_markers.extend(marks)  # @pytest.mark.skip and the like, as on a test function
        self.keywords.update(_attributes(case.func))  # as pytest's Function does: -k sees the same names
        self.keywords.update((mark.name, mark) for mark in marks)

    def runtest(self) -> None:
        from .check.in_process import check_case, project_settings
        from .check.kink_warnings import warn_kinks
        from .check.render.failure_text import failure_report
        from .program.running import LoadError

        try:
            settings = project_settings(str(self.path))
            result = check_case(self.parent.stash[_LOADED], self.case, settings)
        except LoadError as error:
            raise CaseFailed(str(error)) from None
        warn_kinks(result, str(self.path), self.case.line)  # pytest's warnings summary lists them
        if not result.passed:
            writer = self.config.get_terminal_writer()
            raise CaseFailed(failure_report(result, color=writer.hasmarkup, width=writer.fullwidth))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, (self.case.line or 1) - 1, f"gradcli case {self.name}"


class PairItem(ReportItem):
    """One gradcli pair, diffed when pytest runs the item."""

    def __init__(self, *, pair: Pair, diff_file: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.pair = pair
        self.diff_file = diff_file

    def runtest(self) -> None:
        import io

        from .diff.compare import compare
        from .diff.loading import pair_item
        from .diff.render import result_lines
        from .program.running import LoadError
        from .render.console import make_console

        try:
            item = pair_item(self.diff_file, self.pair, seed=0, timeout=None)
        except LoadError as error:
            raise CaseFailed(str(error)) from None
        options = project_settings_of(str(self.path))
        result = compare(item, seed=0, rtol=options.get("rtol"), atol=options.get("atol"))
        if result.verdict != "agree":
            buffer = io.StringIO()
            console = make_console(buffer)
            for line in result_lines(result):
                console.print(line, soft_wrap=True, highlight=False)
            raise CaseFailed(buffer.getvalue().rstrip())

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, (self.pair.line or 1) - 1, f"gradcli pair {self.name}"


def project_settings_of(path: str) -> dict[str, Any]:
    """The options of the file's `[tool.gradcli]` (tolerances), as `gradcli diff` reads them."""
    from .check.config import load_config

    return load_config(path).options


def _attributes(func: Any) -> dict[str, Any]:
    """A case function's attributes; none for a builtin or an object without a __dict__."""
    try:
        return dict(vars(func))
    except Exception:  # vars() refuses objects without __dict__; a user's may raise anything
        return {}
