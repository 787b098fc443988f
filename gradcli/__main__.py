"""`python -m gradcli` runs the CLI."""

from .entry import main

main()
