"""Reading tensor values: shapes, NaN / Inf counts and finite ranges, fast finiteness checks.

Arrays may live on the GPU; they are copied to the host only when a closer look is needed.
"""

from __future__ import annotations

from math import isfinite

from .findings import TensorStats


def shape_of(t) -> list[int]:
    return [int(n) for n in t.shape]


def array_of(value):
    """The backend array of a Tensor (any other value as it is)."""
    return getattr(value, "_data", value)


def is_float_array(data) -> bool:
    return hasattr(data, "dtype") and data.dtype.kind == "f" and data.size > 0


def finite_fast(data) -> bool:
    """True when a float array is certainly all finite (one BLAS call); False means look closer.
    Flattened in memory order: a transposed gradient is not copied."""
    flat = data if data.ndim == 1 else data.ravel("K")
    return isfinite(flat.dot(flat))  # NaN or Inf (or overflow) in x.x


def host_array(data):
    """A numpy view of an array (copied from the GPU when needed)."""
    import numpy

    from engine import backend

    return numpy.asarray(data if data.__class__ is numpy.ndarray else backend.to_numpy(data))


def has(kind: str, data) -> bool:
    """Whether the array holds a NaN (`kind` "nan") or an Inf (any other `kind`)."""
    import numpy

    host = host_array(data)
    return bool(numpy.isnan(host).any()) if kind == "nan" else bool(numpy.isinf(host).any())


def all_finite(data) -> bool:
    import numpy

    return bool(numpy.isfinite(host_array(data)).all())


def tensor_stats(name: str, value) -> TensorStats | None:
    """Counts of NaN / +Inf / -Inf and the finite range of an array or Tensor (None if not float)."""
    import numpy

    from engine import backend

    data = array_of(value)
    if not hasattr(data, "dtype") or data.dtype.kind != "f":
        return None
    host = host_array(data)
    finite = host[numpy.isfinite(host)]
    return TensorStats(
        name=name,
        shape=list(host.shape),
        dtype=str(backend.dtype_of(data)),
        numel=int(host.size),
        nan=int(numpy.isnan(host).sum()),
        posinf=int(numpy.isposinf(host).sum()),
        neginf=int(numpy.isneginf(host).sum()),
        min=float(finite.min()) + 0.0 if finite.size else None,  # + 0.0: no "-0"
        max=float(finite.max()) + 0.0 if finite.size else None,
    )
