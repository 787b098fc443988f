"""`gradcli anomaly SCRIPT [ARGS]`: its arguments, handed to `gradcli.anomaly` to run and report."""

from typing import TYPE_CHECKING, Annotated

import typer
from typer import Exit

from .options import Debug, Device, Format, Json, Output, Seed, chosen_format, examples, file_names
from .streams import command_streams

if TYPE_CHECKING:  # the graph and rich only when --graph is given
    from rich.console import Console

    from ..graph import Graph

HELP = """Run SCRIPT (as __main__, with ARGS as its sys.argv[1:]) under anomaly mode and report what went wrong in autograd.

Errors (the first one stops the script): inplace-modified-saved (with the line that saved the tensor and the line that modified it), leaf-inplace, no-grad-view-inplace, nan-in-backward / inf-in-backward (with NaN/Inf counts and ranges of the node's gradients and saved values, and why: log of a softmax, sqrt or pow at 0, exp overflow, division by zero, ...), nan-in-where-branch (the branch where() did not take), backward-twice, implicit-grad-nonscalar, and any other autograd error. --check-forward also stops at the first op whose output holds NaN/Inf (recorded or not). Warnings (collected to the end): grad-accumulation, nonleaf-grad-read, unused-parameter.

--graph FILE also writes the backward graph as it was when the script ended (the failed backward's, else the last one's), with the nodes the findings name in red; FILE's extension is the format (.html, .svg, .png, .pdf, .dot, .json).

gradcli's options may come before or after SCRIPT; ARGS that are options (start with -) go after `--`, which ends gradcli's options: an unknown option before it is a usage error. --format json (or --json) prints one document (schema "gradcli.anomaly/1", which `gradcli schema anomaly` prints); what the script prints goes to stderr. -o FILE writes the report or document to FILE.

Exit codes: 0 no errors (warnings allowed, unless --strict); 1 an anomaly error (or a warning with --strict); 2 the script could not be run (missing, syntax error, CUDA unavailable) or failed with an exception unrelated to autograd; 3 internal error of gradcli.
"""


EXAMPLES = examples(
    "gradcli anomaly examples/script.py",
    "gradcli anomaly examples/script.py -- --lr 0.1 --epochs 2",
    "gradcli anomaly --strict --check-forward examples/script.py",
    "gradcli anomaly examples/script.py --format json -o anomalies.json",
)


def anomaly(
    script: Annotated[str, typer.Argument(metavar="SCRIPT", autocompletion=file_names)],
    args: Annotated[list[str] | None, typer.Argument(metavar="ARGS")] = None,
    fmt: Format = "text",
    json_flag: Json = False,
    output: Output = None,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings count as errors (exit 1).")] = False,
    check_forward: Annotated[
        bool,
        typer.Option("--check-forward", help="Also stop at the first op whose forward produces NaN/Inf."),
    ] = False,
    graph: Annotated[
        str | None,
        typer.Option(
            "--graph",
            metavar="FILE",
            help="Also write the graph at the point of failure to FILE, its format by its extension "
            "(.html, .svg, .png, .pdf, .dot, .json), with the findings' nodes marked.",
        ),
    ] = None,
    device: Device = "cpu",
    seed: Seed = 0,
    debug: Debug = False,
) -> None:
    # Imported by the command that needs them, so --help and the other commands stay light.
    from ..anomaly import render as show
    from ..anomaly.runner import run_script
    from ..render.console import make_console
    from ..render.output import output_console
    from ..render.output_files import refuse_clashes

    json_output = chosen_format(fmt, json_flag) == "json"
    with (
        command_streams(debug, document=json_output, json_output=json_output) as (stdout, err),
        output_console(output, make_console(stdout)) as out,
    ):
        graph_format = graph_format_of(graph) if graph is not None else None
        refuse_clashes({"--output": output, "--graph": graph}, [script])
        args = list(args or ())
        if graph is None:
            report = run_script(script, args, device=device, seed=seed, check_forward=check_forward)
        else:
            from ..graph.failure import FailureGraph

            drawer = FailureGraph(script)
            with drawer.watching():
                report = run_script(
                    script, args, device=device, seed=seed, check_forward=check_forward, ended=drawer.ended
                )
        if json_output:
            out.file.write(show.json_document(report, strict=strict) + "\n")
        else:
            show.print_report(out, report, strict=strict)
        if graph is not None:
            write_graph(drawer.graph(report), graph, graph_format, err)
    raise Exit(report.exit_code(strict))


#: --graph FILE's format, by FILE's extension.
GRAPH_EXTENSIONS = {
    ".html": "html",
    ".svg": "svg",
    ".png": "png",
    ".pdf": "pdf",
    ".dot": "dot",
    ".json": "json",
}


def graph_format_of(path: str) -> str:
    """The format --graph FILE names by its extension; a usage error for another, or without Graphviz."""
    import os
    import shutil

    from ..render.error import UsageError

    fmt = GRAPH_EXTENSIONS.get(os.path.splitext(path)[1].lower())
    if fmt is None:
        raise UsageError(f"--graph {path}: the extension names the format: {', '.join(GRAPH_EXTENSIONS)}")
    if fmt in ("html", "svg", "png", "pdf") and shutil.which("dot") is None:
        raise UsageError(
            f"--graph {path}: {fmt} needs Graphviz's `dot` program, which is not installed (or not on PATH); "
            "install Graphviz (apt install graphviz, brew install graphviz), or write FILE.dot"
        )
    return fmt


def write_graph(built: "Graph | None", path: str, fmt: str, err: "Console") -> None:
    """The graph at the point of failure to `path`, or why there is none."""
    from ..graph.render import drawing as draw

    if built is None:
        err.print(f"--graph {path}: no graph to draw: the script called no backward()", soft_wrap=True)
        return
    draw.emit(built, fmt, output=path, err=err)
