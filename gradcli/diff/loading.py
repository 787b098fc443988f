"""A diff file's items: its declared pairs, or each of its check cases against itself run another way.

Loading and building inputs go through `gradcli check`'s loader (`check.loading`), so a file's
errors, its inputs factories and the parameters of its modules read as they do for `check`.
"""

from __future__ import annotations

import builtins
import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..check.case_modules import float64_storage, is_module
from ..check.cases import Case
from ..check.config import starting_settings
from ..check.dtype_plan import DtypePlan
from ..check.loading import LoadedFile, PreparedCase, load_file, prepare, top_level_lines, unique_names
from ..check.reach import reached
from ..libraries import TORCH, is_tensor
from ..program.running import LoadError
from .pairs import Pair, collecting
from .recording import Side

#: What `--against` takes: the same case run in float64, with torch for engine, uncompiled for
#: torch.compile, or on the CPU for --device cuda.
AGAINST_CHOICES = ("float64", "torch", "eager", "cpu")
#: torch.compile's keywords for `--against eager` (none: its defaults, inductor).
COMPILE_OPTIONS: dict[str, Any] = {}
PAIRS_HINT = (
    "declare top-level `reference`, `candidate` and `inputs`, or decorate a candidate with "
    "@gradcli.pair(reference=..., inputs=...)"
)


@dataclass
class DiffItem:
    """One comparison: two sides, named as the report names them."""

    name: str
    file: LoadedFile
    reference: Side
    candidate: Side
    labels: tuple[str, str]


@dataclass
class DiffFile:
    """A loaded file and the names of its items (built one by one: `items`)."""

    loaded: LoadedFile
    pairs: list[Pair]

    def names(self, against: str | None) -> list[str]:
        return [c.name for c in self.loaded.cases] if against else [p.name for p in self.pairs]


def load(path: str, *, seed: int, against: str | None) -> DiffFile:
    """Run the file and find its pairs (without `against`) or its check cases (with it)."""
    with collecting() as declared:
        loaded = load_file(path, seed=seed, require_cases=against is not None)
    if against is not None:
        return DiffFile(loaded, [])
    pairs = [p for p in declared if p.file == loaded.abspath]
    pairs += _top_level_pair(loaded, decorated=bool(pairs))
    if not pairs:
        raise LoadError(f"no pairs found: {PAIRS_HINT}", path)
    pairs.sort(key=lambda p: p.line or 0)
    unique_names(pairs)
    for record in pairs:
        record.file = path
    return DiffFile(loaded, pairs)


def _top_level_pair(loaded: LoadedFile, *, decorated: bool) -> list[Pair]:
    """The top-level form; half of it is an error, unless the file's pairs are decorated ones (a
    function named `reference` is then just a reference)."""
    namespace = loaded.module.__dict__
    given = [n for n in ("reference", "candidate", "inputs") if n in namespace]
    if ("reference" not in given and "candidate" not in given) or (decorated and len(given) < 3):
        return []
    where = top_level_lines("\n".join(loaded.source_lines))
    missing = [n for n in ("reference", "candidate", "inputs") if n not in given]
    if missing:
        line = where.get(given[0])
        raise LoadError(
            f"`{given[0]}` is defined but {', '.join(f'`{n}`' for n in missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not: {PAIRS_HINT}",
            loaded.path,
            line,
            loaded.line_text(line),
        )
    for name in ("reference", "candidate"):
        if not callable(namespace[name]):
            line = where.get(name)
            raise LoadError(
                f"`{name}` must be callable (a function or a module), not {type(namespace[name]).__name__}",
                loaded.path,
                line,
                loaded.line_text(line),
            )
    declared = namespace["inputs"]
    inputs = tuple(declared) if isinstance(declared, list) else declared
    return [
        Pair(
            "candidate",
            namespace["reference"],
            namespace["candidate"],
            inputs,
            loaded.abspath,
            where.get("candidate"),
        )
    ]


def pair_item(diff_file: DiffFile, record: Pair, *, seed: int, timeout: float | None) -> DiffItem:
    """The pair's two sides on one set of inputs; the candidate's parameters given the reference's values."""
    loaded = diff_file.loaded
    reference = prepare(
        loaded, _case(record.name, record.reference, record.inputs, record), seed=seed, timeout=timeout
    )
    candidate = prepare(loaded, _case(record.name, record.candidate, reference.inputs, record), seed=seed)
    copy_values(reference.params, candidate.params)
    labels = (_label(record.reference), _label(record.candidate))
    return DiffItem(record.name, loaded, _side(reference, loaded), _side(candidate, loaded), labels)


def against_item(
    diff_file: DiffFile, case: Case, against: str, *, seed: int, timeout: float | None, device: str = "cpu"
) -> DiffItem:
    """The case against itself run `against`: float64 is the reference of the case's own dtype; the
    engine, of torch; eager, of torch.compile; the CPU, of `device`."""
    loaded = diff_file.loaded
    prepared = prepare(loaded, case, seed=seed, timeout=timeout)
    if against == "float64":
        return _against_float64(prepared)
    if against == "eager":
        return _against_eager(prepared)
    if against == "cpu":
        return _against_cpu(prepared, device)
    return _against_torch(prepared, seed=seed)


def _against_float64(prepared: PreparedCase) -> DiffItem:
    library = prepared.library
    plan = DtypePlan(prepared, starting_settings({}, {}), library.gradcheck_tensors())
    own = _side(prepared, prepared.file)
    own.setting = lambda: float64_storage(plan.tensors, widen=False)
    wide = _side(prepared, prepared.file, _widened)
    wide.setting = lambda: float64_storage(plan.tensors)
    return DiffItem(prepared.case.name, prepared.file, wide, own, ("float64", own.dtype_label()))


def _against_torch(prepared: PreparedCase, *, seed: int) -> DiffItem:
    """The case on the other library, the engine's side the reference: an engine file run as torch, a
    torch file run on the engine (the file's imports of the one read as the other)."""
    on_torch = prepared.library is TORCH
    own, other = ("torch", "engine") if on_torch else ("engine", "torch")
    mirror = load_file(prepared.file.path, seed=seed, builtins=_builtins_reading(own, other))
    twin = next((c for c in mirror.cases if c.name == prepared.case.name), None)
    if twin is None:
        raise LoadError(f"run on {other}, the file has no case {prepared.case.name!r}", prepared.file.path)
    twin.inputs = tuple(_in_library(x, other) for x in prepared.inputs)
    mirrored = prepare(mirror, twin, seed=seed)
    copy_values(prepared.params, mirrored.params)
    copy_values(_reached_tensors(prepared), _reached_tensors(mirrored))
    sides = (_side(prepared, prepared.file), _side(mirrored, mirror))
    engine_side, torch_side = reversed(sides) if on_torch else sides
    return DiffItem(prepared.case.name, prepared.file, engine_side, torch_side, ("engine", "torch"))


def _against_cpu(prepared: PreparedCase, device: str) -> DiffItem:
    """The case on the CPU (its inputs, parameters and reached tensors copied there, the CPU its
    default device) as the reference of the case on `device`."""
    library = prepared.library
    plan = DtypePlan(prepared, starting_settings({}, {}), library.gradcheck_tensors())
    own = _side(prepared, prepared.file)
    own.setting = lambda: float64_storage(plan.tensors, widen=False)
    host = _side(prepared, prepared.file, _on_cpu)

    @contextmanager
    def on_cpu() -> Iterator[None]:
        with float64_storage(plan.tensors, widen=False, on_cpu=True), library.on_device("cpu", True):
            yield

    host.setting = on_cpu
    return DiffItem(prepared.case.name, prepared.file, host, own, ("cpu", device))


def _against_eager(prepared: PreparedCase) -> DiffItem:
    if prepared.library is not TORCH:
        raise LoadError(
            f"case {prepared.case.name!r} runs on the engine: --against eager compiles a torch file's cases "
            "with torch.compile",
            prepared.file.path,
        )
    import torch

    eager = _side(prepared, prepared.file)
    compiled = _side(prepared, prepared.file)
    compiled.func = torch.compile(compiled.func, **COMPILE_OPTIONS)
    compiled.watched = False
    return DiffItem(prepared.case.name, prepared.file, eager, compiled, ("eager", "compiled"))


def _builtins_reading(own: str, other: str) -> dict[str, Any]:
    """Builtins whose `__import__` reads the library `own` (and its submodules) as `other`."""

    def imported(
        name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> Any:
        if level == 0 and (name == own or name.startswith(own + ".")):
            name = other + name[len(own) :]
        return builtins.__import__(name, globals, locals, fromlist, level)

    return {**vars(builtins), "__import__": imported}


def _case(name: str, func: Any, inputs: Any, record: Pair) -> Case:
    model = func if is_module(func) else None
    return Case(name=name, func=func, inputs=inputs, file=record.file, line=record.line, model=model)


def _label(func: Any) -> str:
    return getattr(func, "__name__", None) or type(func).__name__


def _side(prepared: PreparedCase, loaded: LoadedFile, copied: Callable[[Any], Any] | None = None) -> Side:
    """The prepared case as a side: its inputs `copied` (fresh leaves with the same values by default)."""
    leaves = [(n, x) for n, x in zip(prepared.input_names, prepared.inputs) if _wants_grad(x)]
    inputs = tuple((copied or _fresh)(x) for x in prepared.inputs)
    fresh = {id(old): new for old, new in zip(prepared.inputs, inputs)}
    leaves = [(n, fresh[id(x)]) for n, x in leaves] + list(prepared.params)
    func = prepared.case.func if prepared.case.model is None else prepared.case.model
    return Side(func, inputs, leaves, prepared.library, loaded.module.__dict__)


def copy_values(source: list[tuple[str, Any]], target: list[tuple[str, Any]]) -> None:
    """Each tensor of `target` given the values of the tensor of `source` with its name."""
    given = dict(source)
    for name, tensor in target:
        value = given.get(name)
        if value is None or value is tensor or tuple(value.shape) != tuple(tensor.shape):
            continue
        lib = importlib.import_module(type(tensor).__module__.partition(".")[0])
        with lib.no_grad():
            tensor.copy_(lib.tensor(_host(value), dtype=tensor.dtype, device=tensor.device))


def _reached_tensors(prepared: PreparedCase) -> list[tuple[str, Any]]:
    case = prepared.case
    found = reached(case.func, {"model": case.model} if case.model is not None else {})
    tensors = list(found.tensors)
    for path, module in found.modules:
        tensors += [(f"{path}.{n}", t) for n, t in (*module.named_parameters(), *module.named_buffers())]
    return tensors


def _wants_grad(x: Any) -> bool:
    return is_tensor(x) and x.dtype.is_floating_point and x.requires_grad


def _fresh(x: Any) -> Any:
    """A leaf of its own with `x`'s values, so the sides' gradients never meet."""
    if not is_tensor(x):
        return x
    return x.detach().clone().requires_grad_(x.requires_grad)


def _on_cpu(x: Any) -> Any:
    if not is_tensor(x):
        return x
    return x.detach().cpu().clone().requires_grad_(x.requires_grad)


def _widened(x: Any) -> Any:
    if not (is_tensor(x) and x.dtype.is_floating_point):
        return x
    return x.detach().double().requires_grad_(x.requires_grad)


def _in_library(x: Any, library: str) -> Any:
    """`x` as a tensor of `library` ("engine" or "torch"), with its values, dtype and requires_grad."""
    if not is_tensor(x):
        return x
    lib = importlib.import_module(library)
    dtype = getattr(lib, str(x.dtype).rsplit(".", 1)[-1])
    return lib.tensor(_host(x), dtype=dtype).requires_grad_(x.requires_grad)


def _host(t: Any) -> Any:
    import numpy

    data = t.detach().cpu()
    return numpy.array(data.numpy())
