"""The engine's device seams, exercised with tests/fake_cupy.py: a numpy-backed stand-in for CuPy.

These tests run without a GPU and do NOT test CUDA: the stand-in computes with numpy, so
equal results show that layers, optimizers and the checker reach their arrays
through the array-module dispatch (`backend.xp_of`, explicit transfers) rather than a
numpy-only path, and that device semantics (errors, `.to()`, reprs, reports) follow
PyTorch's. Every op's forward, first and second derivatives on the stand-in are the registry's
(tests/ops/test_device_parity.py). The same behaviour on a real GPU is covered by
tests/test_devices.py, which skips here.
"""

from __future__ import annotations

import os
import pickle

import fake_cupy
import numpy
import pytest
from paths import TESTS
from typer.testing import CliRunner

import engine
from engine import backend
from engine.autograd.gradcheck import check_gradients
from engine.tensor import Tensor

if os.environ.get("ENGINE_MODULE", "engine") != "engine":
    pytest.skip("engine internals: not run against torch", allow_module_level=True)

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
F = engine.nn.functional
NUMPY_TEXT = (
    "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
    "first."
)
SAME_DEVICE = "Expected all tensors to be on the same device, but found at least two devices, "


def host(t: Tensor) -> numpy.ndarray:
    return backend.to_numpy(t.detach()._data)


def on_fake(t: Tensor) -> bool:
    return t.device == engine.device("cuda:0") and isinstance(t._data, fake_cupy.ndarray)


# ------------------------------------------------------------------------ the stand-in itself


def test_the_stand_in_refuses_what_cupy_refuses(fake_cuda):
    a = fake_cuda.asarray(numpy.ones(3))
    assert a.__class__ is not numpy.ndarray and not isinstance(a, numpy.ndarray)
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array"):
        numpy.asarray(a)
    with pytest.raises(TypeError):
        a + numpy.ones(3)
    with pytest.raises(TypeError):
        numpy.ones(3) * a
    assert isinstance(a.sum(), fake_cupy.ndarray) and a.sum().ndim == 0  # 0-d arrays, not scalars
    assert isinstance(a.get(), numpy.ndarray) and a.device.id == 0


def test_the_stand_in_addresses_memory_as_cupy_does(fake_cuda):
    a = fake_cuda.arange(6.0)
    mem = a.data.mem  # the allocation behind the MemoryPointer
    assert (mem.ptr, mem.size) == (a.data.ptr, 48) and a[2:].data.mem.ptr == mem.ptr
    assert a[2:].data.ptr == (a.data + 16).ptr
    view = fake_cuda.ndarray((2,), a.dtype, memptr=a.data + 8, strides=(16,))
    assert view.base is None and a[1:].base is not None  # CuPy's views on a MemoryPointer have none
    view[0] = 7.0
    assert view.tolist() == [7.0, 3.0] and a.tolist()[1] == 7.0
    assert fake_cuda.lib.stride_tricks.as_strided(a, (2,), (8,)).base is None


def test_the_stand_in_s_broadcast_views_can_be_written_as_cupy_s(fake_cuda):
    a = fake_cuda.zeros(3)
    wide = fake_cuda.broadcast_to(a, (2, 3))
    wide[1, 0] = 5.0
    assert a.tolist() == [5.0, 0.0, 0.0]
    with pytest.raises(TypeError, match="Argument 'array' has incorrect type"):
        fake_cuda.broadcast_to(1.0, (2,))  # arrays only, as in CuPy


# --------------------------------------------------------------------------- creation, moves


def test_creation_on_cuda(fake_cuda):
    made = [
        engine.tensor([1.0, 2.0], device="cuda"),
        engine.zeros(2, 3, device="cuda"),
        engine.ones(2, device="cuda:0"),
        engine.full((2,), 7.0, device=engine.device("cuda")),
        engine.eye(3, device="cuda"),
        engine.arange(5, device="cuda"),
        engine.linspace(0, 1, 4, device="cuda"),
        engine.randn(3, 2, device="cuda"),
        engine.rand(4, device="cuda"),
        engine.randint(0, 5, (6,), device="cuda"),
        engine.randperm(6, device="cuda"),
        engine.zeros_like(engine.ones(2, device="cuda")),
        engine.ones(2, device="cuda").new_zeros(3),
    ]
    assert all(on_fake(t) for t in made)
    assert sorted(host(made[10]).tolist()) == list(range(6))  # CuPy's Generator has no permutation()
    engine.set_default_device("cuda")
    assert on_fake(engine.tensor([1, 2])) and on_fake(engine.randn(2)) and on_fake(engine.Tensor([1.0]))


def test_manual_seed_seeds_the_cuda_generator(fake_cuda):
    engine.manual_seed(3)
    a = host(engine.randn(5, device="cuda"))
    engine.manual_seed(3)
    b = host(engine.randn(5, device="cuda"))
    numpy.testing.assert_array_equal(a, b)


def test_to_cuda_cpu_move_data_and_are_differentiable(fake_cuda):
    x = engine.tensor([1.0, 2.0, 3.0], dtype=engine.float64, requires_grad=True)
    y = x.cuda()
    assert on_fake(y) and y.grad_fn.name() == "ToCopyBackward0"
    z = (y * y).cpu()
    assert z.device == engine.device("cpu") and z.grad_fn.name() == "ToCopyBackward0"
    w = z.to("cuda", engine.float32)
    assert on_fake(w) and w.dtype is engine.float32
    w.sum().backward()
    assert x.grad.device.type == "cpu"
    numpy.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
    assert x.to("cpu") is x and y.to(y.device) is y and y.to(engine.float64) is y


def test_a_graph_crossing_devices_backpropagates_on_each_side(fake_cuda):
    """Each node's backward runs with its own gradients' array module, not the first node's."""
    a = engine.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=engine.float64, device="cuda", requires_grad=True)
    b = engine.tensor([1.5, -0.5], dtype=engine.float64, requires_grad=True)
    out = (a.exp()[[0, 1, 1]].sum(0).cpu() * b).tanh().sum()
    out.backward()
    ac = a.detach().cpu().requires_grad_()
    bc = b.detach().clone().requires_grad_()
    (ac.exp()[[0, 1, 1]].sum(0) * bc).tanh().sum().backward()
    assert on_fake(a.grad) and b.grad.device.type == "cpu"
    numpy.testing.assert_allclose(host(a.grad), ac.grad.numpy())
    numpy.testing.assert_allclose(b.grad.numpy(), bc.grad.numpy())


def test_numpy_of_a_cuda_tensor_raises_torchs_error(fake_cuda):
    x = engine.ones(2, device="cuda", requires_grad=True)
    with pytest.raises(TypeError) as info:
        x.numpy()  # the device is checked before requires_grad, as in torch
    assert str(info.value) == NUMPY_TEXT
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        numpy.asarray(x.detach())
    numpy.testing.assert_array_equal(x.detach().cpu().numpy(), [1.0, 1.0])
    numpy.testing.assert_array_equal(x.numpy(force=True), [1.0, 1.0])


def test_repr_shows_the_device_as_torch_does(fake_cuda):
    x = engine.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    assert repr(x) == "tensor([1., 2.], device='cuda:0', requires_grad=True)"
    assert (
        repr(x.double() * 2)
        == "tensor([2., 4.], device='cuda:0', dtype=engine.float64, grad_fn=<MulBackward0>)"
    )
    assert repr(x.device) == "device(type='cuda', index=0)" and str(x.device) == "cuda:0" and x.is_cuda


def test_pickle_keeps_the_device(fake_cuda):
    x = engine.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    y = pickle.loads(pickle.dumps(x))
    assert on_fake(y) and y.requires_grad
    p = pickle.loads(pickle.dumps(engine.nn.Parameter(x.detach())))
    assert on_fake(p) and isinstance(p, engine.nn.Parameter)


# --------------------------------------------------------------------------- mixing devices


def _mixed_cases():
    c = engine.ones(2, 2, dtype=engine.float64)
    g = engine.ones(2, 2, dtype=engine.float64, device="cuda")
    return [
        lambda: c + g,
        lambda: g * c,
        lambda: c @ g,
        lambda: engine.cat([g, c]),
        lambda: engine.where(g > 0, g, c),
        lambda: engine.where(c > 0, g, g),
        lambda: F.linear(g, c),  # caught where the row is applied
        lambda: g.add_(c),
        lambda: g == c,
        lambda: g.div(c, rounding_mode="floor"),
    ]


@pytest.mark.parametrize("case", range(10))
def test_mixing_devices_raises_torchs_error(fake_cuda, case):
    with pytest.raises(RuntimeError) as info:
        _mixed_cases()[case]()
    assert str(info.value).startswith(SAME_DEVICE)
    assert str(info.value) in (SAME_DEVICE + "cpu and cuda:0!", SAME_DEVICE + "cuda:0 and cpu!")


def test_maximum_and_clamp_bounds_on_another_device_raise_torchs_error(fake_cuda):
    g = engine.zeros(2, device="cuda", requires_grad=True)
    c = engine.zeros(2)
    for call in (
        lambda: engine.maximum(g, c),
        lambda: c.minimum(g),
        lambda: c.max(g),
        lambda: c.clamp(g),
        lambda: engine.clamp(c, c, g),
        lambda: (g * 1).clamp_(None, c),
    ):
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value) in (SAME_DEVICE + "cpu and cuda:0!", SAME_DEVICE + "cuda:0 and cpu!")
    assert on_fake(engine.maximum(g, g)) and on_fake(g.clamp(g, g))


def test_a_grad_on_another_device_is_refused_as_in_torch(fake_cuda, monkeypatch):
    tail = "Please ensure that the gradient and the tensor are on the same device"
    x, c = engine.zeros(2, device="cuda", requires_grad=True), engine.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        x.grad = engine.zeros(2)
    assert (
        str(info.value)
        == f"attempting to assign a gradient with device type 'cpu' to a tensor with device type 'cuda'. {tail}"
    )
    with pytest.raises(RuntimeError) as info:
        c.grad = engine.zeros(2, device="cuda")
    assert (
        str(info.value)
        == f"attempting to assign a gradient with device type 'cuda' to a tensor with device type 'cpu'. {tail}"
    )
    # the stand-in keeps every array on device 0: say that this one lives on cuda:1
    g, device_of = engine.zeros(2, device="cuda"), backend.device_of
    monkeypatch.setattr(
        backend, "device_of", lambda a: engine.device("cuda:1") if a is g._data else device_of(a)
    )
    with pytest.raises(RuntimeError) as info:
        x.grad = g
    assert str(info.value) == (
        f"attempting to assign a gradient located on device with index '1' to a tensor located on device with "
        f"index '0'. {tail}"
    )
    assert x.grad is None
    x.grad = engine.ones(2, device="cuda")
    assert on_fake(x.grad)


def test_copy_and_cpu_indices_cross_devices_as_in_torch(fake_cuda):
    g = engine.zeros(3, dtype=engine.float64, device="cuda")
    g.copy_(engine.tensor([1.0, 2.0, 3.0], dtype=engine.float64))
    assert on_fake(g) and host(g).tolist() == [1.0, 2.0, 3.0]
    picked = g[engine.tensor([2, 0])]  # a CPU index tensor for a CUDA tensor
    assert on_fake(picked) and host(picked).tolist() == [3.0, 1.0]


# ------------------------------------------------- numbers, narrow dtypes and storage on the device


def test_setitem_of_a_number_on_cuda(fake_cuda):
    t = engine.zeros(3, device="cuda")
    t[0] = 5.0  # copy_ of a Python number: CuPy's broadcast_to takes arrays only
    t[1:] = 2
    assert on_fake(t) and host(t).tolist() == [5.0, 2.0, 2.0]


def test_int8_arithmetic_wraps_around_on_cuda(fake_cuda):
    t = engine.ones(2, dtype=engine.int8, device="cuda") + 1000  # 1000 wrapped to a numpy scalar
    assert on_fake(t) and t.dtype == engine.int8 and host(t).tolist() == [-23, -23]


def test_bfloat16_reductions_stay_bfloat16_on_cuda_and_casts_do_not(fake_cuda):
    x = engine.tensor([[1.5, -2.25], [0.5, 1.0]], dtype=engine.bfloat16, device="cuda", requires_grad=True)
    results = {
        "sum": x.sum(),
        "max": x.max(),
        "var": x.var(),
        "index": x[0, 1],
        "0-d product": x.sum() * x.max(),
    }
    assert {name: y.dtype for name, y in results.items()} == dict.fromkeys(results, engine.bfloat16)
    results["sum"].backward()
    assert x.grad.dtype == engine.bfloat16
    s = x.detach().sum()
    assert s.float().dtype == s.to(engine.float32).dtype == engine.float32  # a cast keeps what it asked for
    assert on_fake(s.float()) and s.float().item() == 0.75


def test_as_strided_and_resize_address_the_device_storage(fake_cuda):
    a = engine.arange(4.0, device="cuda")
    with pytest.raises(
        RuntimeError, match="requiring a storage size of 20 are out of bounds for storage of size 16"
    ):
        a.as_strided_((3,), (2,))
    a.as_strided_((2,), (2,), 1)
    assert host(a).tolist() == [1.0, 3.0] and a.storage_offset() == 1
    b = engine.arange(4.0, device="cuda")[1:]
    b.resize_(2)  # within its storage: still a view of its base
    b.fill_(9)
    assert b._base is not None and host(b._base).tolist() == [0.0, 9.0, 9.0, 3.0]


def test_partial_overlap_with_a_view_cupy_made_without_a_base_is_refused(fake_cuda):
    t = engine.arange(8.0, device="cuda")
    u = t.view(8)
    u.as_strided_((1,), (1,), 3)  # CuPy makes this view on a MemoryPointer: no base
    with pytest.raises(
        RuntimeError, match="some elements of the input tensor and the written-to tensor refer"
    ):
        t.add_(u)


# ------------------------------------------------------- layers and optimizers: CPU == stand-in


def test_layers_and_optimizers_train_on_cuda_as_on_cpu(fake_cuda):
    def train(device, optimizer):
        engine.manual_seed(0)  # init on the CPU, then moved: the same weights on both devices
        model = engine.nn.Sequential(
            engine.nn.Conv2d(1, 3, 3, padding=1),
            engine.nn.BatchNorm2d(3),
            engine.nn.ReLU(),
            engine.nn.MaxPool2d(2),
            engine.nn.Flatten(),
            engine.nn.Dropout(0.0),
            engine.nn.Linear(12, 4),
            engine.nn.LayerNorm(4),
        ).to(device)
        opt = optimizer(model.parameters())
        rng = numpy.random.default_rng(1)
        x = engine.tensor(rng.standard_normal((5, 1, 4, 4)), dtype=engine.float32, device=device)
        y = engine.tensor(rng.integers(0, 4, 5), device=device)
        for _ in range(3):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
            loss.backward()
            opt.step()
        return [p for p in model.parameters()] + [b for b in model.buffers()], loss

    for make in (
        lambda ps: engine.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
        lambda ps: engine.optim.Adam(ps, lr=0.01, amsgrad=True),
        lambda ps: engine.optim.AdamW(ps, lr=0.01),
    ):
        cpu, cpu_loss = train("cpu", make)
        gpu, gpu_loss = train("cuda", make)
        assert on_fake(gpu_loss) and all(on_fake(t) for t in gpu)
        for a, b in zip(gpu, cpu):
            numpy.testing.assert_allclose(host(a), host(b), rtol=1e-5, atol=1e-6)


def test_init_and_dropout_draw_from_the_cuda_generator(fake_cuda):
    w = engine.empty(4, 3, device="cuda")
    engine.nn.init.kaiming_uniform_(w)
    engine.nn.init.normal_(w)
    x = engine.ones(50, 20, device="cuda", requires_grad=True)
    y = F.dropout(x, 0.5)
    y.sum().backward()
    assert on_fake(w) and on_fake(y) and on_fake(x.grad)
    assert set(numpy.unique(host(y)).tolist()) == {0.0, 2.0}


def test_argmax_max_and_comparisons_stay_on_the_device(fake_cuda):
    x = engine.tensor([[1.0, 5.0], [7.0, 2.0]], device="cuda")
    assert on_fake(x.argmax()) and x.argmax().item() == 2 and x.argmin().item() == 0
    values, indices = x.max(1)
    assert on_fake(indices) and host(indices).tolist() == [1, 0]
    assert on_fake(engine.tensor(3.0, device="cuda").max(0).indices)
    assert on_fake(x > 2) and on_fake(x.isnan()) and engine.equal(x, x) and x.allclose(x)
    assert host(x.div(2.0, rounding_mode="floor")).tolist() == [[0.0, 2.0], [3.0, 1.0]]


# -------------------------------------------------------------------------------- gradcheck


def test_gradcheck_runs_on_cuda_in_float64_and_says_so(fake_cuda):
    x = engine.randn(3, 4, dtype=engine.float64, device="cuda", requires_grad=True)
    w = engine.randn(4, 2, dtype=engine.float64, device="cuda", requires_grad=True)
    f = lambda a, b: (a @ b).tanh() * a.sum()  # noqa: E731
    assert engine.autograd.gradcheck(f, (x, w))
    assert engine.autograd.gradcheck(f, (x, w), fast_mode=True)
    assert engine.autograd.gradgradcheck(f, (x, w))
    report = check_gradients(f, (x, w), order=2)
    assert report.passed and report.device == "cuda:0" and report.dtype == "float64"
    assert on_fake(x) and host(x).dtype == numpy.float64  # inputs restored, still on the device


def test_a_failing_gradcheck_on_cuda_prints_the_jacobians_on_cuda(fake_cuda):
    class Wrong(engine.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = engine.randn(2, dtype=engine.float64, device="cuda", requires_grad=True)
    with pytest.raises(engine.autograd.GradcheckError) as info:
        engine.autograd.gradcheck(Wrong.apply, (x,))
    assert "device='cuda:0'" in str(info.value)
    report = check_gradients(Wrong.apply, (x,))
    assert not report.passed and report.device == "cuda:0"


def test_float32_inputs_are_upcast_on_their_device(fake_cuda):
    x = engine.randn(3, device="cuda", requires_grad=True)
    report = check_gradients(lambda a: a.sin(), (x,))
    assert report.passed and report.upcast and report.device == "cuda:0"


# ------------------------------------------------------------------ no CuPy, no GPU: one line


def test_missing_cupy_is_a_clear_error(monkeypatch):
    def no_cupy():
        raise ImportError("No module named 'cupy'")

    monkeypatch.setattr(backend, "_import_cupy", no_cupy)
    monkeypatch.setattr(backend, "_cupy", [])
    monkeypatch.setattr(backend, "_default_device", backend._DefaultDevice())
    with pytest.raises(backend.CudaUnavailable) as info:
        engine.set_default_device("cuda")
    text = str(info.value)
    assert (
        text.startswith("CuPy is not installed")
        and "pip install 'gradcli[cuda]'" in text
        and "\n" not in text
    )
    with pytest.raises(backend.CudaUnavailable):
        engine.ones(2, device="cuda")
    assert engine.get_default_device() == engine.device("cpu")


def test_no_gpu_is_a_clear_error(monkeypatch):
    cupy, cupyx = fake_cupy.make(device_count=0)
    monkeypatch.setattr(backend, "_import_cupy", lambda: (cupy, cupyx))
    monkeypatch.setattr(backend, "_cupy", [])
    with pytest.raises(backend.CudaUnavailable, match="CuPy is installed but no CUDA GPU is present"):
        engine.ones(2, device="cuda")


@pytest.mark.parametrize("command", ["check", "graph"])
def test_the_cli_exits_2_with_one_line_when_no_gpu(monkeypatch, command):
    from gradcli.cli.app import app

    cupy, cupyx = fake_cupy.make(device_count=0)
    monkeypatch.setattr(backend, "_import_cupy", lambda: (cupy, cupyx))
    monkeypatch.setattr(backend, "_cupy", [])
    path = str(TESTS / "corpus" / "good.py")
    result = CliRunner().invoke(app, [command, path, "--device", "cuda"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "--device cuda is unavailable" in lines[0] and "no CUDA GPU" in lines[0]


def test_the_cli_checks_on_cuda_and_reports_the_device(fake_cuda):
    from gradcli.cli.app import app

    path = str(TESTS / "corpus" / "good.py")
    result = CliRunner().invoke(app, ["check", path, "--device", "cuda", "--json"])
    assert result.exit_code == 0, result.output
    assert '"device": "cuda:0"' in result.stdout
