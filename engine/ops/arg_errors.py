"""PyTorch's argument-parser errors, word for word, for the calls the engine refuses as torch does.

torch checks a call against each overload's signature and, when none matches, names the
types it got and marks the mismatching ones with `!`. Only the overloads the engine
implements (clamp, max/min, maximum/minimum) are spelled out here.
"""

from __future__ import annotations

from .. import backend
from ..tensor import Tensor


def type_name(x) -> str:
    """How torch's argument parser names a Python argument's type."""
    if isinstance(x, Tensor):
        return "Tensor"
    if isinstance(x, (backend.dtype, backend.device)):
        return f"engine.{type(x).__name__}"
    return type(x).__name__


def not_a_tensor(name: str, arg: str, position: int, value) -> TypeError:
    return TypeError(
        f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {type_name(value)}"
    )


def invalid_combination(name: str, given, options) -> TypeError:
    """torch's argument-parser error; `options` pairs each signature with its marked argument types
    (or, as a list, the keywords it does not take), or None."""
    text = f"{name}() received an invalid combination of arguments - got ({', '.join(given)}), but expected one of:\n"
    for signature, marked in options:
        text += f" * {signature}\n"
        if isinstance(marked, list):
            text += f"      didn't match because some of the keywords were incorrect: {', '.join(marked)}\n"
        elif marked is not None:
            text += f"      didn't match because some of the arguments have invalid types: ({marked})\n"
    return TypeError(text)


def signature_error(name: str, given, signatures, marked=()) -> TypeError:
    """`invalid_combination` for the values `given`. The signatures in `marked` (those torch's parser
    explains) mark each given type but a Tensor given for a Tensor: torch marks a number even where a
    Number is taken."""
    types = tuple(type_name(x) for x in given)

    def marks(signature: str) -> str:
        params = [p.split()[0] for p in signature.strip("()").split(", *")[0].split(", ")]
        return ", ".join(t if t == p == "Tensor" else f"!{t}!" for t, p in zip(types, params))

    return invalid_combination(name, types, [(s, marks(s) if s in marked else None) for s in signatures])


TENSOR_OTHER = "(Tensor input, Tensor other, *, Tensor out = None)"
NUMBER_OTHER = "(Tensor input, Number other, *, Tensor out = None)"
NUMBER_SELF = "(Number self, Tensor other)"  # the overload torch's parser marks for two numbers


_NEW_SIGNATURES = (
    "(*, engine.device device = None)",
    "(engine.Storage storage)",
    "(Tensor other)",
    "(tuple of ints size, *, engine.device device = None)",
    "(object data, *, engine.device device = None)",
)


def new_invalid(args: tuple, kwargs: dict) -> TypeError:
    """Tensor.new() given keywords other than device, or a Tensor among other arguments."""
    given = [type_name(a) for a in args] + [f"{k}={type_name(v)}" for k, v in kwargs.items()]
    reason = [k for k in kwargs if k != "device"] or ", ".join(f"!{type_name(a)}!" for a in args)
    return invalid_combination(
        "new", given, [(_NEW_SIGNATURES[0], reason)] + [(s, None) for s in _NEW_SIGNATURES[1:]]
    )


_CLAMP_SIGNATURES = ("Tensor min = None, Tensor max = None", "Number min = None, Number max = None")


def clamp_mixed_bounds(name: str, lo, hi, method: bool) -> TypeError:
    """clamp/clip given one Tensor bound and one number: torch has no such overload."""
    given = (type_name(lo), type_name(hi))
    if method:
        marked = ", ".join(f"!{t}!" for t in given)
        return invalid_combination(name, given, [(f"({s})", marked) for s in _CLAMP_SIGNATURES])
    options = [(f"(Tensor input, {s}, *, Tensor out = None)", None) for s in _CLAMP_SIGNATURES]
    return invalid_combination(name, ("Tensor",) + given, options)


_MAX_SIGNATURES = (
    "(Tensor input, *, Tensor out = None)",
    "(Tensor input, Tensor other, *, Tensor out = None)",
    "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)",
)


def max_min_not_a_tensor(name: str, a, second) -> TypeError:
    """max/min whose input is not a Tensor, given a second argument."""
    return invalid_combination(name, (type_name(a), type_name(second)), [(s, None) for s in _MAX_SIGNATURES])


def max_min_bad_dim(name, dim, keepdim, method) -> TypeError:
    """torch's errors for max/min given neither an int dim nor a lone Tensor `other`."""
    t = type_name(dim)
    if method and keepdim is False:
        options = [("()", f"!{t}!"), ("(Tensor other)", f"!{t}!"), ("(int dim, bool keepdim = False)", None)]
        return invalid_combination(name, (t,), options)
    if method:
        return TypeError(f"{name}(): argument 'dim' (position 1) must be int, not {t}")
    if keepdim is False:
        return invalid_combination(name, ("Tensor", t), [(s, None) for s in _MAX_SIGNATURES])
    k = type_name(keepdim)
    marked = (_MAX_SIGNATURES[0], f"Tensor, !{t}!, !{k}!")
    return invalid_combination(name, ("Tensor", t, k), [marked] + [(s, None) for s in _MAX_SIGNATURES[1:]])


def dim_or_axis(name: str, dim, axis):
    """max/min's dim, given as `dim` or as numpy's `axis` (torch takes either, not both)."""
    if axis is None:
        return dim
    if dim is not None:
        given = ("Tensor", f"axis={type_name(axis)}", f"dim={type_name(dim)}")
        options = [(_MAX_SIGNATURES[0], ["axis", "dim"])] + [(s, None) for s in _MAX_SIGNATURES[1:]]
        raise invalid_combination(name, given, options)
    return axis
