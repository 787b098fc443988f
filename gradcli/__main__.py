"""`python -m gradcli` runs the CLI."""

from .cli import main

main()
