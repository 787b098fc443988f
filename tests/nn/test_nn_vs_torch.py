"""engine.nn against PyTorch itself beyond the registry (tests/ops/nn.py has each function's graph node
names, values and gradients): double backward through a network, error messages, optimizer steps,
max_pool2d's ties.

Skipped where torch is not installed (CI); run by hand with a PyTorch 2.13 environment that
has this project installed, e.g. `/tmp/tv/bin/python -m pytest tests/test_nn_vs_torch.py`.
"""

import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import engine  # noqa: E402

pytestmark = pytest.mark.torch_parity

LIBS = {"engine": engine, "torch": torch}


RNG = np.random.RandomState(0)
ARRAYS = {
    "x2": RNG.standard_normal((4, 3)),
    "x1": RNG.standard_normal(3),
    "x3": RNG.standard_normal((2, 4, 3)),
    "w": RNG.standard_normal((5, 3)),
    "b": RNG.standard_normal(5),
    "img": RNG.standard_normal((2, 3, 6, 6)),
    "cw": RNG.standard_normal((4, 3, 3, 3)),
    "cb": RNG.standard_normal(4),
    "seq": RNG.standard_normal((2, 3, 7)),
    "c1w": RNG.standard_normal((4, 3, 3)),
    "emb": RNG.standard_normal((10, 3)),
    "c3": RNG.standard_normal(3),
    "probs": RNG.dirichlet(np.ones(3), 4),
    "t43": RNG.uniform(0, 1, (4, 3)),
}
CONSTANTS = {
    "tgt": np.array([0, 2, 1, 1]),
    "idx": np.array([[1, 2], [3, 9]]),
    "weight3": np.array([0.2, 1.0, 3.0]),
}


def make(lib, dtype="float64"):
    ns = {}
    for key, a in ARRAYS.items():
        ns[key] = lib.tensor(a.astype(dtype), requires_grad=True)
    for key, a in CONSTANTS.items():
        ns[key] = lib.tensor(a if a.dtype.kind == "i" else a.astype(dtype))
    return ns


def test_double_backward_graph_values_match_torch():
    """Hessian-vector products through conv, batch norm and the losses agree with torch's."""
    results = {}
    for label, lib in LIBS.items():
        n = make(lib)
        F = lib.nn.functional
        h = F.conv2d(n["img"], n["cw"], n["cb"], padding=1)
        h = F.batch_norm(h, None, None, None, None, training=True)
        h = F.max_pool2d(F.gelu(h), 2)
        logits = F.linear(h.flatten(1)[:, :3], n["w"], n["b"])
        loss = F.cross_entropy(logits, lib.tensor([0, 4]), label_smoothing=0.1)
        grads = lib.autograd.grad(loss, [n["cw"], n["w"]], create_graph=True)
        total = sum((g * g).sum() for g in grads)
        results[label] = [g.detach().numpy() for g in lib.autograd.grad(total, [n["cw"], n["w"], n["img"]])]
    for e, t in zip(results["engine"], results["torch"]):
        np.testing.assert_allclose(e, t, rtol=1e-8, atol=1e-10)


def test_seed_note_example_matches_torch_names():
    for lib in LIBS.values():
        x, y = lib.ones(5), lib.zeros(3)
        w = lib.randn(5, 3, requires_grad=True)
        b = lib.randn(3, requires_grad=True)
        loss = lib.nn.functional.binary_cross_entropy_with_logits(lib.matmul(x, w) + b, y)
        assert type(loss.grad_fn).__name__ == "BinaryCrossEntropyWithLogitsBackward0"


ERROR_CASES = {
    "nll_out_of_bounds": lambda t, F: F.nll_loss(t.rand(4, 3), t.tensor([0, 5, 1, 1])),
    "nll_batch": lambda t, F: F.nll_loss(t.rand(4, 3), t.tensor([0, 1, 1])),
    "nll_float_target": lambda t, F: F.nll_loss(t.rand(4, 3), t.tensor([0.0, 1, 1, 1])),
    "nll_weight_size": lambda t, F: F.nll_loss(t.rand(4, 3), t.tensor([0, 1, 1, 1]), weight=t.rand(2)),
    "nll_multi_target": lambda t, F: F.nll_loss(t.rand(4, 3), t.zeros(4, 2, dtype=t.int64)),
    "nll_spatial_target": lambda t, F: F.nll_loss(t.rand(4, 3, 2, 2), t.zeros(4, 2, dtype=t.int64)),
    "ce_probs_long": lambda t, F: F.cross_entropy(t.rand(4, 3), t.zeros(4, 3, dtype=t.int64)),
    "ce_reduction": lambda t, F: F.cross_entropy(t.rand(4, 3), t.tensor([0, 1, 1, 1]), reduction="foo"),
    "bce_range": lambda t, F: F.binary_cross_entropy(t.tensor([1.5]), t.tensor([1.0])),
    "bce_size": lambda t, F: F.binary_cross_entropy(t.rand(3, 1), t.rand(3)),
    "bce_logits_size": lambda t, F: F.binary_cross_entropy_with_logits(t.rand(3, 1), t.rand(3)),
    "linear_shapes": lambda t, F: F.linear(t.rand(3, 4), t.rand(5, 3)),
    "linear_dtypes": lambda t, F: F.linear(t.rand(3, 4), t.rand(5, 4).double()),
    "conv_channels": lambda t, F: F.conv2d(t.rand(2, 4, 5, 5), t.rand(3, 3, 3, 3)),
    "conv_kernel_size": lambda t, F: F.conv2d(t.rand(2, 3, 2, 2), t.rand(3, 3, 3, 3)),
    "conv_dims": lambda t, F: F.conv2d(t.rand(3, 5, 5, 5, 5), t.rand(3, 3, 3, 3)),
    "conv_same_strided": lambda t, F: F.conv2d(
        t.rand(1, 2, 5, 5), t.rand(2, 2, 3, 3), stride=2, padding="same"
    ),
    "max_pool_pad": lambda t, F: F.max_pool2d(t.rand(1, 1, 4, 4), 3, padding=2),
    "max_pool_small": lambda t, F: F.max_pool2d(t.rand(1, 1, 2, 2), 3),
    "batch_norm_single": lambda t, F: F.batch_norm(t.rand(1, 3), None, None, training=True),
    "batch_norm_running": lambda t, F: F.batch_norm(t.rand(2, 4), t.zeros(3), t.ones(3)),
    "embedding_range": lambda t, F: F.embedding(t.tensor([10]), t.rand(5, 3)),
    "embedding_dtype": lambda t, F: F.embedding(t.tensor([1.0]), t.rand(5, 3)),
    "layer_norm_shape": lambda t, F: F.layer_norm(t.rand(2, 3), (4,)),
    "dropout_p": lambda t, F: F.dropout(t.rand(2), 1.5),
    "pad_odd": lambda t, F: F.pad(t.rand(2, 3), (1,)),
    "pad_reflect_size": lambda t, F: F.pad(t.rand(2, 3, 4), (1, 1, 4, 4), mode="reflect"),
    "pad_reflect_dims": lambda t, F: F.pad(t.rand(3), (1, 1), mode="reflect"),
    "pad_mode": lambda t, F: F.pad(t.rand(2, 3), (1, 1), mode="foo"),
    "gelu_approximate": lambda t, F: F.gelu(t.rand(3), approximate="foo"),
    "smooth_l1_beta": lambda t, F: F.smooth_l1_loss(t.rand(3), t.rand(3), beta=-1.0),
    "bce_logits_weight_grad": lambda t, F: F.binary_cross_entropy_with_logits(
        t.rand(3), t.rand(3), weight=t.rand(3, requires_grad=True)
    ),
}


def on_engine_device(message: str) -> str:
    """torch's message (run on the CPU) as it reads for tensors on the engine's default device: a GPU's
    tensor types are `engine.cuda.FloatTensor` (an ENGINE_TEST_DEVICE session)."""
    if engine.get_default_device().type == "cpu":
        return message
    return re.sub(r"\bengine\.(?=\w+Tensor\b)", "engine.cuda.", message)


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_match_torch(name):
    caught = {}
    for label, lib in LIBS.items():
        with pytest.raises(Exception) as info:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ERROR_CASES[name](lib, lib.nn.functional)
        caught[label] = info.value
    e, t = caught["engine"], caught["torch"]
    assert type(e) is type(t)
    assert str(e) == on_engine_device(str(t).replace("torch.", "engine."))


def test_optimizer_steps_close_to_torch_in_float32():
    """Same model, same data, 20 steps each of SGD (Nesterov, weight decay) and AdamW (amsgrad)."""
    params = {}
    for label, lib in LIBS.items():
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))
        for p, init in zip(model.parameters(), [np.linspace(-0.5, 0.5, 48).reshape(8, 6), np.full(8, 0.1),
                                                np.linspace(0.4, -0.4, 24).reshape(3, 8), np.zeros(3)]):  # fmt: skip
            with lib.no_grad():
                p.copy_(lib.tensor(init.astype("float32")))
        x = lib.tensor(np.linspace(-1, 1, 60).reshape(10, 6).astype("float32"))
        y = lib.tensor(np.arange(10) % 3)
        sgd = lib.optim.SGD(model[0].parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
        adam = lib.optim.AdamW(model[2].parameters(), lr=0.05, amsgrad=True)
        for _ in range(20):
            sgd.zero_grad()
            adam.zero_grad()
            lib.nn.functional.cross_entropy(model(x), y).backward()
            sgd.step()
            adam.step()
        params[label] = [p.detach().numpy().copy() for p in model.parameters()]
    for e, t in zip(params["engine"], params["torch"]):
        np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-5)


def test_max_pool2d_ties_nan_inf_and_padding_match_torch():
    """Which element wins a window (first of ties, last NaN, never padding) decides the gradient."""
    rng = np.random.RandomState(0)
    checked = 0
    for trial in range(150):
        x = rng.randint(-2, 3, (2, 2, 5, 6)).astype(np.float64)
        if trial % 3 == 0:
            x[rng.rand(*x.shape) < 0.1] = np.nan
        if trial % 4 == 0:
            x[rng.rand(*x.shape) < 0.3] = -np.inf
        k, s, d, ceil = rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 3), bool(rng.randint(2))
        p = min(rng.randint(0, 2), (d * (k - 1) + 1) // 2)
        args = (k, s, p, d, ceil, True)
        try:
            t_out, t_idx = torch.nn.functional.max_pool2d(torch.tensor(x), *args)
        except RuntimeError:  # output too small for this geometry
            continue
        e_out, e_idx = engine.nn.functional.max_pool2d(engine.tensor(x), *args)
        np.testing.assert_array_equal(e_out.numpy(), t_out.numpy(), err_msg=str(args))
        np.testing.assert_array_equal(e_idx.numpy(), t_idx.numpy(), err_msg=str(args))
        checked += 1
    assert checked > 100
