"""`gradcli graph FILE`: its arguments, handed to `gradcli.graph` to load and draw."""

from typing import Annotated, Literal

import typer
from typer import Exit

from ..render.error import EXIT_FAILED, EXIT_OK
from .options import Debug, Device, Json, Output, Seed, chosen_format, examples, file_names
from .streams import command_streams

HELP = """Draw the backward graph (the grad_fn nodes) behind a result computed in FILE.

FILE runs as `python FILE` runs it (as __main__), with --device as the default device. The target is --target NAME (a top-level tensor, a case, or a variable of a function: --target main.loss, or the innermost function running at the last backward() that has one); else the tensors whose backward() raised the error that ended FILE; else the results so far of the function that raised it; else every top-level tensor with a grad_fn that no other top-level result uses (for `loss = l4.mean()` after `l4 = l2 * l3`, that is `loss`); else the tensors of the last backward() call (training code inside main()); else the outputs of the file's cases (the forms of gradcli check). A file that raised is drawn as it was then, saying where it raised.

Each node shows its PyTorch name (MulBackward0, AccumulateGrad), the shape, dtype and device of the tensor it produced (? where the graph does not record them), and your variable names; then what differs from the defaults: a grad's norm, retains_grad=True, hooks (--verbose also prints the defaults: retains_grad=False, requires_grad=True is_leaf=True grad=None, and under each node the line of FILE whose forward call made it). The tree fits the terminal's width: long labels wrap under their own guide line, and it draws the levels that fit (a note says so). A node reached by two paths is drawn once, then referenced by its #id. --show-saved lists saved tensors with the version they were saved at and their version now (a modified one is always shown: that backward will fail).

Formats: text (the tree, the default; `tree` is its other name; --depth limits it, default 50 levels), dot (Graphviz source), svg, png, pdf (images; need Graphviz's dot program; --show-saved adds saved values and tensors, --group-modules a box per nn.Module), html (one self-contained page: the svg with pan/zoom, search by name, a click on a node shows the forward line that made it, its saved tensors, shapes, hooks; needs dot too), json (or --json; schema "gradcli.graph/1", which `gradcli schema graph` prints).

Exit codes: 0 drawn; 1 drawn, but FILE raised (the graph is as it was then); 2 usage or loading error (file missing, exception while loading with nothing to draw, no target, target not a tensor or without grad_fn, CUDA unavailable, Graphviz missing for svg/png/pdf/html, an image to a terminal); 3 internal error of gradcli.
"""


GRAPH_FORMATS = ("text", "tree", "dot", "svg", "png", "pdf", "html", "json")  # tree: text's first name


EXAMPLES = examples(
    "gradcli graph examples/expr.py",
    "gradcli graph examples/expr.py --show-saved --depth 3",
    "gradcli graph examples/model.py --target mse_loss --format dot -o mse_loss.dot",
    "gradcli graph examples/expr.py --json -o graph.json",
)


def graph(
    file: Annotated[str, typer.Argument(metavar="FILE", autocompletion=file_names)],
    target: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="Tensor to draw: a top-level one, a case, or FUNC.NAME a function's variable (default: see above).",
        ),
    ] = None,
    device: Device = "cpu",
    fmt: Annotated[
        Literal[GRAPH_FORMATS],
        typer.Option("--format", help="text (the tree), json, dot, svg, png, pdf or html."),
    ] = "text",
    json_flag: Json = False,
    output: Output = None,
    depth: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="N",
            help="Draw N levels, the roots being the first (tree default: 50; others: all).",
        ),
    ] = None,
    show_saved: Annotated[
        bool, typer.Option("--show-saved/--no-show-saved", help="List saved tensors and their versions.")
    ] = False,
    group_modules: Annotated[
        bool,
        typer.Option(
            "--group-modules", help="dot/svg/png/pdf/html: a box (cluster) around each nn.Module's nodes."
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Tree: also print the defaults (retains_grad=False, ...) and the line that made each node.",
        ),
    ] = False,
    seed: Seed = 0,
    debug: Debug = False,
) -> None:
    # Imported by the command that needs them, so --help and the other commands stay light.
    from ..graph.render import drawing as draw
    from ..graph.targets import load_graph
    from ..render.console import make_console
    from ..render.output_files import refuse_clashes

    chosen = chosen_format(fmt, json_flag).replace("text", "tree")
    streams = command_streams(
        debug, document=chosen != "tree", json_output=chosen == "json", usage=(draw.OutputError,)
    )
    with streams as (stdout, err):
        refuse_clashes({"--output": output}, [file])
        built = load_graph(
            file,
            target=target,
            device=device,
            seed=seed,
            forward_lines=draw.shows_forward_lines(chosen, verbose),
            group_modules=group_modules,
            levels=(depth or draw.DEFAULT_TREE_DEPTH) if chosen == "tree" else None,  # what a tree can draw
        )
        if built.raised is not None and not (chosen == "tree" and output is None):  # a tree says it itself
            err.print(
                "\n".join(draw.raised_lines(built.raised)), style="bold red", soft_wrap=True, highlight=False
            )
        draw.emit(
            built,
            chosen,
            output=output,
            depth=depth,
            show_saved=show_saved,
            verbose=verbose,
            group_modules=group_modules,
            out=make_console(stdout),
            err=err,
        )
    raise Exit(EXIT_FAILED if built.raised is not None else EXIT_OK)
