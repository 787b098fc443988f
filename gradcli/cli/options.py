"""The command-line options the commands share, declared once as typer parameter types.

The output options are the same on every command: `--format text|json` (graph adds dot and
svg), `--json` as the alias of `--format json`, and `-o/--output FILE`; then `--device`,
`--seed`, `--debug`. typer 0.28 (its own copy of click, no pydantic): a command's parameters are
`Annotated[..., typer.Option(...)]` in its signature; the group and command classes here are
typer's, extended.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

import typer
from typer._click.core import Context
from typer._click.exceptions import NoSuchOption, UsageError
from typer.core import TyperCommand, TyperGroup

from ..render.error import EXIT_INTERRUPTED

#: `-h` as well as `--help`, on the app and (inherited by their contexts) on every command;
#: help at most 100 columns wide, and option defaults shown.
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100, "show_default": True}


def started_in(path: str | None) -> str | None:
    """A path of the command line, resolved now: user code that calls os.chdir does not move it."""
    return None if path is None else os.path.abspath(path)


def output_path(path: str | None) -> str | None:
    """-o FILE resolved now (`started_in`); None (stdout itself) for a path that is stdout
    (`-o /dev/stdout`), whose document must go where stdout's does, not to fd 1 as user code sees it."""
    from ..render.output_files import names_stdout

    return None if path is None or names_stdout(path) else started_in(path)


def file_names(incomplete: str) -> list[str]:
    """Completion of a PATH argument: the files and directories (with a trailing /) whose name
    starts with what was typed, hidden ones only once a `.` is typed."""
    folder, _, start = incomplete.rpartition("/")
    where = folder + "/" if folder or incomplete.startswith("/") else ""
    try:
        entries = sorted(os.scandir(os.path.expanduser(where) or "."), key=lambda e: e.name)
    except OSError:
        return []
    return [
        where + entry.name + ("/" if entry.is_dir() else "")
        for entry in entries
        if entry.name.startswith(start) and (start.startswith(".") or not entry.name.startswith("."))
    ]


Device = Annotated[
    Literal["cpu", "cuda"], typer.Option("--device", help="Default device while the user's code runs.")
]
Seed = Annotated[
    int,
    typer.Option(
        "--seed",
        min=-(2**63),
        max=2**64 - 1,
        help="manual_seed of engine (and of torch, once the file imports it) before running each file and "
        "building inputs: any seed torch.manual_seed takes, -2**63 to 2**64-1 (a negative one is read as "
        "torch reads it, as its unsigned 64-bit pattern: -1 is 2**64-1).",
    ),
]
Debug = Annotated[bool, typer.Option("--debug", help="Show tracebacks.")]
Format = Annotated[
    Literal["text", "json"],
    typer.Option("--format", help="text: a report for people; json: one JSON document for tools."),
]
Json = Annotated[bool, typer.Option("--json", help="Same as --format json.")]
Output = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        callback=output_path,
        help="Write the report or document to FILE, not stdout.",
    ),
]


def chosen_format(fmt: str, json_flag: bool) -> str:
    """The format asked for: `--json` is `--format json`, whatever --format says."""
    return "json" if json_flag else fmt


def wants_json(args: list[str]) -> bool:
    """Whether a command line asks for the JSON document (options end at `--`: the script's follow)."""
    args = args[: args.index("--")] if "--" in args else args
    pairs = zip(args, [*args[1:], None])
    return any(a in ("--json", "--format=json") or (a, b) == ("--format", "json") for a, b in pairs)


@contextmanager
def _interrupt_exits() -> Iterator[None]:
    """Ctrl-C while click parses exits 130, not click's "Aborted!" and 1 (a command's own
    Ctrl-C is turned by `exits.exit_codes`)."""
    try:
        yield
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise typer.Exit(EXIT_INTERRUPTED) from None


class JsonErrorsGroup(TyperGroup):
    """The app: a command line that asks for JSON and cannot be parsed (an unknown option, a
    missing argument, a bad value) still gives stdout one document, the error document."""

    def list_commands(self, ctx: Context) -> list[str]:
        """In the order declared (check, graph, anomaly, schema), not alphabetical."""
        return list(self.commands)

    def make_context(self, *args: Any, **kwargs: Any) -> Context:
        with _interrupt_exits():
            return super().make_context(*args, **kwargs)

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        from .completion import with_shell

        return super().parse_args(ctx, with_shell(args))

    def _main_shell_completion(self, ctx_args: Any, prog_name: str, complete_var: str | None = None) -> None:
        from .completion import answering

        answering(
            lambda: super(JsonErrorsGroup, self)._main_shell_completion(ctx_args, prog_name, complete_var)
        )

    def invoke(self, ctx: Context) -> object:
        args = [*getattr(ctx, "_protected_args", ()), *ctx.args]
        try:
            with _interrupt_exits():
                return super().invoke(ctx)
        except UsageError as exc:
            if wants_json(args[1:]):
                from ..render.error import error_document

                sys.stdout.write(error_document(exc.exit_code, "usage", exc.format_message()) + "\n")
            raise


def examples(*lines: str) -> str:
    """A command's --help epilog: an Examples section, one invocation per line, shown as written
    (click's `\\b` keeps a paragraph from being rewrapped)."""
    return "Examples:\n\n\b\n" + "\n".join(f"  {line}" for line in lines)


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
