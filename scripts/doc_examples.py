"""The `$ gradcli ...` examples of the docs: every ```text block that starts with one shows what that
command prints off a terminal, run from the repository's root.

    python scripts/doc_examples.py docs/verdicts.md          # rewrite the blocks with real output
    python scripts/doc_examples.py --check docs/verdicts.md  # exit 1 naming each block that differs

tests/project/test_doc_examples.py runs the check. Elapsed times differ from run to run, and numbers below
1e-6 (the float64 round-off of a passing check) from one BLAS to another: both are masked when
comparing (with the index of the worst such error), never when writing.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```text\n(\$ gradcli [^\n]*)\n(.*?)```", flags=re.S)
_TIMES = re.compile(r"\d+\.\d+s\b")
_TINY = re.compile(r"\b\d\.\d\de-(?:0[7-9]|[1-9]\d)\b")
_TINY_WORST = re.compile(r"<tiny>(\s+)<tiny>(\s+)\[[\d, ]*\]")  # where round-off peaks: anywhere


def examples(markdown: str) -> list[tuple[str, str]]:
    """(command, shown output) of each example block, in order."""
    return [(command[2:], shown) for command, shown in BLOCK.findall(markdown)]


def output_of(command: str) -> str:
    """What `command` (a `gradcli ...` line) prints, run in-process from the repository's root."""
    import os

    from typer.testing import CliRunner

    from gradcli.cli.app import app

    here = os.getcwd()
    os.chdir(ROOT)
    try:
        result = CliRunner().invoke(app, shlex.split(command)[1:])
    finally:
        os.chdir(here)
    return result.output


def comparable(text: str) -> str:
    """The text with what legitimately differs between machines and runs masked."""
    masked = _TINY.sub("<tiny>", _TIMES.sub("T", text))
    return _TINY_WORST.sub(lambda m: f"<tiny>{m[1]}<tiny>{m[2]}[?]", masked).rstrip("\n")


def rewrite(markdown: str) -> str:
    """The markdown with every example's output replaced by the real one."""
    return BLOCK.sub(lambda m: f"```text\n{m[1]}\n{output_of(m[1][2:])}```", markdown)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 where a block differs")
    args = parser.parse_args(argv)
    stale = 0
    for path in args.files:
        text = path.read_text()
        if args.check:
            for command, shown in examples(text):
                if comparable(output_of(command)) != comparable(shown):
                    print(f"{path}: `{command}` prints something else", file=sys.stderr)
                    stale += 1
        else:
            path.write_text(rewrite(text))
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
