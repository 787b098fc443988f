"""The console entry point (`gradcli`, `python -m gradcli`): Ctrl-C at any moment exits 130
without a traceback, from gradcli's first line on (importing typer, rich and the CLI takes a while).

Before that line the interpreter is still starting (`site`, .pth files): that is Python's own."""

from __future__ import annotations

import os
import signal
import sys


def main() -> None:
    """Run the CLI; a KeyboardInterrupt that no command turned into exit 130 is turned here."""
    sys.unraisablehook = _interrupt_again
    try:
        from .app import main as cli_main

        cli_main()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while we say so
        sys.stderr.write("interrupted\n")
        sys.exit(130)


def _interrupt_again(unraisable: sys.UnraisableHookArgs) -> None:
    """Ctrl-C landing in a callback Python cannot raise from (a weakref's, during an import) would
    print "Exception ignored" and be lost: deliver it again, where it can stop the run."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
    else:
        sys.__unraisablehook__(unraisable)
