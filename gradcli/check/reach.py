"""The floating tensors and modules a case function can read, found without running it.

A float64 check widens what the function reads; what it reads is named by its code. From the
function, to a bounded depth, this follows:

- a function of the user's files (any file but the engine's, the Python installation's, torch's
  and gradcli's: `anomaly.is_internal_file`): the globals its code loads (nested lambdas and
  comprehensions included), its closure cells and its default arguments. Helpers called
  through a global are functions like any other, so same-file and other-file helpers are
  followed; bound methods, staticmethods and `functools.partial` lead to theirs;
- an nn.Module (engine's or torch's): its parameters, buffers, submodules and every other
  attribute, and the methods of its class when the class is the user's;
- a Python module of the user's: the attributes the code that reached it names;
- an instance of a user's class (or a SimpleNamespace): its attributes and its class's;
  a user's class: its class attributes and methods;
- lists, tuples, sets and dicts: their items (the first MAX_ITEMS).

Attributes are read from `__dict__`, so no property or `__getattr__` of the user's runs; an
object that resists being looked at is skipped.
Anything else (numbers, arrays, torch's own functions and modules) is not looked into.
"""

from __future__ import annotations

import functools
import sys
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import CodeType, FunctionType, MethodType, ModuleType, SimpleNamespace
from typing import Any

from ..libraries import is_tensor
from ..program.probing import attribute, instance_of
from .case_modules import is_module

#: How many steps (a global, an attribute, an item, a call) from the case function are followed.
MAX_DEPTH = 8
#: Objects looked at per case at most, and items per container: a bound on the walk's cost.
MAX_OBJECTS = 20_000
MAX_ITEMS = 1_000
_MODULE_TABLES = ("_parameters", "_buffers", "_modules")


@dataclass
class Reached:
    """What a function can read: floating tensors and modules, each once, with the first path
    that reached it (`W`, `model.fc.weight`, `helpers.SCALE`, `cfg['w']`); and for each tensor
    (by id) the slots it was read from, (dict or list, key) or (closure cell, None), so that
    another tensor can be put in its place (`replaced`)."""

    tensors: list[tuple[str, Any]] = field(default_factory=list)
    modules: list[tuple[str, Any]] = field(default_factory=list)
    slots: dict[int, list[tuple[Any, Any]]] = field(default_factory=dict)

    def name_of(self, value: Any) -> str | None:
        """The path that reached `value` (a tensor or module), or None."""
        for name, found in (*self.tensors, *self.modules):
            if found is value:
                return name
        return None


def reached(func: Callable, roots: dict[str, Any] | None = None) -> Reached:
    """Everything `func` (and `roots`, named objects the case holds: its model and modules) reaches."""
    found = Reached()
    seen: set[int] = set()
    pending: deque[tuple[Any, str, int, frozenset[str]]] = deque()
    pending.append((func, attribute(func, "__name__", "f"), 0, frozenset()))
    for name, value in (roots or {}).items():
        pending.append((value, name, 0, frozenset()))
    while pending and len(seen) < MAX_OBJECTS:
        value, path, depth, names = pending.popleft()
        if id(value) in seen or depth > MAX_DEPTH or _scalar(value):
            continue
        seen.add(id(value))
        try:
            for child, child_path, child_names, slot in _children(value, path, names, found):
                if slot is not None and (is_tensor(child)):
                    found.slots.setdefault(id(child), []).append(slot)
                if id(child) not in seen:
                    pending.append((child, child_path, depth + 1, child_names))
        except Exception:  # a user's object that will not be looked into (a hostile metaclass...)
            continue
    return found


class replaced:
    """For the block, every slot `reached` read a tensor from holds `replacements[id(tensor)]`.

    The tensors themselves are not touched: torch forgets a leaf's place in graphs already built
    when `.data` changes its dtype, so a check's parameters are swapped where they are held."""

    def __init__(self, found: Reached, replacements: dict[int, Any]):
        self.entries = [(slot, t) for t, slots in found.slots.items() if t in replacements for slot in slots]
        self.replacements = replacements
        self.saved: list[tuple[tuple[Any, Any], Any]] = []

    def __enter__(self) -> replaced:
        for (holder, key), tensor_id in self.entries:
            self.saved.append(((holder, key), _get(holder, key)))
            _put(holder, key, self.replacements[tensor_id])
        return self

    def __exit__(self, *exc: object) -> None:
        for (holder, key), value in reversed(self.saved):
            _put(holder, key, value)
        self.saved.clear()


def _get(holder: Any, key: Any) -> Any:
    return holder.cell_contents if key is None else holder[key]


def _put(holder: Any, key: Any, value: Any) -> None:
    if key is None:
        holder.cell_contents = value
    else:
        holder[key] = value


def _scalar(value: Any) -> bool:
    return value is None or instance_of(value, (bool, int, float, complex, str, bytes))


def _children(value: Any, path: str, names: frozenset[str], found: Reached) -> Iterator[tuple]:
    """What `value` leads to: (child, its path, the code names that reached it, the slot it is
    read from or None)."""
    if is_tensor(value):
        if value.dtype.is_floating_point:
            found.tensors.append((path, value))
        return
    if is_module(value):
        found.modules.append((path, value))
        yield from _module_children(value, path)
        return
    if instance_of(value, FunctionType):
        yield from _function_children(value)
    elif instance_of(value, MethodType):
        yield value.__func__, path, names, None
        yield value.__self__, path.rsplit(".", 1)[0], names, None
    elif instance_of(value, (staticmethod, classmethod)):
        yield value.__func__, path, names, None
    elif instance_of(value, functools.partial):
        yield value.func, path, names, None
        yield from ((a, f"{path}.args[{k}]", names, None) for k, a in enumerate(value.args))
        yield from (
            (v, f"{path}.keywords[{k!r}]", names, (value.keywords, k)) for k, v in value.keywords.items()
        )
    elif instance_of(value, ModuleType):
        if _users_module(value):
            scope = value.__dict__
            yield from ((scope[n], f"{path}.{n}", names, (scope, n)) for n in sorted(names) if n in scope)
    elif instance_of(value, (list, tuple, set, frozenset)):
        mutable = instance_of(value, list)
        for k, item in enumerate(value):
            if k >= MAX_ITEMS:
                break
            yield item, f"{path}[{k}]", names, (value, k) if mutable else None
    elif instance_of(value, dict):
        for k, (key, item) in enumerate(value.items()):
            if k >= MAX_ITEMS:
                break
            yield item, f"{path}[{key!r}]", names, (value, key)
    elif instance_of(value, type):
        if _users_class(value):
            yield from _class_children(value, path)
    elif instance_of(value, SimpleNamespace) or _users_class(type(value)):
        yield from _attributes(value, path)
        if _users_class(type(value)):
            yield from _class_children(type(value), type(value).__name__)


def _function_children(func: FunctionType) -> Iterator[tuple]:
    from engine.autograd.anomaly import is_internal_file

    code = func.__code__
    if is_internal_file(code.co_filename):
        return
    names = frozenset(_code_names(code))
    scope = func.__globals__
    for name in sorted(names):
        if name in scope:
            yield scope[name], name, names, (scope, name)
    for name, cell in zip(code.co_freevars, func.__closure__ or ()):
        try:
            yield cell.cell_contents, name, names, (cell, None)
        except ValueError:  # a cell not yet assigned
            pass
    positional = code.co_varnames[: code.co_argcount]
    defaults = func.__defaults__ or ()
    for name, value in zip(positional[len(positional) - len(defaults) :], defaults):
        yield value, name, names, None
    for name, value in (func.__kwdefaults__ or {}).items():
        yield value, name, names, (func.__kwdefaults__, name)


def _code_names(code: CodeType) -> Iterator[str]:
    """The global and attribute names a code object (and the code nested in it) loads."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _code_names(const)


def _module_children(module: Any, path: str) -> Iterator[tuple]:
    """Parameters, buffers and submodules under their own names, then the other attributes."""
    state = _instance_dict(module)
    for table in _MODULE_TABLES:
        entries = state.get(table)
        if instance_of(entries, dict):
            yield from (
                (v, f"{path}.{k}", frozenset(), (entries, k)) for k, v in entries.items() if v is not None
            )
    yield from (
        (v, f"{path}.{k}", frozenset(), (state, k)) for k, v in state.items() if k not in _MODULE_TABLES
    )
    if _users_class(type(module)):
        yield from _class_children(type(module), type(module).__name__)


def _attributes(value: Any, path: str) -> Iterator[tuple]:
    state = _instance_dict(value)
    yield from ((v, f"{path}.{k}", frozenset(), (state, k)) for k, v in state.items())


def _class_children(cls: type, path: str) -> Iterator[tuple]:
    """A user's class and its user bases: methods and class attributes (not dunders)."""
    for klass in cls.__mro__:
        if not _users_class(klass):
            continue
        for name, value in vars(klass).items():
            if not (name.startswith("__") and name.endswith("__")):
                yield value, f"{path}.{name}", frozenset(), None


def _instance_dict(value: Any) -> dict:
    try:
        state = object.__getattribute__(value, "__dict__")
    except Exception:  # no __dict__ (slots), or an odd one
        return {}
    return state if instance_of(state, dict) else {}


def _users_class(cls: type) -> bool:
    """A class defined in the user's files (a check file run by gradcli has no file in sys.modules)."""
    name = attribute(cls, "__module__")
    module = sys.modules.get(name if isinstance(name, str) else "")
    if module is None:
        return True
    return _users_module(module)


def _users_module(module: ModuleType) -> bool:
    from engine.autograd.anomaly import is_internal_file

    path = getattr(module, "__file__", None)
    return isinstance(path, str) and not is_internal_file(path)
