"""The typer app: gradcli's options (`--version`, completion) and its commands, one module each.

A command's module parses its arguments and hands them to its package; `cli.app` has no
`from __future__ import annotations`, nor do the commands: typer evaluates string annotations of
every parameter when it builds the command (14 ms with them, 2.5 ms without).
"""

from typing import Annotated

import typer
from typer import Exit

from ..render.error import EXIT_OK
from . import anomaly, check, diff, graph, schema
from .completion import InstallCompletion, ShowCompletion
from .options import CONTEXT_SETTINGS, JsonErrorsGroup, ScriptCommand


def _print_version(ctx: typer.Context, asked: bool) -> None:
    if asked and not ctx.resilient_parsing:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("gradcli")
        except PackageNotFoundError:  # run from a source tree that was never installed
            from ..version import __version__ as number
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


app.command("check", help=check.HELP, epilog=check.EXAMPLES)(check.check)
app.command("graph", help=graph.HELP, epilog=graph.EXAMPLES)(graph.graph)
app.command("anomaly", help=anomaly.HELP, epilog=anomaly.EXAMPLES, cls=ScriptCommand)(anomaly.anomaly)
app.command("diff", help=diff.HELP, epilog=diff.EXAMPLES)(diff.diff)
app.command("schema", epilog=schema.EXAMPLES)(schema.schema)


def main() -> None:
    """The typer app (the console script, `gradcli.cli.entry.main`, calls it)."""
    app()


if __name__ == "__main__":
    main()
