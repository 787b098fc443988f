"""Small helpers shared by the gradcheck modules: tuples, host arrays, fast-mode directions, warnings."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import numpy

from ... import backend

FAST_MODE_SEED = 67280421310721  # torch.Generator's default seed: fixed, so reruns agree
if TYPE_CHECKING:
    from .tensors import Tensors

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def unravel(flat_index: int, shape: tuple) -> tuple:
    """The multi-index of entry `flat_index` of a tensor of `shape`, row-major (() for a scalar)."""
    return tuple(int(i) for i in numpy.unravel_index(flat_index, shape)) if shape else ()


def differentiable_outputs(tensors: Tensors, x) -> tuple:
    return tuple(o for o in as_tuple(x) if tensors.is_tensor(o) and o.requires_grad)


def host(value) -> numpy.ndarray:
    """A numpy view of an array (copied from the GPU when it lives there); scalars as arrays."""
    if value.__class__ is numpy.ndarray:
        return value
    return backend.to_device(value, backend.CPU) if backend.is_array(value) else numpy.asarray(value)


def max_abs(a: numpy.ndarray) -> float:
    return float(numpy.abs(a).max()) if a.size else 0.0


def unit_vector(rng: numpy.random.Generator, n: int) -> numpy.ndarray:
    """torch's fast-mode direction: uniform [0, 1) entries, scaled to unit norm."""
    vec = rng.random(n)
    norm = numpy.linalg.norm(vec)
    return vec / norm if norm > 0 else vec


def stacklevel_outside() -> int:
    """The stacklevel that points a warning at the first caller outside this package."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR:
        frame = frame.f_back
        level += 1
    return level
