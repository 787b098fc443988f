"""engine.nn: PyTorch's torch.nn for the supported subset (`import engine as torch; torch.nn...`).

The layer classes (`nn.modules`), `nn.init` and `nn.utils` load on first use (PEP 562): a
program that uses only tensors, or `nn.functional`, does not pay for importing them.
"""

import importlib

from . import functional as functional
from .module import Module as Module
from .parameter import Parameter as Parameter

_SUBMODULES = ("init", "modules", "utils")


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    modules = importlib.import_module(f"{__name__}.modules")
    if name == "__all__":
        return ["Module", "Parameter", "functional", "init", "utils", *modules.__all__]
    if name in modules.__all__:
        return getattr(modules, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__")})
