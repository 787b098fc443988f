"""What a child forked by the user's code must not write: the command's document and the output
files being written. In the child those descriptors become /dev/null, so only the process that
opened them writes the result."""

from __future__ import annotations

import os

_kept: set[int] = set()  # the document's and output files' descriptors


def keep_from_forked_children(fd: int) -> None:
    """A child that the user's code forks gets `fd` as /dev/null (until `release`d)."""
    _kept.add(fd)


def release(fd: int) -> None:
    _kept.discard(fd)


def _drop_in_child() -> None:
    """A forked child that goes on running must not write into the parent's document or files."""
    if not _kept:
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in _kept:
        os.dup2(devnull, fd, inheritable=False)
    os.close(devnull)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_in_child)
