"""torch, when a user's file uses it: never imported by gradcli itself, only noticed.

Importing torch costs a second or more, so gradcli never imports it on its own: it watches for
the user's code importing it (`after_torch_import`, a `sys.meta_path` finder that runs callbacks
once torch's module has executed) and asks `sys.modules` whether a value is a torch tensor.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .library import Library, PerLibrary

TORCH_MISSING = "this file imports torch, which is not installed: pip install 'gradcli[torch]'"


def is_missing_torch(exc: BaseException) -> bool:
    """Whether `exc` is the ImportError of a file importing torch where it is not installed."""
    name = getattr(exc, "name", None) or ""
    return isinstance(exc, ModuleNotFoundError) and (name == "torch" or name.startswith("torch."))


class Torch(Library):
    name = module = "torch"
    inputs_hint = "e.g. torch.randn(3, dtype=torch.float64, requires_grad=True)"

    def pick(self, pieces: PerLibrary[Any]) -> Any:
        return pieces.torch()

    def loaded(self) -> bool:
        return sys.modules.get("torch") is not None

    def is_tensor(self, value: Any) -> bool:
        torch = sys.modules.get("torch")
        return torch is not None and issubclass(type(value), torch.Tensor)

    def is_uninitialized(self, value: Any) -> bool:
        torch = sys.modules.get("torch")
        mixin = getattr(
            getattr(getattr(torch, "nn", None), "parameter", None), "UninitializedTensorMixin", None
        )
        return mixin is not None and isinstance(value, mixin)

    def seeded(self, seed: int) -> Any:
        return after_torch_import(lambda torch: torch.manual_seed(seed))

    def seed(self, seed: int) -> None:
        if self.loaded():
            sys.modules["torch"].manual_seed(seed)

    @contextmanager
    def on_device(self, device: str, used: bool) -> Iterator[None]:
        if used and device != "cpu":
            _check_device(device)
        try:
            if device == "cpu":
                yield
            else:
                with after_torch_import(lambda torch: torch.set_default_device(device)):
                    yield
        finally:
            if self.loaded() and device != "cpu":
                sys.modules["torch"].set_default_device(None)

    def random_state(self) -> Callable[[], None] | None:
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        cpu = torch.random.get_rng_state()
        cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None

        def restore() -> None:
            torch.random.set_rng_state(cpu)
            if cuda is not None:
                torch.cuda.set_rng_state_all(cuda)

        return restore

    @contextmanager
    def saved_state(self) -> Iterator[Callable[[], None]]:
        saved: list[tuple] = []

        def restore() -> None:
            torch = sys.modules.get("torch")
            if torch is not None and saved:
                _set_torch_state(torch, saved[0])

        with after_torch_import(lambda torch: saved.append(_torch_state(torch))):
            yield restore

    def enable_grad(self) -> Any:
        return sys.modules["torch"].enable_grad()  # a torch case: the user's file imported it

    def gradcheck_tensors(self) -> Any:
        from .torch_tensors import TorchTensors  # imports torch: only for a torch case

        return TorchTensors()


TORCH = Torch()


def _check_device(device: str) -> None:
    from engine.backend import CudaUnavailable

    try:
        import torch
    except ImportError:
        return  # the file's own import will say that torch is not installed
    if not torch.cuda.is_available():
        raise CudaUnavailable(
            f"torch {torch.__version__} finds no CUDA device (torch.cuda.is_available() is False)"
        )


def _torch_state(torch: Any) -> tuple:
    anomaly = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
    return torch.is_grad_enabled(), anomaly, torch.get_default_dtype(), _torch_device(torch)


def _torch_device(torch: Any) -> Any:
    """torch's default device; None when it cannot be read (torch makes a tensor on it to
    resolve "cuda" to "cuda:0", which fails where CUDA is not available)."""
    try:
        return torch.get_default_device()
    except Exception:
        return None


def _set_torch_state(torch: Any, saved: tuple) -> None:
    grad, (detect, check_nan), dtype, device = saved
    torch.set_grad_enabled(grad)
    torch.set_anomaly_enabled(detect, check_nan)
    torch.set_default_dtype(dtype)
    if device is not None and _torch_device(torch) != device:
        torch.set_default_device(None if device.type == "cpu" else device)


@contextmanager
def after_torch_import(callback: Callable[[Any], None]) -> Iterator[None]:
    """For the block: call `callback(torch)` as soon as torch is imported (at once if it is).

    Only a finder is added to `sys.meta_path`; torch's own import machinery is untouched.
    """
    if sys.modules.get("torch") is not None:
        callback(sys.modules["torch"])
        yield
        return
    watcher = _TorchWatcher(callback)
    sys.meta_path.insert(0, watcher)
    try:
        yield
    finally:
        try:
            sys.meta_path.remove(watcher)
        except ValueError:
            pass


class _TorchWatcher:
    """Finds torch as the other finders would, with a loader that calls back after executing it.

    The finder and loader protocols by duck typing: importlib.abc costs ~4 ms of imports."""

    def __init__(self, callback: Callable[[Any], None]):
        self.callback = callback
        self.finding = False

    def find_spec(self, name, path=None, target=None):  # noqa: ANN001 - the finder protocol
        if name != "torch" or self.finding:
            return None
        self.finding = True
        try:
            spec = importlib.util.find_spec(name)  # the other finders, other watchers included
        finally:
            self.finding = False
        if spec is None or spec.loader is None:
            return None
        spec.loader = _CallingBackLoader(spec.loader, self.callback)
        return spec


class _CallingBackLoader:
    def __init__(self, loader: Any, callback: Callable[[Any], None]):
        self.loader = loader
        self.callback = callback

    def create_module(self, spec):  # noqa: ANN001
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:  # noqa: ANN001
        spec = module.__spec__
        if spec.submodule_search_locations is None:  # a module file, not the torch package
            raise ImportError(
                f"import torch found {spec.origin}, not PyTorch: the local torch.py shadows the torch "
                "package (rename it)",
                name="torch",
                path=spec.origin,
            )
        self.loader.exec_module(module)
        self.callback(module)

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, ...
        return getattr(self.loader, name)
