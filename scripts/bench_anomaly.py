"""What `gradcli anomaly --check-forward` costs, on engine and torch code, against torch's own anomaly mode.

    python scripts/bench_anomaly.py              # chain, MLP, CNN and transformer steps, both libraries
    python scripts/bench_anomaly.py cnn          # workloads whose name contains "cnn"

The workloads are scripts/bench.py's (same models, inputs and initial values, one BLAS thread).
Each runs three ways per library: plain; under the library's `detect_anomaly()` (check_nan=True,
what a user would reach for); and under gradcli anomaly's instrumentation with forward checking
on (engine: the anomaly-mode observer `Instrument(check_forward=True)`; torch: the
TorchFunctionMode and saved-tensor hooks of `TorchInstrument`). Batches alternate, so machine
noise hits all three alike; the best batch is reported, with its ratio to plain.
"""

from __future__ import annotations

import sys
import warnings
from contextlib import nullcontext
from pathlib import Path

import bench  # this folder: the workloads scripts/bench.py times (sets the thread counts first)
import numpy

import engine
from gradcli.anomaly.instrument import Instrument, instrumented
from gradcli.program.running import GRADCLI_DIR
from gradcli.program.sites import Sites

torch = bench.torch
HERE = str(Path(__file__).resolve())


def engine_modes() -> dict:
    return {
        "plain": nullcontext,
        "detect_anomaly": engine.autograd.detect_anomaly,
        "gradcli anomaly": lambda: instrumented(Instrument(Sites(HERE, HERE), check_forward=True)),
    }


def torch_modes() -> dict:
    from gradcli.anomaly.torch_instrument import TorchInstrument, torch_instrumented

    return {
        "plain": nullcontext,
        "detect_anomaly": torch.autograd.detect_anomaly,
        "gradcli anomaly": lambda: torch_instrumented(
            TorchInstrument(torch, Sites(HERE, HERE), check_forward=True)
        ),
    }


def chain_step(lib):
    x, w = bench.chain_inputs(lib)
    return lambda: bench.chain(lib, x, w)


def model_step(make_model, x_shape, batch, classes=10, targets=None, sgd=False):
    """bench.py's training step of `make_model` for one library, on its random float32 data."""

    def make(lib):
        rng = numpy.random.default_rng(0)
        x = rng.standard_normal((batch, *x_shape), dtype=numpy.float32)
        y = rng.integers(0, classes, batch if targets is None else targets)
        model = make_model(lib.nn)
        with lib.no_grad():
            for p, value in zip(model.parameters(), bench._reference_params(make_model)):
                p.copy_(lib.tensor(value))
        xs, ys = lib.tensor(x), lib.tensor(y)
        optimizer = lib.optim.SGD(model.parameters(), lr=1e-3) if sgd else None
        return lambda: bench._training_step(lib, model, xs, ys, optimizer)

    return make


WORKLOADS = [  # (title, make(lib) -> step, calls per batch, unit in seconds, label)
    ("chain of 200 ops (16 float64, fwd+bwd)", chain_step, 20, bench.CHAIN_OPS * 1e-6, "us/op"),
    ("MLP step 784-512-10, batch 256", model_step(bench.mlp_model, (784,), 256), 5, 1e-3, "ms"),
    (
        "CNN step conv8-pool-conv16-pool-fc, batch 64",
        model_step(bench.cnn_model, (1, 28, 28), 64),
        3,
        1e-3,
        "ms",
    ),
    (
        "transformer block step d128 h4 ff512, 16x64 tokens (+SGD)",
        model_step(bench.transformer_model, (64, 128), 16, classes=256, targets=16 * 64, sgd=True),
        2,
        1e-3,
        "ms",
    ),
]


def best_times(fn, modes: dict, number: int, repeats: int) -> dict[str, float]:
    """Seconds per call under each mode, best of `repeats` batches, the modes' batches alternating."""
    best = dict.fromkeys(modes, float("inf"))
    for _ in range(repeats):
        for name, mode in modes.items():
            with mode():
                fn()  # warm up (the mode's first call)
                best[name] = min(best[name], bench.best_time(fn, 1, number))
    return best


def main(argv: list[str]) -> int:
    warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
    engine.autograd.anomaly.register_internal_root(GRADCLI_DIR)  # as `gradcli anomaly` does
    only = [a for a in argv if not a.startswith("-")]
    libraries = [("engine", engine, engine_modes())]
    if torch is not None:
        torch.set_num_threads(1)
        libraries.append(("torch", torch, torch_modes()))
    print(f"engine {engine.__version__}; torch {torch.__version__ if torch else 'missing'}; threads 1")
    for title, make, number, unit, label in WORKLOADS:
        if only and not any(word.lower() in title.lower() for word in only):
            continue
        print(title)
        for name, lib, modes in libraries:
            best = best_times(make(lib), modes, number, repeats=7)
            cells = [
                f"{mode} {seconds / unit:8.2f} {label} {seconds / best['plain']:5.2f}x"
                for mode, seconds in best.items()
            ]
            print(f"  {name:6} " + "   ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
