"""A forward that fails on mixed dtypes, reported as that: the operand, the line, the fix.

Checking in float64 widens the inputs and every tensor gradcli can reach (reach.py); a float32
tensor made inside the function, or kept where the walk does not look, then meets float64
ones and torch (or the engine, which raises torch's messages) refuses. `DtypeWatch` wraps the
case function: when a call raises one of those errors it looks at the innermost frame of the
user's code, at the names written on the failing line, and keeps which of them hold a tensor
or module of another floating dtype. `problem` turns the check's problem text into a
`Problem` of kind "DTYPE" naming it.
"""

from __future__ import annotations

import ast
import linecache
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any

from ..libraries import is_tensor
from ..program.probing import attribute
from .case_modules import is_module

if TYPE_CHECKING:
    from .results import Problem

#: torch's (and so the engine's) refusals of operands of different dtypes.
_MIXED_DTYPES = re.compile(
    "|".join(
        (
            r"to have the same dtype",
            r"must have the same dtype",
            r"to have same dtype",
            r"have the same dtype",
            r"should have same dtype",
            r"expected scalar type \w+ but found \w+",
            r"Input type \(.+\) and (?:weight|bias) type \(.+\) should be the same",
            r"mixed dtype \(CPU\)",
            r"Found dtype \w+ but expected \w+",
            r"Input dtypes must be the same",
            r"can't be cast to the desired output type",
            r"source and destination dtypes match",
            r"expected both vectors to have same dtype",
        )
    )
)


def is_dtype_error(text: str) -> bool:
    """Whether an error message is a refusal of mixed dtypes."""
    return _MIXED_DTYPES.search(text) is not None


@dataclass
class Operand:
    """A floating tensor or module named on the failing line, and its dtype."""

    name: str
    dtype: str
    what: str  # "a float32 tensor", "a Linear module with float32 parameters"
    local: bool  # a local variable of the failing function (made in it), not a global or attribute


@dataclass
class Diagnosis:
    """Where a dtype error was raised in the user's code, and the operands of another dtype there."""

    file: str
    line: int
    operands: list[Operand]


class DtypeWatch:
    """Wraps a case function; remembers the first dtype error each user line raised.

    `expected` is the dtype the check computes in ("float64", or the native one); an operand of
    another floating dtype on the failing line is the suspect. `native` with `reference64`: the
    numerical forwards run on float64 twins, where float64 is what is expected.
    """

    def __init__(self, expected: str, native: bool, reference64: bool = False):
        self.expected = expected
        self.native = native
        self.reference64 = reference64
        self.found: dict[tuple[str, int], Diagnosis] = {}

    def wrap(self, func: Callable) -> Callable:
        def watched(*args: Any) -> Any:
            try:
                return func(*args)
            except Exception as exc:
                if is_dtype_error(_text(exc)):
                    self._diagnose(exc.__traceback__)
                raise

        return watched

    def problem(self, problem: Problem) -> Problem:
        """`problem` as a DTYPE problem (operand, fix) when its text is a dtype error; else itself."""
        if not is_dtype_error(problem.message):
            return problem
        diagnosis = self._at(problem)
        operands = diagnosis.operands if diagnosis is not None else []
        if self.reference64 and "(numerical" in problem.message.partition(" raised ")[0]:
            explanation = self._in_reference([o for o in operands if o.dtype != "float64"])
        else:
            explanation = self._explanation([o for o in operands if o.dtype != self.expected])
        problem.message = f"{problem.message}; {explanation}"
        problem.kind = "DTYPE"
        return problem

    def _in_reference(self, operands: list[Operand]) -> str:
        named = "".join(f"`{o.name}` is {o.what}, " for o in operands)
        return (
            f"the float64 reference runs the function on float64 copies of the inputs and of what it reaches, "
            f"and {named or 'a tensor made on this line '}stays {self.expected}. Fix: make it in the input's "
            "dtype (`dtype=x.dtype`, `.to(x.dtype)`), or compare with --reference native"
        )

    def _at(self, problem: Problem) -> Diagnosis | None:
        """The diagnosis made at the problem's file:line (the check's texts name the same frame)."""
        if problem.file is None:
            return None
        where = (os.path.abspath(problem.file), problem.line)
        return next((d for (f, n), d in self.found.items() if (os.path.abspath(f), n) == where), None)

    def _explanation(self, operands: list[Operand]) -> str:
        fix = "make it float64 (`.double()`, or `.to(x.dtype)` of an input x)"
        if self.native:
            fix = "give the tensors of this line one dtype (`.to(x.dtype)` of an input x)"
        elif not operands:
            return (
                f"a tensor of another dtype, made on this line or read where gradcli does not look, meets "
                f"the {self.expected} ones the check makes (inputs, and the tensors and modules the case "
                f"function reaches). Fix: {fix}, or check in the case's own dtype with --dtype native"
            )
        named = ", ".join(f"`{o.name}` is {o.what}" for o in operands)
        if self.native:
            return f"{named}. Fix: {fix}"
        made_here = all(o.local for o in operands)
        why = (
            "made in the function, so gradcli cannot widen it"
            if made_here
            else f"not reached by gradcli, so not widened to {self.expected} with the inputs"
        )
        return f"{named}, {why}. Fix: {fix}, or check in the case's own dtype with --dtype native"

    def _diagnose(self, tb: TracebackType | None) -> None:
        frame, line = _user_frame(tb)
        if frame is None:
            return
        key = (frame.f_code.co_filename, line)
        if key in self.found:
            return
        operands = []
        for name, local in _names_on(frame, line):
            described = _describe(_lookup(frame, name))
            if described is not None:
                operands.append(Operand(name, *described, local))
        self.found[key] = Diagnosis(frame.f_code.co_filename, line, operands)


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return ""


def _user_frame(tb: TracebackType | None) -> tuple[FrameType | None, int]:
    """The innermost traceback frame in the user's code, by the engine's one rule."""
    from engine.autograd.anomaly import is_internal_file

    chosen: tuple[FrameType | None, int] = (None, 0)
    while tb is not None:
        if not is_internal_file(tb.tb_frame.f_code.co_filename):
            chosen = (tb.tb_frame, tb.tb_lineno)
        tb = tb.tb_next
    return chosen


def _names_on(frame: FrameType, line: int) -> list[tuple[str, bool]]:
    """The dotted names written on `line` (`W`, `self.fc`, `cfg.w`), outermost first, each with
    whether its root is a local variable of the frame."""
    source = linecache.getline(frame.f_code.co_filename, line).strip()
    names: list[str] = []
    try:
        found = (_dotted(node) for node in ast.walk(_parsed(source)))
    except SyntaxError:  # one line of several: its dotted words
        found = iter(re.findall(r"[A-Za-z_][\w.]*\w|[A-Za-z_]", source))
    for dotted in found:
        if dotted is not None and dotted not in names:
            names.append(dotted)
    return [(name, name.split(".")[0] in frame.f_locals) for name in names]


def _parsed(source: str) -> ast.AST:
    try:
        return ast.parse(source.removeprefix("return ").rstrip(":"), mode="eval")
    except SyntaxError:
        return ast.parse(source)


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _lookup(frame: FrameType, dotted: str) -> Any:
    """The value a dotted name had in the frame, read without running code (no call, no index)."""
    root, *rest = dotted.split(".")
    scopes = (frame.f_locals, frame.f_globals, frame.f_builtins)
    value = next((scope[root] for scope in scopes if root in scope), None)
    for part in rest:
        state = attribute(value, "__dict__")
        if isinstance(state, dict) and part in state:
            value = state[part]
            continue
        modules = attribute(value, "_modules")
        tables = [attribute(value, t) for t in ("_parameters", "_buffers")] + [modules]
        table = next((t for t in tables if isinstance(t, dict) and part in t), None)
        if table is None:
            return None
        value = table[part]
    return value


def _describe(value: Any) -> tuple[str, str] | None:
    """(dtype, 'a float32 tensor' / 'a Linear module with float32 parameters') for a floating
    tensor or a module with floating tensors; else None."""
    if is_tensor(value):
        if not value.dtype.is_floating_point:
            return None
        dtype = _dtype_name(value)
        return dtype, f"a {dtype} tensor"
    if is_module(value):
        tensors = (*value.parameters(), *value.buffers())
        dtypes = sorted({_dtype_name(t) for t in tensors if t.dtype.is_floating_point})
        if dtypes:
            dtype = "/".join(dtypes)
            return dtype, f"a {type(value).__name__} module with {dtype} parameters"
    return None


def _dtype_name(t: Any) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]
