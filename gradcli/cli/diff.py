"""`gradcli diff PATH...`: its arguments, checked and handed to `gradcli.diff.run`."""

import time
from typing import Annotated, Literal

import typer
from typer import Exit

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

HELP = """Run two implementations of one computation on the same values and find where their forward values or gradients first part ways.

PATH is a file, a directory (searched as gradcli check searches) or a node id FILE::NAME. A file declares pairs: top-level `reference`, `candidate` and `inputs` (callables or modules; the candidate's parameters get the reference's values, matched by name), or candidates decorated with `@gradcli.pair(reference=ref_fn, inputs=(...))`, each pair an item of its own. With --against, each check case of the file (the forms of gradcli check) is compared with itself run another way: float64 (its own dtype against float64 copies of its inputs, parameters and the tensors it reaches), torch (an engine file run as torch, or a torch file run on the engine, parameters and tensors copied by name; the engine's side the reference), eager (a torch file's case under torch.compile against the case as written) or cpu (the case on --device cuda against the case on the CPU, its inputs, parameters and tensors copied there).

Both sides run forward on copies of the same inputs (same seed), then backward from their outputs (from 1 for a scalar, else from the same random gradient), with their graphs recorded. Nodes are aligned by op and position in topological order (by the forward line and module where the ops differ). The report names, walking from the inputs, the first node whose forward output differs beyond tolerance and, walking from the loss, the first node whose incoming or outgoing gradient differs: the op, forward line, code and shape on both sides, and the largest difference and where it sits; then ops found on one side only, and the gradient of every input and parameter. Tolerances default by dtype (torch.testing.assert_close's); --rtol, --atol or [tool.gradcli] set them.

--format json (or --json) prints one document: schema "gradcli.diff/1" (`gradcli schema diff` prints it). --junitxml FILE also writes a JUnit XML report.

Exit codes: 0 every pair agrees; 1 a pair differs (forward values, output or gradients; ops on one side only are shown but do not decide); 2 usage or loading error (or a side raised); 3 internal error of gradcli; 5 nothing was compared.
"""

EXAMPLES = examples(
    "gradcli diff examples/diff_pairs.py",
    "gradcli diff examples/diff_pairs.py::wrong_tanh",
    "gradcli diff examples/diff_unstable.py --against float64",
    "gradcli diff examples/model.py --against torch --json",
)

Against = Literal["float64", "torch", "eager", "cpu"]


def diff(
    files: Annotated[list[str], typer.Argument(metavar="PATH", autocompletion=file_names)],
    against: Annotated[
        Against | None,
        typer.Option(
            help="Compare each check case with itself in float64, on the other library, compiled, or on the CPU."
        ),
    ] = None,
    rtol: Annotated[
        float | None, typer.Option(min=0.0, help="Relative tolerance (default: by dtype).")
    ] = None,
    atol: Annotated[
        float | None, typer.Option(min=0.0, help="Absolute tolerance (default: by dtype).")
    ] = None,
    pattern: Annotated[
        str | None,
        typer.Option("-k", metavar="EXPRESSION", help="Only pairs matching EXPRESSION, as pytest's -k."),
    ] = None,
    device: Device = "cpu",
    seed: Seed = 0,
    fmt: Format = "text",
    json_flag: Json = False,
    output: Output = None,
    junitxml: Annotated[
        str | None,
        typer.Option(metavar="FILE", callback=started_in, help="Also write a JUnit XML report to FILE."),
    ] = None,
    debug: Debug = False,
) -> None:
    started = time.perf_counter()
    from ..diff.run import DiffRun, run_diff
    from ..render.console import make_console
    from ..render.output import output_console
    from ..render.output_files import refuse_clashes

    json_output = chosen_format(fmt, json_flag) == "json"
    with command_streams(debug, document=json_output, json_output=json_output) as (stdout, err):
        finite(atol=atol, rtol=rtol)
        matcher = selection(pattern)
        asked = DiffRun(device, seed, pattern, against, rtol, atol, json_output, debug, junitxml, output)
        refuse_clashes(asked.outputs())
        with output_console(output, make_console(stdout)) as out:
            code = run_diff(list(files), matcher, asked, out, err, started)
    raise Exit(code)
