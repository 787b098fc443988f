"""Shell completion: `--show-completion [SHELL]` prints click's script, `--install-completion
[SHELL]` writes it where the shell reads it (bash, zsh, fish). The shell asks gradcli itself
(`_GRADCLI_COMPLETE=bash_complete gradcli`), which click's main answers before parsing.
"""

from __future__ import annotations

import os
from pathlib import Path

import click
from click.exceptions import Exit

SHELLS = ("bash", "zsh", "fish")
PROG = "gradcli"

#: Where each shell's script goes, and the line its start-up file needs to read it (fish: none).
_INSTALL = {
    "bash": (".bash_completions/gradcli.sh", ".bashrc"),
    "zsh": (".zsh_completions/gradcli.zsh", ".zshrc"),
    "fish": (".config/fish/completions/gradcli.fish", None),
}


def _shell(asked: str) -> str:
    """The shell named, or the user's login shell ($SHELL) for `auto`."""
    shell = os.path.basename(os.environ.get("SHELL", "")) if asked == "auto" else asked
    if shell not in SHELLS:
        raise click.BadParameter(
            f"{shell or 'unknown shell'}: completion is available for {', '.join(SHELLS)}"
        )
    return shell


def script(ctx: click.Context, shell: str) -> str:
    """The completion script of `shell` for this command line."""
    from click.shell_completion import get_completion_class

    completion = get_completion_class(shell)(ctx.find_root().command, {}, PROG, "_GRADCLI_COMPLETE")
    return completion.source()


def show(ctx: click.Context, _param: click.Parameter, asked: str | None) -> None:
    if asked is None or ctx.resilient_parsing:
        return
    click.echo(script(ctx, _shell(asked)))
    raise Exit(0)


def install(ctx: click.Context, _param: click.Parameter, asked: str | None) -> None:
    if asked is None or ctx.resilient_parsing:
        return
    shell = _shell(asked)
    target, rc_file = _INSTALL[shell]
    home = Path.home()
    path = home / target
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(script(ctx, shell) + "\n")
    if rc_file is not None:
        rc = home / rc_file
        line = f"source {path}"
        if line not in (rc.read_text() if rc.exists() else ""):
            with rc.open("a") as stream:
                stream.write(f"\n{line}\n")
    click.echo(f"{shell} completion installed in {path}")
    click.echo("Completion will take effect once you restart the terminal.")
    raise Exit(0)


def completion_options(command):
    """--install-completion and --show-completion, as typer gave them (SHELL optional: $SHELL)."""
    for name, callback, what in (
        ("--install-completion", install, "Install completion for SHELL (default: the current shell)."),
        ("--show-completion", show, "Show completion for SHELL, to copy it or customize the installation."),
    ):
        command = click.option(
            name,
            metavar="[SHELL]",
            type=click.Choice(("auto", *SHELLS)),
            is_flag=False,
            flag_value="auto",
            expose_value=False,
            is_eager=True,
            callback=callback,
            show_default=False,
            help=what,
        )(command)
    return command
