"""Measure the engine against PyTorch (when importable), as time ratios taken in one run.

    python scripts/bench.py             # every workload
    python scripts/bench.py chain       # workloads whose name contains "chain"
    python scripts/bench.py --device cuda mlp chain   # on the GPU: engine on CuPy, torch on CUDA
    python scripts/bench.py --threads 0 mlp    # the BLAS/OpenMP libraries' own thread counts

Both libraries run on one BLAS/OpenMP thread by default (--threads 1): OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS and MKL_NUM_THREADS are set before numpy is imported, and
torch.set_num_threads(1); on a shared machine one thread each gives steadier ratios.
Each workload runs the same computation through `engine` and through `torch`; the
best of several repeats is reported (the minimum is the least noisy estimate of cost).
With --device cuda both libraries build their inputs on the GPU and every timed batch
is bracketed by a device synchronize (GPU calls return before their kernels finish).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def _threads(argv: list[str]) -> int:
    """--threads N from the command line, read before numpy is imported (its BLAS reads the env once)."""
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if arg.startswith("--threads="):
            return int(arg.split("=", 1)[1])
    return 1


THREADS = _threads(sys.argv[1:])
if THREADS > 0:
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = str(THREADS)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine  # noqa: E402

try:
    import torch
except ImportError:  # torch is optional: the engine's numbers are still printed
    torch = None

CHAIN_OPS = 200  # mul, add, tanh, exp, repeated
LIBS: list = []  # (name, module) pairs timed in this run; set by main()
DEVICE = ["cpu"]  # where inputs and models live; set by main()


def synchronize(lib) -> None:
    """Wait for `lib`'s queued GPU work (a no-op on the CPU), so a timing covers the kernels."""
    if DEVICE[0] == "cpu":
        return
    if lib is engine:
        engine.backend.synchronize(engine.device(DEVICE[0]))
    else:
        lib.cuda.synchronize()


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
    x = lib.linspace(-1, 1, 16, dtype=lib.float64, device=DEVICE[0]).requires_grad_()
    w = lib.linspace(0.5, 1.5, 16, dtype=lib.float64, device=DEVICE[0]).requires_grad_()
    return x, w


def best_time(fn, repeats: int, number: int, lib=None) -> float:
    """Seconds per call, best of `repeats` batches of `number` calls (synchronized on a GPU)."""
    best = float("inf")
    for _ in range(repeats):
        synchronize(lib)
        start = time.perf_counter()
        for _ in range(number):
            fn()
        synchronize(lib)
        best = min(best, (time.perf_counter() - start) / number)
    return best


def interleaved(fns: dict, repeats: int, number: int) -> dict:
    """Best seconds per call for each fn, batches alternating so machine noise hits all alike."""
    libs = dict(LIBS)
    best = {name: float("inf") for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            best[name] = min(best[name], best_time(fn, 1, number, libs.get(name)))
    return best


def bench_chain(args):
    fns = {}
    for name, lib in LIBS:
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
    if ("engine", engine) not in LIBS:
        return []
    x, w = chain_inputs(engine)
    plain = best_time(lambda: chain(engine, x, w), args.repeats, args.number, engine)
    with engine.autograd.set_detect_anomaly(True):
        on = best_time(lambda: chain(engine, x, w), args.repeats, args.number, engine)
    return (
        "chain under anomaly mode (engine on vs off)",
        "us/op",
        [
            ("anomaly on", on / CHAIN_OPS * 1e6),
            ("off", plain / CHAIN_OPS * 1e6),
        ],
    )


def gradcheck_inputs(lib):
    lib.manual_seed(0)
    x = lib.randn(8, 32, dtype=lib.float64, device=DEVICE[0], requires_grad=True)
    w = (lib.randn(32, 32, dtype=lib.float64, device=DEVICE[0]) / 6).requires_grad_()
    return x, w


def mlp_gradcheck_inputs(lib):
    """x 4x16, a 16-32-12 tanh MLP's weights and biases, float64: 1,004 elements to perturb."""
    lib.manual_seed(0)
    shapes = [(4, 16), (16, 32), (32,), (32, 12), (12,)]
    return tuple((lib.randn(*s, dtype=lib.float64, device=DEVICE[0]) / 4).requires_grad_() for s in shapes)


def mlp_function(x, w1, b1, w2, b2):
    return (((x @ w1 + b1).tanh() @ w2 + b2) ** 2).mean()


GRADCHECK_FUNCTIONS = (
    ("tanh(x@W).sum()", gradcheck_inputs, lambda a, b: (a @ b).tanh().sum()),
    ("small MLP, n = 1,004", mlp_gradcheck_inputs, mlp_function),
)


def bench_gradcheck(args):
    """Full and fast mode on tanh(x @ W).sum() (x 8x32, W 32x32: n = 1,280) and a small MLP
    (n = 1,004), float64, same verdicts.

    The first full-mode call in the process is reported too: it is what one `gradcli check`
    run (a fresh process) pays, lazy initialisation included.
    """
    out = []
    for label, make_inputs, function in GRADCHECK_FUNCTIONS:
        for fast in (False, True):
            fns = {}
            verdicts = {}
            first = {}
            for name, lib in LIBS:
                if lib is None:
                    continue
                inputs = make_inputs(lib)

                def run(lib=lib, inputs=inputs, fast=fast, function=function):
                    return lib.autograd.gradcheck(function, inputs, fast_mode=fast)

                started = time.perf_counter()
                verdicts[name] = run()
                first[name] = time.perf_counter() - started
                fns[name] = run
            best = interleaved(fns, max(3, args.repeats // 3), 1)
            mode = "fast" if fast else "full"
            agree = "same verdict" if len(set(verdicts.values())) == 1 else f"VERDICTS DIFFER {verdicts}"
            if not fast and function is GRADCHECK_FUNCTIONS[0][2]:
                out.append(
                    (
                        f"gradcheck {mode} mode, first call in the process ({agree})",
                        "ms",
                        [(k, v * 1e3) for k, v in first.items()],
                    )
                )
            out.append(
                (f"gradcheck {mode} mode, {label} ({agree})", "ms", [(k, v * 1e3) for k, v in best.items()])
            )
    return out


def _training_step(lib, model, x, y, optimizer=None):
    """zero_grad (grads to None), forward, cross_entropy, backward; then `optimizer.step()` if given."""
    model.zero_grad()
    lib.nn.functional.cross_entropy(model(x), y).backward()
    if optimizer is not None:
        optimizer.step()


_PARAMS: dict = {}


def _reference_params(make_model):
    """The engine's initialisation of `make_model`, as arrays, so every library computes the same thing."""
    if make_model not in _PARAMS:
        engine.manual_seed(0)
        _PARAMS[make_model] = [p.detach().numpy().copy() for p in make_model(engine.nn).parameters()]
    return _PARAMS[make_model]


def mlp_model(nn):
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10))


def wide_mlp_model(nn):
    """The GPU-sized MLP: enough work per kernel that launch overhead is not all that is measured."""
    return nn.Sequential(nn.Linear(784, 2048), nn.ReLU(), nn.Linear(2048, 10))


def cnn_model(nn):
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 7 * 7, 10),
    )


def transformer_model(nn, d=128, heads=4, ff=512, vocab=256):
    """One pre-norm transformer block and a vocabulary head: LayerNorm, softmax attention, exact GELU."""
    functional = nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.qkv, self.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.ln2, self.up, self.down = nn.LayerNorm(d), nn.Linear(d, ff), nn.Linear(ff, d)
            self.head = nn.Linear(d, vocab)

        def forward(self, x):
            b, t, _ = x.shape
            qkv = self.qkv(self.ln1(x)).view(b, t, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            attended = functional.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
            x = x + self.proj(attended.transpose(1, 2).reshape(b, t, d))
            x = x + self.down(functional.gelu(self.up(self.ln2(x))))
            return self.head(x).reshape(b * t, vocab)

    return Block()


def _bench_step(args, make_model, x_shape, batch, classes=10, targets=None, sgd=False):
    """Best seconds per training step of `make_model` on random float32 data, per library.

    `targets`: how many class labels per sample (the batch's by default); `sgd`: end with an SGD step.
    """
    import numpy

    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((batch, *x_shape), dtype=numpy.float32)
    y = rng.integers(0, classes, batch if targets is None else targets)
    fns = {}
    for name, lib in LIBS:
        if lib is None:
            continue
        model = make_model(lib.nn).to(DEVICE[0])
        with lib.no_grad():
            for p, value in zip(model.parameters(), _reference_params(make_model)):
                p.copy_(lib.tensor(value, device=DEVICE[0]))
        xs, ys = lib.tensor(x, device=DEVICE[0]), lib.tensor(y, device=DEVICE[0])
        opt = lib.optim.SGD(model.parameters(), lr=1e-3) if sgd else None
        fns[name] = lambda lib=lib, model=model, xs=xs, ys=ys, opt=opt: _training_step(
            lib, model, xs, ys, opt
        )
    return interleaved(fns, args.repeats, max(1, args.number // 4))


def bench_mlp(args):
    if DEVICE[0] != "cpu":
        best = _bench_step(args, wide_mlp_model, (784,), 1024)
        title = f"MLP step 784-2048-10, batch 1024, float32, {DEVICE[0]} (fwd+cross_entropy+bwd)"
    else:
        best = _bench_step(args, mlp_model, (784,), 256)
        title = "MLP step 784-512-10, batch 256, float32 (fwd+cross_entropy+bwd)"
    return (title, "ms", [(name, seconds * 1e3) for name, seconds in best.items()])


def bench_cnn(args):
    best = _bench_step(args, cnn_model, (1, 28, 28), 64)
    return (
        "CNN step conv8-pool-conv16-pool-fc, batch 64x1x28x28, float32 (fwd+cross_entropy+bwd)",
        "ms",
        [(name, seconds * 1e3) for name, seconds in best.items()],
    )


def bench_transformer(args):
    best = _bench_step(args, transformer_model, (64, 128), 16, classes=256, targets=16 * 64, sgd=True)
    return (
        "transformer block step d128 h4 ff512 (exact GELU), 16x64 tokens, vocab 256, float32"
        " (fwd+cross_entropy+bwd+SGD)",
        "ms",
        [(name, seconds * 1e3) for name, seconds in best.items()],
    )


def bench_diff(args):
    """`gradcli diff` of the transformer block against a copy (both graphs recorded, values and
    gradients compared node by node) against running both forwards and backwards once."""
    import numpy

    from gradcli.check.in_process import loaded_module
    from gradcli.diff.compare import compare
    from gradcli.diff.loading import DiffItem
    from gradcli.diff.recording import Side
    from gradcli.libraries import ENGINE

    if DEVICE[0] != "cpu" or ("engine", engine) not in LIBS:
        return []
    x = numpy.random.default_rng(0).standard_normal((16, 64, 128), dtype=numpy.float32)
    models = []
    for _ in range(2):
        model = transformer_model(engine.nn)
        with engine.no_grad():
            for p, value in zip(model.parameters(), _reference_params(transformer_model)):
                p.copy_(engine.tensor(value))
        models.append(model)

    def side(model):
        inputs = (engine.tensor(x, requires_grad=True),)
        leaves = [("x", inputs[0]), *model.named_parameters()]
        return Side(lambda x: model(x).logsumexp(dim=1).mean(), inputs, leaves, ENGINE)

    here = os.path.abspath(__file__)
    loaded = loaded_module(sys.modules[__name__], here, here)

    def diffed():
        compare(
            DiffItem("block", loaded, side(models[0]), side(models[1]), ("a", "b")),
            seed=0,
            rtol=None,
            atol=None,
        )

    def both():
        for model in models:
            xs = engine.tensor(x, requires_grad=True)
            model(xs).logsumexp(dim=1).mean().backward()

    best = interleaved({"diff": diffed, "both runs": both}, max(3, args.repeats // 3), 1)
    return (
        "gradcli diff of a transformer block d128 h4 ff512, 16x64 tokens, float32, engine "
        "(vs both fwd+bwd once)",
        "ms",
        [(name, seconds * 1e3) for name, seconds in best.items()],
    )


def _func_mlp(lib, sizes):
    """An MLP of `sizes` (float32) and its parameters as a dict, for torch.func-style calls."""
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        layers.append(lib.nn.Linear(n_in, n_out))
        if i < len(sizes) - 2:
            layers.append(lib.nn.Tanh())
    model = lib.nn.Sequential(*layers).to(DEVICE[0])
    with lib.no_grad():
        for p, value in zip(model.parameters(), _reference_params(lambda nn: _func_mlp_shapes(nn, sizes))):
            p.copy_(lib.tensor(value, device=DEVICE[0]))
    return model, {k: v.detach() for k, v in model.named_parameters()}


def _func_mlp_shapes(nn, sizes):
    return nn.Sequential(*[nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])


def bench_func(args):
    """engine.func against torch.func: per-sample gradients (vmap of grad), a jacrev and a jacfwd."""
    import numpy

    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((64, 32), dtype=numpy.float32)
    y = rng.integers(0, 10, 64)
    v = rng.standard_normal(1000, dtype=numpy.float32)
    per_sample, jac, jac_fwd = {}, {}, {}
    for name, lib in LIBS:
        if lib is None:
            continue
        model, params = _func_mlp(lib, (32, 128, 10))
        xs, ys = lib.tensor(x, device=DEVICE[0]), lib.tensor(y, device=DEVICE[0])

        def loss(p, xi, yi, lib=lib, model=model):
            out = lib.func.functional_call(model, p, (xi.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

        grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
        per_sample[name] = lambda grads=grads, params=params, xs=xs, ys=ys: grads(params, xs, ys)
        wide, _ = _func_mlp(lib, (1000, 64, 1000))
        vs = lib.tensor(v, device=DEVICE[0])
        jac[name] = lambda lib=lib, wide=wide, vs=vs: lib.func.jacrev(wide)(vs)
        jac_fwd[name] = lambda lib=lib, wide=wide, vs=vs: lib.func.jacfwd(wide)(vs)
    number = max(1, args.number // 4)
    return [
        (
            "per-sample gradients, vmap(grad) of an MLP 32-128-10 over 64 samples, float32",
            "ms",
            [
                (name, seconds * 1e3)
                for name, seconds in interleaved(per_sample, args.repeats, number).items()
            ],
        ),
        (
            "jacrev of an MLP 1000-64-1000 (a 1000x1000 Jacobian), float32",
            "ms",
            [(name, seconds * 1e3) for name, seconds in interleaved(jac, args.repeats, number).items()],
        ),
        (
            "jacfwd of the same MLP (the same Jacobian, column by column), float32",
            "ms",
            [(name, seconds * 1e3) for name, seconds in interleaved(jac_fwd, args.repeats, number).items()],
        ),
    ]


WORKLOADS = {
    "chain": bench_chain,
    "anomaly": bench_anomaly,
    "gradcheck": bench_gradcheck,
    "mlp": bench_mlp,
    "cnn": bench_cnn,
    "transformer": bench_transformer,
    "func": bench_func,
    "diff": bench_diff,
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("only", nargs="*", help="run workloads whose name contains one of these")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--number", type=int, default=20)
    parser.add_argument(
        "--lib",
        choices=("both", "engine", "torch"),
        default="both",
        help="time one library alone (in its own process, no other library's threads around)",
    )
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="where both libraries run (cuda: engine on CuPy, torch on CUDA, the same GPU)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS/OpenMP threads for both libraries (default 1; 0: the libraries' defaults)",
    )
    args = parser.parse_args(argv)
    if torch is not None and args.threads > 0:
        torch.set_num_threads(args.threads)
    DEVICE[0] = args.device
    LIBS[:] = [(name, lib) for name, lib in (("engine", engine), ("torch", torch)) if lib is not None]
    if args.lib != "both":
        LIBS[:] = [(name, lib) for name, lib in LIBS if name == args.lib]
    torch_note = torch.__version__ if torch else "not installed"
    if args.device != "cpu":
        try:
            cupy = engine.backend.cuda_module()
        except engine.backend.CudaUnavailable as exc:
            print(f"bench: --device {args.device} is unavailable: {exc}", file=sys.stderr)
            return 2
        if torch is not None and not torch.cuda.is_available():
            LIBS[:] = [(name, lib) for name, lib in LIBS if lib is not torch]
            torch_note += " (no CUDA: engine timed alone)"
        torch_note += f"; device {args.device}, CuPy {cupy.__version__}"
    threads = "library defaults" if args.threads == 0 else args.threads
    print(f"engine {engine.__version__}; torch {torch_note}; threads {threads}")
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
