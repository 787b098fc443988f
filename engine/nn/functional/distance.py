"""Distances and similarities: normalize, cosine_similarity, pairwise_distance, cdist.

Composed as ATen composes them, so the graphs read node for node like PyTorch's; cdist is one
row (CdistBackward0), or ATen's matrix-product form (EuclideanDistBackward0) for p = 2 on many rows.
"""

from __future__ import annotations

import math

import numpy

from ... import backend
from ...autograd import grad_mode
from ...ops import derivatives as D
from ...ops import operands
from ...ops.nn import functions as nn_functions
from ...ops.op import apply_op
from ...ops.promotion import result_type
from ...ops.reductions import core as reductions_core
from ...ops.shaping import core as shaping_core
from ...tensor import Tensor

_COMPUTE_MODES = {
    "use_mm_for_euclid_dist_if_necessary": 0,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}


def _engine_dtype(np_dtype):
    return backend.dtype_of(numpy.empty(0, np_dtype))


def _check_vector_norm_input(input: Tensor) -> None:
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. "
            f"Got {input.dtype.scalar_type}"
        )


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:
    """input / max(||input||_p, eps) along `dim` (DivBackward0, ExpandBackward0, ClampMinBackward0, norm)."""
    _check_vector_norm_input(input)
    norm = reductions_core.norm(input, p, dim, keepdim=True)
    denom = shaping_core.expand_as(nn_functions.clamp_min(norm, eps), input)
    return input / denom


def _broadcast_shape(a: tuple, b: tuple) -> tuple:
    """Two shapes broadcast together, or torch's error (compared from the trailing dimension)."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    for d in reversed(range(n)):
        if a[d] != b[d] and a[d] != 1 and b[d] != 1:
            raise RuntimeError(
                f"The size of tensor a ({a[d]}) must match the size of tensor b ({b[d]}) at non-singleton "
                f"dimension {d}"
            )
    return tuple(max(x, y) if min(x, y) else 0 for x, y in zip(a, b))


def _expand_outplace(a: Tensor, b: Tensor) -> tuple:
    """ATen's expand_outplace: both expanded to the common shape, unless their shapes already agree."""
    if a.shape == b.shape:
        return a, b
    operands.broadcast_check(a, b)
    shape = numpy.broadcast_shapes(a.shape, b.shape)
    return shaping_core.expand(a, shape), shaping_core.expand(b, shape)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum((x1 / ||x1||) * (x2 / ||x2||), dim), each norm clamped to eps in place, outside the graph."""
    common = result_type((x1, x2))
    if common.kind != "f":
        raise RuntimeError(
            "expected common dtype to be floating point, yet common dtype is "
            f"{_engine_dtype(common).scalar_type}"
        )
    dtype = _engine_dtype(common)  # integer inputs are converted; floats meet in the division below
    x1 = x1 if x1.dtype.is_floating_point else x1.to(dtype)
    x2 = x2 if x2.dtype.is_floating_point else x2.to(dtype)
    x1, x2 = _expand_outplace(x1, x2)
    n1 = shaping_core.clone(reductions_core.norm(x1, 2, dim, keepdim=True))
    n2 = shaping_core.clone(reductions_core.norm(x2, 2, dim, keepdim=True))
    with grad_mode.no_grad():
        nn_functions.clamp_min_(n1, eps)
        nn_functions.clamp_min_(n2, eps)
    return reductions_core.sum((x1 / n1) * (x2 / n2), dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """norm(x1 - x2 + eps, p, last dim): NormBackward1 over AddBackward1 over SubBackward0, as ATen."""
    diff = x1 - x2
    if not diff.dtype.is_floating_point:  # ints: the default float dtype, as `int + eps` gives in torch
        diff = diff.to(backend.get_default_dtype())
    shifted = nn_functions.add_scalar(diff, eps)
    ndim = max(x1.dim(), x2.dim())
    dims = (operands.norm_dim(ndim - 1, ndim),) if ndim else ()
    return apply_op(D.P_NORM, (shifted,), (p, dims, keepdim))


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of x1 (..., R1, M) and x2 (..., R2, M): (..., R1, R2)."""
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _COMPUTE_MODES[compute_mode]
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if not x1.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype.scalar_type}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {x1.dtype.scalar_type} but found {x2.dtype.scalar_type}")
    batch = _broadcast_shape(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    r1, r2 = x1.shape[-2], x2.shape[-2]
    euclid = p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))
    if not euclid or x1.numel() == 0 or x2.numel() == 0:
        return apply_op(D.CDIST, (x1, x2), (p,))
    product = math.prod(batch)
    if product == 1:
        left, right = x1, x2
    else:  # ATen flattens the broadcast batch dims (expand, contiguous, view)
        c = x1.shape[-1]
        left = shaping_core.view(shaping_core.expand(x1, batch + (r1, c)).contiguous(), product, r1, c)
        right = shaping_core.view(shaping_core.expand(x2, batch + (r2, c)).contiguous(), product, r2, c)
    return shaping_core.view(apply_op(D.EUCLIDEAN_DIST, (left, right)), batch + (r1, r2))
