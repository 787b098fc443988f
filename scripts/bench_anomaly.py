"""What `gradcli anomaly` costs on a torch script, against torch's own anomaly mode.

    python scripts/bench_anomaly.py            # chain and MLP step, best of 5 batches each

Three ways to run the same code: plain torch, under `torch.autograd.detect_anomaly()`
(check_nan=True, what a torch user would reach for), and under gradcli anomaly's torch
instrumentation (the TorchFunctionMode and saved-tensor hooks `gradcli anomaly` installs).
Batches alternate, so machine noise hits all three alike.
"""

from __future__ import annotations

import sys
import time
import warnings
from contextlib import nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
from bench import CHAIN_OPS, chain  # noqa: E402  (this folder: the same chain scripts/bench.py times)

from gradcli.anomaly.torch_instrument import TorchInstrument, torch_instrumented  # noqa: E402
from gradcli.program.sites import Sites  # noqa: E402


def make_chain():
    x = torch.linspace(-1, 1, 16, dtype=torch.float64).requires_grad_()
    w = torch.linspace(0.5, 1.5, 16, dtype=torch.float64).requires_grad_()
    return lambda: chain(torch, x, w)


def make_mlp_step():
    """zero_grad, forward, cross_entropy, backward, SGD step: MLP 784-512-10, batch 256, float32."""
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(256, 784), torch.randint(0, 10, (256,))

    def step():
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


MODES = {
    "plain": nullcontext,
    "detect_anomaly": torch.autograd.detect_anomaly,
    "gradcli anomaly": lambda: torch_instrumented(TorchInstrument(torch, Sites(__file__, __file__))),
}


def best_times(fn, number: int, repeats: int = 5) -> dict[str, float]:
    best = dict.fromkeys(MODES, float("inf"))
    for _ in range(repeats):
        for name, mode in MODES.items():
            with mode():
                fn()  # warm up (the mode's first call)
                start = time.perf_counter()
                for _ in range(number):
                    fn()
                best[name] = min(best[name], (time.perf_counter() - start) / number)
    return best


def main() -> int:
    warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    workloads = [
        ("chain of 200 ops (16 float64, fwd+bwd)", make_chain(), 50, CHAIN_OPS * 1e-6, "us/op"),
        ("MLP step 784-512-10, batch 256 (zero_grad, fwd, bwd, SGD)", make_mlp_step(), 20, 1e-3, "ms"),
    ]
    for title, fn, number, unit, label in workloads:
        best = best_times(fn, number)
        print(title)
        for name, seconds in best.items():
            print(f"  {name:16} {seconds / unit:9.2f} {label}  {seconds / best['plain']:5.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
