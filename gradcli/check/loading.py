"""Loading a user's check file and finding its cases.

Everything that executes user code before the check itself (the file's body, input
factories) happens here, so that every failure of the user's file becomes one `LoadError`
(`gradcli.program.running`) that names the file and the line: the CLI turns it into exit code 2.
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from types import FunctionType, ModuleType
from typing import Any

from ..libraries import (
    ENGINE,
    LIBRARIES,
    Library,
    MixedTensors,
    for_file,
    is_tensor,
    is_uninitialized,
    library_of,
)
from ..program.probing import attribute, instance_of
from ..program.running import (
    LoadError,
    compile_file,
    file_module,
    interrupted,
    main_module,
    running,
    user_error,
)
from ..program.source_tree import imported_modules, parsed
from .cases import Case, collecting

ANY_CASES_HINT = (
    "declare a top-level callable `f` and a tuple `inputs`, a top-level `model` (callable, with "
    ".parameters()) and `inputs`, or functions decorated with @gradcli.case(*inputs)"
)


@dataclass
class LoadedFile:
    """A check file after its body ran: the module and the cases it declared, in source order."""

    path: str
    abspath: str
    module: ModuleType
    cases: list[Case]
    source_lines: list[str] = field(default_factory=list)
    #: Why `cases` is empty, when loaded with `require_cases=False` (e.g. "no cases found").
    cases_error: LoadError | None = None
    #: The library the file's source imports (torch when it imports both): what hints name.
    library: Library = ENGINE
    #: The check options of its project's `[tool.gradcli]` (set by `collection.collect`).
    project_options: dict[str, Any] = field(default_factory=dict)
    #: What ended the file, when loaded with `keep_raised=True`: the exception (`cause`) and its line.
    raised: LoadError | None = None

    def inputs_hint(self) -> str:
        return self.library.inputs_hint

    def line_text(self, line: int | None) -> str | None:
        if line is None or not 1 <= line <= len(self.source_lines):
            return None
        return self.source_lines[line - 1]


@dataclass
class PreparedCase:
    """A selected case with its inputs built: what `checking.run_case` needs."""

    case: Case
    file: LoadedFile
    inputs: tuple
    input_names: list[str]
    params: list[tuple[str, Any]] = field(default_factory=list)
    #: The library of the case's tensors.
    library: Library = ENGINE


_loaded_count = [0]


def load_file(
    path: str,
    *,
    seed: int = 0,
    require_cases: bool = True,
    as_main: bool = False,
    keep_raised: bool = False,
    builtins: dict[str, Any] | None = None,
) -> LoadedFile:
    """Run `path` as a fresh module (with `seed` set) and collect the cases it declares.

    `require_cases=False` (gradcli graph, which also reads plain scripts) keeps a file without
    valid cases: the error that would have been raised is kept in `cases_error` instead. With
    `as_main` the file runs as `__main__`, as `python FILE` runs it (its `if __name__ ==
    "__main__":` block too, with sys.argv `[FILE]`), and an exit with status 0 ends it normally.
    With `keep_raised`, an exception that ends the file is kept in `raised` (its cases are not
    looked for) rather than raised.
    `builtins` are what the file's code sees as its builtins (`gradcli diff --against torch` gives
    it an `__import__` that reads `engine` as `torch`).
    """
    user = compile_file(path, "check file")
    lines = user.lines
    _loaded_count[0] += 1
    stem = "".join(c if c.isalnum() else "_" for c in os.path.splitext(os.path.basename(path))[0])
    name = f"_gradcli_check_{_loaded_count[0]}_{stem}"
    raised = None
    with ExitStack() as scope:
        if as_main:
            module = scope.enter_context(main_module(user.abspath))
        else:
            module = sys.modules[name] = file_module(name, user.abspath)
        if builtins is not None:
            module.__dict__["__builtins__"] = builtins
        try:
            with running(user, seed=seed, argv=[path] if as_main else None), collecting() as decorated:
                exec(user.code, module.__dict__)
        except KeyboardInterrupt as exc:
            sys.modules.pop(name, None)
            raise interrupted(f"while loading {path}", exc) from None
        except SystemExit as exc:
            if not (as_main and exc.code in (None, 0)):
                raised = _raised(exc, path, user.abspath, lines, name, keep_raised)
        except BaseException as exc:  # the user's file may raise anything
            raised = _raised(exc, path, user.abspath, lines, name, keep_raised)
    library = for_file(imported_modules(user.source))
    loaded = LoadedFile(path, user.abspath, module, [], lines, library=library, raised=raised)
    if raised is not None:
        return loaded
    try:
        loaded.cases = find_cases(loaded, decorated, user.source)
    except LoadError as exc:
        if require_cases:
            raise
        loaded.cases_error = exc
    return loaded


def _raised(
    exc: BaseException, path: str, abspath: str, lines: list[str], name: str, keep: bool
) -> LoadError:
    """What ended the file: raised now, or kept (`keep`)."""
    sys.modules.pop(name, None)
    error = user_error("exception while loading", exc, path, abspath, lines)
    if not keep:
        raise error from None
    return error


def top_level_lines(source: str) -> dict[str, int]:
    """Where each top-level name was last bound, to point errors at `inputs = ...` and the like."""
    where: dict[str, int] = {}
    tree = parsed(source)
    if tree is None:
        return where
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            where[node.name] = node.lineno
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        where[sub.id] = node.lineno
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            where[node.target.id] = node.lineno
    return where


def find_cases(
    loaded: LoadedFile, decorated: list[Case], source: str, *, top_level: bool = True
) -> list[Case]:
    """The file's cases in source order, repeated names numbered: what `gradcli check` runs.

    `decorated` are the cases declared while the file ran; with `top_level`, the `f`/`model`
    and `inputs` forms are added (a LoadError when they are half there or of the wrong kind).
    The records are renamed in place (`swish[1]`) and their file becomes `loaded.path`.
    """
    path = loaded.path
    cases = list(decorated)
    for record in cases:
        if record.file == loaded.abspath:
            record.file = path
    if top_level:
        cases += _top_level_cases(loaded, top_level_lines(source), bool(cases))
    if not cases:
        raise LoadError(f"no cases found: {ANY_CASES_HINT}", path)
    cases.sort(key=lambda c: (c.file != path, c.line or 0))
    unique_names(cases)
    return cases


def _top_level_cases(loaded: LoadedFile, where: dict[str, int], decorated: bool) -> list[Case]:
    """The `f` and `model` forms, called with the top-level `inputs` (none without it when `decorated`)."""
    namespace = loaded.module.__dict__
    path = loaded.path
    f = namespace.get("f")
    model = namespace.get("model")
    has_inputs = "inputs" in namespace
    forms = []
    if f is not None and attribute(f, "__gradcli_cases__") is None:
        if not callable(f):
            raise LoadError(
                f"`f` must be callable, not {type(f).__name__}",
                path,
                where.get("f"),
                loaded.line_text(where.get("f")),
            )
        forms.append(("f", f, None))
    if model is not None:
        line = where.get("model")
        if instance_of(model, type):
            raise LoadError(
                f"`model` is the class {model.__name__}, not an instance: write `model = {model.__name__}(...)`",
                path,
                line,
                loaded.line_text(line),
            )
        if not callable(model) or not callable(attribute(model, "parameters")):
            raise LoadError(
                "`model` must be a callable object with a .parameters() method",
                path,
                line,
                loaded.line_text(line),
            )
        forms.append(("model", model, model))
    if forms and not has_inputs:
        if not decorated:
            name = forms[0][0]
            line = where.get(name)
            raise LoadError(
                f"`{name}` is defined but `inputs` is not: add a top-level tuple `inputs = (...)` of the "
                f"arguments to call it with ({loaded.inputs_hint()})",
                path,
                line,
                loaded.line_text(line),
            )
        forms = []
    if has_inputs and not forms and not decorated:
        line = where.get("inputs")
        raise LoadError(
            "`inputs` is defined but there is no `f` or `model` to call with it",
            path,
            line,
            loaded.line_text(line),
        )
    cases = []
    if forms:
        declared = namespace["inputs"]
        if not (isinstance(declared, (tuple, list)) or callable(declared) or is_tensor(declared)):
            line = where.get("inputs")
            raise LoadError(
                f"`inputs` must be a tuple of arguments (or a function returning one), not {type(declared).__name__}",
                path,
                line,
                loaded.line_text(line),
            )
        if isinstance(declared, list):
            declared = tuple(declared)
        for name, func, owner in forms:
            cases.append(
                Case(
                    name=name,
                    func=func,
                    inputs=declared,
                    file=path,
                    line=where.get(name),
                    model=owner,
                    inputs_line=where.get("inputs"),
                )
            )
    return cases


def unique_names(cases: list) -> None:
    """Number repeated names (stacked decorators, reused names) so -k and reports can tell them apart:
    of cases, or of anything else with a `name` (diff's pairs)."""
    counts: dict[str, int] = {}
    for record in cases:
        counts[record.name] = counts.get(record.name, 0) + 1
    seen: dict[str, int] = {}
    for record in cases:
        if counts[record.name] > 1:
            index = seen.get(record.name, 0)
            seen[record.name] = index + 1
            record.name = f"{record.name}[{index}]"


def prepare(loaded: LoadedFile, case: Case, *, seed: int = 0, timeout: float | None = None) -> PreparedCase:
    """Build the case's inputs (calling its factory, seeded, for at most `timeout` seconds, as
    `check --timeout` bounds the case) and check there is something to differentiate."""
    from .time_limit import TimedOut, time_limit

    line = case.line
    declared = case.inputs
    if callable(declared):
        _seed_libraries(seed)
        try:
            with time_limit(timeout):
                built = declared()
        except TimedOut as exc:
            raise user_error(
                "",
                exc,
                loaded.path,
                loaded.abspath,
                loaded.source_lines,
                message=f"building the inputs of case {case.name!r} {exc}",
            ) from None
        except KeyboardInterrupt as exc:
            raise interrupted(f"while running {loaded.path}::{case.name}", exc) from None
        except BaseException as exc:
            raise user_error(
                f"exception while building the inputs of case {case.name!r}",
                exc,
                loaded.path,
                loaded.abspath,
                loaded.source_lines,
            ) from None
    else:
        built = declared
    if is_tensor(built):
        built = (built,)
    if isinstance(built, list):
        built = tuple(built)
    if not isinstance(built, tuple):
        raise LoadError(
            f"case {case.name!r}: inputs must be a tuple of arguments, not {type(built).__name__}",
            loaded.path,
            line,
            loaded.line_text(line),
        )

    params = _checked_parameters(loaded, case)
    names = _input_names(case.model if case.model is not None else case.func, len(built))
    lazy = [name for name, value in list(zip(names, built)) + params if is_uninitialized(value)]
    if lazy:
        raise LoadError(
            f"case {case.name!r}: {', '.join(lazy)} {'is' if len(lazy) == 1 else 'are'} not initialized "
            "(torch.nn.parameter.UninitializedParameter, from a lazy module such as torch.nn.LazyLinear): "
            "call the module once on an input in the file, so that its parameters get their shapes, "
            "before checking it",
            loaded.path,
            line,
            loaded.line_text(line),
        )
    try:
        library = library_of(list(zip(names, built)) + params) or loaded.library
    except MixedTensors as exc:
        line = case.inputs_line or line
        raise LoadError(f"case {case.name!r} {exc}", loaded.path, line, loaded.line_text(line)) from None

    differentiable = [x for x in list(built) + [p for _, p in params] if _wants_grad(x)]
    if not differentiable:
        described = ", ".join(f"{n}: {_describe(x)}" for n, x in zip(names, built)) or "none"
        line = case.inputs_line or line
        raise LoadError(
            f"case {case.name!r}: no input is a floating-point tensor with requires_grad=True, so there is "
            f"nothing to check (inputs: {described}). Make the inputs to differentiate float tensors that "
            f"require grad, {library.inputs_hint}",
            loaded.path,
            line,
            loaded.line_text(line),
        )
    return PreparedCase(case, loaded, built, names, params, library)


def _seed_libraries(seed: int) -> None:
    """Seed engine, and torch when the user's file imported it, before building inputs."""
    for library in LIBRARIES:
        library.seed(seed)


def _checked_parameters(loaded: LoadedFile, case: Case) -> list[tuple[str, Any]]:
    """The parameters checked with the inputs: the model's, then those of `modules=`, each once.

    A parameter shared by two modules (or twice in one) is checked once, under its first name.
    """
    owners = [(case.name, case.model, "param[{}]")] if case.model is not None else []
    for index, module in enumerate(case.modules):
        name = _variable_name(loaded, module) or f"modules[{index}]"
        owners.append((name, module, name + ".param[{}]"))
    params: list[tuple[str, Any]] = []
    seen: set[int] = set()
    for prefix, owner, unnamed in owners:
        for name, tensor in _named_parameters(loaded, case, owner, prefix, unnamed):
            if id(tensor) not in seen:
                seen.add(id(tensor))
                params.append((name, tensor))
    return params


def _variable_name(loaded: LoadedFile, value: Any) -> str | None:
    """The top-level name the file gave `value` (the first, in definition order), if any."""
    return next((k for k, v in loaded.module.__dict__.items() if v is value and not k.startswith("_")), None)


def _named_parameters(
    loaded: LoadedFile, case: Case, owner: Any, prefix: str, unnamed: str
) -> list[tuple[str, Any]]:
    """`owner`'s parameters, named `prefix.<attr>` via named_parameters() when it has one."""
    try:
        params = list(owner.parameters())
        named = {}
        if callable(getattr(owner, "named_parameters", None)):
            for attr, tensor in owner.named_parameters():
                named.setdefault(id(tensor), f"{prefix}.{attr}")
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise user_error(
            f"exception while listing the parameters of {prefix}",
            exc,
            loaded.path,
            loaded.abspath,
            loaded.source_lines,
        ) from None
    out: list[tuple[str, Any]] = []
    for index, tensor in enumerate(params):
        if not is_tensor(tensor):
            raise LoadError(
                f"{prefix}.parameters() returned a {type(tensor).__name__} at position {index}; expected tensors",
                loaded.path,
                case.line,
                loaded.line_text(case.line),
            )
        out.append((named.get(id(tensor), unnamed.format(index)), tensor))
    return out


def _input_names(func: Callable, count: int) -> list[str]:
    """Argument names from the signature (`x`, `w`), falling back to `inputs[i]`."""
    names = [f"inputs[{i}]" for i in range(count)]
    target = attribute(func, "forward") if not instance_of(func, FunctionType) else None
    for candidate in (target, func):
        if candidate is None:
            continue
        try:
            parameters = list(inspect.signature(candidate).parameters.values())
        except Exception:  # no signature, or a user object whose attributes raise
            continue
        position = 0
        for parameter in parameters:
            if position >= count:
                break
            if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
                names[position] = parameter.name
                position += 1
            elif parameter.kind is parameter.VAR_POSITIONAL:
                break  # *args: the rest keep their `inputs[i]` names
        return names
    return names


def _wants_grad(value: Any) -> bool:
    return is_tensor(value) and value.dtype.is_floating_point and value.requires_grad


def _describe(value: Any) -> str:
    if is_tensor(value):
        kind = f"{str(value.dtype).rsplit('.', 1)[-1]} tensor"
        if value.dtype.is_floating_point and not value.requires_grad:
            kind += " without requires_grad"
        return kind
    return type(value).__name__
