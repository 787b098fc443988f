"""The command-line options the commands share, declared once (typer's `Annotated` form).

Each command gives the default in its signature (`device: DeviceOption = Device.cpu`), as
typer asks of `Annotated` options. The output options are the same on every command:
`--format text|json` (graph adds dot and svg), `--json` as the alias of `--format json`, and
`-o/--output FILE`.
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from typing import Annotated

import typer
from typer.core import TyperCommand, TyperGroup

try:  # typer >= 0.26 runs on its own copy of click
    from typer._click.core import Context
    from typer._click.exceptions import NoSuchOption, UsageError
except ImportError:  # older typer, on click itself
    from click.core import Context
    from click.exceptions import NoSuchOption, UsageError

#: `-h` as well as `--help`, on the app and (inherited by their contexts) on every command.
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}


class Device(str, Enum):
    cpu = "cpu"
    cuda = "cuda"


class Format(str, Enum):
    """What check and anomaly write: a report for people, or the JSON document for tools."""

    text = "text"
    json = "json"


DeviceOption = Annotated[Device, typer.Option("--device", help="Default device while the user's code runs.")]
SeedOption = Annotated[
    int,
    typer.Option(
        "--seed",
        min=-(2**63),
        max=2**64 - 1,
        help="manual_seed of engine (and of torch, once the file imports it) before running each file and building "
        "inputs: any seed torch.manual_seed takes, -2**63 to 2**64-1 (a negative one is read as torch reads it, "
        "as its unsigned 64-bit pattern: -1 is 2**64-1).",
    ),
]
DebugOption = Annotated[bool, typer.Option("--debug", help="Show tracebacks.")]
FormatOption = Annotated[
    Format, typer.Option("--format", help="text: a report for people; json: one JSON document for tools.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Same as --format json.")]


def started_in(path: str | None) -> str | None:
    """A path of the command line, resolved now: user code that calls os.chdir does not move it."""
    return None if path is None else os.path.abspath(path)


OutputOption = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        callback=started_in,
        help="Write the report or document to FILE, not stdout.",
    ),
]


def chosen_format(fmt: Enum, json_flag: bool) -> str:
    """The format asked for: `--json` is `--format json`, whatever --format says."""
    return "json" if json_flag else fmt.value


def wants_json(args: list[str]) -> bool:
    """Whether a command line asks for the JSON document (options end at `--`: the script's follow)."""
    args = args[: args.index("--")] if "--" in args else args
    pairs = zip(args, [*args[1:], None])
    return any(a in ("--json", "--format=json") or (a, b) == ("--format", "json") for a, b in pairs)


class JsonErrorsGroup(TyperGroup):
    """The app: a command line that asks for JSON and cannot be parsed (an unknown option, a
    missing argument, a bad value) still gives stdout one document, the error document."""

    def invoke(self, ctx: Context) -> object:
        args = [*getattr(ctx, "_protected_args", ()), *ctx.args]
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            if wants_json(args[1:]):
                from .render.error import error_document

                sys.stdout.write(error_document(exc.exit_code, "usage", exc.format_message()) + "\n")
            raise


def examples(*lines: str) -> str:
    """A command's --help epilog: an Examples section, one invocation per line (shown as written)."""
    return "Examples:\n\n" + "\n".join(f"  {line}" for line in lines)


class ScriptCommand(TyperCommand):
    """A command whose trailing arguments go to a script: an unknown option before `--` is a usage
    error that says how to pass it to the script instead (`gradcli anomaly SCRIPT -- --lr 3`)."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except NoSuchOption as exc:
            near = sorted(set(exc.possibilities or ()) - set(ctx.help_option_names))
            near = f" (did you mean {' or '.join(near)}?)" if near else ""
            exc.message = (
                f"No such option: {exc.option_name}{near}. Arguments for the script go after `--`: "
                f"gradcli {ctx.info_name} SCRIPT -- {exc.option_name} ..."
            )
            exc.possibilities = None
            raise
