"""`gradcli anomaly SCRIPT [ARGS]`: its arguments, handed to `gradcli.anomaly` to run and report."""

from typing import Annotated

import typer
from typer import Exit

from .options import Debug, Device, Format, Json, Output, Seed, chosen_format, examples, file_names
from .streams import command_streams

HELP = """Run SCRIPT (as __main__, with ARGS as its sys.argv[1:]) under anomaly mode and report what went wrong in autograd.

Errors (the first one stops the script): inplace-modified-saved (with the line that saved the tensor and the line that modified it), leaf-inplace, no-grad-view-inplace, nan-in-backward / inf-in-backward (with NaN/Inf counts and ranges of the node's gradients and saved values, and why: log of a softmax, sqrt or pow at 0, exp overflow, division by zero, ...), nan-in-where-branch (the branch where() did not take), backward-twice, implicit-grad-nonscalar, and any other autograd error. --check-forward also stops at the first op whose output holds NaN/Inf (recorded or not). Warnings (collected to the end): grad-accumulation, nonleaf-grad-read, unused-parameter.

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
        refuse_clashes({"--output": output}, [script])
        report = run_script(script, list(args or ()), device=device, seed=seed, check_forward=check_forward)
        if json_output:
            out.file.write(show.json_document(report, strict=strict) + "\n")
        else:
            show.print_report(out, report, strict=strict)
    raise Exit(report.exit_code(strict))
