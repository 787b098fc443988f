"""The engine on each device present: "cpu" always, "cuda" where CuPy and a GPU are (else skipped).

Values on CUDA are compared with the CPU's within floating-point tolerance (cuBLAS and
CuPy's kernels round differently from numpy). tests/test_device_dispatch.py runs the same
seams without a GPU, on a numpy-backed stand-in.
"""

from __future__ import annotations

import numpy
import pytest

import engine
from engine.autograd.gradcheck import check_gradients

F = engine.nn.functional


def values(t) -> numpy.ndarray:
    return t.detach().cpu().numpy()


def test_tensors_are_made_on_the_device(device):
    for t in (
        engine.tensor([1.0, 2.0], device=device),
        engine.zeros(2, 3, device=device),
        engine.randn(4, device=device),
        engine.randint(0, 3, (5,), device=device),
        engine.randperm(5, device=device),
        engine.ones(2, device=device).new_full((2,), 3.0),
    ):
        assert t.device.type == device
    x = engine.tensor([1.0, 2.0], device=device, requires_grad=True)
    suffix = ", device='cuda:0'" if device == "cuda" else ""
    assert repr(x) == f"tensor([1., 2.]{suffix}, requires_grad=True)"


def test_numpy_needs_the_host(device, engine_numpy):
    x = engine.ones(2, device=device)
    if device == "cpu":
        assert x.numpy() is x._data
        return
    with pytest.raises(
        TypeError, match=r"can't convert cuda:0 device type tensor to numpy\. Use Tensor\.cpu\(\)"
    ):
        x.numpy()
    numpy.testing.assert_array_equal(x.cpu().numpy(), [1.0, 1.0])


def test_mixing_with_the_cpu(device):
    a = engine.ones(2, device=device)
    b = engine.ones(2, device="cpu")
    if device == "cpu":
        assert values(a + b).tolist() == [2.0, 2.0]
        return
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a + b


def _graph(x, w, idx, target):
    y = F.conv2d(x, w, padding=1).relu()
    y = F.max_pool2d(y, 2).flatten(1)
    y = y[:, idx] * 2 + y[:, :4].softmax(1)
    return F.cross_entropy(y, target, label_smoothing=0.1)


def test_ops_and_gradients_match_the_cpu(device):
    rng = numpy.random.default_rng(0)
    xs = rng.standard_normal((3, 2, 6, 6))
    ws = rng.standard_normal((4, 2, 3, 3))
    idx, target = [0, 3, 3, 1], [1, 0, 3]  # repeated indices: their gradients add up (scatter-add)
    results = {}
    for dev in ("cpu", device):
        x = engine.tensor(xs, device=dev, requires_grad=True)
        w = engine.tensor(ws, device=dev, requires_grad=True)
        loss = _graph(x, w, engine.tensor(idx, device=dev), engine.tensor(target, device=dev))
        loss.backward()
        assert loss.device.type == dev and x.grad.device.type == dev
        results[dev] = [values(loss), values(x.grad), values(w.grad)]
    for got, expected in zip(results[device], results["cpu"]):
        numpy.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def test_to_moves_and_is_differentiable(device):
    x = engine.tensor([1.0, 2.0], dtype=engine.float64, device="cpu", requires_grad=True)
    y = x.to(device)
    (y * y).sum().backward()
    assert y.device.type == device and x.grad.device.type == "cpu"
    numpy.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_gradcheck_in_float64_reports_the_device(device):
    x = engine.randn(3, 4, dtype=engine.float64, device=device, requires_grad=True)
    w = engine.randn(4, 2, dtype=engine.float64, device=device, requires_grad=True)
    f = lambda a, b: (a @ b).tanh() * a.sum()  # noqa: E731
    assert engine.autograd.gradcheck(f, (x, w))
    assert engine.autograd.gradgradcheck(f, (x, w), fast_mode=True)
    report = check_gradients(f, (x, w))
    assert report.passed and report.device == str(x.device)


def test_a_training_step_matches_the_cpu(device):
    results = {}
    for dev in ("cpu", device):
        engine.manual_seed(0)
        model = engine.nn.Sequential(engine.nn.Linear(8, 16), engine.nn.ReLU(), engine.nn.Linear(16, 3)).to(
            dev
        )
        opt = engine.optim.Adam(model.parameters(), lr=0.01)
        rng = numpy.random.default_rng(1)
        x = engine.tensor(rng.standard_normal((10, 8)), dtype=engine.float32, device=dev)
        y = engine.tensor(rng.integers(0, 3, 10), device=dev)
        for _ in range(3):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
        results[dev] = [values(p) for p in model.parameters()]
    for got, expected in zip(results[device], results["cpu"]):
        numpy.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
