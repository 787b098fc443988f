"""The `gradcli` command line: argument parsing and exit codes, nothing else.

Loading user files lives in `gradcli.loading`, checking in `gradcli.checking`, and output
in `gradcli.render`.
"""

from __future__ import annotations

import contextlib
import sys
import time
import traceback
from enum import Enum
from typing import NoReturn

import typer
from rich.console import Console

from . import checking, loading, running
from .render import check as render
from .render.console import consoles

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="A gradient checker and autograd graph debugger for engine (import engine as torch).",
)


class Device(str, Enum):
    cpu = "cpu"
    cuda = "cuda"


@app.callback()
def _root() -> None:
    """A gradient checker and autograd graph debugger for engine (import engine as torch)."""


CHECK_HELP = f"""Compare analytical gradients (backward) with finite differences for the cases in FILE(s).

A check file is plain Python importing engine. It declares cases as a top-level callable `f` with a tuple `inputs`; or a top-level `model` (callable, with .parameters()) with `inputs`, which also checks the gradient of every parameter; or functions decorated with `@gradcli.case(*inputs, name=..., **options)`, whose options (eps, atol, rtol, order, fast, nondet_tol) override the command line for that case.

Mode: by default a case runs in fast mode (a random projection of the Jacobian; when it fails, the failing entries are localized), except that a case with fewer than {checking.FULL_MODE_BELOW} differentiable input elements (inputs and parameters that require grad) runs in full mode (the whole Jacobian, entry by entry). --fast or --full forces one mode for every case.

--json prints one document on stdout: schema "gradcli.check/1", described in gradcli/render/check.py.

Exit codes: 0 every case passed; 1 a gradient check failed; 2 usage or loading error (file missing, syntax error, exception while loading, no cases, no float input requiring grad, CUDA unavailable); 3 internal error of gradcli.
"""


@app.command("check", help=CHECK_HELP)
def check(
    files: list[str] = typer.Argument(..., metavar="FILE", help="Check files to run."),
    order: int = typer.Option(1, "--order", min=1, max=2, help="1: gradients; 2: also second derivatives."),
    fast: bool | None = typer.Option(
        None,
        "--fast/--full",
        help=f"Force fast or full mode (default: full below {checking.FULL_MODE_BELOW} differentiable input elements, else fast).",
        show_default=False,
    ),
    eps: float = typer.Option(checking.Settings.eps, "--eps", min=0.0, help="Finite-difference step."),
    atol: float = typer.Option(checking.Settings.atol, "--atol", min=0.0, help="Absolute tolerance."),
    rtol: float = typer.Option(checking.Settings.rtol, "--rtol", min=0.0, help="Relative tolerance."),
    nondet_tol: float = typer.Option(
        checking.Settings.nondet_tol,
        "--nondet-tol",
        min=0.0,
        help="Tolerated difference between two backward runs (nondeterminism).",
    ),
    pattern: str | None = typer.Option(
        None,
        "-k",
        metavar="PATTERN",
        help="Only cases whose name contains PATTERN (or matches it as a glob).",
    ),
    device: Device = typer.Option(Device.cpu, "--device", help="Default device while loading and checking."),
    seed: int = typer.Option(
        0, "--seed", help="engine.manual_seed before loading each file and building inputs."
    ),
    json_output: bool = typer.Option(False, "--json", help="Machine-readable results on stdout."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    started = time.perf_counter()
    out, err = consoles()
    if eps <= 0:
        _usage_exit(err, "--eps must be positive")
    settings = checking.Settings(order=order, fast=fast, eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol)
    try:
        code = _run(files, settings, device.value, seed, pattern, json_output, debug, out, err, started)
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        _interrupted_exit(err)
    except Exception as exc:  # a bug of gradcli itself: say so, in one line unless --debug
        _internal_error_exit(err, exc, debug)
    raise typer.Exit(code)


def _run(
    files: list[str],
    settings: checking.Settings,
    device: str,
    seed: int,
    pattern: str | None,
    json_output: bool,
    debug: bool,
    out: Console,
    err: Console,
    started: float,
) -> int:
    from engine.backend import CudaUnavailable

    # In --json mode stdout belongs to the document: what user code prints goes to stderr.
    quiet = contextlib.redirect_stdout(sys.stderr) if json_output else contextlib.nullcontext()
    results: list[checking.CaseResult] = []
    try:
        with running.using_device(device), quiet:
            errors, prepared = loading.collect(files, pattern, seed=seed)
            if not errors:
                for number, case in enumerate(prepared, 1):
                    description = f"checking {case.file.path}::{case.case.name} [{number}/{len(prepared)}]"
                    with render.progress(err, description):
                        results.append(checking.run_case(case, settings))
    except CudaUnavailable as exc:
        _usage_exit(err, f"--device {device} is unavailable: {exc}")
    elapsed = time.perf_counter() - started

    failed = sum(not r.passed for r in results)
    code = EXIT_USAGE if errors else (EXIT_FAILED if failed else EXIT_OK)
    if errors:
        render.print_errors(err, errors, debug)
    if json_output:
        document = render.json_document(
            results,
            errors,
            settings=settings,
            device=device,
            seed=seed,
            pattern=pattern,
            elapsed=elapsed,
            exit_code=code,
        )
        print(document, file=sys.stdout)
        return code
    by_file: dict[str, list[checking.CaseResult]] = {}
    for result in results:
        by_file.setdefault(result.file, []).append(result)
    for path, file_results in by_file.items():
        render.print_file_results(out, path, file_results)
    render.print_failures(out, results, debug)
    render.print_summary(out, len(results) - failed, failed, len(errors), elapsed)
    return code


GRAPH_HELP = """Draw the backward graph (the grad_fn nodes) behind a result computed in FILE.

FILE runs with --device as the default device. The target is --target NAME (a top-level tensor, or a case); else every top-level tensor with a grad_fn that no other top-level result uses (for `loss = l4.mean()` after `l4 = l2 * l3`, that is `loss`); else the outputs of the file's cases (the forms of gradcli check).

Each node shows its PyTorch name (MulBackward0, AccumulateGrad), the shape, dtype and device of the tensor it produced (? where the graph does not record them), and your variable names; leaves show requires_grad, is_leaf and the grad's norm, other nodes retains_grad and hooks. A node reached by two paths is drawn once, then referenced by its #id. --show-saved lists saved tensors with the version they were saved at and their version now (a modified one is always shown: that backward will fail).

Formats: tree (default; --depth limits it, default 50 levels), dot (Graphviz source), svg (needs Graphviz's dot program), json (schema "gradcli.graph/1", described in gradcli/render/graph.py).

Exit codes: 0 drawn; 2 usage or loading error (file missing, exception while loading, no target, target not a tensor or without grad_fn, CUDA unavailable, Graphviz missing for svg); 3 internal error of gradcli.
"""


class GraphFormat(str, Enum):
    tree = "tree"
    dot = "dot"
    svg = "svg"
    json = "json"


@app.command("graph", help=GRAPH_HELP)
def graph(
    file: str = typer.Argument(..., metavar="FILE", help="Python file that computes the result."),
    target: str | None = typer.Option(
        None, "--target", metavar="NAME", help="Top-level tensor (or case) to draw (default: see above)."
    ),
    device: Device = typer.Option(Device.cpu, "--device", help="Default device while FILE runs."),
    fmt: GraphFormat = typer.Option(GraphFormat.tree, "--format", help="tree, dot, svg or json."),
    output: str | None = typer.Option(None, "--output", "-o", metavar="PATH", help="Write here, not stdout."),
    depth: int | None = typer.Option(
        None,
        "--depth",
        min=1,
        metavar="N",
        help="Draw N levels, the roots being the first (tree default: 50; others: all).",
    ),
    show_saved: bool = typer.Option(
        False, "--show-saved/--no-show-saved", help="List saved tensors and their versions."
    ),
    seed: int = typer.Option(0, "--seed", help="engine.manual_seed before running FILE."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    from . import graphing
    from .render import graph as draw

    out, err = consoles()
    # Machine formats own stdout: what the user's file prints goes to stderr.
    quiet = (
        contextlib.redirect_stdout(sys.stderr) if fmt is not GraphFormat.tree else contextlib.nullcontext()
    )
    try:
        with quiet:
            built = graphing.load_graph(file, target=target, device=device.value, seed=seed)
        draw.emit(built, fmt.value, output=output, depth=depth, show_saved=show_saved, out=out, err=err)
    except running.LoadError as exc:
        render.print_errors(err, [exc], debug)
        raise typer.Exit(EXIT_USAGE) from None
    except draw.OutputError as exc:
        _usage_exit(err, str(exc))
    except KeyboardInterrupt:
        _interrupted_exit(err)
    except Exception as exc:  # a bug of gradcli itself
        _internal_error_exit(err, exc, debug)
    raise typer.Exit(EXIT_OK)


def _interrupted_exit(err: Console) -> NoReturn:
    err.print("interrupted", soft_wrap=True)
    raise typer.Exit(130) from None


def _internal_error_exit(err: Console, exc: BaseException, debug: bool) -> NoReturn:
    """A bug of gradcli itself: one line (the traceback with --debug), exit 3, as pytest does."""
    if debug:
        err.print(traceback.format_exc().rstrip(), soft_wrap=True)
    err.print(
        f"internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
        soft_wrap=True,
    )
    raise typer.Exit(EXIT_INTERNAL) from None


def _usage_exit(err: Console, message: str) -> None:
    err.print(f"error: {message}", soft_wrap=True)
    raise typer.Exit(EXIT_USAGE)


ANOMALY_HELP = """Run SCRIPT (as __main__, with ARGS as its sys.argv[1:]) under anomaly mode and report what went wrong in autograd.

Errors (the first one stops the script): inplace-modified-saved (with the line that saved the tensor and the line that modified it), leaf-inplace, no-grad-view-inplace, nan-in-backward / inf-in-backward (with NaN/Inf counts and ranges of the node's gradients and saved values), backward-twice, implicit-grad-nonscalar, and any other autograd error. --check-forward also stops at the first recorded op whose forward output holds NaN/Inf. Warnings (collected to the end): grad-accumulation, nonleaf-grad-read, unused-parameter.

gradcli's options may come before or after SCRIPT; put `--` before ARGS that clash with them. --json prints one document on stdout (schema "gradcli.anomaly/1", described in gradcli/render/anomaly.py); what the script prints goes to stderr.

Exit codes: 0 no errors (warnings allowed, unless --strict); 1 an anomaly error (or a warning with --strict); 2 the script could not be run (missing, syntax error, CUDA unavailable) or failed with an exception unrelated to autograd; 3 internal error of gradcli.
"""


@app.command(
    "anomaly",
    help=ANOMALY_HELP,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
def anomaly(
    script: str = typer.Argument(..., metavar="SCRIPT", help="Python script to run."),
    args: list[str] | None = typer.Argument(None, metavar="ARGS", help="Arguments for SCRIPT."),
    json_output: bool = typer.Option(False, "--json", help="Machine-readable findings on stdout."),
    strict: bool = typer.Option(False, "--strict", help="Warnings count as errors (exit 1)."),
    check_forward: bool = typer.Option(
        False, "--check-forward", help="Also stop at the first op whose forward produces NaN/Inf."
    ),
    device: Device = typer.Option(Device.cpu, "--device", help="Default device while SCRIPT runs."),
    seed: int = typer.Option(0, "--seed", help="engine.manual_seed before running SCRIPT."),
    debug: bool = typer.Option(False, "--debug", help="Show gradcli's own tracebacks."),
) -> None:
    from . import anomaly as anomalies
    from .render import anomaly as show

    out, err = consoles()
    quiet = contextlib.redirect_stdout(sys.stderr) if json_output else contextlib.nullcontext()
    try:
        with quiet:
            report = anomalies.run_script(
                script, args or [], device=device.value, seed=seed, check_forward=check_forward
            )
    except KeyboardInterrupt:
        _interrupted_exit(err)
    except Exception as exc:  # a bug of gradcli itself
        _internal_error_exit(err, exc, debug)
    if json_output:
        print(show.json_document(report, strict=strict), file=sys.stdout)
    else:
        show.print_report(out, report, strict=strict)
    raise typer.Exit(report.exit_code(strict))


def main() -> None:
    """Console-script entry point (`gradcli = gradcli.cli:main`)."""
    app()


if __name__ == "__main__":
    main()
