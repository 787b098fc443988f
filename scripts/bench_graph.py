"""What `gradcli graph` costs on long chains, against just running the file.

    python scripts/bench_graph.py                  # chains of 10^3, 10^4, 10^5 nodes
    python scripts/bench_graph.py 1000 20000       # chosen lengths

Each run is a fresh subprocess: `python chain.py` (the plain run), then `gradcli graph` with the
default tree, `--format json`, `--format dot` and `--depth N` (everything drawn). Peak RSS is the
child's own `ru_maxrss` (one child per measurement, read through `os.wait4`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHAIN = """import engine
x = engine.ones(3, requires_grad=True)
y = x
for i in range({n}):
    y = y * 1.0001 if i % 2 else (y + 0.5).tanh()
"""


def measure(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one child process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("COLUMNS", None)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
    proc.stderr.close()
    return wall, usage.ru_maxrss / 1024


def bench(n: int, folder: Path) -> None:
    path = folder / f"chain{n}.py"
    path.write_text(CHAIN.format(n=n))
    gradcli = [sys.executable, "-m", "gradcli", "graph", str(path)]
    runs = {
        "plain run": [sys.executable, str(path)],
        "graph (tree)": gradcli,
        "graph --format json": [*gradcli, "--format", "json"],
        "graph --format dot": [*gradcli, "--format", "dot"],
        f"graph --depth {n + 1}": [*gradcli, "--depth", str(n + 1)],
    }
    base = None
    print(f"\nchain of {n:,} ops")
    for name, argv in runs.items():
        wall, rss = measure(argv)
        base = base or wall
        print(f"  {name:<24} {wall:7.2f} s  {rss:7.0f} MiB  {wall / base:5.1f}x")


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1_000, 10_000, 100_000]
    with tempfile.TemporaryDirectory() as folder:
        for n in sizes:
            bench(n, Path(folder))


if __name__ == "__main__":
    main()
