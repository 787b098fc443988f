"""The warning findings, gathered from the instrument once the script has ended.

grad-accumulation (a .grad summed over repeated backward calls from one line and then used),
nonleaf-grad-read (reading .grad of a non-leaf, which is None) and unused-parameter (a leaf
that requires grad, used in forward, that no backward reached; only when the script completed).
"""

from __future__ import annotations

import types

from ..program.names import TensorNames, definition
from ..program.sites import Sites
from ..render.plurals import noun
from .findings import WARNING, Finding
from .instrument import GradState, Instrument, LeafUse
from .stats import shape_of


def collect_warnings(
    instrument: Instrument, sites: Sites, module: types.ModuleType | None, completed: bool
) -> list[Finding]:
    """The warnings gathered while the script ran (unused parameters only if it completed)."""
    names = TensorNames(module)
    out = _accumulation_warnings(instrument, sites, names)
    out += _nonleaf_warnings(instrument, sites)
    if completed and instrument.backward_calls:
        out += _unused_warnings(instrument, sites, names)
    return out


def _accumulation_warnings(instrument: Instrument, sites: Sites, names: TensorNames) -> list[Finding]:
    by_site: dict[tuple, list[GradState]] = {}
    for state in instrument.grads.values():
        if state.looped is not None and state.resets == 0 and state.used:
            by_site.setdefault(state.looped, []).append(state)
    findings = []
    for site, states in by_site.items():
        labels = []
        related = []
        for state in states:
            tensor = state.ref()
            name = names.of(tensor)
            labels.append(name or f"a tensor of shape {shape_of(tensor) if tensor is not None else '?'}")
            defined = definition(name, sites)
            if defined is not None:
                related.append(defined)
        calls = max(s.longest for s in states)
        findings.append(
            Finding(
                "grad-accumulation",
                WARNING,
                f"the .grad of {', '.join(labels)} accumulated over {calls} backward calls from this line with "
                f"no zeroing in between: backward adds into .grad, so each step used the sum of all gradients so far",
                sites.location(site),
                related,
                hint=f"zero the {noun(len(labels), 'gradient')} once per iteration (`x.grad.zero_()`, `x.grad = None`, or "
                "`optimizer.zero_grad()`); if accumulating is intended, zero after each optimizer step",
                details={"tensors": labels, "backward_calls": calls},
                count=calls,
            )
        )
    return findings


def _nonleaf_warnings(instrument: Instrument, sites: Sites) -> list[Finding]:
    findings = []
    for record in instrument.nonleaf_reads.values():
        created = sites.location(record["created"], "the non-leaf tensor created")
        findings.append(
            Finding(
                "nonleaf-grad-read",
                WARNING,
                f".grad of a non-leaf tensor (output of {record['node']}, shape {record['shape']}) was read: it is "
                "None, because backward fills .grad only for leaves",
                sites.location(record["site"]),
                [created] if created is not None else [],
                hint="call .retain_grad() on it before backward, or read the .grad of the leaf it was computed from",
                details={"node": record["node"], "shape": record["shape"]},
                count=record["count"],
            )
        )
    return findings


def _unused_warnings(instrument: Instrument, sites: Sites, names: TensorNames) -> list[Finding]:
    groups: dict[tuple, list[LeafUse]] = {}
    for use in instrument.leaves.values():
        if not use.received:
            groups.setdefault(use.site, []).append(use)
    findings = []
    for site, uses in groups.items():
        alive = [u.ref() for u in uses if u.ref() is not None]
        labels = sorted({names.of(t) for t in alive if names.of(t)})
        label = ", ".join(labels) if labels else f"a tensor of shape {uses[0].shape}"
        related = [d for d in (definition(n, sites) for n in labels) if d is not None]
        findings.append(
            Finding(
                "unused-parameter",
                WARNING,
                f"{label} requires grad and was used in forward here, but no backward ever reached it "
                "(its result never fed a loss that was backwarded, or the graph was cut by .detach() / .data)",
                sites.location(site),
                related,
                hint="check that its output reaches the loss; if it is not meant to be trained, "
                "create it without requires_grad (or call .requires_grad_(False))",
                details={"tensors": labels, "shape": uses[0].shape},
                count=len(uses),
            )
        )
    return findings
