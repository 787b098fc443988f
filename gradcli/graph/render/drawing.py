"""Drawing a walked backward graph (`gradcli.graph.Graph`): tree, dot, svg, json.

The tree is for people: each node once, in the order backward meets it, with the user's
variable names; a node reached by a second path is drawn as a one-line reference to its
`#id`. Off a terminal it is plain text. `dot` is Graphviz source in torchviz's style
(functions grey, leaves light blue, the drawn results green, constants grey and dashed,
saved tensors orange, modified ones red; with --show-saved a node's saved values are lines of
its label, as torchviz's show_attrs; --group-modules boxes each nn.Module's nodes); `svg`,
`png` and `pdf` run it through Graphviz's `dot` program (`graphviz_run`); `html` is one
self-contained page around that svg (`graph_html`). The tree fits the console's width
(`tree_fit`) and prints only what differs from the defaults unless --verbose, which also
prints under each node the line of the user's file whose forward call made it.

JSON schema (`gradcli graph --format json`, schema id "gradcli.graph/1"). Node ids are
positions in `nodes` (depth-first preorder from the roots, following `next_functions`);
shapes are lists of ints; metadata the graph does not record is null; a float that is not
finite is written as the string "nan", "inf" or "-inf". `summary` covers the whole graph
even under --depth: `saved_bytes` counts each distinct buffer once (views share one), and
`depth` is the number of nodes on the longest path from a root to a leaf; `file` of a
`forward_line` is FILE as given for FILE itself, else relative to the working directory when
under it::

    {
      "schema": "gradcli.graph/1",
      "version": str,                       # gradcli version
      "file": str, "device": str, "seed": int,
      "targets_from": "target" | "raised" | "top-level" | "backward" | "cases",
      "depth_limit": int | null,            # --depth: only nodes with level < depth_limit
      "truncated": bool,                    # whether --depth left nodes out
      "summary": {"nodes": int, "leaves": int, "constants": int, "saved_tensors": int,
                  "saved_bytes": int, "stale_saved": int, "freed_nodes": int, "depth": int},
      "roots": [{"name": str, "node": int, "output_nr": int}],
      "scope": str | null,                  # the function whose variables the roots are (null: top level)
      "raised": {"exception": str,          # the error that ended FILE ("RuntimeError: ..."): the
                 "file": str, "line": int | null,          # graph is drawn as it was then
                 "code": str | null, "in_backward": bool} | null,  # raised by the roots' backward
      "marks": [{"node": int,               # gradcli anomaly --graph: what its findings name
                 "kind": "failed" | "nonfinite" | "modified-saved", "text": str}],
      "nodes": [{
        "id": int,
        "name": str,                        # type(node).__name__: "MulBackward0", "AccumulateGrad"
        "kind": "function" | "leaf",
        "level": int,                       # shortest distance from a root (roots: 0)
        "consumers": int,                   # edges pointing at it; > 1: a shared subgraph
        "truncated": bool,                  # some of its inputs were left out by --depth
        "outputs": [{"output_nr": int, "shape": [int] | null, "dtype": str | null,
                     "device": str | null,
                     "known_from": "variable" | "saved" | "function" | "consumer" | "inputs" | null,
                     "names": [str],        # the user's names for it ("l4", "model.fc1.weight")
                     "retains_grad": bool, "grad_norm": float | null}],
        "leaf": {"requires_grad": bool, "is_leaf": bool, "has_grad": bool,
                 "grad_norm": float | null} | null,          # AccumulateGrad only
        "hooks": {"pre": int, "post": int, "tensor": int},
        "saved_freed": bool,                # a backward already freed its saved tensors
        "saved": [{"name": str,             # "_saved_self", "_saved_alpha", "saved_tensors[0]"
                   "kind": "tensor" | "value",
                   "shape": [int] | null, "dtype": str | null, "device": str | null,
                   "bytes": int, "saved_version": int | null, "current_version": int | null,
                   "stale": bool,           # modified in place since saved: backward will fail
                   "is_output": bool, "names": [str], "value": str | null}],
        "forward_line": {"file": str, "line": int,          # the user's line whose forward call
                         "code": str | null} | null         # made it; null: none (AccumulateGrad)
      }],
      "edges": [{                           # node.next_functions[index] == (next, output_nr)
        "node": int, "index": int, "input": str | null,      # the op's input name: "self", "other"
        "next": int | null, "output_nr": int,                # next is null for a constant
        "constant": {"shape": [int] | null, "dtype": str | null, "device": str | null,
                     "names": [str], "value": str | null} | null
      }]
    }
"""

from __future__ import annotations

import json
import math
import sys
import textwrap
from contextlib import AbstractContextManager
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from ...render.console import make_console
from ...render.jsonable import as_json, finite
from ...render.plurals import noun, plural
from .. import Constant, ForwardLine, Graph, GraphNode, Leaf, Saved, TensorMeta
from ..gc_pause import gc_paused
from ..modules import node_modules
from .failure_note import heading_target, marks_of, raised_lines
from .graphviz_run import IMAGE_FORMATS, OutputError, dot_text, run_dot
from .tree_fit import fit_lines, fitting_depth

SCHEMA = "gradcli.graph/1"
#: Levels the tree draws when --depth is not given (dot and json are complete by default).
DEFAULT_TREE_DEPTH = 50
FORMATS = ("tree", "dot", "svg", "png", "pdf", "html", "json")

Segment = tuple[str, str]  # (text, rich style)

#: The fill of a node `gradcli anomaly --graph` marks, by the mark's kind.
MARK_COLORS = {"failed": "red", "modified-saved": "red", "nonfinite": "orangered"}

UNICODE_GUIDES = ("├── ", "└── ", "│   ", "    ")
ASCII_GUIDES = ("|-- ", "`-- ", "|   ", "    ")


# ------------------------------------------------------------------------- entry point


def shows_forward_lines(fmt: str, verbose: bool) -> bool:
    """Whether `fmt` shows each node's forward line, so the run must record them (else it costs)."""
    return fmt in ("json", "html") or (fmt == "tree" and verbose)


def emit(
    graph: Graph,
    fmt: str,
    *,
    output: str | None = None,
    depth: int | None = None,
    show_saved: bool = False,
    verbose: bool = False,
    group_modules: bool = False,
    out: Console | None = None,
    err: Console | None = None,
) -> None:
    """Write `graph` in format `fmt` to `output` (a path) or to `out` (stdout)."""
    out = out if out is not None else make_console(sys.stdout)
    err = err if err is not None else make_console(sys.stderr)
    if fmt == "tree":
        if output is None:
            print_tree(out, graph, depth=depth, show_saved=show_saved, verbose=verbose)
            return
        with _open(output) as handle:
            print_tree(make_console(handle), graph, depth=depth, show_saved=show_saved, verbose=verbose)
        err.print(Text(f"wrote {output}: {summary_line(graph)}"), soft_wrap=True)
        return
    with gc_paused():  # a dict or string per node and edge, none cyclic: collections only cost time
        data = _document(graph, fmt, depth, show_saved, group_modules)
    if output is None:
        _to_stdout(out, data, fmt)
        return
    if isinstance(data, bytes):
        from ...render.output_files import written

        with written(output, "--output") as binary:
            binary.write(data)
    else:
        with _open(output) as handle:
            handle.write(data)
    err.print(Text(f"wrote {output}: {summary_line(graph)}"), soft_wrap=True)


def _document(
    graph: Graph, fmt: str, depth: int | None, show_saved: bool, group_modules: bool
) -> str | bytes:
    """The whole output of a document format: text, or an image's bytes."""
    if fmt == "json":
        return json_document(graph, depth=depth) + "\n"
    if fmt not in ("dot", *IMAGE_FORMATS, "html"):
        raise OutputError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    source = dot_source(graph, depth=depth, show_saved=show_saved, group_modules=group_modules)
    if fmt == "dot":
        return source
    if fmt == "html":
        from .html_page import html_page

        svg = dot_text(source, "svg")
        return html_page(graph, svg, graph_dict(graph, depth=depth), modules=node_modules(graph))
    return dot_text(source, fmt) if fmt == "svg" else run_dot(source, fmt)


def _to_stdout(out: Console, data: str | bytes, fmt: str) -> None:
    if isinstance(data, str):
        out.file.write(data)
        out.file.flush()
        return
    buffer = getattr(out.file, "buffer", None)
    if out.is_terminal or buffer is None:
        raise OutputError(f"--format {fmt} is an image: give -o FILE.{fmt} (or redirect stdout to a file)")
    buffer.write(data)
    buffer.flush()


def _open(path: str) -> AbstractContextManager[TextIO]:
    from ...render.output import output_file  # a write that fails (a full disk) is an error naming the path

    return output_file(path)


# ------------------------------------------------------------------------------- tree


def print_tree(
    console: Console,
    graph: Graph,
    *,
    depth: int | None = None,
    show_saved: bool = False,
    verbose: bool = False,
) -> None:
    """Heading, the tree of every root, and the summary line, fitted to the console's width."""
    ascii_only = not (console.encoding or "").lower().startswith("utf")
    width = console.width
    fits = fitting_depth(width)
    limit = min(depth if depth is not None else DEFAULT_TREE_DEPTH, fits)
    lines = tree_lines(graph, depth=limit, show_saved=show_saved, ascii_only=ascii_only, verbose=verbose)
    heading: list[Segment] = [(f"{graph.file}: " if graph.file else "", "bold"), ("backward graph of ", "")]
    heading.append((heading_target(graph), "bold"))
    raised = [[(text, "bold red")] for text in raised_lines(graph.raised)] if graph.raised else []
    lines[:0] = [heading, *raised]
    cut = _cut_note(graph, depth, limit, width)
    style = "bold red" if graph.summary.stale_saved else "bold"
    clauses = summary_line(graph).split("; ")
    lines.append([(("; " if k else "") + clause, style) for k, clause in enumerate(clauses)])
    if cut:
        lines.append([(cut, "dim")])
    fitted = fit_lines(lines, width, ascii_only=ascii_only)
    if console.is_terminal:
        text = Text()
        for number, line in enumerate(fitted):
            if number:
                text.append("\n")
            for chunk, style in line:
                text.append(chunk, style=style or None)
        console.print(text, soft_wrap=True, crop=False, overflow="ignore")
    else:  # plain text, written directly: fast for big graphs, nothing for rich to wrap
        console.file.write("\n".join("".join(chunk for chunk, _ in line).rstrip() for line in fitted) + "\n")
        console.file.flush()


def _cut_note(graph: Graph, depth: int | None, limit: int, width: int) -> str:
    if graph.summary.depth <= limit:
        return ""
    if depth is not None and limit == depth:
        why = ""
    elif limit < (depth if depth is not None else DEFAULT_TREE_DEPTH):
        why = f", all that fit {width} columns"
    else:
        why = ", the default"
    more = "a wider terminal" if why.startswith(", all") else "--depth N"
    return (
        f"(tree drawn {limit:,} levels deep of {graph.summary.depth:,}{why}; {more} draws more, "
        "--format dot/json/html give every node)"
    )


def tree_lines(
    graph: Graph,
    *,
    depth: int | None = None,
    show_saved: bool = False,
    ascii_only: bool = False,
    verbose: bool = False,
) -> list[list[Segment]]:
    """The tree as lines of styled segments (iterative: any depth, each node drawn once)."""
    tee, elbow, pipe, blank = ASCII_GUIDES if ascii_only else UNICODE_GUIDES
    limit = depth if depth is not None else DEFAULT_TREE_DEPTH
    nodes = graph.nodes
    drawn = [False] * len(nodes)
    lines: list[list[Segment]] = []
    # (node id, or None with a constant; the line's prefix; its children's prefix; level; constant)
    stack: list[tuple[int | None, str, str, int, Constant | None]] = []
    for root in reversed(graph.roots):
        stack.append((root.node, "", "", 0, None))
    while stack:
        ident, first, rest, level, constant = stack.pop()
        if ident is None:
            lines.append([(first, ""), *_constant_segments(constant)])
            continue
        node = nodes[ident]
        if drawn[ident]:
            lines.append([(first, ""), *_reference_segments(node)])
            continue
        drawn[ident] = True
        lines.append([(first, ""), *_node_segments(node, show_saved, verbose)])
        edges = node.edges
        bar = pipe if edges else blank
        if verbose and node.forward_line is not None:
            lines.append([(rest + bar, ""), *_forward_line_segments(node.forward_line)])
        for saved in node.saved:
            if show_saved or saved.stale:
                lines.append([(rest + bar, ""), *_saved_segments(saved)])
        if show_saved and node.saved_freed:
            lines.append(
                [
                    (rest + bar, ""),
                    ("saved tensors freed by a backward (retain_graph=True keeps them)", "dim"),
                ]
            )
        if not edges:
            continue
        if level + 1 >= limit:
            more = len(edges)
            lines.append([(rest + elbow, ""), (f"... {plural(more, 'input')} below (--depth)", "dim")])
            continue
        last = len(edges) - 1
        for k in range(last, -1, -1):
            edge = edges[k]
            connector, below = (elbow, blank) if k == last else (tee, pipe)
            stack.append((edge.next, rest + connector, rest + below, level + 1, edge.constant))
    return lines


def _node_segments(node: GraphNode, show_saved: bool, verbose: bool = False) -> list[Segment]:
    """Name, outputs and what differs from the defaults (all of it with --verbose)."""
    style = "bold green" if node.kind == "leaf" else "bold cyan"
    segments: list[Segment] = [(node.name, style)]
    if node.consumers > 1:
        segments.append((f" [#{node.id}]", "bold magenta"))
    segments.extend(_outputs_segments(node))
    if node.leaf is not None:
        segments.extend(_leaf_segments(node.leaf, verbose))
    else:
        for out in node.outputs:
            prefix = f"[{out.output_nr}] " if len(node.outputs) > 1 else ""
            if out.retains_grad:
                text = f"  {prefix}retains_grad=True"
                if out.grad_norm is not None:
                    text += f" grad.norm()={_norm_text(out.grad_norm)}"
                segments.append((text, "bold"))
        if verbose and not any(out.retains_grad for out in node.outputs):
            segments.append(("  retains_grad=False", "dim"))
    hooks = node.hooks
    if hooks.total:
        parts = [
            f"{n} {what}"
            for n, what in ((hooks.tensor, "tensor"), (hooks.pre, "pre"), (hooks.post, "post"))
            if n
        ]
        segments.append((f"  hooks: {', '.join(parts)}", "magenta"))
    if node.saved_freed and not show_saved:
        segments.append(("  (saved tensors freed)", "dim"))
    return segments


def _leaf_segments(leaf: Leaf, verbose: bool) -> list[Segment]:
    """A leaf's state; the defaults (requires_grad=True is_leaf=True grad=None) only when verbose."""
    parts = []
    if verbose or not leaf.requires_grad:
        parts.append(f"requires_grad={leaf.requires_grad}")
    if verbose or not leaf.is_leaf:
        parts.append(f"is_leaf={leaf.is_leaf}")
    if leaf.has_grad:
        parts.append(f"grad.norm()={_norm_text(leaf.grad_norm)}")
    elif verbose:
        parts.append("grad=None")
    return [(f"  {' '.join(parts)}", "")] if parts else []


def _outputs_segments(node: GraphNode) -> list[Segment]:
    segments: list[Segment] = []
    many = len(node.outputs) > 1
    for out in node.outputs:
        if many:
            segments.append((f"  [{out.output_nr}]", "dim"))
        if out.names:
            segments.append(("  " + ", ".join(out.names), "bold yellow"))
        segments.append(("  " + meta_text(out.meta), ""))
    return segments


def _reference_segments(node: GraphNode) -> list[Segment]:
    segments: list[Segment] = [(node.name, "cyan" if node.kind == "function" else "green")]
    segments.append((f" [#{node.id}]", "bold magenta"))
    names = node.names
    if names:
        segments.append(("  " + ", ".join(names), "yellow"))
    segments.append(("  (drawn above)", "dim"))
    return segments


def _constant_segments(constant: Constant | None) -> list[Segment]:
    style = "grey50"
    segments: list[Segment] = [("constant", style)]
    if constant is not None and constant.names:
        segments.append(("  " + ", ".join(constant.names), style))
    if constant is None or (constant.value is None and constant.meta.known_from is None):
        return [
            *segments,
            ("  ?", style),
            ("  (a Python number or a tensor that does not require grad)", style),
        ]
    if constant.value is not None:
        return [*segments, (f"  {constant.value}", style), ("  (Python number)", style)]
    return [*segments, ("  " + meta_text(constant.meta), style), ("  requires_grad=False", style)]


def _forward_line_segments(line: ForwardLine) -> list[Segment]:
    """Where the node was made: `at FILE:LINE` and the line's code, apart so a narrow tree breaks between."""
    where = [(f"at {line.file}:{line.line}", "dim")]
    return where if line.code is None else [*where, (f"  {line.code}", "dim")]


def _saved_segments(saved: Saved) -> list[Segment]:
    """Label, metadata, size and versions as separate segments: a narrow tree breaks between them."""
    if saved.kind == "value":
        return [(f"{saved.name} = {saved.value}", "dim")]
    label = f"{saved.name}: "
    if saved.names:
        label += ", ".join(saved.names) + " "
    elif saved.is_output:
        label += "(its output) "
    label += meta_text(TensorMeta(saved.shape, saved.dtype, saved.device))
    label += ","
    size = f" {format_bytes(saved.nbytes)},"
    if saved.stale:
        style = "bold red"
        return [
            (label, style),
            (size, style),
            (f" saved at version {saved.saved_version}, now version {saved.current_version}:", style),
            (" modified in place, so this node's backward will fail", style),
        ]
    style = "dim"
    return [
        (label, style),
        (size, style),
        (f" saved at version {saved.saved_version} (now {saved.current_version})", style),
    ]


# ------------------------------------------------------------------------- summary


def summary_line(graph: Graph) -> str:
    """'9 nodes (4 leaves), 6 saved tensors holding 72 B, depth 5', plus warnings."""
    s = graph.summary
    parts = [
        f"{plural(s.nodes, 'node', thousands=True)} ({plural(s.leaves, 'leaf', 'leaves', thousands=True)})"
    ]
    if s.constants:
        parts.append(plural(s.constants, "constant", thousands=True))
    parts.append(
        f"{plural(s.saved_tensors, 'saved tensor', thousands=True)} holding {format_bytes(s.saved_bytes)}"
    )
    parts.append(f"depth {s.depth:,}")
    text = ", ".join(parts)
    if s.stale_saved:
        text += (
            f"; {plural(s.stale_saved, 'saved tensor')} {noun(s.stale_saved, 'was', 'were')} modified in "
            "place: backward will fail"
        )
    if s.freed_nodes:
        text += (
            f"; {plural(s.freed_nodes, 'node')} already freed {noun(s.freed_nodes, 'its', 'their')} saved "
            "tensors (a second backward through them will fail)"
        )
    return text


def meta_text(meta: TensorMeta) -> str:
    """'(2, 2) float32 cpu', with '?' for what the graph does not record."""
    shape = "?" if meta.shape is None else str(tuple(meta.shape))
    if meta.shape is None and meta.dtype is None and meta.device is None:
        return "?"
    return f"{shape} {meta.dtype or '?'} {meta.device or '?'}"


def format_bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}"
    return f"{n} B"


def _norm_text(value: float | None) -> str:
    if value is None:
        return "?"
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return f"{value:.4g}"


# -------------------------------------------------------------------------------- dot


def dot_source(
    graph: Graph, *, depth: int | None = None, show_saved: bool = False, group_modules: bool = False
) -> str:
    """Graphviz source: edges run from inputs to what uses them, as in torchviz's make_dot.

    With `show_saved`, a node's saved values (`_saved_alpha = 1`) are lines of its label, as
    torchviz's `show_attrs` draws them, and its saved tensors orange boxes beside it; with
    `group_modules`, the nodes of each `nn.Module` sit in one cluster (`graph.modules`).
    """
    kept = _kept(graph, depth)
    lines = [
        f"// gradcli graph {graph.file}: {summary_line(graph)}",
        "digraph gradcli {",
        '\tgraph [fontname=monospace ordering=in size="12,12"]',
        "\tnode [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 shape=box style=filled]",
    ]
    if graph.raised is not None:
        *where, exception = raised_lines(graph.raised)
        note = [*where, *textwrap.wrap(exception, 100)]
        lines.append(f"\tlabel={_quote(chr(10).join(note))} labelloc=t fontcolor=red")
    marks = marks_of(graph)
    for node in graph.nodes:
        if not kept[node.id]:
            continue
        label = [node.name] if node.kind == "function" else []
        label += [", ".join(out.names) for out in node.outputs if out.names]
        label += [meta_text(out.meta) for out in node.outputs]
        if node.leaf is not None and node.leaf.has_grad:
            label.append(f"grad.norm()={_norm_text(node.leaf.grad_norm)}")
        if any(out.retains_grad for out in node.outputs):
            label.append("retains_grad")
        if node.hooks.total:
            label.append(f"hooks: {node.hooks.total}")
        if show_saved:
            label += [f"{s.name.removeprefix('_saved_')}: {s.value}" for s in node.saved if s.kind == "value"]
        if any(e.next is not None and not kept[e.next] for e in node.edges):
            label.append("... (--depth)")
        color = "lightblue" if node.kind == "leaf" else "lightgrey"
        if any(s.stale for s in node.saved):
            color = "salmon"
        found = marks.get(node.id, ())
        label += [mark.text for mark in found]
        style = (
            f" fillcolor={MARK_COLORS[found[0].kind]} fontcolor=white penwidth=3"
            if found
            else f" fillcolor={color}"
        )
        lines.append(f"\tn{node.id} [label={_quote(chr(10).join(label))}{style} tooltip={_quote(node.name)}]")
        for edge in node.edges:
            if edge.next is not None:
                if kept[edge.next]:
                    lines.append(f"\tn{edge.next} -> n{node.id}")
                continue
            constant = edge.constant
            ident = f"c{node.id}_{edge.index}"
            text = ["constant"]
            if constant is not None:
                text += [", ".join(constant.names)] if constant.names else []
                text.append(constant.value if constant.value is not None else meta_text(constant.meta))
            lines.append(
                f"\t{ident} [label={_quote(chr(10).join(text))} color=grey fillcolor=white fontcolor=grey50 "
                'style="dashed,filled"]'
            )
            lines.append(f"\t{ident} -> n{node.id} [color=grey style=dashed]")
        for k, saved in enumerate(node.saved):
            if saved.kind != "tensor" or not (show_saved or saved.stale):
                continue
            ident = f"s{node.id}_{k}"
            text = [saved.name + (f": {', '.join(saved.names)}" if saved.names else "")]
            text.append(meta_text(TensorMeta(saved.shape, saved.dtype, saved.device)))
            text.append(
                f"version {saved.saved_version}" + (f", now {saved.current_version}" if saved.stale else "")
            )
            fill = "red" if saved.stale else "orange"
            lines.append(f"\t{ident} [label={_quote(chr(10).join(text))} fillcolor={fill}]")
            lines.append(f"\t{ident} -> n{node.id} [dir=none style=dotted]")
    for k, root in enumerate(graph.roots):
        meta = graph.nodes[root.node].outputs[root.output_nr].meta
        lines.append(
            f"\tr{k} [label={_quote(root.name + chr(10) + meta_text(meta))} fillcolor=darkolivegreen1]"
        )
        lines.append(f"\tn{root.node} -> r{k}")
    if group_modules:
        lines += _clusters(graph, kept)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _clusters(graph: Graph, kept: list[bool]) -> list[str]:
    """One `subgraph cluster_k` per nn.Module path, naming the nodes it holds; a module's cluster
    sits inside the cluster of the nearest module above it that holds nodes too (`model.0.fc`
    inside `model.0`)."""
    members: dict[str, list[int]] = {}
    for ident, module in node_modules(graph).items():
        if kept[ident]:
            members.setdefault(module, []).append(ident)
    paths = sorted(members)
    inner: dict[str | None, list[str]] = {}
    for path in paths:
        inner.setdefault(_enclosing(path, members), []).append(path)

    def cluster(path: str, indent: str) -> list[str]:
        nodes = " ".join(f"n{i}" for i in sorted(members[path]))
        head = (
            f"{indent}subgraph cluster_{paths.index(path)} {{ label={_quote(path)} style=rounded "
            f"color=steelblue fontcolor=steelblue {nodes}"
        )
        if path not in inner:
            return [head + " }"]
        return [head, *(line for sub in inner[path] for line in cluster(sub, indent + "\t")), indent + "}"]

    return [line for path in inner.get(None, []) for line in cluster(path, "\t")]


def _enclosing(path: str, paths: dict[str, Any]) -> str | None:
    """The longest of `paths` that `path` is a submodule of, if any."""
    while "." in path:
        path = path.rpartition(".")[0]
        if path in paths:
            return path
    return None


def _quote(text: str) -> str:
    """A DOT string: quotes and backslashes escaped, newlines as DOT's \\n."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _kept(graph: Graph, depth: int | None) -> list[bool]:
    if depth is None:
        return [True] * len(graph.nodes)
    return [node.level < depth for node in graph.nodes]


# ------------------------------------------------------------------------------- JSON


def json_document(graph: Graph, *, depth: int | None = None) -> str:
    """The --format json output (schema in this module's docstring).

    A big graph is written compact by the C encoder, a node and an edge at a time: its
    document is never whole in memory as Python dicts (a 150,001-node chain's were ~900 MiB).
    """
    if len(graph.nodes) <= 2000:
        return json.dumps(graph_dict(graph, depth=depth), indent=2)
    kept = _kept(graph, depth)
    encode = json.JSONEncoder(separators=(",", ":")).encode
    nodes: list[str] = []
    edges: list[str] = []
    for node in graph.nodes:
        if kept[node.id]:
            nodes.append(encode(_node_dict(node, kept)))
            edges += [encode(edge) for edge in _edge_dicts(node, kept)]
    head = encode(_head_dict(graph, depth, kept))  # "nodes" and "edges" are the last keys
    return f'{head[:-1]},"nodes":[{",".join(nodes)}],"edges":[{",".join(edges)}]}}'


def graph_dict(graph: Graph, *, depth: int | None = None) -> dict[str, Any]:
    """The JSON document as plain Python data."""
    kept = _kept(graph, depth)
    nodes = []
    edges = []
    for node in graph.nodes:
        if kept[node.id]:
            nodes.append(_node_dict(node, kept))
            edges += _edge_dicts(node, kept)
    return {**_head_dict(graph, depth, kept), "nodes": nodes, "edges": edges}


def _head_dict(graph: Graph, depth: int | None, kept: list[bool]) -> dict[str, Any]:
    """Every key of the document before "nodes" and "edges"."""
    from ...version import __version__

    return {
        "schema": SCHEMA,
        "version": __version__,
        "file": graph.file,
        "device": graph.device,
        "seed": graph.seed,
        "targets_from": graph.targets_from,
        "depth_limit": depth,
        "truncated": not all(kept),
        "summary": as_json(graph.summary),
        "roots": [as_json(r) for r in graph.roots],
        "scope": graph.scope,
        "raised": None if graph.raised is None else as_json(graph.raised),
        "marks": [as_json(mark) for mark in graph.marks],
    }


def _edge_dicts(node: GraphNode, kept: list[bool]) -> list[dict[str, Any]]:
    """The node's edges to what is kept, and to constants."""
    edges = []
    for edge in node.edges:
        if edge.next is not None and not kept[edge.next]:
            continue
        constant = edge.constant
        edges.append(
            {
                "node": node.id,
                "index": edge.index,
                "input": edge.input,
                "next": edge.next,
                "output_nr": edge.output_nr,
                "constant": None
                if edge.next is not None
                else {
                    **_meta_dict(constant.meta if constant is not None else TensorMeta()),
                    "names": list(constant.names) if constant is not None else [],
                    "value": constant.value if constant is not None else None,
                },
            }
        )
    return edges


def _meta_dict(meta: TensorMeta) -> dict[str, Any]:
    return {
        "shape": None if meta.shape is None else list(meta.shape),
        "dtype": meta.dtype,
        "device": meta.device,
    }


def _node_dict(node: GraphNode, kept: list[bool]) -> dict[str, Any]:
    """Built by hand, not with `as_json`: once per node, and asdict costs ~25x a dict literal."""
    leaf = node.leaf
    line = node.forward_line
    return {
        "id": node.id,
        "name": node.name,
        "kind": node.kind,
        "level": node.level,
        "consumers": node.consumers,
        "truncated": any(e.next is not None and not kept[e.next] for e in node.edges),
        "outputs": [
            {
                "output_nr": out.output_nr,
                **_meta_dict(out.meta),
                "known_from": out.meta.known_from,
                "names": list(out.names),
                "retains_grad": out.retains_grad,
                "grad_norm": finite(out.grad_norm),
            }
            for out in node.outputs
        ],
        "leaf": None
        if leaf is None
        else {
            "requires_grad": leaf.requires_grad,
            "is_leaf": leaf.is_leaf,
            "has_grad": leaf.has_grad,
            "grad_norm": finite(leaf.grad_norm),
        },
        "hooks": {"pre": node.hooks.pre, "post": node.hooks.post, "tensor": node.hooks.tensor},
        "saved_freed": node.saved_freed,
        "saved": [
            {
                "name": s.name,
                "kind": s.kind,
                "shape": None if s.shape is None else list(s.shape),
                "dtype": s.dtype,
                "device": s.device,
                "bytes": s.nbytes,
                "saved_version": s.saved_version,
                "current_version": s.current_version,
                "stale": s.stale,
                "is_output": s.is_output,
                "names": list(s.names),
                "value": s.value,
            }
            for s in node.saved
        ],
        "forward_line": None if line is None else {"file": line.file, "line": line.line, "code": line.code},
    }
