"""Attach the functional API to Tensor as methods and operators, as torch.Tensor has them.

Kept apart from tensor.py so the Tensor class stays a small, readable record of state.
"""

from __future__ import annotations

import warnings

from .. import backend
from .. import tensor as tensor_module
from ..autograd import forward_grad, grad_mode
from ..autograd.backward import backward as autograd_backward
from ..tensor import Tensor
from . import api, arg_errors, creation
from . import derivatives as D
from . import inplace as I
from .derivatives import TO_COPY
from .forward_mode import propagate
from .legacy_types import LegacyTensorType
from .linalg import functions as linalg
from .namespaces import use_tensor_math
from .nn import functions as _nn  # noqa: F401  (installs its @public methods)
from .op import apply_op
from .pointwise import core as pointwise_core
from .pointwise import functions as pointwise
from .reductions import core as reductions_core
from .reductions import functions as _reductions  # noqa: F401  (installs its @public methods)
from .shaping import core as shaping_core
from .shaping import functions as _shaping  # noqa: F401  (installs its @public methods)
from .tensor_math import TensorMath


def parse_to_args(args, kwargs):
    """`to()`'s arguments, as torch reads them: a dtype, a device, or a tensor giving both."""
    dtype = kwargs.get("dtype")
    device = kwargs.get("device")
    for a in args:
        if isinstance(a, backend.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif a is not None:
            device = a
    return dtype, device


def tensor_init(self, data=None, *, requires_grad: bool = False) -> None:
    """`engine.Tensor(data)` builds a float tensor the way torch.Tensor(list) does."""
    array = creation.as_array([] if data is None else data, backend.get_default_dtype(), None)
    tensor_module.init_state(self, array)
    if requires_grad:
        self.requires_grad_(True)


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    autograd_backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def to(self, *args, **kwargs):
    dtype, device = parse_to_args(args, kwargs)
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else backend.placement(device)
    if dtype is self.dtype and device == self.device and not kwargs.get("copy", False):
        return self
    if not dtype.is_floating_point and self._rg:  # an integer copy has no gradient, so no history
        with grad_mode.no_grad():
            return apply_op(TO_COPY, (self,), (dtype, device, self.dtype, self.device))
    return apply_op(TO_COPY, (self,), (dtype, device, self.dtype, self.device))


def _cast(dt):
    def cast(self):
        return to(self, dt)

    return cast


def cuda(self, device=None):
    return to(
        self,
        backend.device(
            "cuda" if device is None else f"cuda:{int(device)}" if isinstance(device, int) else device
        ),
    )


def cpu(self):
    return to(self, backend.CPU)


def type_as(self, other):
    return to(self, other.dtype)


def contiguous(self):
    return self if self._data.flags.c_contiguous else shaping_core.clone(self)


def _new(maker):
    def new(
        self,
        *size_args,
        size=None,
        dtype=None,
        device=None,
        requires_grad=False,
        layout=None,
        pin_memory=False,
    ):
        if size is None:
            if not size_args:
                raise TypeError(f'new_{maker.__name__}() missing 1 required positional arguments: "size"')
            size = size_args
        else:
            size = (size,)
        return maker(
            *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
        )

    new.__name__ = new.__qualname__ = "new_" + maker.__name__
    return new


def new(self, *args, **kwargs):
    """The legacy constructor: torch's Tensor.new(), in self's dtype and on its device (or `device`).

    No argument: an empty tensor; ints or a Size: a tensor of that size; a sequence or array: its
    values; a Tensor of the same dtype and device: an alias of it.
    """
    if any(k != "device" for k in kwargs) or (len(args) > 1 and any(isinstance(a, Tensor) for a in args)):
        raise arg_errors.new_invalid(args, kwargs)
    device = backend.device(kwargs["device"]) if kwargs.get("device") is not None else self.device
    if len(args) == 1 and isinstance(args[0], Tensor):
        return _new_alias(self, args[0], device)
    if len(args) == 1 and (isinstance(args[0], bool) or not isinstance(args[0], (int, tensor_module.Size))):
        data = args[0]
        if not (isinstance(data, (list, tuple)) or backend.is_array(data)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return creation.tensor(data, dtype=self.dtype, device=device)
    return creation.empty(*(_new_size(args) if args else (0,)), dtype=self.dtype, device=device)


def _new_size(args) -> tuple:
    sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], tensor_module.Size) else args
    for position, n in enumerate(sizes, 1):
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(
                f"new(): argument 'size' failed to unpack the object at pos {position} with error "
                f'"type must be tuple of ints,but got {type(n).__name__}"'
            )
    return sizes


def _new_alias(self, other, device):
    """new(tensor): the same storage, as an alias (torch checks the dtype and device match)."""
    if other.dtype is not self.dtype or other.device != device:
        raise TypeError(
            f"expected {_options(self.dtype, device)} (got {_options(other.dtype, other.device)})"
        )
    return shaping_core.alias(other)


def _options(dtype, device) -> str:
    """How c10 prints TensorOptions in messages."""
    return (
        f"TensorOptions(dtype={dtype.cpp_name}, device={device}, layout=Strided, requires_grad=false (default), "
        "pinned_memory=false (default), memory_format=(nullopt))"
    )


def new_full(
    self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False
):
    return creation.full(
        size, fill_value, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


COPY_CONSTRUCT_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than tensor.new_tensor(sourceTensor)."
)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A copy of `data` (never sharing its history), in this tensor's dtype and device unless told otherwise."""
    if isinstance(data, Tensor):
        warnings.warn(COPY_CONSTRUCT_WARNING, UserWarning, stacklevel=2)
    return creation.copy_of(data, dtype or self.dtype, device or self.device, requires_grad)


_TYPE_NAMES = {d.tensor_type: d for d in backend.DTYPES}


def tensor_type(self, dtype=None, non_blocking=False, **kwargs):
    """`x.type()`: "engine.FloatTensor" (engine.cuda.* on a GPU); `x.type(dtype)` / `x.type("engine.DoubleTensor")`: `to`."""
    if dtype is None:
        return backend.tensor_type_name(self._data)
    if isinstance(dtype, LegacyTensorType):  # x.type(engine.LongTensor)
        return to(self, backend.CPU, dtype.dtype)
    if isinstance(dtype, str):
        prefix, _, name = dtype.rpartition(".")
        target = _TYPE_NAMES.get(name)
        if target is None or prefix not in ("engine", "torch", "engine.cuda", "torch.cuda"):
            raise ValueError(f"invalid type: '{dtype}'")
        if prefix.endswith("cuda"):
            return to(self, "cuda" if self.device.type == "cpu" else self.device, target)
        return to(self, backend.CPU, target)
    return to(self, dtype)


def sum_to_size(self, *size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return TensorMath.sum_to(self, tuple(size))


def _max_min(name):
    def method(self, dim=None, keepdim=False, *, other=None, axis=None):
        if axis is not None:  # numpy's name for dim; torch refuses both
            if dim is not None:
                raise TypeError(f"{name}() got an unexpected keyword argument 'axis'")
            dim = axis
        return reductions_core.max_min(name, self, dim, keepdim, other, method=True)

    method.__name__ = method.__qualname__ = name
    return method


def _pairwise_extreme(name):
    def method(self, other):
        return reductions_core.pairwise_extreme(name, self, other, method=True)

    method.__name__ = method.__qualname__ = name
    return method


def _clamp(name):
    def method(self, min=None, max=None):
        return pointwise_core._clamp(name, self, min, max, method=True)

    method.__name__ = method.__qualname__ = name
    return method


def _clamp_(name):
    def method(self, min=None, max=None):
        if pointwise_core.clamp_bounds_are_tensors(name, min, max, True):
            return I.apply_inplace(self, D.CLAMP_TENSOR, (min, max))
        return I.clamp_(self, min, max)

    method.__name__ = method.__qualname__ = name
    return method


def _reflected(fn):
    return lambda self, other: fn(other, self)


def _inplace_op(fn):
    def op(self, other):
        fn(self, other)
        return self

    return op


def _in_place(op):
    def method(self):
        return I.apply_inplace(self, op)

    return method


# What api.public does not say: operators, methods whose arguments differ from the function's,
# conversions and construction.
METHODS = {
    "__init__": tensor_init,
    "backward": backward,
    "__add__": pointwise_core.add,
    "__radd__": pointwise_core.add,
    "__sub__": pointwise_core.sub,
    "__rsub__": pointwise_core.rsub,
    "__mul__": pointwise_core.mul,
    "__rmul__": pointwise_core.mul,
    "__truediv__": pointwise_core.div,
    "__rtruediv__": lambda self, other: pointwise_core.mul(pointwise_core.reciprocal(self), other),
    "__pow__": pointwise_core.pow,
    "__rpow__": _reflected(pointwise_core.pow),
    "__ipow__": I.pow_,
    "__matmul__": linalg.matmul,
    "__rmatmul__": _reflected(linalg.matmul),
    "__neg__": pointwise_core.neg,
    "__abs__": pointwise_core.abs,
    "__pos__": lambda self: self,
    "__floordiv__": pointwise.floor_divide,
    "__rfloordiv__": _reflected(pointwise.floor_divide),
    "__ifloordiv__": pointwise.floor_divide_,
    "__mod__": pointwise.remainder,
    "__rmod__": _reflected(pointwise.remainder),
    "__imod__": pointwise.remainder_,
    "__eq__": pointwise_core.eq,
    "__ne__": pointwise_core.ne,
    "__lt__": pointwise_core.lt,
    "__le__": pointwise_core.le,
    "__gt__": pointwise_core.gt,
    "__ge__": pointwise_core.ge,
    "__and__": pointwise.bitwise_and,
    "__rand__": _reflected(pointwise.bitwise_and),
    "__iand__": pointwise.bitwise_and_,
    "__or__": pointwise.bitwise_or,
    "__ror__": _reflected(pointwise.bitwise_or),
    "__ior__": pointwise.bitwise_or_,
    "__xor__": pointwise.bitwise_xor,
    "__rxor__": _reflected(pointwise.bitwise_xor),
    "__ixor__": pointwise.bitwise_xor_,
    "__lshift__": pointwise.bitwise_left_shift,
    "__rlshift__": _reflected(pointwise.bitwise_left_shift),
    "__ilshift__": pointwise.bitwise_left_shift_,
    "__rshift__": pointwise.bitwise_right_shift,
    "__rrshift__": _reflected(pointwise.bitwise_right_shift),
    "__irshift__": pointwise.bitwise_right_shift_,
    "__invert__": pointwise.invert,
    "clamp": _clamp("clamp"),
    "clip": _clamp("clip"),
    "maximum": _pairwise_extreme("maximum"),
    "minimum": _pairwise_extreme("minimum"),
    "max": _max_min("max"),
    "min": _max_min("min"),
    "__getitem__": shaping_core.getitem,
    "__setitem__": I.setitem,
    "T": property(
        lambda self: (
            shaping_core.t(self)
            if self.dim() <= 2
            else shaping_core.permute(self, tuple(reversed(range(self.dim()))))
        )
    ),
    "mT": property(lambda self: shaping_core.transpose(self, -2, -1)),
    "sum_to_size": sum_to_size,
    "contiguous": contiguous,
    "clamp_": _clamp_("clamp_"),
    "clip_": _clamp_("clip_"),
    "__iadd__": _inplace_op(I.add_),
    "__isub__": _inplace_op(I.sub_),
    "__imul__": _inplace_op(I.mul_),
    "__itruediv__": pointwise.div_,
    "to": to,
    "cuda": cuda,
    "cpu": cpu,
    "type_as": type_as,
    "float": _cast(backend.float32),
    "double": _cast(backend.float64),
    "half": _cast(backend.float16),
    "bfloat16": _cast(backend.bfloat16),
    "short": _cast(backend.int16),
    "char": _cast(backend.int8),
    "byte": _cast(backend.uint8),
    "long": _cast(backend.int64),
    "int": _cast(backend.int32),
    "bool": _cast(backend.bool_),
    "new_zeros": _new(creation.zeros),
    "new_ones": _new(creation.ones),
    "new_empty": _new(creation.empty),
    "new": new,
    "new_full": new_full,
    "new_tensor": new_tensor,
    "type": tensor_type,
}

for _name, _fn in api.METHODS.items():
    setattr(Tensor, _name, _fn)
for _name, _op in api.IN_PLACE.items():
    setattr(Tensor, _name, _in_place(_op))
for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)

# The executor, below the ops, runs formulas under create_graph through TensorMath, which calls the
# ops: this is where it is handed the namespace, once, as engine is imported.
use_tensor_math(TensorMath())
forward_grad.use_rule(propagate)
