"""engine.autograd.Variable: the deprecated wrapper, kept as torch keeps it.

Since Variables and Tensors merged, `Variable(t)` is a detached alias of `t` (shared storage
and version counter) that requires grad as asked, and `isinstance(x, Variable)` is
`isinstance(x, Tensor)`. The constructor reads its arguments as torch's C++ one does, with
the same errors.
"""

from __future__ import annotations

import operator
import warnings

from .. import backend
from ..tensor import Tensor, wrap
from .function import BackwardCFunction, Function

_PARAMETERS = ("data", "requires_grad", "volatile", "_grad_fn", "name")
VOLATILE_WARNING = "volatile was removed and now has no effect. Use `with engine.no_grad():` instead."


class VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """`Variable(data=None, requires_grad=False, volatile=False, _grad_fn=None, name=None)`."""

    def __new__(cls, *args, **kwargs) -> Tensor:
        data, requires_grad, volatile, grad_fn, _name = _parse(args, kwargs)
        if volatile:
            warnings.warn(VOLATILE_WARNING, UserWarning, stacklevel=2)
        if volatile and requires_grad:
            raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if grad_fn is not None and not isinstance(grad_fn, (BackwardCFunction, Function)):
            raise TypeError(f"_grad_fn has to be a Function object or None, but got {type(grad_fn).__name__}")
        if data is None:  # legacy serialization and nn.Parameter() make an empty tensor
            var = wrap(backend.xp_for(backend.get_default_device()).zeros(0, backend.get_default_dtype().np))
        elif isinstance(data, Tensor):
            var = data.detach()
        else:
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if grad_fn is not None:
            raise RuntimeError(
                "_grad_fn argument to legacy Variable constructor is no longer supported.  Instead, please "
                "invoke your _grad_fn to produce a variable with it as the _grad_fn."
            )
        if requires_grad and not var.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        var._rg = bool(requires_grad)
        return var


def _parse(args: tuple, kwargs: dict) -> list:
    """The five arguments, by position or name, checked as CPython's `|ObbOz` format checks them."""
    if len(args) > len(_PARAMETERS):
        raise TypeError(
            f"function takes at most {len(_PARAMETERS)} arguments ({len(args) + len(kwargs)} given)"
        )
    values = [None, False, False, None, None]
    values[: len(args)] = args
    for key, value in kwargs.items():
        if key not in _PARAMETERS:
            raise TypeError(f"'{key}' is an invalid keyword argument for this function")
        position = _PARAMETERS.index(key)
        if position < len(args):
            raise TypeError(f"argument for function given by name ('{key}') and position ({position + 1})")
        values[position] = value
    values[1] = _byte(values[1])
    values[2] = _byte(values[2])
    if values[4] is not None and not isinstance(values[4], str):
        raise TypeError(f"argument 5 must be str or None, not {type(values[4]).__name__}")
    return values


def _byte(value) -> int:
    """A `b` (unsigned char) argument: an integer from 0 to 255."""
    number = operator.index(value)
    if number < 0:
        raise OverflowError("unsigned byte integer is less than minimum")
    if number > 255:
        raise OverflowError("unsigned byte integer is greater than maximum")
    return number
