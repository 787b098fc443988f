"""Which public names of PyTorch the engine has: torch, torch.Tensor, torch.nn.functional, torch.linalg.

    python scripts/op_coverage.py            # counts per namespace
    python scripts/op_coverage.py --missing  # and the names the engine lacks
    python scripts/op_coverage.py --json     # everything, for tools

A name counts as present when the engine's namespace has an attribute of that name; whether
it behaves as torch's is what the tests check. Needs torch installed (it is the reference).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine  # noqa: E402
import engine.nn.functional  # noqa: E402


def public_names(namespace) -> list[str]:
    """What a user reaches in a namespace: names without a leading underscore, classes and callables
    (dtypes and other constants too, for torch itself: `torch.float64` is part of the API)."""
    return sorted(n for n in dir(namespace) if not n.startswith("_"))


def namespaces(torch) -> dict[str, tuple]:
    """name -> (torch's namespace, the engine's, or None when the engine has none by that name)."""
    return {
        "torch": (torch, engine),
        "torch.Tensor": (torch.Tensor, engine.Tensor),
        "torch.nn.functional": (torch.nn.functional, engine.nn.functional),
        "torch.linalg": (torch.linalg, getattr(engine, "linalg", None)),
    }


def coverage(torch) -> dict[str, dict]:
    report = {}
    for label, (theirs, ours) in namespaces(torch).items():
        names = public_names(theirs)
        present = [n for n in names if ours is not None and hasattr(ours, n)]
        missing = [n for n in names if n not in set(present)]
        report[label] = {"total": len(names), "present": present, "missing": missing}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missing", action="store_true", help="list the names the engine lacks")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("op_coverage: torch is not installed; it is the reference (pip install torch)", file=sys.stderr)
        return 2
    report = coverage(torch)
    if args.json:
        print(json.dumps({"torch": torch.__version__, "namespaces": report}, indent=2))
        return 0
    print(f"engine against torch {torch.__version__} (public names present / total)")
    for label, entry in report.items():
        print(f"  {label:22} {len(entry['present']):5d} / {entry['total']:<5d}")
        if args.missing and entry["missing"]:
            print("    missing: " + " ".join(entry["missing"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
