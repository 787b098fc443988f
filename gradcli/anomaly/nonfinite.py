"""The NaN / Inf findings: nan-in-forward / inf-in-forward and nan-in-backward / inf-in-backward.

The instrument notices them (`Instrument.forward`, `Instrument.node_done`); this module says
what was found: the counts and ranges of the tensors involved, the op, and how to fix it.
"""

from __future__ import annotations

from ..program.names import op_name
from ..program.sites import Sites
from .findings import ERROR, AnomalyFound, Finding, Location, TensorStats
from .stats import shape_of, tensor_stats

# ----------------------------------------------------------------------------- forward


def forward_error(name: str, inputs, out, site: tuple | None, sites: Sites) -> AnomalyFound:
    """The error that stops the script at an engine op (`name`: its node's) whose output holds NaN / Inf."""
    from engine.tensor import Tensor

    stats = [tensor_stats("output", out)]
    stats += [tensor_stats(f"input {i}", x) if isinstance(x, Tensor) else None for i, x in enumerate(inputs)]
    return forward_anomaly(name, stats, shape_of(out), site, sites)


def forward_anomaly(
    name: str, stats: list[TensorStats | None], output_shape: list[int], site: tuple | None, sites: Sites
) -> AnomalyFound:
    """The error that stops the script at `name` (its node, or the op when none was recorded), from
    `stats`: the output's, then each input's (None for what is no float tensor)."""
    output = stats[0]
    what = "nan" if output.nan else "inf"
    tainted = [i for i, s in enumerate(stats[1:]) if s is not None and s.nonfinite]
    op = op_name(name)
    message = (
        f"{op} produced {what} values in forward ({output.nan} nan, "
        f"{output.posinf + output.neginf} inf of {output.numel})"
    )
    if tainted:
        message += f"; its input {', '.join(map(str, tainted))} already held non-finite values, made outside the graph"
    elif any(s is not None for s in stats[1:]):
        message += " from finite inputs"
    finding = Finding(
        kind=f"{what}-in-forward",
        severity=ERROR,
        message=message,
        location=sites.location(site),
        hint=_FORWARD_HINT.get(
            op, "guard the op's domain (clamp its input, add an epsilon) or mask the result"
        ),
        details={"node": name, "op": op, "output_shape": output_shape},
        stats=[s for s in stats if s is not None],
    )
    return AnomalyFound(f"Function '{name}' produced {what} values in its forward output.", finding)


_FORWARD_HINT = {
    "log": "log of 0 is -inf and of a negative number nan: clamp the input (x.clamp(min=eps)) or use log1p",
    "sqrt": "sqrt of a negative number is nan: clamp the input to >= 0",
    "div": "division by zero: add an epsilon to the denominator",
    "pow": "a negative base to a fractional power is nan: clamp the base",
    "exp": "exp overflows above ~88 in float32: subtract the maximum first (log-sum-exp) or clamp",
    "reciprocal": "1/0 is inf: add an epsilon",
}


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


def backward_finding(
    exc: RuntimeError, node_name: str, created_site: tuple | None, here: Location | None, stats, sites: Sites
) -> Finding:
    """The finding for the NaN / Inf error raised at the node `node_name` (the engine's check_nan, or the
    instruments' twins): `created_site` is where its forward op ran, `stats` what the instrument saw there."""
    what = exc.autograd_kind.split("-")[0]  # nan-in-backward / inf-in-backward
    index = exc.output_index
    created = sites.location(created_site, f"forward op of {node_name}")
    related = []
    if here is not None:
        here.role = "backward"
        related.append(here)
    op = op_name(node_name)
    return Finding(
        f"{what}-in-backward",
        ERROR,
        f"{node_name} returned {what} values in its {index}th output (the gradient for the "
        f"{_ordinal(index)} input of {op})",
        created,
        related,
        hint=_BACKWARD_HINT.get(op, "look at the op's inputs (below): the derivative is not finite there"),
        details={"node": node_name, "output": index},
        stats=list(stats),
    )


_BACKWARD_HINT = {
    "sqrt": "d/dx sqrt(x) = 1/(2 sqrt(x)) is inf at 0: clamp the input (x.clamp(min=eps)) or add eps",
    "log": "d/dx log(x) = 1/x is inf at 0 (and 0 * inf = nan where a mask or where() zeroes the gradient): "
    "clamp the input (x.clamp(min=eps))",
    "div": "the denominator is 0 somewhere: add an epsilon",
    "pow": "x ** p with p < 1 has an infinite derivative at 0: clamp the base",
    "norm": "the norm's gradient is undefined at 0: add an epsilon",
    "where": "the branch that was not taken still gets a gradient (0 * inf = nan): make both branches "
    "finite, e.g. compute log(x.clamp(min=eps)) instead of masking log(x)",
}


def _ordinal(index: int) -> str:
    return {0: "first", 1: "second", 2: "third"}.get(index, f"{index + 1}th")
