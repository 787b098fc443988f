"""How torch reads an index key (`x[key]`, `x[key] = v`) before any indexing is done.

- A list that holds a sequence, slice, tensor, None or Ellipsis is taken as a tuple of indices,
  with torch's deprecation warning; a tuple inside the key is an index list, as torch makes it a
  tensor (`x[((0, 1),)]` is `x[[0, 1]]`).
- A key that mixes basic indices (ints, slices, None, Ellipsis) with advanced ones (lists, arrays,
  tensors) is applied in two steps, as torch's applySlicing does: the basic part first, as views
  (an int selects its dim away), then the advanced indices on that view. So `x[1, :, d]` keeps
  d's dim where it is, where numpy, counting the int as advanced, would move it first.
"""

from __future__ import annotations

import warnings

import numpy

from ... import backend
from ...tensor import Tensor

SEQUENCE_AS_TUPLE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; "
    "use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, "
    "x[torch.tensor(seq)], which will result either in an error or a different result"
)


def index_tuple(key) -> tuple:
    """The key as a tuple of indices, one per indexed dim (or None, Ellipsis), as torch reads it."""
    if not isinstance(key, tuple):
        if not (isinstance(key, list) and _sequence_as_tuple(key)):
            return (key,)
        warnings.warn(SEQUENCE_AS_TUPLE_WARNING, UserWarning, stacklevel=3)  # the user's x[seq]
        key = tuple(key)
    for k in key:
        if isinstance(k, tuple):
            return tuple(list(k) if isinstance(k, tuple) else k for k in key)
    return key


def _sequence_as_tuple(key: list) -> bool:
    """torch's treatSequenceAsTuple (numpy's old heuristic), for a list of fewer than 32 items."""
    if len(key) >= 32:
        return False
    return any(
        isinstance(k, (Tensor, list, tuple, slice)) or backend.is_array(k) or k is None or k is Ellipsis
        for k in key
    )


def is_advanced(item) -> bool:
    """An index that gathers (a list, an array, a tensor of one dim or more, a bool tensor, a bool),
    rather than one that makes a view."""
    if isinstance(item, Tensor):
        return item.dim() > 0 or item.dtype.name == "bool"
    return (
        isinstance(item, (list, numpy.ndarray))
        or backend.is_array(item)
        and item.ndim > 0
        or isinstance(item, bool)
    )


def split_basic(key: tuple, ndim: int) -> tuple:
    """(the basic part of `key`, or None when it changes nothing; the advanced part, for the result
    of the basic part): full slices keep the advanced indices' dims in the first, the dims the
    basic part leaves become full slices in the second."""
    consumed = sum(_dims_taken(k) for k in key)
    basic, rest = [], []
    for k in key:
        if k is Ellipsis:
            basic.append(k)
            rest.extend([slice(None)] * (ndim - consumed))
        elif k is None or isinstance(k, slice):
            basic.append(k)
            rest.append(slice(None))
        elif is_advanced(k):
            basic.extend([slice(None)] * _dims_taken(k))
            rest.append(k)
        else:  # an int: its dim is selected away
            basic.append(k)
    changes = any(k is None or (isinstance(k, slice) and k != slice(None)) or _is_int(k) for k in basic)
    return (tuple(basic) if changes else None), tuple(rest)


def _dims_taken(k) -> int:
    """How many of the indexed tensor's dims an index consumes (a bool mask: as many as it has)."""
    if k is None or k is Ellipsis:
        return 0
    if isinstance(k, bool):
        return 0  # a Python bool adds a dim, like None
    if isinstance(k, Tensor) and k.dtype.name == "bool":
        return k.dim()
    if (backend.is_array(k) or isinstance(k, numpy.ndarray)) and k.dtype == bool:
        return k.ndim
    return 1


def _is_int(k) -> bool:
    return not (k is None or k is Ellipsis or isinstance(k, slice) or is_advanced(k))
