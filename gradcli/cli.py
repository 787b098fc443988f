"""The `gradcli` command line: argument parsing and exit codes, nothing else.

Running user files lives in `gradcli.running` and `gradcli.loading`, checking in
`gradcli.checking`, output in `gradcli.render`, the shared options in `gradcli.options` and
how a command's ending becomes an exit code in `gradcli.exits`.
"""

import math
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from typer import Exit

from . import checking
from .cases import DTYPE_CHOICES
from .completion import InstallCompletion, ShowCompletion
from .exits import EXIT_FAILED, EXIT_NO_CASES, EXIT_OK, EXIT_USAGE, UsageError, exit_codes
from .options import (
    CONTEXT_SETTINGS,
    Debug,
    Device,
    Format,
    Json,
    JsonErrorsGroup,
    Output,
    ScriptCommand,
    Seed,
    chosen_format,
    examples,
    file_names,
    started_in,
)
from .output_files import inputs_of, refuse_clashes
from .results import FULL_MODE_BELOW, MISMATCH_ROWS, CaseResult, Settings
from .stdout_guard import command_stdout
from .tolerances import FLOAT64

if TYPE_CHECKING:  # imported by the command that runs: --version, -h and schema stay light
    from typing import TextIO

    from rich.console import Console

    from .selection import Matcher


def _print_version(ctx: typer.Context, asked: bool) -> None:
    if asked and not ctx.resilient_parsing:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("gradcli")
        except PackageNotFoundError:  # run from a source tree that was never installed
            from . import __version__ as number
        print(f"gradcli {number}")
        raise Exit(EXIT_OK)


app = typer.Typer(
    cls=JsonErrorsGroup,
    context_settings=CONTEXT_SETTINGS,
    no_args_is_help=True,
    add_completion=False,  # gradcli's own --show/--install-completion [SHELL], typer's scripts
    rich_markup_mode=None,  # click's plain help layout, and no rich on a command line's way
    pretty_exceptions_enable=False,
)


@app.callback()
def _app(
    _version: Annotated[
        bool,
        typer.Option(
            "--version",
            expose_value=False,
            is_eager=True,
            callback=_print_version,
            help="Print gradcli's version and exit.",
        ),
    ] = False,
    _show_completion: ShowCompletion = None,
    _install_completion: InstallCompletion = None,
) -> None:
    """A gradient checker and autograd graph debugger for PyTorch code and for engine, its bundled autograd."""


@contextmanager
def _command_streams(
    debug: bool, *, document: bool, json_output: bool, usage: tuple[type[Exception], ...] = ()
) -> Iterator[tuple["TextIO", "Console"]]:
    """(stdout, stderr's console) for a command: stdout guarded when it carries a `document`
    (json, dot, svg, ...), and how the command ends turned into an exit code (with the error
    document when it is JSON)."""
    from .render.console import make_console

    err = make_console(sys.stderr)
    with (
        command_stdout(document) as stdout,
        exit_codes(err, debug, usage=usage, document=stdout if json_output else None),
    ):
        yield stdout, err


CHECK_HELP = f"""Compare analytical gradients (backward) with finite differences for the cases in PATH(s).

PATH is a check file, a directory (searched recursively for check_*.py and *_check.py, or the patterns of [tool.gradcli] files = [...] in pyproject.toml; no other file is executed; a file found there that imports torch where torch is not installed is skipped, with a note), or a node id FILE::CASE (several allowed). -k selects by pytest's expression grammar over case and file names: -k "not swish", -k "mlp and not (slow or big)".

A check file is plain Python using engine or torch (its tensors all of one library). It declares cases as a top-level callable `f` with a tuple `inputs`; or a top-level `model` (callable, with .parameters(): a torch.nn.Module works) with `inputs`, which also checks the gradient of every parameter; or functions decorated with `@gradcli.case(*inputs, name=..., modules=(m1, m2), **options)`, which also checks the parameters of the modules given. Float inputs, and every tensor and nn.Module the case function reaches (globals, closures, default arguments, attributes, helpers in other files), are checked on float64 copies, restored afterwards; --dtype native checks in the case's own dtype instead, against a float64 numerical reference (--reference float64, the default) or a native one (--reference native).

Options (eps, atol, rtol, order, fast, nondet_tol, dtype, reference) come from the case, then from the command line, then from [tool.gradcli] in the nearest pyproject.toml, then the defaults.

Mode: by default a case runs in fast mode (a random projection of the Jacobian; when it fails, the failing entries are localized), except that a case with fewer than {FULL_MODE_BELOW} differentiable input elements (inputs and parameters that require grad) runs in full mode (the whole Jacobian, entry by entry). --fast or --full forces one mode for every case.

--format json (or --json) prints one document: schema "gradcli.check/1" (`gradcli schema check` prints it). -o FILE writes the report or document to FILE; --junitxml FILE also writes a JUnit XML report.

Exit codes (as pytest's): 0 every case passed; 1 a gradient check failed; 2 usage or loading error (file missing, syntax error, exception while loading, a file without cases, an unknown FILE::CASE, a malformed -k expression, no float input requiring grad, CUDA unavailable); 3 internal error of gradcli; 5 no case was collected (no check file found, every one found skipped, or -k deselected every case).
"""


CHECK_EXAMPLES = examples(
    "gradcli check examples/model.py",
    "gradcli check examples/ -k 'not swish' -x",
    "gradcli check examples/model.py::swish --order 2",
    "gradcli check examples/buggy.py --full --atol 1e-6",
    "gradcli check examples/model.py --dtype native",
    "gradcli check examples/buggy.py --show 20 --dump jacobians.npz --plot plots/",
    "gradcli check examples/model.py --format json -o report.json",
    "gradcli check examples/model.py --junitxml gradcli.xml",
)


#: Entries each failing pair lists by default (--show N), in the JSON.
SHOW_DEFAULT = 10


def _given(**options: object) -> dict[str, object]:
    """The options given on the command line (default None: not given), to rank them."""
    return {name: value for name, value in options.items() if value is not None}


Dtype = Literal[DTYPE_CHOICES]  # float64 | native


@app.command("check", help=CHECK_HELP, epilog=CHECK_EXAMPLES)
def check(
    files: Annotated[list[str], typer.Argument(metavar="PATH", autocompletion=file_names)],
    order: Annotated[
        int | None,
        typer.Option(min=1, max=2, help="1: gradients; 2: also second derivatives (default: 1)."),
    ] = None,
    fast: Annotated[
        bool | None,
        typer.Option(
            "--fast/--full",
            help=f"Force fast or full mode (default: full below {FULL_MODE_BELOW} differentiable input "
            "elements, else fast).",
            show_default=False,
        ),
    ] = None,
    eps: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            help=f"Finite-difference step (default: {FLOAT64[0]:g}; with --dtype native, from the dtype).",
        ),
    ] = None,
    atol: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            help=f"Absolute tolerance (default: {FLOAT64[1]:g}; with --dtype native, from the dtype).",
        ),
    ] = None,
    rtol: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            help=f"Relative tolerance (default: {FLOAT64[2]:g}; with --dtype native, from the dtype).",
        ),
    ] = None,
    dtype: Annotated[
        Dtype | None,
        typer.Option(
            help="float64: check float inputs, and the tensors and modules the case reaches, as float64 "
            "copies (the default); native: check in the case's own dtype (float32, float16, bfloat16), "
            "with eps and tolerances chosen from it.",
        ),
    ] = None,
    reference: Annotated[
        Dtype | None,
        typer.Option(
            help="With --dtype native, the dtype of the numerical Jacobian the analytical one is compared "
            "with: float64 (the default: the function run on float64 copies) or native.",
        ),
    ] = None,
    nondet_tol: Annotated[
        float | None,
        typer.Option(
            min=0.0, help="Tolerated difference between two backward runs, for nondeterminism (default: 0)."
        ),
    ] = None,
    pattern: Annotated[
        str | None,
        typer.Option(
            "-k",
            metavar="EXPRESSION",
            help="Only cases matching EXPRESSION, as pytest's -k: names (substrings, case-insensitive; "
            'a glob with * or ?), and, or, not, parentheses: -k "not swish".',
        ),
    ] = None,
    exitfirst: Annotated[
        bool, typer.Option("--exitfirst", "-x", help="Stop after the first failing case.")
    ] = False,
    device: Device = "cpu",
    seed: Seed = 0,
    fmt: Format = "text",
    json_flag: Json = False,
    output: Output = None,
    junitxml: Annotated[
        str | None,
        typer.Option(metavar="FILE", callback=started_in, help="Also write a JUnit XML report to FILE."),
    ] = None,
    show: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="N",
            help=f"List the N largest errors of a failing pair, in the report and the JSON (default: "
            f"{MISMATCH_ROWS} in the report, {SHOW_DEFAULT} in the JSON; every one is counted).",
        ),
    ] = None,
    dump: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.npz",
            callback=started_in,
            help="Write the numerical and analytical Jacobians of failing pairs to FILE.npz "
            "(numpy.load; keys <case>/<output>/<input>/numerical and .../analytical).",
        ),
    ] = None,
    plot: Annotated[
        str | None,
        typer.Option(
            metavar="DIR",
            callback=started_in,
            help="Write a PNG heatmap of |analytical - numerical| per failing pair to DIR "
            "(needs matplotlib: pip install 'gradcli[plot]').",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS",
            help='Fail a case that runs longer than SECONDS ("timed out after ...") and go on '
            "to the next (POSIX, main thread only).",
        ),
    ] = None,
    debug: Debug = False,
) -> None:
    started = time.perf_counter()
    from .output import output_console
    from .render.console import make_console
    from .selection import ExpressionError, compile_expression

    json_output = chosen_format(fmt, json_flag) == "json"
    with _command_streams(debug, document=json_output, json_output=json_output) as (stdout, err):
        if timeout is not None and not timeout > 0:
            raise UsageError("--timeout must be a positive number of seconds")
        if eps is not None and eps <= 0:
            raise UsageError("--eps must be positive")
        for flag, value in (("--eps", eps), ("--atol", atol), ("--rtol", rtol), ("--nondet-tol", nondet_tol)):
            if value is not None and not math.isfinite(value):  # min=0.0 lets nan and inf in
                raise UsageError(f"{flag} must be a finite number, not {value}")
        try:
            matcher = compile_expression(pattern)
        except ExpressionError as exc:
            raise UsageError(f"-k {pattern!r}: {exc}") from None
        given = _given(
            order=order,
            fast=fast,
            eps=eps,
            atol=atol,
            rtol=rtol,
            nondet_tol=nondet_tol,
            dtype=dtype,
            reference=reference,
        )
        if plot is not None:
            from .jacobians import require_matplotlib

            require_matplotlib()
        run = _Run(
            given,
            device,
            seed,
            pattern,
            exitfirst,
            json_output,
            debug,
            junitxml,
            show,
            dump,
            plot,
            timeout,
            output,
        )
        refuse_clashes(run.outputs())
        with output_console(output, make_console(stdout)) as out:
            code = _run(list(files), matcher, run, out, err, started)
    raise Exit(code)


@dataclass
class _Run:
    """What the command line asked of a check run, besides the paths."""

    given: dict[str, object]  # check options given on the command line
    device: str
    seed: int
    pattern: str | None
    exitfirst: bool
    json_output: bool
    debug: bool
    junitxml: str | None = None
    show: int | None = None  # --show N: entries listed per failing pair
    dump: str | None = None  # --dump FILE.npz
    plot: str | None = None  # --plot DIR
    timeout: float | None = None  # --timeout SECONDS, per case
    output: str | None = None  # -o FILE

    def outputs(self) -> dict[str, str | None]:
        """The files the run writes, by option."""
        return {
            "--output": self.output,
            "--junitxml": self.junitxml,
            "--dump": self.dump,
            "--plot": self.plot,
        }


def _starting_settings(project_options: dict[str, object], given: dict[str, object]) -> Settings:
    """A file's cases start from the command line, over its [tool.gradcli], over the defaults (a
    case's own options come on top, in run_case)."""
    return Settings().with_options({**project_options, **given})


def _run_settings(prepared: list, given: dict[str, object]) -> Settings:
    """The JSON's top-level settings: what the files' cases started from. Files of one project share
    them; files under pyproject.tomls with different [tool.gradcli] tables have none in common, and
    the top level then shows the command line over the defaults (each case shows its own)."""
    tables = {tuple(sorted(case.file.project_options.items())) for case in prepared}
    return _starting_settings(dict(next(iter(tables))) if len(tables) == 1 else {}, given)


def _run(
    files: list[str], matcher: "Matcher", run: "_Run", out: "Console", err: "Console", started: float
) -> int:
    from engine.backend import CudaUnavailable  # the engine (numpy) only once a check runs

    from . import collection, running
    from .render import check as render
    from .render.progress import check_progress

    results: list[CaseResult] = []
    show = run.show or SHOW_DEFAULT
    keep = run.dump is not None or run.plot is not None  # the full Jacobians of failing pairs
    try:
        chosen, errors = collection.targets(files)
        read = [f.partition("::")[0] for f in files] + [t.path for t in chosen]
        refuse_clashes(run.outputs(), inputs_of(read))
        with running.using_device(run.device, [t.path for t in chosen]):
            collected = collection.Collection(errors=errors)
            prepared = collected.prepared
            # a file's cases run before the next file loads: in the state their file left (#18)
            stopped = False  # -x: the files after the failure are still collected, to count them
            with check_progress(err, 0, enabled=not run.json_output) as bar:
                for part in collection.each_file(chosen, matcher, seed=run.seed, timeout=run.timeout):
                    collected.add(part)
                    bar.add(0 if stopped else len(part.prepared))
                    for case in [] if stopped else part.prepared:
                        settings = _starting_settings(case.file.project_options, run.given)
                        with bar.case(f"{case.file.path}::{case.case.name}") as step:
                            results.append(
                                checking.run_case(
                                    case,
                                    settings,
                                    show=show,
                                    progress=step,
                                    keep_jacobians=keep,
                                    timeout=run.timeout,
                                )
                            )
                        if run.exitfirst and not results[-1].passed:
                            stopped = True
                            break
            errors = collected.errors
    except CudaUnavailable as exc:
        raise UsageError(f"--device {run.device} is unavailable: {exc}") from None
    elapsed = time.perf_counter() - started
    skipped = collected.skipped
    if run.junitxml is not None:
        _write_junit_xml(run.junitxml, results, errors, skipped, elapsed)
    if run.dump is not None or run.plot is not None:
        from . import jacobians  # --dump / --plot only
    if run.dump is not None:
        jacobians.dump(run.dump, results)
    if run.plot is not None:
        for path in jacobians.plot(run.plot, results):
            err.print(f"wrote {path}", soft_wrap=True, highlight=False)

    failed = sum(not r.passed for r in results)
    if errors:
        code = EXIT_USAGE
    elif not prepared:
        code = EXIT_NO_CASES
    else:
        code = EXIT_FAILED if failed else EXIT_OK
    render.print_skipped(err, skipped)
    if errors:
        render.print_errors(err, errors, run.debug)
    if run.json_output:
        document = render.json_document(
            results,
            errors,
            skipped,
            settings=_run_settings(prepared, run.given).for_run(),
            device=run.device,
            seed=run.seed,
            pattern=run.pattern,
            elapsed=elapsed,
            exit_code=code,
            deselected=collected.deselected,
        )
        out.file.write(document + "\n")
        return code
    by_file: dict[str, list[CaseResult]] = {}
    for result in results:
        by_file.setdefault(result.file, []).append(result)
    for path, file_results in by_file.items():
        render.print_file_results(out, path, file_results)
    render.print_failures(out, results, run.debug, rows=run.show or MISMATCH_ROWS)
    render.print_warnings(out, results)
    if len(results) < len(prepared):
        out.print(f"stopped after the first failure (-x); {len(prepared) - len(results)} not run")
    warnings = sum(len(r.warnings) for r in results)
    render.print_summary(
        out, len(results) - failed, failed, len(errors), elapsed, collected.deselected, warnings, len(skipped)
    )
    return code


def _write_junit_xml(
    path: str, results: list[CaseResult], errors: list, skipped: list, elapsed: float
) -> None:
    from .junit import write_junit_xml

    write_junit_xml(path, results, errors, elapsed, skipped)  # a path it cannot write: UsageError


GRAPH_HELP = """Draw the backward graph (the grad_fn nodes) behind a result computed in FILE.

FILE runs with --device as the default device. The target is --target NAME (a top-level tensor, or a case); else every top-level tensor with a grad_fn that no other top-level result uses (for `loss = l4.mean()` after `l4 = l2 * l3`, that is `loss`); else the outputs of the file's cases (the forms of gradcli check).

Each node shows its PyTorch name (MulBackward0, AccumulateGrad), the shape, dtype and device of the tensor it produced (? where the graph does not record them), and your variable names; then what differs from the defaults: a grad's norm, retains_grad=True, hooks (--verbose also prints the defaults: retains_grad=False, requires_grad=True is_leaf=True grad=None, and under each node the line of FILE whose forward call made it). The tree fits the terminal's width: long labels wrap under their own guide line, and it draws the levels that fit (a note says so). A node reached by two paths is drawn once, then referenced by its #id. --show-saved lists saved tensors with the version they were saved at and their version now (a modified one is always shown: that backward will fail).

Formats: text (the tree, the default; `tree` is its other name; --depth limits it, default 50 levels), dot (Graphviz source), svg, png, pdf (images; need Graphviz's dot program; --show-saved adds saved values and tensors, --group-modules a box per nn.Module), html (one self-contained page: the svg with pan/zoom, search by name, a click on a node shows the forward line that made it, its saved tensors, shapes, hooks; needs dot too), json (or --json; schema "gradcli.graph/1", which `gradcli schema graph` prints).

Exit codes: 0 drawn; 2 usage or loading error (file missing, exception while loading, no target, target not a tensor or without grad_fn, CUDA unavailable, Graphviz missing for svg/png/pdf/html, an image to a terminal); 3 internal error of gradcli.
"""


GRAPH_FORMATS = ("text", "tree", "dot", "svg", "png", "pdf", "html", "json")  # tree: text's first name


GRAPH_EXAMPLES = examples(
    "gradcli graph examples/expr.py",
    "gradcli graph examples/expr.py --show-saved --depth 3",
    "gradcli graph examples/model.py --target mse_loss --format dot -o mse_loss.dot",
    "gradcli graph examples/expr.py --json -o graph.json",
)


@app.command("graph", help=GRAPH_HELP, epilog=GRAPH_EXAMPLES)
def graph(
    file: Annotated[str, typer.Argument(metavar="FILE", autocompletion=file_names)],
    target: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="Top-level tensor (or case) to draw (default: see above)."),
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
    from . import graphing
    from .render import graph as draw
    from .render.console import make_console

    chosen = chosen_format(fmt, json_flag).replace("text", "tree")
    streams = _command_streams(
        debug, document=chosen != "tree", json_output=chosen == "json", usage=(draw.OutputError,)
    )
    with streams as (stdout, err):
        refuse_clashes({"--output": output}, [file])
        built = graphing.load_graph(
            file,
            target=target,
            device=device,
            seed=seed,
            forward_lines=draw.shows_forward_lines(chosen, verbose),
            group_modules=group_modules,
            levels=(depth or draw.DEFAULT_TREE_DEPTH) if chosen == "tree" else None,  # what a tree can draw
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
    raise Exit(EXIT_OK)


ANOMALY_HELP = """Run SCRIPT (as __main__, with ARGS as its sys.argv[1:]) under anomaly mode and report what went wrong in autograd.

Errors (the first one stops the script): inplace-modified-saved (with the line that saved the tensor and the line that modified it), leaf-inplace, no-grad-view-inplace, nan-in-backward / inf-in-backward (with NaN/Inf counts and ranges of the node's gradients and saved values), backward-twice, implicit-grad-nonscalar, and any other autograd error. --check-forward also stops at the first recorded op whose forward output holds NaN/Inf. Warnings (collected to the end): grad-accumulation, nonleaf-grad-read, unused-parameter.

gradcli's options may come before or after SCRIPT; ARGS that are options (start with -) go after `--`, which ends gradcli's options: an unknown option before it is a usage error. --format json (or --json) prints one document (schema "gradcli.anomaly/1", which `gradcli schema anomaly` prints); what the script prints goes to stderr. -o FILE writes the report or document to FILE.

Exit codes: 0 no errors (warnings allowed, unless --strict); 1 an anomaly error (or a warning with --strict); 2 the script could not be run (missing, syntax error, CUDA unavailable) or failed with an exception unrelated to autograd; 3 internal error of gradcli.
"""


ANOMALY_EXAMPLES = examples(
    "gradcli anomaly examples/script.py",
    "gradcli anomaly examples/script.py -- --lr 0.1 --epochs 2",
    "gradcli anomaly --strict --check-forward examples/script.py",
    "gradcli anomaly examples/script.py --format json -o anomalies.json",
)


@app.command("anomaly", help=ANOMALY_HELP, epilog=ANOMALY_EXAMPLES, cls=ScriptCommand)
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
    device: Device = "cpu",
    seed: Seed = 0,
    debug: Debug = False,
) -> None:
    # Imported by the command that needs them, so --help and the other commands stay light.
    from . import anomaly as anomalies
    from .output import output_console
    from .render import anomaly as show
    from .render.console import make_console

    json_output = chosen_format(fmt, json_flag) == "json"
    with (
        _command_streams(debug, document=json_output, json_output=json_output) as (stdout, err),
        output_console(output, make_console(stdout)) as out,
    ):
        refuse_clashes({"--output": output}, [script])
        report = anomalies.run_script(
            script, list(args or ()), device=device, seed=seed, check_forward=check_forward
        )
        if json_output:
            out.file.write(show.json_document(report, strict=strict) + "\n")
        else:
            show.print_report(out, report, strict=strict)
    raise Exit(report.exit_code(strict))


@app.command(
    "schema",
    epilog=examples("gradcli schema check", "gradcli schema graph > gradcli.graph.schema.json"),
)
def schema(
    name: Annotated[
        Literal["check", "graph", "anomaly", "error"],
        typer.Argument(metavar="NAME", help="check, graph, anomaly or error.", show_default=False),
    ],
) -> None:
    """Print the JSON Schema (draft 2020-12) of a command's --format json document (error: the
    document of a command that stopped with an error)."""
    from .schemas import schema_text

    with command_stdout(False) as stdout:
        stdout.write(schema_text(name))
        stdout.flush()


def main() -> None:
    """The typer app (the console script, `gradcli.entry.main`, calls it)."""
    app()


if __name__ == "__main__":
    main()
