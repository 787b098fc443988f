"""Arithmetic, the unary math and comparisons (`engine.add`, `Tensor.exp`, `x < y`, ...):
torch's argument handling (scalars on either side, rounding modes), then one `apply_op` call
on a row. A unary row is one line, `name = _unary(D.ROW, "name")`, which also gives
`Tensor.name_` in place.
"""

from __future__ import annotations

import numpy

from ... import backend
from ...autograd.thread_local import this_thread
from ...tensor import Tensor, wrap
from .. import arg_errors, creation, promotion
from .. import derivatives as D
from ..api import IN_PLACE, exported, public
from ..op import apply_op, broadcast_error, check_same_device
from ..operands import as_operand, broadcast_check, number_operands, with_number
from ..promotion import result_type
from . import kernels as K


def _binary(op, a, b, attrs=()):
    """A two-input op; shapes that don't broadcast are reported by `apply_op` when numpy refuses."""
    return apply_op(op, (a, b if b.__class__ is Tensor else as_operand(b)), attrs)


# -------------------------------------------------------------------------- arithmetic


@public
def add(input, other, *, alpha=1):
    if input.__class__ is Tensor:  # the common case, one call shorter (this is every `a + b`)
        return apply_op(D.ADD, (input, other if other.__class__ is Tensor else as_operand(other)), (alpha,))
    input = as_operand(input)
    if not isinstance(input, Tensor):
        return add(other, input) if alpha == 1 else add(as_operand(other) * alpha, input)
    return _binary(D.ADD, input, other, (alpha,))


@public
def sub(input, other, *, alpha=1):
    if input.__class__ is Tensor:  # the common case, one call shorter (this is every `a - b`)
        return apply_op(D.SUB, (input, other if other.__class__ is Tensor else as_operand(other)), (alpha,))
    input = as_operand(input)
    if not isinstance(input, Tensor):
        return rsub(other, input, alpha=alpha)
    return _binary(D.SUB, input, other, (alpha,))


@public(method=False)
def rsub(input, other, *, alpha=1):
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    return apply_op(D.RSUB, (input,), (other, alpha))


@public
def mul(input, other):
    if input.__class__ is Tensor:  # the common case, one call shorter (this is every `a * b`)
        return apply_op(D.MUL, (input, other if other.__class__ is Tensor else as_operand(other)))
    input = as_operand(input)
    if not isinstance(input, Tensor):
        return mul(other, input)
    return _binary(D.MUL, input, other)


class _NotGiven:
    """div's `rounding_mode` default: torch records DivBackward2 once a mode is passed, even None."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "None"


NOT_GIVEN = _NotGiven()


def check_rounding_mode(input, other, rounding_mode) -> None:
    if rounding_mode is not None and not isinstance(rounding_mode, str):
        given = (arg_errors.type_name(input), arg_errors.type_name(other))
        raise arg_errors.invalid_combination(
            "div",
            given + (f"rounding_mode={arg_errors.type_name(rounding_mode)}",),
            [
                (arg_errors.TENSOR_OTHER, None),
                ("(Tensor input, Tensor other, *, str rounding_mode, Tensor out = None)", None),
                ("(Tensor input, Number other, *, str rounding_mode)", None),
            ],
        )
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
        )


@public
def div(input, other, *, rounding_mode=NOT_GIVEN):
    """True division, or with `rounding_mode` "trunc" / "floor" (zero gradients, as torch's DivBackward2)."""
    if rounding_mode is NOT_GIVEN and input.__class__ is Tensor and input._data.dtype.kind == "f":
        return _binary(D.DIV, input, other)  # the common case, every float a / b
    a, other = as_operand(input), as_operand(other)
    if not isinstance(a, Tensor) and not isinstance(other, Tensor):
        a = creation.tensor(a)  # torch.div(7, 2): a 0-dim tensor
    if rounding_mode is not NOT_GIVEN:
        check_rounding_mode(input, other, rounding_mode)
        operands = number_operands(a, other, typed=rounding_mode is not None)
        return apply_op(D.DIV_MODE, operands, (rounding_mode,))
    out = apply_op(D.DIV, (a, other))
    if result_type((a, other)).kind != "f":
        out._data = out._data.astype(backend.get_default_dtype().np)  # int / int: true division, float32
    return out


true_divide = public(div, name="true_divide")
divide = public(div, name="divide")
multiply = public(mul, name="multiply")
subtract = public(sub, name="subtract")


@public
def neg(input):
    return apply_op(D.NEG, (input,))


negative = public(neg, name="negative")


@public
def reciprocal(input):
    input = as_operand(input)
    if input._data.dtype.kind != "f":  # an integer or bool tensor's reciprocal is in the default dtype
        input = wrap(input._data.astype(backend.get_default_dtype().np))
    return apply_op(D.RECIPROCAL, (input,))


POW_SIGNATURES = (
    "(Tensor input, Tensor exponent, *, Tensor out = None)",
    "(Number self, Tensor exponent, *, Tensor out = None)",
    "(Tensor input, Number exponent, *, Tensor out = None)",
)


@public
def pow(input, exponent):
    if not isinstance(input, Tensor):
        if not isinstance(exponent, Tensor):
            raise arg_errors.signature_error("pow", (input, exponent), POW_SIGNATURES)
        if isinstance(input, bool) and exponent._data.dtype.kind == "b":
            raise K.not_implemented("pow", exponent._data.dtype)
        exponent, input = with_number(exponent, input)
        return apply_op(D.RPOW, (exponent,), (input,))
    if isinstance(exponent, Tensor):
        broadcast_check(input, exponent)
        if input._data.dtype.kind == "b" and exponent._data.dtype.kind == "b":
            raise K.not_implemented("pow", input._data.dtype)
        return apply_op(D.POW_TENSOR, (input, exponent))
    kind = input._data.dtype.kind
    if kind != "f" and isinstance(exponent, int):
        if exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if kind == "b" and isinstance(exponent, bool):  # bool ** bool stays bool in torch
            return wrap(K.power(input._data, exponent).astype(input._data.dtype))
    return apply_op(D.POW_SCALAR, (with_number(input, exponent, typed=False)[0],), (exponent,))


# ---------------------------------------------------------------------------- pointwise


def _unary(op, name: str, in_place: bool = True, module: str = __name__):
    """`engine.<name>`, `Tensor.<name>` and, unless told not to, `Tensor.<name>_` for a unary row
    (exported by `module`'s `__all__`)."""

    def fn(input):
        if input.__class__ is not Tensor and not isinstance(input, Tensor):
            raise arg_errors.not_a_tensor(name, "input", 1, input)
        return apply_op(op, (input,))

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module
    if in_place:
        IN_PLACE[name + "_"] = op
    return public(fn)


exp = _unary(D.EXP, "exp")
log = _unary(D.LOG, "log")
log1p = _unary(D.LOG1P, "log1p")
sqrt = _unary(D.SQRT, "sqrt")
sin = _unary(D.SIN, "sin")
cos = _unary(D.COS, "cos")
tanh = _unary(D.TANH, "tanh")
sigmoid = _unary(D.SIGMOID, "sigmoid")
relu = _unary(D.RELU, "relu")
abs = _unary(D.ABS, "abs")
sign = _unary(D.SIGN, "sign")
erf = _unary(D.ERF, "erf")


def clamp_bounds_are_tensors(name: str, lo, hi, method: bool) -> bool:
    """Tensor bounds (clamp.Tensor, ClampBackward0) or numbers (ClampBackward1); torch's errors for a mix."""
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if not (isinstance(lo, Tensor) or isinstance(hi, Tensor)):
        return False
    if (lo is None or isinstance(lo, Tensor)) and (hi is None or isinstance(hi, Tensor)):
        return True
    raise arg_errors.clamp_mixed_bounds(name, lo, hi, method)


def _clamp(name, a, lo, hi, method=False):
    if clamp_bounds_are_tensors(name, lo, hi, method):
        return apply_op(D.CLAMP_TENSOR, (a, lo, hi))
    return apply_op(D.CLAMP, (a,), (lo, hi))


@public(method=False)
def clamp(input, min=None, max=None):
    return _clamp("clamp", input, min, max)


@public(method=False)
def clip(input, min=None, max=None):
    return _clamp("clip", input, min, max)


# ------------------------------------------------------------------------- comparisons


def _compare(ufunc_name):
    def fn(input, other):
        if this_thread.batched_elementwise is not None:  # inside vmap
            out = this_thread.batched_elementwise(getattr(numpy, ufunc_name), (input, other))
            if out is not None:
                return out
        data = other
        if isinstance(other, Tensor):
            if other._data.__class__ is not input._data.__class__:
                check_same_device(input, other)
            data = other._data
        try:
            return wrap(getattr(backend.xp_of(input._data), ufunc_name)(input._data, data))
        except ValueError:  # numpy refused the shapes: say it in PyTorch's words
            error = broadcast_error((input, other))
            if error is None:
                raise
            raise error from None

    fn.__name__ = ufunc_name
    return fn


eq = public(_compare("equal"), name="eq")
ne = public(_compare("not_equal"), name="ne")
lt = public(_compare("less"), name="lt")
le = public(_compare("less_equal"), name="le")
gt = public(_compare("greater"), name="gt")
ge = public(_compare("greater_equal"), name="ge")


@public
def equal(input, other) -> bool:
    check_same_device(input, other)
    return input.shape == other.shape and bool((input._data == other._data).all())


@public(method=False)
def promote_types(type1, type2):
    """The dtype an elementwise op of these two dtypes computes in, by torch's rules."""
    np_dtype = promotion.promote_types(type1.np, type2.np)
    return backend.dtype_of(numpy.empty(0, np_dtype))


def threshold_backward(g, x, threshold):
    """relu's backward as a differentiable op of (g, x) (ThresholdBackwardBackward0), as PyTorch records it."""
    return apply_op(D.THRESHOLD_BACKWARD, (g, x), (threshold,))


def leaky_relu_backward(g, x, negative_slope):
    """leaky_relu's backward as a differentiable op of (g, x) (LeakyReluBackwardBackward0)."""
    return apply_op(D.LEAKY_RELU_BACKWARD, (g, x), (negative_slope,))


__all__ = exported(__name__)  # what `engine` exports from here (api.public)
