"""How many of the derivative table's rows have a batching rule (engine.func.vmap, gradcheck's batched Jacobian).

    python scripts/vmap_coverage.py            # the count
    python scripts/vmap_coverage.py --missing  # and the rows without a rule

A row without a rule runs once per example under vmap (slower: a loop, as torch's fallback); whether a
rule is right is what tests/func checks (test_vmap_registry.py: every registry sample under vmap).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.ops import batching  # noqa: E402


def coverage() -> tuple[list[str], list[str]]:
    """(node names of the rows with a rule, of those without), each sorted; a name repeats where rows share it."""
    rows = batching.row_table()
    ruled = sorted(op.node.__name__ for op in rows if batching.rule_of(op) is not None)
    missing = sorted(op.node.__name__ for op in rows if batching.rule_of(op) is None)
    return ruled, missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missing", action="store_true", help="list the rows without a rule")
    args = parser.parse_args(argv)
    ruled, missing = coverage()
    print(f"{len(ruled)} of {len(ruled) + len(missing)} rows have a batching rule")
    if args.missing:
        print("\n".join(missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
