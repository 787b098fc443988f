"""How a prepared case is called, wherever gradcli calls it (the check, a failure's replays, the
causes of a drifting forward): with its checked parameters as extra inputs, in its library's grad
mode, and with Ctrl-C reported at the case."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..libraries import is_tensor
from ..program.running import interrupted
from .loading import PreparedCase


def callable_and_inputs(prepared: PreparedCase) -> tuple[Callable, tuple]:
    """Checked parameters (model, modules=) become extra inputs of a wrapper.

    The case reads its parameters from its modules, so the wrapper passes it only the inputs;
    given dual tensors for the parameters (forward mode's), it puts those in the modules'
    parameter tables for the call, as torch.func.functional_call does."""
    case = prepared.case
    if not prepared.params:
        return case.func, prepared.inputs
    func, count = case.func, len(prepared.inputs)
    names = [name for name, _ in prepared.params]
    params = tuple(p for _, p in prepared.params)
    owners = [owner for owner in (case.model, *case.modules) if owner is not None]
    tangent = prepared.library.gradcheck_tensors().tangent

    def call(*xs: Any) -> Any:
        stand_ins = {
            id(p): (name, x)
            for name, p, x in zip(names, params, xs[count:])
            if x is not p and tangent(x) is not None  # a dual tensor; not a float64 reference copy
        }
        if not stand_ins:
            return func(*xs[:count])
        with parameters_replaced(owners, stand_ins):
            return func(*xs[:count])

    return call, prepared.inputs + params


@contextmanager
def parameters_replaced(owners: list, stand_ins: dict[int, tuple[str, Any]]) -> Iterator[None]:
    """Within it, each parameter `id -> (name, tensor)` names is `tensor` in every module holding
    it (shared ones too). A parameter held by no module's table cannot be replaced: forward mode
    then says it cannot check the case, rather than get a zero derivative for it."""
    replaced: list[tuple[dict, str, Any]] = []
    found: set[int] = set()
    for owner in owners:
        walk = getattr(owner, "modules", None)
        for module in walk() if callable(walk) else (owner,):
            for table in _tables(module):
                for key, value in list(table.items()):
                    if value is not None and id(value) in stand_ins:
                        found.add(id(value))
                        replaced.append((table, key, value))
                        table[key] = stand_ins[id(value)][1]
    try:
        missing = [name for key, (name, _) in stand_ins.items() if key not in found]
        if missing:
            from engine.autograd.gradcheck.forward import ForwardModeUnsupported

            raise ForwardModeUnsupported(
                f"{', '.join(missing)} cannot be given a tangent: no module attribute holds"
                f" {'them' if len(missing) > 1 else 'it'}"
            )
        yield
    finally:
        for table, key, value in reversed(replaced):
            table[key] = value


def _tables(module: Any) -> list[dict]:
    """Where a module holds its parameters: nn.Module's `_parameters` table, and the object's own
    attributes (a duck-typed model's `self.w = ...`)."""
    own = vars(module) if hasattr(module, "__dict__") else {}
    parameters = own.get("_parameters")
    return [t for t in (parameters, own) if isinstance(t, dict)]


def interrupted_in(prepared: PreparedCase, exc: KeyboardInterrupt) -> BaseException:
    return interrupted(f"while running {prepared.file.path}::{prepared.case.name}", exc)


def grad_enabled(prepared: PreparedCase) -> Any:
    return prepared.library.enable_grad()


def wants_grad(value: Any) -> bool:
    return is_tensor(value) and value.dtype.is_floating_point and value.requires_grad
