"""The error findings: which anomaly the exception that ended the script is, if it is one.

`classify` recognises the engine's errors by the attributes the engine sets where it raises
them, never by their words (PyTorch's, which may change): `saved_tensor` (a saved tensor
modified in place), `anomaly_node` (raised in that node's backward) and `autograd_kind`:

- "freed": backward through freed saved values -> backward-twice (`shared_output`: through a module's
  output that fed both losses, with `backward_roots` and `ran_saved` set by the instrument)
- "leaf-inplace", "view-of-leaf-inplace" (with `tensor`, the leaf) -> leaf-inplace
- "no-grad-view-inplace" (with `tensor`, the view), "no-grad-view-changed" -> no-grad-view-inplace
- "implicit-grad" (with `tensor` for a non-scalar) -> implicit-grad-nonscalar

- "nan-in-backward", "inf-in-backward" (with `output_index`: the engine's check_nan and the
  instrument's Inf twin) -> nan/inf-in-backward, or nan-in-where-branch (`gradcli.anomaly.nonfinite`)

Any other error in a node's backward is a backward-error,
any other RuntimeError from engine.autograd an autograd-error; anything else is not about
autograd: `classify` returns None.
"""

from __future__ import annotations

import types
from collections.abc import Callable

from ..libraries import ENGINE, tensor_library
from ..program.exception_text import message_of
from ..program.modules import ModuleCall
from ..program.names import TensorNames, code_path, definition
from ..program.sites import Sites, node_site, raise_site, raised_in, user_tb_frames
from .findings import ERROR, AnomalyFound, Finding, Location, unique_locations
from .instrument import Instrument
from .nonfinite import backward_finding
from .shared_output import SharedOutput, freed_module_output
from .stats import shape_of

#: engine.tensor methods whose errors are about autograd (requires_grad rules, hooks, .numpy()).
_AUTOGRAD_TENSOR_FUNCTIONS = frozenset(
    {
        "requires_grad",
        "requires_grad_",
        "retain_grad",
        "register_hook",
        "numpy",
        "backward",
        "detach_",
        "grad",
    }
)


def classify(
    exc: BaseException, instrument: Instrument, sites: Sites, module: types.ModuleType | None
) -> Finding | None:
    """The finding for an exception that ended the script, or None if it is not about autograd."""
    if isinstance(exc, AnomalyFound):
        finding = exc.finding
        backward = raise_site(exc, sites)
        if backward is not None and finding.location is not None and backward.where != finding.location.where:
            backward.role = "raised here"
            finding.related.append(backward)
        return finding
    node = getattr(exc, "anomaly_node", None)
    kind = getattr(exc, "autograd_kind", None)
    message = message_of(exc)
    frames = [frame for frame, _ in user_tb_frames(exc.__traceback__)]
    names = TensorNames(module, frames)
    here = raise_site(exc, sites)
    if isinstance(exc, RuntimeError):
        if getattr(exc, "saved_tensor", None) is not None:
            return _modified_saved(exc, node, here, sites, names, instrument)
        if kind == "freed":
            return _backward_twice(exc, node, here, instrument, sites, names)
        if kind in ("leaf-inplace", "view-of-leaf-inplace"):
            return _leaf_inplace(exc, kind == "view-of-leaf-inplace", here, sites, names)
        if kind in ("no-grad-view-inplace", "no-grad-view-changed"):
            return _no_grad_view_inplace(exc, kind == "no-grad-view-changed", message, here, sites, names)
        if kind in ("nan-in-backward", "inf-in-backward") and node is not None:
            seen = instrument.nonfinite.get(id(node), {})
            return backward_finding(
                exc, node.name(), node_site(node), here, seen.get("stats", []), sites, seen.get("diagnosis")
            )
        if kind == "implicit-grad":
            return _implicit_nonscalar(exc, message, here, sites, names)
    if node is not None:
        return _with_node(
            Finding(
                "backward-error",
                ERROR,
                f"the backward of {node.name()} raised {type(exc).__name__}: {_first_line(message)}",
                here,
                hint="the forward op that created this node is listed below; its inputs or the custom "
                "Function's backward are the place to look",
                details={"node": node.name(), "exception": type(exc).__name__, "error": message},
            ),
            node,
            sites,
        )
    if isinstance(exc, RuntimeError) and _raised_by_autograd(exc):
        return Finding(
            "autograd-error",
            ERROR,
            _first_line(message),
            here,
            details={"exception": type(exc).__name__, "error": message},
        )
    return None


def _first_line(message: str) -> str:
    return message.split("\n", 1)[0]


def _raised_by_autograd(exc: BaseException) -> bool:
    """Raised in engine.autograd (torch.autograd), or in an autograd method of engine.tensor (torch._tensor)."""
    module, function = raised_in(exc.__traceback__)
    if module.startswith(("engine.autograd.", "torch.autograd.")):
        return True
    return module in ("engine.tensor", "torch._tensor") and function in _AUTOGRAD_TENSOR_FUNCTIONS


def _with_node(finding: Finding, node, sites: Sites, role: str | None = None) -> Finding:
    created = sites.location(node_site(node), role or f"{node.name()} created (forward)")
    if created is not None and (finding.location is None or created.where != finding.location.where):
        finding.related = unique_locations([*finding.related, created])
    return finding


def _modified_saved(
    exc, node, here: Location | None, sites: Sites, names: TensorNames, instrument: Instrument
) -> Finding:
    from engine.backend import tensor_type_name

    tensor = exc.saved_tensor
    changed_by = instrument.module_bumps.get((id(tensor._vc), exc.expected_version + 1))
    return modified_saved_finding(
        name=names.of(tensor),
        type_name=tensor_type_name(tensor._data),
        shape=shape_of(tensor),
        saver=node.name() if node is not None else None,
        saved_site=node_site(node) if node is not None else None,
        expected=exc.expected_version,
        current=tensor._vc.version,
        bumps=dict(tensor._vc.bumps or ()),
        here=here,
        error=message_of(exc),
        sites=sites,
        module=changed_by,
    )


def modified_saved_finding(
    *,
    name: str | None,
    type_name: str,
    shape: list[int],
    saver: str | None,
    saved_site: tuple | None,
    expected: int,
    current: int,
    bumps: dict[int, tuple],
    here: Location | None,
    error: str,
    sites: Sites,
    module: ModuleCall | None = None,
) -> Finding:
    """The inplace-modified-saved finding, from what either instrument recorded: the saving node and
    its line, the versions, and `bumps` (version -> the site that bumped the counter to it);
    `module`, the nn.Module whose forward made the first change, when one did."""
    modifications = []
    by = f" by {module.label}" if module is not None else ""
    for version in range(expected + 1, current + 1):
        location = sites.location(
            bumps.get(version),
            f"modified in place{by if version == expected + 1 else ''} (version {version - 1} -> {version})",
        )
        if location is not None:
            modifications.append(location)
    saved_at = sites.location(saved_site, f"saved by {saver} (version {expected})") if saver else None
    label = name or "a tensor"
    message = (
        f"{label} [{type_name} {shape}] was saved for backward"
        + (f" by {saver}" if saver else "")
        + f" at version {expected}, then modified in place{by} (now version {current}); "
        "backward needs the saved value"
    )
    related = ([saved_at] if saved_at else []) + modifications[1:]
    if module is not None and module.forward_site is not None:
        related.append(sites.location(module.forward_site, f"{module.class_name}.forward ({module.path})"))
    if here is not None:
        here.role = "backward"
        related.append(here)
    primary = modifications[0] if modifications else here
    return Finding(
        "inplace-modified-saved",
        ERROR,
        message,
        primary,
        related,
        hint=_module_hint(module)
        or "compute out of place (`b = b.clone(); b[0] = ...` or `y = y + 1` instead of `y += 1`), "
        "or make the in-place change before the op that saves the tensor",
        details={
            **({"module": module.path, "module_class": module.description} if module is not None else {}),
            "tensor": name,
            "type": type_name,
            "shape": shape,
            "saved_by": saver,
            "saved_version": expected,
            "current_version": current,
            "modified_at": [m.where for m in modifications],
            "error": error,
        },
    )


def _module_hint(module: ModuleCall | None) -> str | None:
    """The fix for an in-place module: construct it with inplace=False."""
    if module is None or not module.inplace:
        return None
    return (
        f"construct {module.path} with inplace=False (`{module.class_name}(inplace=False)`): "
        f"its forward changes its input in place, and that input was saved for backward"
    )


def _backward_twice(
    exc, node, here: Location | None, instrument: Instrument, sites: Sites, names: TensorNames
) -> Finding:
    related = []
    first = None
    if node is not None:
        run = instrument.freed.get(id(node))
        first = sites.location(instrument.run_site(run), "first backward (freed the graph)")
    if first is not None:
        related.append(first)
    at_line = f" (line {first.line})" if first else ""
    shared = freed_module_output(
        names.scopes(), getattr(exc, "backward_roots", []), node, getattr(exc, "ran_saved", False)
    )
    if shared is not None:
        return _shared_output(shared, node, here, first, sites)
    finding = Finding(
        "backward-twice",
        ERROR,
        "backward through a graph whose saved values were already freed by an earlier backward"
        + (f" (at {node.name()})" if node is not None else ""),
        here,
        related,
        hint=f"pass retain_graph=True to the first backward{at_line} if you "
        "need to backward through the graph again, or recompute the forward before each backward",
        details={
            "node": node.name() if node is not None else None,
            "first_backward": first.where if first else None,
        },
    )
    if node is not None:
        _with_node(finding, node, sites)
    return finding


def _shared_output(
    shared: SharedOutput, node, here: Location | None, first: Location | None, sites: Sites
) -> Finding:
    """backward-twice through a module's output that fed both losses: detach it in the first one."""
    name, module = shared.name, shared.module
    at_line = f" (line {first.line})" if first else ""
    made = definition(name, sites)
    if made is not None:
        made.role = f"{name}: the output of {module}"
    related = [location for location in (made, first) if location is not None]
    return Finding(
        "backward-twice",
        ERROR,
        f"this backward goes through {name}, the output of {module}, whose graph an earlier backward already "
        f"freed: {name} fed both losses, and the first backward went on into {module}"
        + (f" (at {node.name()})" if node is not None else ""),
        here,
        related,
        hint=f"detach it where the first loss uses it: `{name}.detach()` in the loss of the first backward{at_line}, "
        f"so that backward stops at {name} and leaves {module}'s graph to this one (as a GAN's discriminator "
        f"step does); retain_graph=True would let this run, but the first backward would still go through "
        f"{module} and leave its gradient in {module}'s .grad",
        details={
            "node": node.name() if node is not None else None,
            "first_backward": first.where if first else None,
            "detach": name,
            "module": module,
        },
    )


def _leaf_inplace(
    exc, through_view: bool, here: Location | None, sites: Sites, names: TensorNames
) -> Finding:
    leaf = getattr(exc, "tensor", None)
    name = names.of(leaf)
    related = []
    defined = definition(name, sites)
    if defined is not None and (here is None or defined.where != here.where):
        related.append(defined)
    label = name or "a leaf tensor"
    what = f"a view of {label}" if through_view else label
    return Finding(
        "leaf-inplace",
        ERROR,
        f"in-place op on {what}, a leaf that requires grad"
        + (f" [{', '.join(map(str, shape_of(leaf)))}]" if leaf is not None else ""),
        here,
        related,
        hint=f"if this updates the parameter (an optimizer step), do it under `with {_library(leaf)}.no_grad():`; "
        f"if the new value should be part of the graph, work on a copy: `{_copy_of(name or 'x')}` first",
        details={
            "tensor": name,
            "shape": shape_of(leaf) if leaf is not None else None,
            "through_view": through_view,
        },
    )


def _copy_of(name: str) -> str:
    """`x = x.clone()`; for a module's parameter, a copy beside it (`weight = model[0].weight.clone()`):
    a module keeps only Parameters, so assigning it a clone would raise."""
    copy = name.rsplit(".", 1)[-1]
    return f"{copy} = {code_path(name)}.clone()"


def _library(tensor) -> str:
    """The library a fix should name: the tensor's ("engine" for what is no tensor)."""
    return (tensor_library(tensor) or ENGINE).name


def _no_grad_view_inplace(
    exc, base_changed: bool, message: str, here: Location | None, sites: Sites, names: TensorNames
) -> Finding:
    view = getattr(exc, "tensor", None)
    name = names.of(view)
    related = []
    defined = definition(name, sites)
    if defined is not None and (here is None or defined.where != here.where):
        defined.role = f"{name} made (under no_grad)"
        related.append(defined)
    what = name or "a view"
    return Finding(
        "no-grad-view-inplace",
        ERROR,
        (
            f"{what} was made under no_grad and its storage was then changed in place; "
            "its history is lost, so grad mode can't use it"
            if base_changed
            else f"in-place op with grad mode on, on {what}, a view made under no_grad: "
            "whether the change should be tracked is ambiguous"
        ),
        here,
        related,
        hint="make the view and the in-place change both inside `with engine.no_grad():` (not tracked) "
        "or both outside it (tracked)",
        details={"tensor": name, "shape": shape_of(view) if view is not None else None, "error": message},
    )


def _implicit_nonscalar(exc, message, here: Location | None, sites: Sites, names: TensorNames) -> Finding:
    tensor = getattr(exc, "tensor", None)
    name = names.of(tensor)
    shape = shape_of(tensor) if tensor is not None else None
    finding = Finding(
        "implicit-grad-nonscalar",
        ERROR,
        f"backward() without a gradient on {name or 'a tensor'} of shape {shape}: "
        "the implicit gradient exists only for a single value",
        here,
        hint="reduce it first (`.sum()` or `.mean()`), or pass `gradient=` a tensor of the output's shape",
        details={"tensor": name, "shape": shape, "error": message},
    )
    if tensor is not None and tensor.grad_fn is not None:
        _with_node(finding, tensor.grad_fn, sites, f"{name or 'the tensor'} created")
    return finding


#: Added to the hint of a finding whose error did not end the script.
CAUGHT = "the script went on after this error (it caught it, or it ended a thread)"


def caught_findings(
    errors: list[BaseException],
    classify_error: Callable[[BaseException], Finding | None],
    escaped: BaseException | None,
    found: list[Finding],
) -> list[Finding]:
    """Findings for the errors that did not end the script: caught by it, or raised in a thread.
    The instruments recorded them as raised; one finding per kind and line."""
    seen = {(f.kind, f.location.where if f.location else None) for f in found}
    findings = []
    for exc in errors:
        if exc is escaped:
            continue
        finding = classify_error(exc)
        key = finding and (finding.kind, finding.location.where if finding.location else None)
        if finding is None or key in seen:
            continue
        seen.add(key)
        finding.hint = f"{finding.hint}; {CAUGHT}" if finding.hint else CAUGHT
        findings.append(finding)
    return findings
