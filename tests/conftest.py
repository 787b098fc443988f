"""Devices for the suite.

- `device`: tests taking it run once per device, "cpu" and "cuda"; the CUDA case skips with
  the reason where CuPy or a GPU is missing (CI), and runs on a GPU machine.
- ENGINE_TEST_DEVICE=cuda makes CUDA the default device for the whole session, so every test
  that does not name a device runs on the GPU (scripts/gpu_check.sh; exit 2 where CUDA is
  unavailable). For that run `t.numpy()` copies a GPU tensor to the host (the suite reads values
  with it), and the tests in CPU_TEXT_TESTS, which compare the CPU's printed text, are xfail.
  ENGINE_TEST_DEVICE=fake-cuda does the same on the numpy-backed stand-in of tests/fake_cupy.py:
  a CPU-only aid for finding numpy-only paths, not a CUDA run.
- `fake_cuda`: the stand-in installed as `cupy` for one test (tests/test_device_dispatch.py).
- `lib`: tests taking it run once on `engine` and once on `torch` (skipped where torch is not
  installed), with the same assertions: one expectation checked on both.
- `torch_parity` (pyproject's marker): a test comparing the engine with torch carries it and skips
  where torch is not installed; `-m "not torch_parity"` runs the rest without torch. The `torch`
  fixture is torch itself: a test taking it is marked, as is `lib`'s torch run.
- Ctrl-C: a suite started in the background (`cmd &` in a script, nohup) inherits an ignored
  SIGINT, and so would every gradcli it spawns, which no terminal's Ctrl-C ever meets: the
  suite gives its children a terminal's SIGINT back, so the tests that send one test gradcli.
"""

from __future__ import annotations

import importlib
import os
import signal

import fake_cupy
import pytest

import engine
from engine import backend
from engine.ops import namespaces
from engine.tensor import Tensor

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # a child execs with the default again
    signal.signal(signal.SIGINT, signal.default_int_handler)

TEST_DEVICE = os.environ.get("ENGINE_TEST_DEVICE", "cpu")


# Tests whose expected text is the CPU's: reprs without device='cuda:0', "engine.FloatTensor" in
# messages, report.device == "cpu", numpy() sharing memory, a CLI run expecting CuPy to be missing.
# In an ENGINE_TEST_DEVICE session they are expected to fail (xfail, not strict).
CPU_TEXT_TESTS = (
    "test_seeds.py::",
    "test_engine_core.py::test_repr_matches_torch",
    "test_engine_core.py::test_saved_leaf_modified_has_no_producer_clause",
    "test_versions_views.py::test_modified_saved_tensor_raises_with_torch_message",
    "test_versions_views.py::test_numpy_shares_memory",
    "test_anomaly_engine.py::test_modified_saved_tensor_names_the_saving_line_and_the_modifying_line",
    "test_gradcheck.py::test_gradcheck_error_message_format",
    "test_gradcheck.py::test_report_is_plain_data",
    "test_nn_modules.py::test_parameter_is_a_leaf_tensor_requiring_grad",
    "test_nn_modules.py::test_double_float_to_keep_parameter_identity",
    "test_cli_check.py::test_device_cuda_without_cupy_is_a_one_line_usage_error",
    "test_cli_graph.py::test_device_cuda_without_a_gpu",
    "test_cli_anomaly.py::test_a_missing_script_and_an_unavailable_device",
    "test_ops_linalg.py::test_an_output_changed_in_place_before_backward_is_caught",
    "test_ops_linalg.py::test_dtypes_without_a_kernel_are_not_implemented",  # "lu_cpu" not implemented ...
    "test_ops_linalg.py::test_errors_are_torchs[svd-driver]",  # driver= is for CUDA inputs
    "test_nn_more.py::test_float_activation_refuses_integers",  # "silu_cpu" ... in torch's message
    "test_nn_more.py::test_embedding_bag_errors[offsets-start]",
    "test_nn_more.py::test_embedding_bag_errors[float-indices]",
)


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if "torch" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.torch_parity)
    if TEST_DEVICE == "cpu":
        return
    mark = pytest.mark.xfail(
        reason=f"expects the CPU's text; the session runs on {TEST_DEVICE}", strict=False
    )
    for item in items:
        if any(key in item.nodeid for key in CPU_TEXT_TESTS):
            item.add_marker(mark)


def pytest_runtest_setup(item) -> None:
    """A torch_parity test skips where torch is not installed."""
    if item.get_closest_marker("torch_parity") is not None:
        pytest.importorskip("torch")


_NUMPY, _ARRAY = Tensor.numpy, Tensor.__array__


def _host_numpy(self, *, force: bool = False):
    """Session shim: the suite's t.numpy() reads a GPU tensor through an explicit host copy."""
    if self.device.type == "cpu":
        return _NUMPY(self, force=force)
    if self.requires_grad and not force:
        return _NUMPY(self.cpu(), force=False)  # torch's requires-grad error
    return _NUMPY(self, force=True)  # the host copy of torch's force=True, after the engine's dtype check


def _host_array(self, dtype=None, copy=None):
    """Session shim: numpy.asarray(t) of a GPU tensor, through an explicit host copy."""
    array = _NUMPY(self, force=True)
    return array if dtype is None else array.astype(dtype)


def cuda_skip_reason() -> str | None:
    """Why CUDA tests cannot run here, or None when they can."""
    try:
        backend.cuda_module()
    except backend.CudaUnavailable as exc:
        return "CUDA not available: " + (
            "CuPy not installed" if isinstance(exc.__cause__, ImportError) else "no GPU"
        )
    return None


@pytest.fixture(params=["cpu", "cuda"])
def device(request) -> str:
    if request.param == "cuda":
        reason = cuda_skip_reason()
        if reason is not None:
            pytest.skip(reason)
    return request.param


@pytest.fixture
def torch():
    """torch itself (the test is marked torch_parity, and skips where torch is not installed)."""
    return pytest.importorskip("torch")


@pytest.fixture(params=["engine", pytest.param("torch", marks=pytest.mark.torch_parity)])
def lib(request):
    """The module a test runs on: the engine, then torch where it is installed."""
    if request.param == "torch":
        request.getfixturevalue("torch")
    module = importlib.import_module(request.param)
    yield module
    module.set_grad_enabled(True)  # a failed grad-mode test must not leak its mode


def _install_fake(monkeypatch, device_count: int = 1):
    """The stand-in loaded in place of cupy, with every device cache reset (and restored afterwards)."""
    cupy, cupyx = fake_cupy.make(device_count)
    monkeypatch.setattr(backend, "_import_cupy", lambda: (cupy, cupyx))
    monkeypatch.setattr(backend, "_cupy", [])
    monkeypatch.setattr(backend, "_generators", {})
    monkeypatch.setattr(backend, "_default_device", backend._DefaultDevice())
    monkeypatch.setattr(namespaces, "_ARRAY_MATH", {})
    return cupy


@pytest.fixture
def engine_numpy(monkeypatch):
    """Tensor.numpy / __array__ as the engine has them, even in an ENGINE_TEST_DEVICE session."""
    monkeypatch.setattr(Tensor, "numpy", _NUMPY)
    monkeypatch.setattr(Tensor, "__array__", _ARRAY)


@pytest.fixture
def fake_cuda(monkeypatch, engine_numpy):
    """`cuda` backed by tests/fake_cupy.py for this test (numpy underneath: exercises dispatch, not CUDA)."""
    return _install_fake(monkeypatch)


@pytest.fixture(autouse=True, scope="session")
def _session_device():
    """ENGINE_TEST_DEVICE=cuda (or fake-cuda): the default device of every test in the session."""
    if TEST_DEVICE == "cpu":
        yield
        return
    patch = pytest.MonkeyPatch()
    if TEST_DEVICE == "fake-cuda":
        _install_fake(patch)
    # The suite reads values with t.numpy() / numpy.asarray(t); a GPU tensor refuses both (as in torch),
    # so for this run they copy to the host. tests/test_device_dispatch.py checks the refusal itself.
    patch.setattr(Tensor, "numpy", _host_numpy)
    patch.setattr(Tensor, "__array__", _host_array)
    try:
        engine.set_default_device("cuda" if TEST_DEVICE == "fake-cuda" else TEST_DEVICE)
    except backend.CudaUnavailable as exc:
        patch.undo()
        pytest.exit(f"ENGINE_TEST_DEVICE={TEST_DEVICE}: {exc}", returncode=2)
    try:
        yield
    finally:
        engine.set_default_device("cpu")
        patch.undo()
