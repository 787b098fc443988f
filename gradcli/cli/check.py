"""`gradcli check PATH...`: its arguments, checked and handed to `gradcli.check.run`."""

import time
from typing import Annotated, Literal

import typer
from typer import Exit

from ..check.cases import DTYPE_CHOICES, parse_modes
from ..check.results import FULL_MODE_BELOW, MISMATCH_ROWS, SHOW_DEFAULT
from ..check.tolerances import FLOAT64
from ..render.error import UsageError
from .checked import finite, selection
from .options import (
    Debug,
    Device,
    Format,
    Json,
    Output,
    Seed,
    chosen_format,
    examples,
    file_names,
    started_in,
)
from .streams import command_streams

HELP = f"""Compare analytical gradients (backward) with finite differences for the cases in PATH(s).

PATH is a check file, a directory (searched recursively for check_*.py and *_check.py, or the patterns of [tool.gradcli] files = [...] in pyproject.toml; no other file is executed; a file found there that imports torch where torch is not installed is skipped, with a note), or a node id FILE::CASE (several allowed). -k selects by pytest's expression grammar over case and file names: -k "not swish", -k "mlp and not (slow or big)".

A check file is plain Python using engine or torch (its tensors all of one library). It declares cases as a top-level callable `f` with a tuple `inputs`; or a top-level `model` (callable, with .parameters(): a torch.nn.Module works) with `inputs`, which also checks the gradient of every parameter; or functions decorated with `@gradcli.case(*inputs, name=..., modules=(m1, m2), **options)`, which also checks the parameters of the modules given. Float inputs, and every tensor and nn.Module the case function reaches (globals, closures, default arguments, attributes, helpers in other files), are checked on float64 copies, restored afterwards; --dtype native checks in the case's own dtype instead, against a float64 numerical reference (--reference float64, the default) or a native one (--reference native).

Options (eps, atol, rtol, order, modes, fast, nondet_tol, dtype, reference) come from the case, then from the command line, then from [tool.gradcli] in the nearest pyproject.toml, then the defaults.

Mode: by default a case runs in fast mode (a random projection of the Jacobian; when it fails, the failing entries are localized), except that a case with fewer than {FULL_MODE_BELOW} differentiable input elements (inputs and parameters that require grad) runs in full mode (the whole Jacobian, entry by entry). --fast or --full forces one mode for every case.

--format json (or --json) prints one document: schema "gradcli.check/1" (`gradcli schema check` prints it). -o FILE writes the report or document to FILE; --junitxml FILE also writes a JUnit XML report.

Exit codes (as pytest's): 0 every case passed; 1 a gradient check failed; 2 usage or loading error (file missing, syntax error, exception while loading, a file without cases, an unknown FILE::CASE, a malformed -k expression, no float input requiring grad, CUDA unavailable); 3 internal error of gradcli; 5 no case was collected (no check file found, every one found skipped, or -k deselected every case).
"""


EXAMPLES = examples(
    "gradcli check examples/model.py",
    "gradcli check examples/ -k 'not swish' -x",
    "gradcli check examples/model.py::swish --order 2",
    "gradcli check examples/buggy.py --full --atol 1e-6",
    "gradcli check examples/model.py --dtype native",
    "gradcli check examples/buggy.py --show 20 --dump jacobians.npz --plot plots/",
    "gradcli check examples/model.py --format json -o report.json",
    "gradcli check examples/model.py --junitxml gradcli.xml",
)


def _given(**options: object) -> dict[str, object]:
    """The options given on the command line (default None: not given), to rank them."""
    return {name: value for name, value in options.items() if value is not None}


Dtype = Literal[DTYPE_CHOICES]  # float64 | native


def check(
    files: Annotated[list[str], typer.Argument(metavar="PATH", autocompletion=file_names)],
    order: Annotated[
        int | None,
        typer.Option(min=1, max=2, help="1: gradients; 2: also second derivatives (default: 1)."),
    ] = None,
    modes: Annotated[
        str | None,
        typer.Option(
            help="rev: reverse mode's derivatives (VJPs); fwd: forward mode's (JVPs; at order 2, of the "
            "gradient); rev,fwd: both (the default). Forward mode a case cannot run (a custom Function "
            "without jvp) is a note, not a failure.",
        ),
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
    from ..check.run import CheckRun, run_check
    from ..render.console import make_console
    from ..render.output import output_console
    from ..render.output_files import refuse_clashes

    json_output = chosen_format(fmt, json_flag) == "json"
    with command_streams(debug, document=json_output, json_output=json_output) as (stdout, err):
        if timeout is not None and not timeout > 0:
            raise UsageError("--timeout must be a positive number of seconds")
        if eps is not None and eps <= 0:
            raise UsageError("--eps must be positive")
        finite(eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol)
        if modes is not None:
            try:
                modes_chosen = parse_modes(modes, "--modes")
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        matcher = selection(pattern)
        given = _given(
            order=order,
            modes=modes_chosen if modes is not None else None,
            fast=fast,
            eps=eps,
            atol=atol,
            rtol=rtol,
            nondet_tol=nondet_tol,
            dtype=dtype,
            reference=reference,
        )
        if plot is not None:
            from ..check.jacobians import require_matplotlib

            require_matplotlib()
        asked = CheckRun(
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
        refuse_clashes(asked.outputs())
        with output_console(output, make_console(stdout)) as out:
            code = run_check(list(files), matcher, asked, out, err, started)
    raise Exit(code)
