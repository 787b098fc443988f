"""Loading the user's file and choosing what to draw: the targets and the user's names for tensors.

Targets, in order: `--target NAME` (a top-level tensor, or a case of that name); else every
top-level tensor with a `grad_fn` that no other such tensor's graph consumes; else the outputs
of the file's cases (the `gradcli check` forms, found by `gradcli.check.loading`). Every problem with
the file or the target is a `LoadError` naming the file and line where there is one.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

from engine import backend

from ..check import loading
from ..libraries import MixedTensors, is_tensor, loaded
from ..program import sites
from ..program.modules import recording_modules
from ..program.names import NameIndex
from ..program.running import LoadError, interrupted, user_error, using_device
from .forward_lines import ForwardLines
from .model import Graph
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
    """Run `path` with `device` as the default device and walk the graph of its target(s).

    With `forward_lines`, each node gets the user's line whose forward call made it. With
    `group_modules`, the file runs under module hooks (`module_hooks`) and the graph's
    `modules` tells which module's forward made each node. With `levels`, only nodes that
    many levels deep are recorded (`build_graph`). Every problem with the file or the
    target raises `LoadError` (exit code 2), naming the file and line where there is one.
    """
    try:
        with using_device(device, [path]), sites.recording(forward_lines), ExitStack() as hooks:
            recorder = hooks.enter_context(recording_modules()) if group_modules else None
            loaded = loading.load_file(path, seed=seed, require_cases=False)
            targets, names, source = find_targets(loaded, target, seed=seed)
    except backend.CudaUnavailable as exc:
        raise LoadError(f"--device {device} is unavailable: {exc}", path) from None
    try:
        lines = ForwardLines(path) if forward_lines else None
        graph = build_graph(
            targets,
            names,
            file=path,
            targets_from=source,
            device=device,
            seed=seed,
            lines=lines,
            levels=levels,
        )
    except MixedTensors as exc:
        raise LoadError(f"the graph to draw {exc}", path) from None
    if recorder is not None:
        graph.modules = recorder.node_paths(walk([t.grad_fn for _, t in targets]), loaded.module.__dict__)
    return graph


def find_targets(
    loaded: loading.LoadedFile, target: str | None, *, seed: int = 0
) -> tuple[list[tuple[str, Any]], NameIndex, str]:
    """The (name, tensor) pairs to draw, the file's names, and how they were chosen."""
    namespace = loaded.module.__dict__
    names = NameIndex.from_namespace(namespace)
    where = loading.top_level_lines("\n".join(loaded.source_lines))

    def error(message: str, name: str | None = None) -> LoadError:
        line = where.get(name) if name is not None else None
        return LoadError(message, loaded.path, line, loaded.line_text(line))

    with_graph = [(n, t) for n, t in names.top_level if t.grad_fn is not None]
    if target is not None:
        chosen = [c for c in loaded.cases if c.name == target]
        defined = target in namespace and not target.startswith("__")
        value = namespace[target] if defined else None
        if defined and (is_tensor(value) or not chosen):  # else the case of that name (`model`)
            if not is_tensor(value):
                raise error(
                    f"--target {target}: `{target}` is {_article(type(value).__name__)}, not a tensor; "
                    f"pass the name of a tensor computed from tensors that require grad{_choices(with_graph)}",
                    target,
                )
            if value.grad_fn is None:
                raise error(f"--target {target}: {_no_grad_fn(target, value)}{_choices(with_graph)}", target)
            return [(target, value)], names, "target"
        if chosen:
            return _case_targets(loaded, chosen, names, seed), names, "cases"
        known = [n for n, _ in names.top_level] + [c.name for c in loaded.cases]
        listed = f" (top-level tensors and cases: {', '.join(known)})" if known else ""
        raise error(f"--target {target}: the file defines no top-level variable or case `{target}`{listed}")
    if with_graph:
        consumed: set[int] = set()
        for node in walk([t.grad_fn for _, t in with_graph]):
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    consumed.add(id(nxt))
        roots = [(n, t) for n, t in with_graph if id(t.grad_fn) not in consumed]
        return roots, names, "top-level"
    if loaded.cases:
        return _case_targets(loaded, loaded.cases, names, seed), names, "cases"
    problem = loaded.cases_error
    if problem is not None and loading.ANY_CASES_HINT not in problem.message:
        raise problem  # a case was meant (`f` without `inputs`, ...): say what is wrong with it
    plain = ", ".join(n for n, _ in names.top_level)
    tensors = f" (its top-level tensors, {plain}, have none)" if plain else ""
    raise error(
        f"no target found: no top-level tensor has a grad_fn{tensors} and the file declares no "
        "case. Assign the result to a top-level variable (`loss = ...`) computed from tensors "
        "created with requires_grad=True, pass --target NAME, or declare a case as for gradcli "
        f"check ({loading.ANY_CASES_HINT})"
    )


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
