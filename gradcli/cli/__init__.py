"""The `gradcli` command line: one module per command, each parsing its arguments and handing them
to its package (`gradcli.check`, `gradcli.graph`, `gradcli.anomaly`); the typer app is `app`."""

from .app import app, main

__all__ = ["app", "main"]
