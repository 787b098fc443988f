"""Why a case's forward changed between calls, in the user's terms: the module, the call, the line.

The checker says how the forward drifted (engine/autograd/gradcheck/determinism.py: random draws,
state, an input written to) and records the random draws it saw; this module names the cause a
user can act on, with the fix:

* an `nn.Dropout` (any `*Dropout*` module) in training mode, by its path (`model.1`);
* a dropout called as a function with training on (`F.dropout(h, 0.1)`), by its line;
* any other random draw in the forward (`randn`, `bernoulli`, ...), by its line;
* a global, attribute or closed-over variable that changes on each call, or an input written to in
  place, by the line that changed it (found by tracing one more call, state_changes.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.autograd.gradcheck.random_calls import RandomCall

from ..libraries import is_tensor
from ..program.shown_paths import display_path
from .case_modules import is_module
from .loading import PreparedCase
from .reach import reached
from .state_changes import changes_during

#: What the user's code calls that draws a dropout mask (engine's and torch's names).
DROPOUT_CALLS = frozenset(
    {
        "dropout",
        "dropout1d",
        "dropout2d",
        "dropout3d",
        "alpha_dropout",
        "feature_alpha_dropout",
        "native_dropout",
        "bernoulli",
        "bernoulli_",
    }
)


@dataclass
class Cause:
    """One sentence naming the cause and its fix, and the user's line it points at (if known)."""

    text: str
    file: str | None = None
    line: int | None = None


def forward_causes(
    drift: Any, prepared: PreparedCase, call: Any, inputs: tuple, names: list[str]
) -> list[Cause]:
    """The causes of `drift` (a ForwardDrift); `call(*inputs)` runs the case's forward again."""
    if drift.kind == "random":
        causes = _random_causes(drift.random_calls, prepared)
        return causes or [
            Cause(
                "the forward draws random numbers outside the library's generator (numpy.random or "
                "Python's random: the output is the same when their state is put back); draw them once, "
                "outside the checked function"
            )
        ]
    named = [names[i] if i < len(names) else f"inputs[{i}]" for i in range(len(inputs))]
    watched = [(named[i], x) for i, x in enumerate(inputs) if is_tensor(x)]
    changes = changes_during(lambda: call(*inputs), watched)
    causes = [_change_cause(change) for change in changes]
    if not causes and drift.kind == "input":
        which = ", ".join(named[i] for i in drift.inputs_changed)
        causes.append(Cause(f"the forward writes to its input {which} in place; " + _INPUT_FIX))
    return causes


_INPUT_FIX = (
    "check a function that works on a copy (x.clone()); a custom Function that writes to an input "
    "must also declare it with ctx.mark_dirty"
)


def _change_cause(change: Any) -> Cause:
    where = f"{display_path(change.file)}:{change.line}"
    if change.what.startswith("input"):
        return Cause(
            f"the forward writes to its {change.what} in place at {where}; " + _INPUT_FIX,
            change.file,
            change.line,
        )
    return Cause(
        f"{change.what} changes on every call, at {where}, and the output depends on it; keep state "
        "that changes out of the function checked (pass it as an argument, or reset it inside)",
        change.file,
        change.line,
    )


def _random_causes(calls: list, prepared: PreparedCase) -> list[Cause]:
    """Modules whose dropout is on (one cause for all of them), then each other draw by its line."""
    modules: dict[int, RandomCall] = {}
    causes: list[Cause] = []
    seen: set = set()
    for call in calls:
        user_called_dropout = call.called in DROPOUT_CALLS and call.file is not None
        if call.module_training and (
            "Dropout" in (call.module_type or "")
            or (call.function in DROPOUT_CALLS and not user_called_dropout)
        ):
            modules.setdefault(call.module_id, call)
            continue
        key = (call.function, call.file, call.line)
        if key in seen:
            continue
        seen.add(key)
        where = f"{display_path(call.file)}:{call.line}" if call.file else "the forward"
        if user_called_dropout or call.function in DROPOUT_CALLS:
            name = call.called if user_called_dropout else call.function
            text = (
                f"`{name}` at {where} draws a new mask on every call (training is on); pass "
                "training=False (or self.training after model.eval()), or p=0, to check it"
            )
        else:
            text = (
                f"`{call.function}` at {where} draws new random numbers on every call; draw them once "
                "outside the checked function (pass them in as inputs)"
            )
        causes.append(Cause(text, call.file, call.line))
    if modules:
        causes.insert(0, _dropout_modules(list(modules.values()), prepared))
    return causes


def _dropout_modules(calls: list, prepared: PreparedCase) -> Cause:
    """One cause naming every module in training mode whose dropout drew a mask."""
    named = [f"{module_path(prepared, c.module_id) or c.module_type} ({c.module_repr})" for c in calls]
    first = calls[0]
    called = f" (called at {display_path(first.file)}:{first.line})" if first.file else ""
    if len(named) == 1:
        subject = f"{named[0]} is in training mode: its dropout draws"
    else:
        subject = f"{', '.join(named)} are in training mode: their dropout draws"
    return Cause(
        f"{subject} a new mask on every call{called}; check the model in eval mode (model.eval()) or with p=0",
        first.file,
        first.line,
    )


def module_path(prepared: PreparedCase, module_id: int | None) -> str | None:
    """The module's name as the report names parameters: `model.1`, `encoder.drop`."""
    if module_id is None:
        return None
    case = prepared.case
    top = prepared.file.module.__dict__
    roots = {"model": case.model} if is_module(case.model) else {}
    for module in case.modules:
        name = next(
            (k for k, v in top.items() if v is module and not k.startswith("_")), type(module).__name__
        )
        roots[name] = module
    for name, root in roots.items():
        try:
            for sub_name, sub in root.named_modules():
                if id(sub) == module_id:
                    return f"{name}.{sub_name}" if sub_name else name
        except Exception:  # a module whose traversal raises is named another way
            continue
    found = reached(case.func)
    return next((name for name, module in found.modules if id(module) == module_id), None)
