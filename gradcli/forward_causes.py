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

import os
from dataclasses import dataclass
from typing import Any

from .case_modules import is_module, modules_used_by
from .loading import PreparedCase
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
    watched = [
        (names[i] if i < len(names) else f"inputs[{i}]", x) for i, x in enumerate(inputs) if _is_tensor(x)
    ]
    changes = changes_during(lambda: call(*inputs), watched)
    causes = [_change_cause(change) for change in changes]
    if not causes and drift.kind == "input":
        which = ", ".join(names[i] if i < len(names) else f"inputs[{i}]" for i in drift.inputs_changed)
        causes.append(Cause(f"the forward writes to its input {which} in place; " + _INPUT_FIX))
    return causes


_INPUT_FIX = (
    "a custom Function that does must say so with ctx.mark_dirty, and the function checked should "
    "work on a copy (x.clone())"
)


def _change_cause(change: Any) -> Cause:
    where = f"{_shown(change.file)}:{change.line}"
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
    """One cause per distinct draw: a Dropout module in training, a dropout call, another draw."""
    causes: list[Cause] = []
    seen: set = set()
    for call in calls:
        module_dropout = (
            call.module_type is not None and "Dropout" in call.module_type and call.module_training
        )
        key = ("module", call.module_id) if module_dropout else ("call", call.function, call.file, call.line)
        if key in seen:
            continue
        seen.add(key)
        where = f"{_shown(call.file)}:{call.line}" if call.file else "the forward"
        if module_dropout:
            path = module_path(prepared, call.module_id) or call.module_type
            called = f" (called at {where})" if call.file else ""
            causes.append(
                Cause(
                    f"{path} ({call.module_repr}) is in training mode: it draws a new mask on every "
                    f"call{called}; check the model in eval mode (model.eval()) or with p=0",
                    call.file,
                    call.line,
                )
            )
        elif call.function in DROPOUT_CALLS:
            causes.append(
                Cause(
                    f"`{call.function}` at {where} draws a new mask on every call (training is on); pass "
                    "training=False (or self.training after model.eval()), or p=0, to check it",
                    call.file,
                    call.line,
                )
            )
        else:
            causes.append(
                Cause(
                    f"`{call.function}` at {where} draws new random numbers on every call; draw them once "
                    "outside the checked function (pass them in as inputs)",
                    call.file,
                    call.line,
                )
            )
    return causes


def module_path(prepared: PreparedCase, module_id: int | None) -> str | None:
    """The module's name as the report names parameters: `model.1`, `encoder.drop`."""
    if module_id is None:
        return None
    roots: list[tuple[str, Any]] = []
    case = prepared.case
    if is_module(case.model):
        roots.append(("model", case.model))
    top = prepared.file.module.__dict__
    for module in [*case.modules, *modules_used_by(case.func)]:
        name = next(
            (k for k, v in top.items() if v is module and not k.startswith("_")), type(module).__name__
        )
        roots.append((name, module))
    roots += [(k, v) for k, v in top.items() if not k.startswith("_") and is_module(v)]
    for name, root in roots:
        try:
            for sub_name, sub in root.named_modules():
                if id(sub) == module_id:
                    return f"{name}.{sub_name}" if sub_name else name
        except Exception:  # a module whose traversal raises is not one to name
            continue
    return None


def _shown(path: str | None) -> str:
    if path is None:
        return "?"
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def _is_tensor(value: Any) -> bool:
    kind = type(value)
    return hasattr(kind, "detach") and hasattr(kind, "requires_grad")
