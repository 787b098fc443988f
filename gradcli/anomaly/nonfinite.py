"""The NaN / Inf findings: nan-in-forward / inf-in-forward, nan-in-backward / inf-in-backward, and
nan-in-where-branch.

The instruments notice them (`Instrument.forward`, `Instrument.node_done`, torch's post hooks) and
hand over the values the op saw; this module says what was found: the counts and ranges of the
tensors involved, the op, why (`causes`), and how to fix it. A NaN gradient of a `where()` branch
that was not taken (0 sent to an op whose derivative is infinite there) is its own kind, with the
"double where" fix. The graph is walked through `next_functions` and `name()`, which engine and
torch nodes share.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy

from ..program.names import op_name
from ..program.sites import Sites, node_site
from .causes import Cause, backward_cause, forward_cause, made_here
from .findings import ERROR, AnomalyFound, Finding, Location, TensorStats
from .stats import host_array, tensor_stats

# ----------------------------------------------------------------------------- forward


#: Ops that write a value they are given (lowercase, without underscores): an infinity they put
#: in their output was asked for (`masked_fill(mask, -inf)` before a softmax), not computed.
PLACES_VALUES = frozenset(
    {"maskedfill", "fill", "indexfill", "indexput", "scatter", "where", "constantpadnd", "pad", "full"}
    | {"fulllike", "newfull"}
)


def forward_error(name: str, inputs, out, site: tuple | None, sites: Sites) -> AnomalyFound | None:
    """The error that stops the script at an engine op (`name`: its node's) whose output holds NaN / Inf."""
    from engine.tensor import Tensor

    stats = [tensor_stats("output", out)]
    stats += [tensor_stats(f"input {i}", x) if isinstance(x, Tensor) else None for i, x in enumerate(inputs)]
    values = [host_array(x._data) if isinstance(x, Tensor) else x for x in inputs]
    return forward_anomaly(name, stats, inputs, values, host_array(out._data), site, sites)


def forward_anomaly(
    name: str,
    stats: list[TensorStats | None],
    inputs: list,
    values: list,
    output,
    site: tuple | None,
    sites: Sites,
) -> AnomalyFound | None:
    """The error that stops the script at `name` (its node, or the op when none was recorded), for
    engine and torch alike: `stats` are the output's, then each input's (None for what is no float
    tensor); `values` the inputs on the host (numbers as they are), `output` the output's. None for
    an infinity meant to be there: placed by an op that writes a given value (a `-inf` attention
    mask) or carried from an input; a NaN is always an error."""
    what = "nan" if stats[0].nan else "inf"
    tainted = [i for i, s in enumerate(stats[1:]) if s is not None and s.nonfinite]
    op = op_name(name)
    if what == "inf" and (op.replace("_", "") in PLACES_VALUES or tainted):
        return None
    message = (
        f"{op} produced {what} values in forward ({stats[0].nan} nan, "
        f"{stats[0].posinf + stats[0].neginf} inf of {stats[0].numel})"
    )
    cause = None
    if tainted:
        message += f"; its input {', '.join(map(str, tainted))} already held non-finite values, made outside the graph"
    else:
        if any(s is not None for s in stats[1:]):
            message += " from finite inputs"
        sources = [source_op(getattr(x, "grad_fn", None)) for x in inputs]
        cause = forward_cause(op, values, output, sources)
    details = {"node": name, "op": op, "output_shape": [int(n) for n in output.shape]}
    if cause is not None:
        message += f": {cause.why}"
        details["cause"] = cause.name
    finding = Finding(
        kind=f"{what}-in-forward",
        severity=ERROR,
        message=message,
        location=sites.location(site),
        hint=cause.fix if cause is not None else _GUARD,
        details=details,
        stats=[s for s in stats if s is not None],
    )
    return AnomalyFound(f"Function '{name}' produced {what} values in its forward output.", finding)


_GUARD = "guard the op's domain (clamp its input, add an epsilon) or mask its input"


# ---------------------------------------------------------------------------- backward


def backward_stats(node, grads, outputs) -> list[TensorStats]:
    """Stats of what a node's backward saw and returned: grad_output, saved values, grad_input."""
    stats = []
    for i, g in enumerate(grads):
        if g is not None:
            stats.append(tensor_stats(f"grad_output[{i}] (into {node.name()})", g))
    pairs = node.saved_pairs() if hasattr(node, "saved_pairs") else None
    names = getattr(node, "saved_names", ())
    if pairs:
        for name, (value, _) in zip(names, pairs):
            stats.append(tensor_stats(f"saved {name}", value))
    for i, (g, (child, _)) in enumerate(zip(outputs, node.next_functions)):
        if g is not None:
            target = child.name().rsplit("::", 1)[-1] if child is not None else "-"
            stats.append(tensor_stats(f"grad_input[{i}] (to {target})", g))
    return [s for s in stats if s is not None]


#: Nodes a value passes through unchanged on its way to the op that made it (`log(probs[i])`).
_PASS_THROUGH = frozenset(
    {"select", "index", "slice", "view", "unsafeview", "reshapealias", "squeeze", "unsqueeze", "expand", "t"}
    | {"transpose", "permute", "clone", "gather", "narrow", "alias"}
)


def source_op(node) -> str | None:
    """The op that made a value whose node is `node`, looking through indexing and views."""
    for _ in range(8):
        if node is None:
            return None
        op = op_name(node.name())
        if op not in _PASS_THROUGH or not node.next_functions:
            return op
        node = node.next_functions[0][0]
    return None


def walk(roots: list) -> Iterator:
    """Every node reachable from `roots`, once each."""
    seen = {id(n) for n in roots}
    stack = list(roots)
    while stack:
        node = stack.pop()
        yield node
        for child, _ in node.next_functions:
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                stack.append(child)


def where_above(roots: list, node, depth: int = 4):
    """The nearest where() among the nodes that `node`'s output fed (at most `depth` steps up), or None."""
    parents: dict[int, list] = {}
    for parent in walk(roots):
        for child, _ in parent.next_functions:
            if child is not None:
                parents.setdefault(id(child), []).append(parent)
    level = [node]
    for _ in range(depth):
        level = [p for n in level for p in parents.get(id(n), ())]
        for candidate in level:
            if op_name(candidate.name()) == "where":
                return candidate
    return None


@dataclass
class Diagnosis:
    """Why a node's gradient is not finite: the cause, and the where() whose untaken branch it was."""

    cause: Cause | None
    library: str  # the fix's namespace: "engine", "torch"
    where: str | None = None  # the where() node's name
    where_site: tuple | None = None
    origin: str | None = None  # the node of the forward op that made the NaN/Inf the node saved
    origin_site: tuple | None = None


def diagnose(
    node,
    roots: list,
    saved: dict[str, Any],
    grad_output: Any,
    grad_input: Any,
    library: str,
    read_saved: Callable[[Any], dict[str, Any]],
) -> Diagnosis:
    """Why `node` returned the non-finite `grad_input` (numpy arrays: what it got, saved and returned);
    `read_saved(node)` reads another node's saved values, to find where the forward made a NaN."""
    sources = [source_op(child) for child, _ in node.next_functions]
    cause = backward_cause(op_name(node.name()), saved, grad_input, sources)
    diagnosis = Diagnosis(cause, library)
    if cause is not None and cause.name == "nonfinite-input":
        found = _origin(node, read_saved)
        if found is not None:
            producer, made = found
            diagnosis.cause = Cause(
                made.name, f"{cause.why}, made by {op_name(producer.name())}: {made.why}", made.fix
            )
            diagnosis.origin, diagnosis.origin_site = producer.name(), node_site(producer)
        return diagnosis
    if cause is None or not _zero_at_nan(grad_output, grad_input):
        return diagnosis
    above = where_above(roots, node)
    if above is not None:
        diagnosis.where, diagnosis.where_site = above.name(), node_site(above)
    return diagnosis


def _origin(node, read_saved: Callable[[Any], dict[str, Any]], limit: int = 256) -> tuple[Any, Cause] | None:
    """The nearest op below `node` whose saved values show it made NaN/Inf in forward, and why."""
    producers = [child for child, _ in node.next_functions if child is not None]
    for count, producer in enumerate(walk(producers)):
        if count == limit:
            break
        edges = producer.next_functions
        made = made_here(
            op_name(producer.name()), read_saved(producer), source_op(edges[0][0]) if edges else None
        )
        if made is not None:
            return producer, made
    return None


def _zero_at_nan(grad_output: Any, grad_input: Any) -> bool:
    """The incoming gradient is 0 wherever the returned one is NaN: 0 times an infinite derivative."""
    nan = numpy.isnan(grad_input)
    if grad_output is None or not nan.any():
        return False
    zeros = grad_output == 0
    return bool(zeros[nan].all() if zeros.shape == nan.shape else zeros.any())


def backward_finding(
    exc: RuntimeError,
    node_name: str,
    created_site: tuple | None,
    here: Location | None,
    stats,
    sites: Sites,
    diagnosis: Diagnosis | None = None,
) -> Finding:
    """The finding for the NaN / Inf error raised at the node `node_name` (the engine's check_nan, or the
    instruments' twins): `created_site` is where its forward op ran, `stats` what the instrument saw there,
    `diagnosis` why."""
    what = exc.autograd_kind.split("-")[0]  # nan-in-backward / inf-in-backward
    index = exc.output_index
    op = op_name(node_name)
    related = []
    if here is not None:
        here.role = "backward"
        related.append(here)
    cause = diagnosis.cause if diagnosis is not None else None
    details: dict[str, Any] = {"node": node_name, "output": index}
    if cause is not None:
        details["cause"] = cause.name
    if diagnosis is not None and diagnosis.where is not None:
        return _where_branch(diagnosis, node_name, op, index, created_site, related, stats, sites, details)
    if diagnosis is not None and diagnosis.origin is not None:
        details["origin"] = diagnosis.origin
        made = sites.location(diagnosis.origin_site, f"made the NaN/Inf in forward ({diagnosis.origin})")
        if made is not None:
            related.insert(0, made)
    message = (
        f"{node_name} returned {what} values in its {index}th output (the gradient for the "
        f"{_ordinal(index)} input of {op})"
    )
    return Finding(
        f"{what}-in-backward",
        ERROR,
        message + (f": {cause.why}" if cause is not None else ""),
        sites.location(created_site, f"forward op of {node_name}"),
        related,
        hint=cause.fix
        if cause is not None
        else "look at the op's inputs (below): its derivative is not finite there",
        details=details,
        stats=list(stats),
    )


def _where_branch(
    diagnosis: Diagnosis,
    node_name: str,
    op: str,
    index: int,
    created_site,
    related,
    stats,
    sites: Sites,
    details,
) -> Finding:
    """nan-in-where-branch: the NaN gradient of the branch where() did not take, located at the where()."""
    branch = sites.location(created_site, f"{op}: the branch not taken ({node_name})")
    if branch is not None:
        related.insert(0, branch)
    lib = f"{diagnosis.library}."
    masked = _MASKED.get(op, "{p}where(cond, {op}({p}where(cond, x, safe)), 0)").format(p=lib, op=op)
    return Finding(
        "nan-in-where-branch",
        ERROR,
        f"the branch of where() that was not taken still has its gradient computed: {op} gets 0 from where() "
        f"there and its derivative is infinite ({diagnosis.cause.why}), so 0 * inf = nan ({node_name} returned "
        f"nan in its {index}th output)",
        sites.location(diagnosis.where_site, "where()"),
        related,
        hint=f'mask the input before {op} too (the "double where"), so the branch not taken never sees the bad '
        f"value: `{masked}`; masking only the output leaves the NaN in the gradient",
        details={**details, "op": op, "where": diagnosis.where},
        stats=list(stats),
    )


_MASKED = {
    "log": "{p}where(x > 0, {p}log({p}where(x > 0, x, 1)), 0)",
    "sqrt": "{p}where(x > 0, {p}sqrt({p}where(x > 0, x, 1)), 0)",
    "pow": "{p}where(x > 0, {p}where(x > 0, x, 1) ** p, 0)",
    "div": "{p}where(b != 0, a / {p}where(b != 0, b, 1), 0)",
    "reciprocal": "{p}where(x != 0, {p}reciprocal({p}where(x != 0, x, 1)), 0)",
    "exp": "{p}where(x < 80, {p}exp({p}where(x < 80, x, 0)), 0)",
}


def _ordinal(index: int) -> str:
    return {0: "first", 1: "second", 2: "third"}.get(index, f"{index + 1}th")
