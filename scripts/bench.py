"""Measure the engine against PyTorch (when importable), as time ratios taken in one run.

    python scripts/bench.py             # every workload
    python scripts/bench.py chain       # workloads whose name contains "chain"

Each workload runs the same computation through `engine` and through `torch`; the
best of several repeats is reported (the minimum is the least noisy estimate of cost).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine  # noqa: E402

try:
    import torch
except ImportError:  # torch is optional: the engine's numbers are still printed
    torch = None

CHAIN_OPS = 200  # mul, add, tanh, exp, repeated


def chain(lib, x, w):
    """200 small ops, forward and backward: the per-op overhead of the engine."""
    y = x
    for _ in range(CHAIN_OPS // 4):
        y = y * w
        y = y + w
        y = y.tanh()
        y = y.exp()
    y.sum().backward()


def chain_inputs(lib):
    x = lib.linspace(-1, 1, 16, dtype=lib.float64).requires_grad_()
    w = lib.linspace(0.5, 1.5, 16, dtype=lib.float64).requires_grad_()
    return x, w


def best_time(fn, repeats: int, number: int) -> float:
    """Seconds per call, best of `repeats` batches of `number` calls."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def interleaved(fns: dict, repeats: int, number: int) -> dict:
    """Best seconds per call for each fn, batches alternating so machine noise hits all alike."""
    best = {name: float("inf") for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            best[name] = min(best[name], best_time(fn, 1, number))
    return best


def bench_chain(args):
    fns = {}
    for name, lib in (("engine", engine), ("torch", torch)):
        if lib is not None:
            x, w = chain_inputs(lib)
            fns[name] = lambda lib=lib, x=x, w=w: chain(lib, x, w)
    best = interleaved(fns, args.repeats, args.number)
    return (
        "chain of 200 ops (16 float64, fwd+bwd)",
        "us/op",
        [(name, seconds / CHAIN_OPS * 1e6) for name, seconds in best.items()],
    )


def bench_anomaly(args):
    x, w = chain_inputs(engine)
    plain = best_time(lambda: chain(engine, x, w), args.repeats, args.number)
    with engine.autograd.set_detect_anomaly(True):
        on = best_time(lambda: chain(engine, x, w), args.repeats, args.number)
    return (
        "chain under anomaly mode (engine off vs on)",
        "us/op",
        [
            ("engine", plain / CHAIN_OPS * 1e6),
            ("anomaly", on / CHAIN_OPS * 1e6),
        ],
    )


def gradcheck_inputs(lib):
    lib.manual_seed(0)
    x = lib.randn(8, 32, dtype=lib.float64, requires_grad=True)
    w = (lib.randn(32, 32, dtype=lib.float64) / 6).requires_grad_()
    return x, w


def bench_gradcheck(args):
    """tanh(x @ W).sum(), x 8x32, W 32x32, float64: full and fast mode, same verdicts."""
    out = []
    for fast in (False, True):
        fns = {}
        verdicts = {}
        for name, lib in (("engine", engine), ("torch", torch)):
            if lib is None:
                continue
            x, w = gradcheck_inputs(lib)

            def run(lib=lib, x=x, w=w, fast=fast):
                return lib.autograd.gradcheck(lambda a, b: (a @ b).tanh().sum(), (x, w), fast_mode=fast)

            verdicts[name] = run()
            fns[name] = run
        best = interleaved(fns, max(3, args.repeats // 3), 1)
        mode = "fast" if fast else "full"
        agree = "same verdict" if len(set(verdicts.values())) == 1 else f"VERDICTS DIFFER {verdicts}"
        out.append(
            (
                f"gradcheck {mode} mode, tanh(x@W).sum() ({agree})",
                "ms",
                [(k, v * 1e3) for k, v in best.items()],
            )
        )
    return out


WORKLOADS = {"chain": bench_chain, "anomaly": bench_anomaly, "gradcheck": bench_gradcheck}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("only", nargs="*", help="run workloads whose name contains one of these")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--number", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"engine {engine.__version__}; torch {torch.__version__ if torch else 'not installed'}")
    for key, fn in WORKLOADS.items():
        if args.only and not any(o in key for o in args.only):
            continue
        rows = fn(args)
        for title, unit, results in rows if isinstance(rows, list) else [rows]:
            cells = ", ".join(f"{name} {value:.2f} {unit}" for name, value in results)
            ratio = ""
            if len(results) == 2:
                ratio = f"  ratio {results[0][1] / results[1][1]:.2f}x"
            print(f"{title}: {cells}{ratio}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
