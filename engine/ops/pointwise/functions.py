"""Elementwise ops: rounding, trigonometric and hyperbolic functions, the erf family, the binary ops of
numbers (pow, div with a rounding mode, floor_divide, fmod, remainder, atan2, copysign, hypot,
logaddexp, xlogy, lerp, float_power), bitwise and logical ops, and the checks (isclose, allclose,
nan_to_num), with their aliases (arcsin, fix, absolute, ...) and in-place forms.

Differentiable ops are rows of the derivative table (rows.py); bitwise, logical and
closeness ops are forward-only, as in PyTorch, computed on the arrays with torch's type promotion.
Argument handling is torch's: which arguments may be Python numbers, its argument-parser errors where
they may not, and the dtypes of integer and bool inputs.
"""

from __future__ import annotations

import inspect

import numpy

from ... import backend
from ...autograd.thread_local import this_thread
from ...tensor import Tensor, wrap
from .. import arg_errors, creation
from .. import derivatives as D
from .. import inplace as I
from ..api import IN_PLACE, METHODS, exported, public
from ..op import apply_op, broadcast_error, check_same_device
from ..operands import as_operand, number_operands, with_number
from ..promotion import result_type
from . import kernels as K
from .core import NOT_GIVEN, POW_SIGNATURES, _unary, abs, check_rounding_mode, pow

# --------------------------------------------------------------------------- helpers


def _require_tensor(name: str, arg: str, position: int, value) -> None:
    if not isinstance(value, Tensor):
        raise arg_errors.not_a_tensor(name, arg, position, value)


def _alias(fn, name: str, row=None):
    """`engine.<name>` and `Tensor.<name>` for `fn` (an op of this module), and `Tensor.<name>_` for a
    unary row."""
    if row is not None:
        IN_PLACE[name + "_"] = row
    return public(fn, name=name)


# --------------------------------------------------------------------------- unary


floor = _unary(D.FLOOR, "floor", module=__name__)
ceil = _unary(D.CEIL, "ceil", module=__name__)
trunc = _unary(D.TRUNC, "trunc", module=__name__)
frac = _unary(D.FRAC, "frac", module=__name__)
sgn = _unary(D.SGN, "sgn", module=__name__)
rsqrt = _unary(D.RSQRT, "rsqrt", module=__name__)
tan = _unary(D.TAN, "tan", module=__name__)
asin = _unary(D.ASIN, "asin", module=__name__)
acos = _unary(D.ACOS, "acos", module=__name__)
atan = _unary(D.ATAN, "atan", module=__name__)
sinh = _unary(D.SINH, "sinh", module=__name__)
cosh = _unary(D.COSH, "cosh", module=__name__)
asinh = _unary(D.ASINH, "asinh", in_place=False, module=__name__)
acosh = _unary(D.ACOSH, "acosh", in_place=False, module=__name__)
atanh = _unary(D.ATANH, "atanh", in_place=False, module=__name__)
expm1 = _unary(D.EXPM1, "expm1", module=__name__)
exp2 = _unary(D.EXP2, "exp2", module=__name__)
log2 = _unary(D.LOG2, "log2", module=__name__)
log10 = _unary(D.LOG10, "log10", module=__name__)
erfc = _unary(D.ERFC, "erfc", module=__name__)
erfinv = _unary(D.ERFINV, "erfinv", module=__name__)

fix = _alias(trunc, "fix", D.TRUNC)
arcsin = _alias(asin, "arcsin", D.ASIN)
arccos = _alias(acos, "arccos", D.ACOS)
arctan = _alias(atan, "arctan", D.ATAN)
arcsinh = _alias(asinh, "arcsinh")
arccosh = _alias(acosh, "arccosh")
arctanh = _alias(atanh, "arctanh")


def _refused_in_place(name: str, row) -> None:
    """`Tensor.<name>`: applied in place, on a tensor that requires grad with a node whose backward
    raises, as PyTorch records asinh_ (AsinhBackward1)."""

    def in_place(self):
        return I.apply_inplace(self, row)

    in_place.__name__ = in_place.__qualname__ = name
    public(in_place, function=False)


for _base, _row in D.INPLACE_NOT_DIFFERENTIABLE.items():
    _refused_in_place(_base + "_", _row)
    _refused_in_place(f"arc{_base[1:]}_", _row)


@public
def absolute(input):
    return abs(input)


IN_PLACE["absolute_"] = D.ABS


@public
def round(input, *, decimals=None):
    """Half to even; `decimals` given (even 0) is torch's round.decimals (RoundBackward1)."""
    _require_tensor("round", "input", 1, input)
    if decimals is None:
        return apply_op(D.ROUND, (input,))
    return apply_op(D.ROUND_DECIMALS, (input,), (decimals,))


@public(function=False)
def round_(self, *, decimals=None):
    if decimals is None:
        return I.apply_inplace(self, D.ROUND)
    return I.apply_inplace(self, D.ROUND_DECIMALS, (), (decimals,))


@public
def square(input):
    _require_tensor("square", "input", 1, input)
    return pow(input, 2)


@public(function=False)
def square_(self):
    return I.pow_(self, 2)


@public
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    _require_tensor("nan_to_num", "input", 1, input)
    return apply_op(D.NAN_TO_NUM, (input,), (nan, posinf, neginf))


@public(function=False)
def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return I.apply_inplace(self, D.NAN_TO_NUM, (), (nan, posinf, neginf))


# ------------------------------------------------------------------- pow and division


@public
def float_power(input, exponent):
    """pow in float64, the inputs cast first (a recorded ToCopy for a float32 tensor), as torch composes it."""
    if isinstance(input, Tensor):
        exponent = exponent.to(backend.float64) if isinstance(exponent, Tensor) else float(exponent)
        return pow(input.to(backend.float64), exponent)
    if isinstance(exponent, Tensor):
        return pow(float(input), exponent.to(backend.float64))
    raise arg_errors.signature_error("float_power", (input, exponent), POW_SIGNATURES)


@public(function=False)
def float_power_(self, exponent):
    if self.dtype is not backend.float64:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {self.dtype.scalar_type} but the operation's "
            "result requires dtype Double"
        )
    return I.pow_(self, exponent.to(backend.float64) if isinstance(exponent, Tensor) else float(exponent))


@public(function=False)
def div_(self, other, *, rounding_mode=NOT_GIVEN):
    if rounding_mode is NOT_GIVEN:
        rounding_mode = None
        if self._data.dtype.kind == "f":
            return I.apply_inplace(self, D.DIV, (as_operand(other),))
    check_rounding_mode(self, other, rounding_mode)
    return I.apply_inplace(self, D.DIV_MODE, (as_operand(other),), (rounding_mode,))


true_divide_ = public(div_, name="true_divide_", function=False)
divide_ = public(div_, name="divide_", function=False)


def _check_castable(self, dt) -> None:
    """torch's in-place rule: the result dtype must not be of a higher kind (float > int > bool)."""
    rank = {"b": 0, "u": 1, "i": 1, "f": 2}
    if rank[dt.kind] > rank[self._data.dtype.kind]:
        raise RuntimeError(
            f"result type {K.scalar_type(dt)} can't be cast to the desired output type {self.dtype.scalar_type}"
        )


def _number_in_place(self, other, tensor_row, number_row, typed: bool = True):
    """`self.<op>_(other)`, other a Tensor or a Python number (`typed` as in `_with_number`)."""
    if isinstance(other, Tensor):
        return I.apply_inplace(self, tensor_row, (other,))
    _check_castable(self, result_type((self, other)))
    return I.apply_inplace(self, number_row, (), (with_number(self, other, typed)[1],))


@public
def floor_divide(input, other):
    """div(rounding_mode="floor"), which PyTorch does not differentiate (a NotImplemented node)."""
    a, other = as_operand(input), as_operand(other)
    if not isinstance(a, Tensor) and not isinstance(other, Tensor):
        a = creation.tensor(a)
    if isinstance(a, Tensor) and not isinstance(other, Tensor):
        a, other = with_number(a, other)
        return apply_op(D.FLOOR_DIVIDE_NUMBER, (a,), (other,))
    return apply_op(D.FLOOR_DIVIDE, number_operands(a, other))


@public(function=False)
def floor_divide_(self, other):
    return _number_in_place(self, other, D.FLOOR_DIVIDE, D.FLOOR_DIVIDE_NUMBER)


@public
def remainder(input, other):
    """Python's `%`: the sign of the divisor. A number % a tensor is not differentiated (NotImplemented)."""
    if isinstance(input, Tensor):
        if isinstance(other, Tensor):
            return apply_op(D.REMAINDER, (input, other))
        input, other = with_number(input, other)
        return apply_op(D.REMAINDER_SCALAR, (input,), (other,))
    if isinstance(other, Tensor):
        other, input = with_number(other, input)
        return apply_op(D.REMAINDER_NUMBER_SELF, (other,), (input,))
    raise arg_errors.signature_error(
        "remainder",
        (input, other),
        (arg_errors.TENSOR_OTHER, arg_errors.NUMBER_SELF, arg_errors.NUMBER_OTHER),
        marked=(arg_errors.NUMBER_SELF,),
    )


@public(function=False)
def remainder_(self, other):
    return _number_in_place(self, other, D.REMAINDER, D.REMAINDER_SCALAR)


def _tensor_or_number(name: str, tensor_row, number_row, typed: bool):
    """`engine.<name>(input, other)` for ops whose `other` may be a Python number (fmod, copysign), and
    `Tensor.<name>_`; `typed`: the op computes in the integer dtype (`_with_number`)."""

    def function(input, other):
        if not isinstance(input, Tensor):
            raise arg_errors.signature_error(
                name, (input, other), (arg_errors.TENSOR_OTHER, arg_errors.NUMBER_OTHER)
            )
        if isinstance(other, Tensor):
            return apply_op(tensor_row, (input, other))
        input, other = with_number(input, other, typed)
        return apply_op(number_row, (input,), (other,))

    def in_place(self, other):
        return _number_in_place(self, other, tensor_row, number_row, typed)

    function.__name__ = function.__qualname__ = name
    in_place.__name__ = in_place.__qualname__ = name + "_"
    public(in_place, function=False)
    return public(function)


fmod = _tensor_or_number("fmod", D.FMOD, D.FMOD_SCALAR, typed=True)
copysign = _tensor_or_number("copysign", D.COPYSIGN, D.COPYSIGN_SCALAR, typed=False)


_XLOGY_SIGNATURES = (
    arg_errors.TENSOR_OTHER,
    "(Number self, Tensor other, *, Tensor out = None)",
    arg_errors.NUMBER_OTHER,
)


@public
def xlogy(input, other):
    """x * log(y), 0 where x is 0."""
    if isinstance(input, Tensor):
        if isinstance(other, Tensor):
            return apply_op(D.XLOGY, (input, other))
        return apply_op(D.XLOGY_NUMBER_OTHER, (input,), (other,))
    if isinstance(other, Tensor):
        return apply_op(D.XLOGY_NUMBER_SELF, (other,), (input,))
    raise arg_errors.signature_error("xlogy", (input, other), _XLOGY_SIGNATURES)


@public(function=False)
def xlogy_(self, other):
    return _number_in_place(self, other, D.XLOGY, D.XLOGY_NUMBER_OTHER, typed=False)


# --------------------------------------------------------------- ops of two tensors


def _tensor_pair(name: str, apply, apply_in_place=None):
    """`engine.<name>(input, other)`, `Tensor.<name>(other)` and `Tensor.<name>_(other)` for an op that
    takes no Python number, with torch's message (and argument position) when it is given one."""

    def function(input, other):
        _require_tensor(name, "input", 1, input)
        _require_tensor(name, "other", 2, other)
        return apply(input, other)

    def method(self, other):
        _require_tensor(name, "other", 1, other)
        return apply(self, other)

    function.__name__ = function.__qualname__ = method.__name__ = method.__qualname__ = name
    public(function, method=False)
    public(method, function=False)
    if apply_in_place is not None:

        def in_place(self, other):
            _require_tensor(name + "_", "other", 1, other)
            return apply_in_place(self, other)

        in_place.__name__ = in_place.__qualname__ = name + "_"
        public(in_place, function=False)
    return function


def _row_pair(name: str, row, in_place: bool = True):
    return _tensor_pair(
        name,
        lambda a, b: apply_op(row, (a, b)),
        (lambda t, other: I.apply_inplace(t, row, (other,))) if in_place else None,
    )


atan2 = _row_pair("atan2", D.ATAN2)
arctan2 = _row_pair("arctan2", D.ATAN2)
hypot = _row_pair("hypot", D.HYPOT)
logaddexp = _row_pair("logaddexp", D.LOGADDEXP, in_place=False)
logaddexp2 = _row_pair("logaddexp2", D.LOGADDEXP2, in_place=False)


_LERP_SIGNATURES = (
    "(Tensor input, Tensor end, Tensor weight, *, Tensor out = None)",
    "(Tensor input, Tensor end, Number weight, *, Tensor out = None)",
)


_LERP_METHOD_SIGNATURES = ("(Tensor end, Tensor weight)", "(Tensor end, Number weight)")


def _lerp_args(name: str, input, end, weight) -> tuple:
    """lerp's row, other inputs and attrs: `end` a tensor of input's dtype (and a weight with dimensions
    too), as in torch."""
    if not isinstance(end, Tensor):  # the method's parser error (the function checks first)
        marked = _LERP_METHOD_SIGNATURES
        raise arg_errors.signature_error(name, (end, weight), _LERP_METHOD_SIGNATURES, marked=marked)
    for arg, value in (("end", end), ("weight", weight)):
        if isinstance(value, Tensor) and value.dtype is not input.dtype and (arg == "end" or value.dim()):
            raise RuntimeError(
                f"expected dtype {input.dtype.cpp_name} for `{arg}` but got dtype {value.dtype.cpp_name}"
            )
    if isinstance(weight, Tensor):
        return D.LERP_TENSOR, (end, weight), ()
    return D.LERP, (end,), (weight,)


@public(method=False)
def lerp(input, end, weight):
    """input + weight * (end - input)."""
    if not isinstance(input, Tensor) or not isinstance(end, Tensor):
        raise arg_errors.signature_error("lerp", (input, end, weight), _LERP_SIGNATURES)
    return lerp_method(input, end, weight)


@public(function=False, name="lerp")
def lerp_method(self, end, weight):
    row, others, attrs = _lerp_args("lerp", self, end, weight)
    return apply_op(row, (self, *others), attrs)


@public(function=False)
def lerp_(self, end, weight):
    row, others, attrs = _lerp_args("lerp_", self, end, weight)
    return I.apply_inplace(self, row, others, attrs)


# ---------------------------------------------------- forward-only: logical and bitwise


def _pair_arrays(a, b) -> None:
    """Two tensors meeting in a forward-only op: one device, shapes that broadcast (torch's errors)."""
    check_same_device(a, b)
    error = broadcast_error((a, b))
    if error is not None:
        raise error


def _logical(name: str):
    def compute(a, b):
        _pair_arrays(a, b)
        return getattr(backend.xp_of(a._data), name)(a._data, b._data)

    return _tensor_pair(
        name, lambda a, b: wrap(compute(a, b)), lambda t, other: I.write_untracked(t, compute(t, other))
    )


logical_and = _logical("logical_and")
logical_or = _logical("logical_or")
logical_xor = _logical("logical_xor")


def _forward_only_unary(name: str):
    """`engine.<name>` and `Tensor.<name>` for xp's function of that name, a mask or a bool (no grad)."""

    def function(input):
        _require_tensor(name, "input", 1, input)
        if this_thread.batched_elementwise is not None:  # inside vmap: each example's
            out = this_thread.batched_elementwise(getattr(numpy, name), (input,))
            if out is not None:
                return out
        return wrap(getattr(backend.xp_of(input._data), name)(input._data))

    function.__name__ = function.__qualname__ = name
    return public(function)


isnan = _forward_only_unary("isnan")
isinf = _forward_only_unary("isinf")
isfinite = _forward_only_unary("isfinite")
logical_not = _forward_only_unary("logical_not")


@public(function=False)
def logical_not_(self):
    return I.write_untracked(self, backend.xp_of(self._data).logical_not(self._data))


def _bitwise(name: str, kernel: str, compute, refused: str = "f"):
    """A bitwise op of integer and bool tensors and Python numbers (promoted as torch does), its
    in-place form, and the array function the operators share."""

    def array(a, b):
        if isinstance(a, Tensor) and isinstance(b, Tensor):
            _pair_arrays(a, b)
        dt = result_type((a, b))
        if dt.kind in refused:
            raise K.not_implemented(kernel, dt)
        data = [
            x._data.astype(dt, copy=False) if isinstance(x, Tensor) else K.typed_number(x, dt) for x in (a, b)
        ]
        tensor = a if isinstance(a, Tensor) else b
        return compute(backend.xp_of(tensor._data), *data)

    def function(input, other):
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            raise arg_errors.signature_error(
                name,
                (input, other),
                (arg_errors.TENSOR_OTHER, arg_errors.NUMBER_SELF, arg_errors.NUMBER_OTHER),
                marked=(arg_errors.NUMBER_SELF,),
            )
        if this_thread.batched_elementwise is not None:  # inside vmap: each example's
            dt = result_type((input, other))
            if dt.kind in refused:
                raise K.not_implemented(kernel, dt)
            operands = [x if isinstance(x, Tensor) else K.typed_number(x, dt) for x in (input, other)]
            out = this_thread.batched_elementwise(lambda a, b: compute(numpy, *_typed((a, b), dt)), operands)
            if out is not None:
                return out
        return wrap(array(input, other))

    def in_place(self, other):
        return I.write_untracked(self, array(self, other))

    function.__name__ = function.__qualname__ = name
    in_place.__name__ = in_place.__qualname__ = name + "_"
    public(in_place, function=False)
    return public(function), in_place


bitwise_and, bitwise_and_ = _bitwise("bitwise_and", "bitwise_and_cpu", lambda xp, a, b: xp.bitwise_and(a, b))
bitwise_or, bitwise_or_ = _bitwise("bitwise_or", "bitwise_or_cpu", lambda xp, a, b: xp.bitwise_or(a, b))
bitwise_xor, bitwise_xor_ = _bitwise("bitwise_xor", "bitwise_xor_cpu", lambda xp, a, b: xp.bitwise_xor(a, b))
bitwise_left_shift, bitwise_left_shift_ = _bitwise(
    "bitwise_left_shift", "lshift_cpu", lambda xp, a, b: K.shift(xp, a, b, left=True), refused="fb"
)
bitwise_right_shift, bitwise_right_shift_ = _bitwise(
    "bitwise_right_shift", "rshift_cpu", lambda xp, a, b: K.shift(xp, a, b, left=False), refused="fb"
)


def _typed(arrays, dt) -> list:
    return [x.astype(dt, copy=False) if hasattr(x, "astype") else x for x in arrays]


def _inverted(input):
    if input._data.dtype.kind == "f":
        raise K.not_implemented("bitwise_not_cpu", input._data.dtype)
    return backend.xp_of(input._data).invert(input._data)


def _inverted_tensor(input) -> Tensor:
    """~input as a new tensor (inside vmap, each example's)."""
    if this_thread.batched_elementwise is not None:
        if input._data.dtype.kind == "f":
            raise K.not_implemented("bitwise_not_cpu", input._data.dtype)
        out = this_thread.batched_elementwise(numpy.invert, (input,))
        if out is not None:
            return out
    return wrap(_inverted(input))


@public
def bitwise_not(input):
    _require_tensor("bitwise_not", "input", 1, input)
    return _inverted_tensor(input)


@public(function=False)
def bitwise_not_(self):
    return I.write_untracked(self, _inverted(self))


def invert(self):
    """`~tensor`: bitwise_not, refused for floats with Python's TypeError, as torch's operator does."""
    if self._data.dtype.kind == "f":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return _inverted_tensor(self)


# ------------------------------------------------------------------------- closeness


def _close(a, b, rtol, atol, equal_nan):
    """isclose on the arrays, as torch computes it (its tolerances in the default dtype for integers)."""
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{a.dtype.scalar_type} did not match {b.dtype.scalar_type}")
    for what, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"{what} must be greater than or equal to zero, but got {value:g}")
    _pair_arrays(a, b)
    x, y = a._data, b._data
    xp = backend.xp_of(x)
    close = x == y
    floating = x.dtype.kind == "f"
    if equal_nan and floating:
        close = close | (xp.isnan(x) & xp.isnan(y))
    if rtol == 0 and atol == 0:
        return close
    if x.dtype.kind == "b":
        x, y = K.floating(x), K.floating(y)
    allowed = atol + xp.abs(rtol * K.floating(y))
    actual = xp.where(x > y, x - y, y - x) if x.dtype.kind == "u" else xp.abs(x - y)  # no unsigned wrap
    if not floating:
        actual = actual.astype(allowed.dtype)
    return close | (xp.isfinite(actual) & (actual <= allowed))


@public(method=False)
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _require_tensor("isclose", "input", 1, input)
    _require_tensor("isclose", "other", 2, other)
    return wrap(_close(input, other, rtol, atol, equal_nan))


@public(function=False, name="isclose")
def isclose_method(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _require_tensor("isclose", "other", 1, other)
    return wrap(_close(self, other, rtol, atol, equal_nan))


@public(method=False)
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    _require_tensor("allclose", "input", 1, input)
    _require_tensor("allclose", "other", 2, other)
    return bool(_close(input, other, rtol, atol, equal_nan).all())


@public(function=False, name="allclose")
def allclose_method(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    _require_tensor("allclose", "other", 1, other)
    return bool(_close(self, other, rtol, atol, equal_nan).all())


# ------------------------------------------------------- in-place forms as functions

IN_PLACE["negative_"] = D.NEG


def _function_form(name: str):
    """`engine.<name>(input, ...)`: torch's function of an in-place form, `torch.floor_(x)`."""
    method = METHODS.get(name)
    if method is None:  # a unary row applied in place (api.IN_PLACE)
        row = IN_PLACE[name]

        def method(self):
            return I.apply_inplace(self, row)

    def function(input, *args, **kwargs):
        if name == "xlogy_" and not isinstance(input, Tensor):  # two overloads: torch's parser error
            signatures = ("(Tensor input, Tensor other)", "(Tensor input, Number other)")
            raise arg_errors.signature_error(name, (input, *args), signatures, marked=signatures)
        _require_tensor(name, "input", 1, input)
        return method(input, *args, **kwargs)

    function.__name__ = function.__qualname__ = name
    signature = inspect.signature(method)  # the method's, its tensor named `input` as torch names it
    first, *rest = signature.parameters.values()
    function.__signature__ = signature.replace(parameters=[first.replace(name="input"), *rest])
    return public(function, method=False)


for _name in (
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ atanh_ ceil_ "
    "cos_ cosh_ erf_ erfc_ exp2_ exp_ expm1_ fix_ floor_ frac_ log10_ log1p_ log2_ log_ nan_to_num_ neg_ "
    "negative_ round_ rsqrt_ sigmoid_ sin_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_"
).split():
    globals()[_name] = _function_form(_name)  # a module attribute, so `from .pointwise import *` has it


__all__ = exported(__name__)  # what `engine` exports from here (api.public)
