"""Output for people (rich, plain text off a terminal) and for tools (JSON), one module per command."""

from .console import make_console

__all__ = ["make_console"]
