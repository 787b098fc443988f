"""Loading the user's file and choosing what to draw: the targets and the user's names for tensors.

The file runs as `__main__`, as `python FILE` runs it. Targets, in order:

1. `--target NAME`: a top-level tensor, or a case of that name; else the variable NAME of the
   function met last (the innermost one running at the last backward call, or when the file
   raised) that has one; `--target FUNC.NAME` names the function (its qualified name, or the
   end of it: `main.loss`, `Trainer.step.loss`).
2. The tensors of the backward call the error that ended the file escaped from.
3. The results so far of the function that raised it (its tensors with a `grad_fn` that no other
   one's graph consumes).
4. Every top-level tensor with a `grad_fn` that no other such tensor's graph consumes.
5. The tensors of the last backward call (`gradcli.graph.backward_calls`).
6. The outputs of the file's cases (the `gradcli check` forms, found by `gradcli.check.loading`).

A file that raised is drawn as it was then when one of these is found; else its error is the
`LoadError`. Every problem with the file or the target is a `LoadError` naming the file and line
where there is one.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from engine import backend

from ..check import loading
from ..libraries import MixedTensors, is_tensor, loaded
from ..program import sites
from ..program.exception_text import exception_text
from ..program.modules import recording_modules
from ..program.names import NameIndex
from ..program.running import LoadError, interrupted, user_error, using_device
from ..program.sites import user_tb_frames
from .backward_calls import BackwardCall, BackwardCalls, watching
from .forward_lines import ForwardLines
from .model import Graph, Raised
from .walker import build_graph, walk


def load_graph(
    path: str,
    *,
    target: str | None = None,
    device: str = "cpu",
    seed: int = 0,
    forward_lines: bool = False,
    group_modules: bool = False,
    levels: int | None = None,
) -> Graph:
    """Run `path` as `__main__` with `device` as the default device and walk the graph of its target(s).

    With `forward_lines`, each node gets the user's line whose forward call made it. With
    `group_modules`, the file runs under module hooks (`module_hooks`) and the graph's
    `modules` tells which module's forward made each node. With `levels`, only nodes that
    many levels deep are recorded (`build_graph`). A file that raised is drawn as it was then
    (`Graph.raised`) when a target is found. Every problem with the file or the target raises
    `LoadError` (exit code 2), naming the file and line where there is one.
    """
    try:
        with (
            using_device(device, [path]),
            sites.recording(forward_lines),
            watching(path) as calls,
            ExitStack() as hooks,
        ):
            recorder = hooks.enter_context(recording_modules()) if group_modules else None
            loaded = loading.load_file(path, seed=seed, require_cases=False, as_main=True, keep_raised=True)
            chosen = find_targets(loaded, target, seed=seed, calls=calls)
    except backend.CudaUnavailable as exc:
        raise LoadError(f"--device {device} is unavailable: {exc}", path) from None
    try:
        lines = ForwardLines(path) if forward_lines else None
        graph = build_graph(
            chosen.tensors,
            chosen.names,
            file=path,
            targets_from=chosen.source,
            device=device,
            seed=seed,
            lines=lines,
            levels=levels,
        )
    except MixedTensors as exc:
        raise LoadError(f"the graph to draw {exc}", path) from None
    graph.scope = chosen.scope
    graph.raised = _raised(loaded.raised, chosen.failed)
    if recorder is not None:
        graph.modules = recorder.node_paths(
            walk([t.grad_fn for _, t in chosen.tensors]), {**loaded.module.__dict__, **chosen.scope_names}
        )
    return graph


@dataclass
class Targets:
    """What to draw: (name, tensor) pairs, the user's names for tensors, and how they were chosen."""

    tensors: list[tuple[str, Any]]
    names: NameIndex
    source: str  # Graph.targets_from: "target", "raised", "top-level", "backward" or "cases"
    scope: str | None = None  # the function whose variables they are (None: the file's top level)
    scope_names: dict[str, Any] = field(default_factory=dict)  # that function's variables
    failed: bool = False  # the backward of these tensors raised the error that ended the file


def find_targets(
    loaded: loading.LoadedFile, target: str | None, *, seed: int = 0, calls: BackwardCalls | None = None
) -> Targets:
    """The targets (see the module's docstring), with the file's names for tensors.

    `calls` are the backward calls the file made: the last one is the default target after the
    top-level tensors, and the one the error that ended the file escaped from comes first.
    """
    calls = calls if calls is not None else BackwardCalls()
    raised = loaded.raised
    failed = calls.raised(raised.cause) if raised is not None and raised.cause is not None else None
    namespace = loaded.module.__dict__
    where = loading.top_level_lines("\n".join(loaded.source_lines))

    def error(message: str, name: str | None = None) -> LoadError:
        line = where.get(name) if name is not None else None
        return LoadError(message, loaded.path, line, loaded.line_text(line))

    top = NameIndex.from_namespace(namespace)
    with_graph = [(n, t) for n, t in top.top_level if t.grad_fn is not None]
    if target is not None:
        return _named_target(loaded, target, calls, top, with_graph, error, seed)
    failed_targets = backward_targets(failed, namespace, failed=True) if failed is not None else None
    if failed_targets is not None and failed_targets.tensors:
        return failed_targets
    where_raised = raising_targets(raised.cause) if raised is not None and raised.cause is not None else None
    if where_raised is not None and where_raised.tensors:
        return where_raised
    if with_graph:
        return Targets(unconsumed(with_graph), top, "top-level")
    last = backward_targets(calls.last, namespace) if calls.last is not None else None
    if last is not None and last.tensors:
        return last
    if raised is not None:
        raise raised
    if loaded.cases:
        return Targets(_case_targets(loaded, loaded.cases, top, seed), top, "cases")
    problem = loaded.cases_error
    if problem is not None and loading.ANY_CASES_HINT not in problem.message:
        raise problem  # a case was meant (`f` without `inputs`, ...): say what is wrong with it
    plain = ", ".join(n for n, _ in top.top_level)
    tensors = f" (its top-level tensors, {plain}, have none)" if plain else ""
    raise error(
        f"no target found: no top-level tensor has a grad_fn{tensors}, no backward() ran and the file "
        "declares no case. Call backward() on the result, assign it to a top-level variable (`loss = ...`) "
        "computed from tensors created with requires_grad=True, pass --target NAME, or declare a case as "
        f"for gradcli check ({loading.ANY_CASES_HINT})"
    )


def unconsumed(tensors: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The (name, tensor) pairs with a grad_fn that no other one's graph consumes."""
    with_graph = [(n, t) for n, t in tensors if t.grad_fn is not None]
    consumed: set[int] = set()
    for node in walk([t.grad_fn for _, t in with_graph]):
        for nxt, _ in node.next_functions:
            if nxt is not None:
                consumed.add(id(nxt))
    return [(n, t) for n, t in with_graph if id(t.grad_fn) not in consumed]


def raising_targets(exc: BaseException) -> Targets | None:
    """The results so far of the function of the user's code that raised `exc` (its innermost frame
    in the traceback): its variables' tensors with a grad_fn that no other one's graph consumes."""
    frames = user_tb_frames(exc.__traceback__)
    if not frames:
        return None
    frame = frames[-1][0]
    variables = frame.f_locals
    names = NameIndex.from_namespace({**frame.f_globals, **variables})
    tensors = unconsumed([(n, v) for n, v in variables.items() if is_tensor(v) and not n.startswith("__")])
    top_level = frame.f_code.co_name == "<module>"
    return Targets(tensors, names, "raised", None if top_level else frame.f_code.co_qualname, variables)


def _named_target(
    loaded: loading.LoadedFile,
    target: str,
    calls: BackwardCalls,
    top: NameIndex,
    with_graph: list[tuple[str, Any]],
    error: Callable[..., LoadError],
    seed: int,
) -> Targets:
    """`--target NAME`: a top-level tensor, a case, else a variable of a function (`FUNC.NAME` or the
    function met last that has one)."""
    namespace = loaded.module.__dict__
    function, _, name = target.rpartition(".")
    if not function:
        chosen = [c for c in loaded.cases if c.name == target]
        defined = target in namespace and not target.startswith("__")
        if defined and (is_tensor(namespace[target]) or not chosen):  # else the case of that name (`model`)
            return _checked(target, target, namespace[target], top, with_graph, error, target)
        if chosen:
            return Targets(_case_targets(loaded, chosen, top, seed), top, "cases")
    scopes = [(scope, variables) for scope, variables in calls.scopes(function or None) if name in variables]
    if not scopes:
        known = [n for n, _ in top.top_level] + [c.name for c in loaded.cases]
        listed = f" (top-level tensors and cases: {', '.join(known)})" if known else ""
        if function:
            met = ", ".join(calls.functions) or "none"
            raise error(
                f"--target {target}: no function `{function}` with a variable `{name}` was running when "
                f"backward() was called or the file raised (functions met: {met}){listed}"
            )
        raise error(
            f"--target {target}: the file defines no top-level variable or case `{target}`, and no function "
            f"running when backward() was called or the file raised has a variable `{target}`{listed}"
        )
    scope, variables = scopes[0]
    names = NameIndex.from_namespace({**namespace, **variables})
    chosen = _checked(target, name, variables[name], names, with_graph, error, None)
    chosen.scope, chosen.scope_names = scope, variables
    return chosen


def _checked(
    target: str,
    name: str,
    value: Any,
    names: NameIndex,
    with_graph: list[tuple[str, Any]],
    error: Callable[..., LoadError],
    line_of: str | None,
) -> Targets:
    """`value`, the variable `name` that `--target target` names, as the one target, or the error
    saying why it cannot be drawn (at the top-level line of `line_of`)."""
    if not is_tensor(value):
        raise error(
            f"--target {target}: `{name}` is {_article(type(value).__name__)}, not a tensor; "
            f"pass the name of a tensor computed from tensors that require grad{_choices(with_graph)}",
            line_of,
        )
    if value.grad_fn is None:
        raise error(f"--target {target}: {_no_grad_fn(name, value)}{_choices(with_graph)}", line_of)
    return Targets([(name, value)], names, "target")


def backward_targets(
    call: BackwardCall, namespace: dict[str, Any] | None = None, *, failed: bool = False
) -> Targets:
    """The tensors of a backward call, named by the user's variables then (`namespace`'s too)."""
    variables = call.names()
    names = NameIndex.from_namespace({**(namespace or {}), **variables})
    tensors = []
    for k, tensor in enumerate(call.tensors):
        if tensor.grad_fn is None:
            continue
        known = names.of(tensor)
        many = f" [{k}]" if len(call.tensors) > 1 else ""
        tensors.append((known[0] if known else f"backward() at line {call.line}{many}", tensor))
    scope = next((f.f_code.co_qualname for f in call.frames if f.f_code.co_name != "<module>"), None)
    return Targets(tensors, names, "backward", scope, variables, failed)


def _raised(raised: LoadError | None, in_backward: bool) -> Raised | None:
    """What the graph says about the error that ended the file."""
    if raised is None:
        return None
    text = exception_text(raised.cause) if raised.cause is not None else raised.message
    return Raised(text, raised.file or "", raised.line, raised.source_line, in_backward)


def _grad_enabled() -> ExitStack:
    """Grad mode on in every library loaded (torch when the file imported it)."""
    stack = ExitStack()
    for library in loaded():
        stack.enter_context(library.enable_grad())
    return stack


def _article(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def _choices(with_graph: list[tuple[str, Any]]) -> str:
    if not with_graph:
        return ""
    return f" (tensors with a grad_fn: {', '.join(n for n, _ in with_graph[:12])}{', ...' if len(with_graph) > 12 else ''})"


def _no_grad_fn(name: str, tensor: Any) -> str:
    if tensor.requires_grad:
        return (
            f"`{name}` has no grad_fn: it is a leaf (requires_grad=True, created by the user), so no "
            "backward graph leads to it; pass a result computed from it"
        )
    return (
        f"`{name}` has no grad_fn: it does not require grad (nothing it was computed from requires "
        "grad, or it was computed under no_grad), so no backward graph was recorded"
    )


def _case_targets(
    loaded: loading.LoadedFile, cases: list[Any], names: NameIndex, seed: int
) -> list[tuple[str, Any]]:
    """Run each case once (grad enabled) and return its outputs that have a grad_fn."""
    targets: list[tuple[str, Any]] = []
    for case in cases:
        prepared = loading.prepare(loaded, case, seed=seed)
        for name, value in zip(prepared.input_names, prepared.inputs):
            if is_tensor(value):
                names.add(name, value, NameIndex.ARGUMENT)
        for name, value in prepared.params:
            names.add(name, value, NameIndex.PARAMETER)
        try:
            with _grad_enabled():
                result = case.func(*prepared.inputs)
        except KeyboardInterrupt as exc:
            raise interrupted(f"while running {loaded.path}::{case.name}", exc) from None
        except BaseException as exc:  # user code: a LoadError naming its line
            raise user_error(
                f"exception while running case {case.name!r}",
                exc,
                loaded.path,
                loaded.abspath,
                loaded.source_lines,
            ) from None
        outputs = list(result) if isinstance(result, (tuple, list)) else [result]
        found = [
            (case.name if len(outputs) == 1 else f"{case.name}[{k}]", out)
            for k, out in enumerate(outputs)
            if is_tensor(out) and out.grad_fn is not None
        ]
        if not found:
            kinds = ", ".join("tensor without grad_fn" if is_tensor(o) else type(o).__name__ for o in outputs)
            raise LoadError(
                f"case {case.name!r} returned no tensor with a grad_fn ({kinds or 'nothing'}), so there is "
                "no backward graph to draw",
                loaded.path,
                case.line,
                loaded.line_text(case.line),
            )
        targets.extend(found)
    return targets
