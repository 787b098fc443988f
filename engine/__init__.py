"""engine: an autograd engine whose API mirrors PyTorch's (`import engine as torch`).

This module is the public namespace only: everything here is re-exported.
"""

import numpy as _numpy

from . import autograd, backend, cuda, func, linalg, nn, return_types
from .autograd.anomaly import is_anomaly_check_nan_enabled, is_anomaly_enabled
from .autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .backend import (
    bfloat16,
    device,
    dtype,
    float16,
    float32,
    float64,
    get_default_device,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    set_default_device,
    set_default_dtype,
    uint8,
)
from .backend import (
    bool_ as bool,
)
from .nn.functional.torch_level import *  # torch.cdist, torch.selu, ...: nn ops in the top namespace
from .ops import tensor_methods as _tensor_methods  # noqa: F401  (installs the Tensor methods)
from .ops.creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from .ops.legacy_types import *  # FloatTensor, LongTensor, ...
from .ops.linalg.functions import *  # each family's ops marked @public (ops/api.py)
from .ops.nn.functions import *
from .ops.pointwise.core import *
from .ops.pointwise.functions import *
from .ops.reductions.core import *
from .ops.reductions.functions import *
from .ops.shaping.core import *
from .ops.shaping.functions import *
from .tensor import Size, Tensor, typename
from .typeinfo import finfo, iinfo
from .warn_once import is_warn_always_enabled, set_warn_always

float = float32
double = float64
half = float16
short = int16
long = int64
int = int32
short = int16

backend.quiet_numpy()  # the importing thread; others on their first op (ops/op.py, autograd/backward.py)

__version__ = "0.1.0"


def is_tensor(obj) -> "bool":
    return isinstance(obj, Tensor)


def __getattr__(name: str):
    """`engine.optim`, imported on first use (PEP 562): checking and graphing never need it."""
    if name == "optim":
        import importlib

        return importlib.import_module(".optim", __name__)  # `from . import` would ask __getattr__ again
    raise AttributeError(f"module 'engine' has no attribute {name!r}")
