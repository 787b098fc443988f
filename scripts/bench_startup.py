"""CLI start-up against a bare `python -c "import numpy"`, each as a whole process.

Each command runs N times as a subprocess, alternating with the baseline so load on a shared
machine hits both alike; best and median wall times and their ratio are printed, with bytecode
cached (warm), with PYTHONDONTWRITEBYTECODE=1, and with gradcli's and engine's __pycache__
removed before every run (cold: what an install that never compiled its bytecode pays).

    python scripts/bench_startup.py                    # check examples/model.py, --version, -h
    python scripts/bench_startup.py -n 30 -- check examples/expr.py
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = [sys.executable, "-c", "import numpy"]
COMMANDS = [["check", "examples/model.py"], ["--version"], ["-h"]]


def _clear_bytecode() -> None:
    for package in ("gradcli", "engine"):
        for cache in (ROOT / package).rglob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)


def _time(argv: list[str], env: dict[str, str], before=None) -> float:
    if before is not None:
        before()
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def measure(args: list[str], runs: int, env: dict[str, str], before=None) -> tuple[list[float], list[float]]:
    """Wall times of `gradcli ARGS` and of the baseline, run alternately."""
    command = [sys.executable, "-m", "gradcli", *args]
    ours, base = [], []
    for _ in range(runs):
        ours.append(_time(command, env, before))
        base.append(_time(BASELINE, env))
    return ours, base


def _line(label: str, ours: list[float], base: list[float]) -> str:
    best, median = min(ours), statistics.median(ours)
    b_best, b_median = min(base), statistics.median(base)
    return (
        f"{label:<44} best {best * 1000:6.0f} ms  median {median * 1000:6.0f} ms   "
        f"import numpy best {b_best * 1000:4.0f} median {b_median * 1000:4.0f}   "
        f"ratio best {best / b_best:4.2f}x median {median / b_median:4.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", "--runs", type=int, default=15, help="runs of each command (default 15)")
    parser.add_argument("--no-cold", action="store_true", help="skip the runs without __pycache__")
    parser.add_argument("command", nargs="*", help="one gradcli command to time (after --)")
    options = parser.parse_args()
    commands = [options.command] if options.command else COMMANDS
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    no_write = {**env, "PYTHONDONTWRITEBYTECODE": "1"}
    print(f"python {sys.version.split()[0]}, {options.runs} runs each, alternating with `import numpy`")
    for args in commands:
        name = "gradcli " + " ".join(args)
        measure(args, 1, env)  # writes the bytecode the warm runs read
        print(_line(f"{name} (warm)", *measure(args, options.runs, env)))
        print(_line(f"{name} (PYTHONDONTWRITEBYTECODE=1)", *measure(args, options.runs, no_write)))
        if not options.no_cold:
            print(
                _line(
                    f"{name} (cold, no __pycache__)", *measure(args, options.runs, no_write, _clear_bytecode)
                )
            )
    measure(commands[0], 1, env)  # leave the bytecode written


if __name__ == "__main__":
    main()
