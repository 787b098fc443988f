"""`gradcli.assert_gradients`: gradcli's check inside a plain test, failing with gradcli's report."""

from __future__ import annotations

import inspect
import os
import sys
import types
from collections.abc import Callable
from typing import Any

from ..program.running import LoadError
from .cases import Case
from .in_process import check_case, display_path, loaded_module, project_settings
from .kink_warnings import warn_kinks
from .results import CaseResult


def assert_gradients(fn: Callable[..., Any], inputs: Any, **options: Any) -> CaseResult:
    """Check `fn`'s gradients at `inputs` as `gradcli check` checks a case; AssertionError if wrong.

    `inputs`: a tuple of arguments, one tensor, or a zero-argument callable returning a tuple
    (called with the seed set to 0, as gradcli check does). `fn` may be a module (callable, with
    `.parameters()`): its parameters are checked too, named `model.<attr>`. Options (eps, atol,
    rtol, order, fast, nondet_tol, dtype, reference) override `[tool.gradcli]` of the
    pyproject.toml nearest the calling file, which overrides the defaults. Entries set apart as kinks (KINK) issue a
    `gradcli.NondifferentiableWarning` at the calling line. The AssertionError carries the failure report of
    `gradcli check` (worst entries side by side, the backward's source). Returns the CaseResult
    of a passing check, for tests that look further (`result.pairs`, `result.mode`).
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not gradcli's frames
    caller = sys._getframe(1)
    abspath = os.path.abspath(caller.f_code.co_filename)
    settings = project_settings(abspath if os.path.exists(abspath) else os.getcwd(), **options)
    is_model = not inspect.isfunction(fn) and callable(getattr(fn, "parameters", None))
    name = _case_name(fn, is_model)
    case = Case(
        name, fn, inputs, file=display_path(abspath), line=caller.f_lineno, model=fn if is_model else None
    )
    loaded = loaded_module(_defining_module(fn), display_path(abspath), abspath)
    try:
        result = check_case(loaded, case, settings)
    except LoadError as error:  # the inputs cannot be built, or there is nothing to differentiate
        if error.cause is not None:
            raise error.cause from None  # the inputs factory raised: its own error
        raise ValueError(f"assert_gradients: {error.message}") from None
    warn_kinks(result, abspath, caller.f_lineno)
    if not result.passed:
        from .render.failure_text import failure_report

        raise AssertionError(failure_report(result))
    return result


def _case_name(fn: Any, is_model: bool) -> str:
    """`f` for a function, `Lin.apply` for a custom Function's apply, `model` for a module."""
    if is_model:
        return "model"
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, type):
        return f"{owner.__name__}.{fn.__name__}"
    return getattr(fn, "__name__", None) or type(fn).__name__


def _defining_module(fn: Any) -> types.ModuleType:
    """Where `fn` (or a module's class) is defined: its custom Functions are the report's fallback."""
    owner = fn if inspect.isfunction(fn) else type(fn)
    return sys.modules.get(getattr(owner, "__module__", None) or "") or types.ModuleType("__gradcli_inline__")
