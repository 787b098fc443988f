"""`python -m gradcli` runs the CLI."""

from .cli.entry import main

main()
