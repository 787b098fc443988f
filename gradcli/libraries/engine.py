"""engine, gradcli's own library: imported by gradcli itself once a command runs a file."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .library import Library, PerLibrary


class Engine(Library):
    name = module = "engine"
    inputs_hint = "e.g. engine.randn(3, dtype=engine.float64, requires_grad=True)"

    def pick(self, pieces: PerLibrary[Any]) -> Any:
        return pieces.engine()

    def loaded(self) -> bool:
        return sys.modules.get("engine") is not None

    def is_tensor(self, value: Any) -> bool:
        engine = sys.modules.get("engine")
        return engine is not None and issubclass(type(value), engine.Tensor)

    @contextmanager
    def seeded(self, seed: int) -> Iterator[None]:
        self.seed(seed)
        yield

    def seed(self, seed: int) -> None:
        import engine

        engine.manual_seed(seed)

    @contextmanager
    def on_device(self, device: str, used: bool) -> Iterator[None]:
        import engine

        previous = engine.get_default_device()
        if used:
            engine.set_default_device(device)
        try:
            yield
        finally:
            engine.set_default_device(previous)

    def random_state(self) -> Callable[[], None] | None:
        from engine import backend

        try:
            saved = backend.rng_snapshot()
        except Exception:  # a generator that cannot be copied (a GPU one): its draws are not replayed
            return None
        return lambda: backend.rng_restore(saved)

    @contextmanager
    def saved_state(self) -> Iterator[Callable[[], None]]:
        saved = _engine_state()
        yield lambda: _set_engine_state(saved)

    def enable_grad(self) -> Any:
        import engine

        return engine.enable_grad()

    def gradcheck_tensors(self) -> Any:
        from engine.autograd.gradcheck.tensors import ENGINE as tensors

        return tensors


ENGINE = Engine()


def _engine_state() -> tuple:
    import engine
    from engine.autograd import anomaly

    return (
        engine.is_grad_enabled(),
        (anomaly.is_anomaly_enabled(), anomaly.is_anomaly_check_nan_enabled()),
        engine.get_default_dtype(),
        engine.get_default_device(),
    )


def _set_engine_state(saved: tuple) -> None:
    import engine
    from engine.autograd import anomaly

    grad, detect, dtype, device = saved
    engine.set_grad_enabled(grad)
    anomaly.set_detect_anomaly(*detect)  # what the user asks: a tool holding the mode keeps it
    engine.set_default_dtype(dtype)
    engine.set_default_device(device)
