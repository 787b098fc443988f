"""engine.nn: PyTorch's torch.nn for the supported subset (`import engine as torch; torch.nn...`)."""

from . import functional, init, utils
from .module import Module
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import Parameter

__all__ = ["Module", "Parameter", "functional", "init", "utils", *_modules_all]
