"""Shell completion: `--show-completion [SHELL]` prints typer's script, `--install-completion
[SHELL]` writes it where the shell reads it (bash, zsh, fish, PowerShell; the current shell, found
by shellingham, when none is named). The shell asks gradcli itself
(`_GRADCLI_COMPLETE=complete_bash gradcli`), which typer's main answers before parsing.

typer's own options take no SHELL (they always detect it); these keep gradcli's `[SHELL]`, optional:
`with_shell` gives a SHELL-less one `auto` before parsing (typer options have no optional value).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Annotated

import typer
from typer._click.core import Context
from typer._click.exceptions import BadParameter, UsageError
from typer._completion_classes import completion_init
from typer._completion_shared import Shells
from typer._types import TyperChoice

SHELLS = tuple(shell.value for shell in Shells)  # bash, zsh, fish, powershell, pwsh
PROG = "gradcli"
COMPLETE_VAR = "_GRADCLI_COMPLETE"

completion_init()  # typer's completion classes (PowerShell among them) answer _GRADCLI_COMPLETE


def _shell(asked: str) -> str:
    """The shell named, or for `auto` the current one: shellingham's (the parent processes), else
    the login shell ($SHELL) where shellingham finds none it supports."""
    if asked == "auto":
        from typer._completion_shared import _get_shell_name

        asked = _get_shell_name() or ""
        if asked not in SHELLS:
            asked = os.path.basename(os.environ.get("SHELL", ""))
    if asked not in SHELLS:
        raise BadParameter(f"{asked or 'unknown shell'}: completion is available for {', '.join(SHELLS)}")
    return asked


def script(shell: str) -> str:
    """The completion script of `shell` for gradcli."""
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell)


def show(ctx: Context, asked: str | None) -> None:
    if asked is None or ctx.resilient_parsing:
        return
    typer.echo(script(_shell(asked)))
    raise typer.Exit(0)


def install(ctx: Context, asked: str | None) -> None:
    if asked is None or ctx.resilient_parsing:
        return
    from typer._completion_shared import install as install_script

    shell = _shell(asked)
    try:
        shell, path = install_script(shell=shell, prog_name=PROG, complete_var=COMPLETE_VAR)
    except OSError as exc:  # HOME unwritable, or not a folder
        where = f" {exc.filename}:" if exc.filename else ""
        raise UsageError(f"cannot install {shell} completion:{where} {exc.strerror or exc}") from None
    typer.echo(f"{shell} completion installed in {path}")
    typer.echo("Completion will take effect once you restart the terminal.")
    raise typer.Exit(0)


def answering(complete: Callable[[], None]) -> None:
    """Run typer's answer to a shell's completion request (`_GRADCLI_COMPLETE` set; it exits when
    it answered). A request it cannot read (`COMP_CWORD=abc`, a variable missing) is the caller's
    mistake: exit 2 saying so, not a traceback."""
    try:
        complete()
    except (ValueError, LookupError) as exc:
        shown = f"{exc!r}" if isinstance(exc, LookupError) else str(exc)
        sys.stderr.write(f"error: cannot read the shell's completion request ({COMPLETE_VAR}): {shown}\n")
        raise SystemExit(2) from None


OPTIONS = ("--show-completion", "--install-completion")


def with_shell(args: list[str]) -> list[str]:
    """The app's arguments, `auto` after a completion option that names no shell."""
    args = list(args)
    for at, arg in enumerate(args):
        if not arg.startswith("-"):  # the command: its own arguments follow
            break
        if arg in OPTIONS and (at + 1 == len(args) or args[at + 1].startswith("-")):
            args.insert(at + 1, "auto")
            break
    return args


def _option(name: str, callback, what: str):
    return typer.Option(
        name,
        metavar="[SHELL]",
        click_type=TyperChoice(("auto", *SHELLS)),
        expose_value=False,
        is_eager=True,
        callback=callback,
        show_default=False,
        help=what,
    )


ShowCompletion = Annotated[
    str | None,
    _option(
        "--show-completion", show, "Show completion for SHELL, to copy it or customize the installation."
    ),
]
InstallCompletion = Annotated[
    str | None,
    _option("--install-completion", install, "Install completion for SHELL (default: the current shell)."),
]
