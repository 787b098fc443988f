"""`engine.finfo` and `engine.iinfo`: the numeric limits of the engine's dtypes, as torch reports them."""

from __future__ import annotations

import numpy

from . import backend


def _numpy_info(name: str, value, floating: bool):
    """numpy's finfo / iinfo of an engine dtype, after torch's checks of the argument."""
    if not isinstance(value, backend.dtype):
        raise TypeError(
            f"{name}(): argument 'type' (position 1) must be engine.dtype, not {value.__class__.__name__}"
        )
    if value is backend.bool_ and not floating:
        raise TypeError("engine.bool is not supported by engine.iinfo")
    if value.is_floating_point != floating:
        kind, other = ("a floating point", "iinfo") if floating else ("an integer", "finfo")
        raise TypeError(
            f"engine.{name}() requires {kind} input type. Use engine.{other} to handle 'engine.{name}'"
        )
    return (numpy.finfo if floating else numpy.iinfo)(value.np), value.name


class _Info:
    """Equal when made for the same dtype; unhashable (as torch's), printed as torch prints them."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]
    _FIELDS: tuple[str, ...] = ()

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.dtype == other.dtype

    def __repr__(self) -> str:
        fields = ", ".join(f"{field}={getattr(self, field):g}" for field in self._FIELDS)
        return f"{type(self).__name__}({fields}, dtype={self.dtype})"


class finfo(_Info):
    """Limits of a floating point dtype (the default dtype when none is given)."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")
    _FIELDS = ("resolution", "min", "max", "eps", "smallest_normal", "tiny")

    def __init__(self, type=None) -> None:  # torch's keyword: finfo(type=...)
        info, self.dtype = _numpy_info("finfo", backend.get_default_dtype() if type is None else type, True)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # 1e-06, as torch has it (numpy's is a float32)


class iinfo(_Info):
    """Limits of an integer dtype."""

    __slots__ = ("bits", "max", "min", "dtype")
    _FIELDS = ("min", "max")

    def __init__(self, type=None) -> None:  # torch's keyword: iinfo(type=...)
        if type is None:
            raise TypeError('iinfo() missing 1 required positional arguments: "type"')
        info, self.dtype = _numpy_info("iinfo", type, False)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
