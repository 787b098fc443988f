"""The pytest plugin (entry point `pytest11`): each @gradcli.case in a test module is a test item.

`test_grads.py::swish` passes or fails with gradcli's report as its failure text, so pytest's
own selection (-k, node ids, --lf), -x, -q, junit XML and xdist work on cases as on tests.
Modules without cases pay one attribute lookup per top-level name; the engine and rich are
imported only when a case runs. Only the cases a module declares are its items (not those of a
check module it imports), named as `gradcli check` names them (`swish[1]` for a repeated name).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from .cases import Case

_NAMES = pytest.StashKey[dict[int, str]]()
_LOADED = pytest.StashKey[Any]()  # the module as a LoadedFile, made when its first case runs


def cases_of(obj: Any) -> list[Case]:
    """The gradcli cases a decorated function carries; none for anything else, however odd."""
    try:
        found = obj.__dict__.get("__gradcli_cases__") if callable(obj) else None
    except Exception:  # objects whose __dict__ raises are not ours
        return []
    return found if isinstance(found, list) else []


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: Any) -> list[pytest.Item] | None:
    """A decorated function becomes one item per case declared in this module (and no test function)."""
    cases = cases_of(obj)
    if not cases or not isinstance(collector, pytest.Module):
        return None
    names = _case_names(collector)
    mine = [c for c in cases if id(c) in names]
    return [CaseItem.from_parent(collector, name=names[id(c)], case=c) for c in mine] or None


def _case_names(module: pytest.Module) -> dict[int, str]:
    """Item names of the module's own cases, numbered in source order where a name repeats (as the CLI)."""
    if _NAMES not in module.stash:
        own = os.path.abspath(str(module.path))
        cases = [
            c
            for obj in list(vars(module.obj).values())
            for c in cases_of(obj)
            if c.file and os.path.abspath(c.file) == own
        ]
        cases = sorted({id(c): c for c in cases}.values(), key=lambda c: c.line or 0)
        counts: dict[str, int] = {}
        for c in cases:
            counts[c.name] = counts.get(c.name, 0) + 1
        names, seen = {}, dict.fromkeys(counts, 0)
        for c in cases:
            names[id(c)] = c.name if counts[c.name] == 1 else f"{c.name}[{seen[c.name]}]"
            seen[c.name] += 1
        module.stash[_NAMES] = names
    return module.stash[_NAMES]


class CaseFailed(Exception):
    """A gradient check that failed; its text is gradcli's failure report."""


class CaseItem(pytest.Item):
    """One gradcli case, checked when pytest runs the item."""

    def __init__(self, *, case: Case, **kwargs: Any):
        super().__init__(**kwargs)
        self.case = case
        marks = [m for m in getattr(case.func, "pytestmark", []) if isinstance(m, pytest.Mark)]
        self.own_markers.extend(marks)  # @pytest.mark.skip and the like, as on a test function
        self.keywords.update(vars(case.func))  # as pytest's Function does: -k sees the same names
        self.keywords.update((mark.name, mark) for mark in marks)

    def runtest(self) -> None:
        from .in_process import check_case, project_settings
        from .kink_warnings import warn_kinks
        from .render.failure_text import failure_report
        from .running import LoadError

        try:
            settings = project_settings(str(self.path))
            result = check_case(self._loaded(), self._named_case(), settings)
        except LoadError as error:
            raise CaseFailed(str(error)) from None
        warn_kinks(result, str(self.path), self.case.line)  # pytest's warnings summary lists them
        if not result.passed:
            writer = self.config.get_terminal_writer()
            raise CaseFailed(failure_report(result, color=writer.hasmarkup, width=writer.fullwidth))

    def _named_case(self) -> Case:
        """The case under its item name (`swish[1]`), without renaming the shared record."""
        from dataclasses import replace

        return replace(self.case, name=self.name)

    def _loaded(self) -> Any:
        from .in_process import loaded_module

        module = self.parent
        if _LOADED not in module.stash:
            path = self.nodeid.split("::", 1)[0]
            module.stash[_LOADED] = loaded_module(module.obj, path, os.path.abspath(str(module.path)))
        return module.stash[_LOADED]

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, (self.case.line or 1) - 1, f"gradcli case {self.name}"
