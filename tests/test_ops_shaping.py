"""Shape and indexing ops (engine/ops/shaping.py) against finite differences and, with torch installed,
against torch 2.13: values, dtypes, shapes, node names, gradients and error messages.

Views are checked to be views: they share storage and version counter with their base, and an
in-place change through one reaches the base with the gradients torch gives.
"""

from __future__ import annotations

import numpy as np
import pytest
from numgrad import check_grad, check_gradgrad
from opcheck import check_error, check_op, compare_with_torch, make_arrays, torch

import engine
from engine import backend

R = "r"
D = "d"


def idx(lib, values):
    return lib.tensor(values, dtype=lib.int64)


def mask(lib, shape, seed=3):
    return lib.tensor(np.random.default_rng(seed).integers(0, 2, shape).astype(bool))


# (id, fn(lib, *tensors), kinds, node name of the (first floating) output)
CASES = [
    # split, chunk, unbind, tensor_split
    ("split", lambda lib, x: x.split(2), [(R, (5, 3))], "SplitBackward0"),
    ("split_dim_neg", lambda lib, x: lib.split(x, 2, dim=-1), [(R, (3, 5))], "SplitBackward0"),
    ("split_sizes", lambda lib, x: x.split([1, 3, 1], 1), [(R, (2, 5))], "SplitWithSizesBackward0"),
    (
        "split_with_sizes",
        lambda lib, x: x.split_with_sizes([2, 2], dim=0),
        [(R, (4, 2))],
        "SplitWithSizesBackward0",
    ),
    (
        "split_all_pieces",
        lambda lib, x: sum((i + 1) * p.sum() for i, p in enumerate(x.split(2))),
        [(R, (5, 2))],
        "AddBackward0",
    ),
    ("split_some_pieces", lambda lib, x: x.split(2)[1] * 3, [(R, (5, 2))], "MulBackward0"),
    ("chunk", lambda lib, x: x.chunk(3), [(R, (7, 2))], "SplitBackward0"),
    ("chunk_dim", lambda lib, x: lib.chunk(x, 2, dim=1), [(R, (2, 5))], "SplitBackward0"),
    ("chunk_more_than_size", lambda lib, x: x.chunk(6), [(R, (4,))], "SplitBackward0"),
    ("unbind", lambda lib, x: x.unbind(), [(R, (3, 2))], "UnbindBackward0"),
    ("unbind_dim", lambda lib, x: lib.unbind(x, dim=-1), [(R, (2, 3))], "UnbindBackward0"),
    (
        "unbind_all",
        lambda lib, x: sum((i + 1) * p for i, p in enumerate(x.unbind(1))),
        [(R, (2, 3))],
        "AddBackward0",
    ),
    ("unbind_1d", lambda lib, x: x.unbind()[1] * 2, [(R, (3,))], "MulBackward0"),
    ("tensor_split_sections", lambda lib, x: x.tensor_split(3), [(R, (7, 2))], "SliceBackward0"),
    (
        "tensor_split_indices",
        lambda lib, x: lib.tensor_split(x, [1, 4], dim=1),
        [(R, (2, 5))],
        "SliceBackward0",
    ),
    ("tensor_split_tensor", lambda lib, x: x.tensor_split(idx(lib, [1, 3])), [(R, (5,))], "SliceBackward0"),
    ("tensor_split_past_end", lambda lib, x: x.tensor_split([2, 9]), [(R, (4,))], "SliceBackward0"),
    # views
    ("narrow", lambda lib, x: x.narrow(1, 1, 2), [(R, (3, 4))], "SliceBackward0"),
    ("narrow_neg_start", lambda lib, x: lib.narrow(x, -1, -3, 2), [(R, (3, 4))], "SliceBackward0"),
    ("narrow_tensor_start", lambda lib, x: x.narrow(0, lib.tensor(1), 2), [(R, (3, 4))], "SliceBackward0"),
    ("select", lambda lib, x: x.select(1, -1), [(R, (3, 4))], "SelectBackward0"),
    ("diagonal", lambda lib, x: x.diagonal(), [(R, (3, 4))], "DiagonalBackward0"),
    ("diagonal_offset", lambda lib, x: lib.diagonal(x, 1), [(R, (3, 4))], "DiagonalBackward0"),
    ("diagonal_neg_offset_dims", lambda lib, x: x.diagonal(-1, 2, 0), [(R, (3, 2, 4))], "DiagonalBackward0"),
    ("diagonal_empty", lambda lib, x: x.diagonal(5), [(R, (3, 4))], "DiagonalBackward0"),
    ("unfold", lambda lib, x: x.unfold(1, 2, 1), [(R, (3, 4))], "UnfoldBackward0"),
    ("unfold_step", lambda lib, x: x.unfold(-1, 2, 2), [(R, (2, 5))], "UnfoldBackward0"),
    ("unfold_0d", lambda lib, x: x.unfold(0, 1, 1), [(R, ())], "UnfoldBackward0"),
    ("movedim", lambda lib, x: x.movedim(0, -1), [(R, (2, 3, 4))], "PermuteBackward0"),
    ("movedim_tuple", lambda lib, x: lib.movedim(x, (0, 1), (2, 0)), [(R, (2, 3, 4))], "PermuteBackward0"),
    ("moveaxis", lambda lib, x: lib.moveaxis(x, -1, 0), [(R, (2, 3))], "PermuteBackward0"),
    ("movedim_0d", lambda lib, x: x.movedim(0, 0), [(R, ())], "AliasBackward0"),
    ("swapaxes", lambda lib, x: x.swapaxes(0, -1), [(R, (2, 3, 4))], "TransposeBackward0"),
    ("swapdims", lambda lib, x: lib.swapdims(x, 1, 0), [(R, (2, 3))], "TransposeBackward0"),
    ("unflatten", lambda lib, x: x.unflatten(1, (2, 3)), [(R, (2, 6))], "ViewBackward0"),
    ("unflatten_infer", lambda lib, x: lib.unflatten(x, -1, (-1, 2)), [(R, (2, 6))], "ViewBackward0"),
    ("broadcast_to", lambda lib, x: x.broadcast_to((2, 3, 4)), [(R, (3, 1))], "ExpandBackward0"),
    ("broadcast_to_0d", lambda lib, x: lib.broadcast_to(x, (2,)), [(R, ())], "ExpandBackward0"),
    (
        "broadcast_tensors",
        lambda lib, x, y: lib.broadcast_tensors(x, y),
        [(R, (3, 1)), (R, (4,))],
        "ExpandBackward0",
    ),
    (
        "broadcast_tensors_same",
        lambda lib, x, y: lib.broadcast_tensors(x, y)[1] * 2,
        [(R, (3, 4)), (R, (4,))],
        "MulBackward0",
    ),
    ("expand_as", lambda lib, x, y: x.expand_as(y), [(R, (3, 1)), (R, (3, 4))], "ExpandBackward0"),
    ("view_as", lambda lib, x, y: x.view_as(y), [(R, (3, 4)), (R, (2, 6))], "ViewBackward0"),
    ("reshape_as", lambda lib, x, y: x.t().reshape_as(y), [(R, (3, 4)), (R, (2, 6))], "UnsafeViewBackward0"),
    (
        "meshgrid_ij",
        lambda lib, x, y: lib.meshgrid(x, y, indexing="ij"),
        [(R, (3,)), (R, (4,))],
        "ExpandBackward0",
    ),
    (
        "meshgrid_xy",
        lambda lib, x, y, z: lib.meshgrid([x, y, z], indexing="xy"),
        [(R, (3,)), (R, (2,)), (R, ())],
        "ExpandBackward0",
    ),
    ("as_strided", lambda lib, x: x.as_strided((2, 2), (1, 2)), [(R, (3, 4))], "AsStridedBackward0"),
    (
        "as_strided_overlap",
        lambda lib, x: lib.as_strided(x, (3, 3), (1, 1), 2),
        [(R, (3, 4))],
        "AsStridedBackward0",
    ),
    (
        "as_strided_of_view",
        lambda lib, x: x[1:].as_strided((2, 3), (2, 1)),
        [(R, (3, 4))],
        "AsStridedBackward0",
    ),
    (
        "as_strided_of_transpose",
        lambda lib, x: x.t().as_strided((4,), (3,), 1),
        [(R, (3, 4))],
        "AsStridedBackward0",
    ),
    # gathering
    (
        "index_select",
        lambda lib, x: x.index_select(0, idx(lib, [2, 0, 2])),
        [(R, (3, 4))],
        "IndexSelectBackward0",
    ),
    (
        "index_select_dim_neg",
        lambda lib, x: lib.index_select(x, -1, idx(lib, [3, 1])),
        [(R, (3, 4))],
        "IndexSelectBackward0",
    ),
    (
        "index_select_int32_0d_index",
        lambda lib, x: x.index_select(1, lib.tensor(2, dtype=lib.int32)),
        [(R, (3, 4))],
        "IndexSelectBackward0",
    ),
    ("index_select_0d", lambda lib, x: x.index_select(0, idx(lib, [0])), [(R, ())], "IndexSelectBackward0"),
    (
        "gather",
        lambda lib, x: x.gather(0, idx(lib, [[2, 0, 1, 2], [0, 0, 2, 1]])),
        [(R, (3, 4))],
        "GatherBackward0",
    ),
    (
        "gather_dim1_small_index",
        lambda lib, x: lib.gather(x, 1, idx(lib, [[3, 3], [0, 1]])),
        [(R, (3, 4))],
        "GatherBackward0",
    ),
    ("gather_0d", lambda lib, x: x.gather(0, idx(lib, 0)), [(R, ())], "GatherBackward0"),
    ("gather_0d_index_of_1d", lambda lib, x: x.gather(0, idx(lib, 2)), [(R, (3,))], "GatherBackward0"),
    ("take", lambda lib, x: x.take(idx(lib, [[0, 11], [-1, 5]])), [(R, (3, 4))], "TakeBackward0"),
    ("take_0d", lambda lib, x: lib.take(x, idx(lib, 0)), [(R, ())], "TakeBackward0"),
    (
        "take_along_dim",
        lambda lib, x: lib.take_along_dim(x, idx(lib, [[0], [3], [1]]), dim=1),
        [(R, (3, 4))],
        "GatherBackward0",
    ),
    (
        "take_along_dim_broadcast",
        lambda lib, x: x.take_along_dim(idx(lib, [[2, 1, 0, 0]]), 0),
        [(R, (3, 4))],
        "GatherBackward0",
    ),
    (
        "take_along_dim_none",
        lambda lib, x: lib.take_along_dim(x, idx(lib, [0, 7, 7])),
        [(R, (3, 4))],
        "GatherBackward0",
    ),
    (
        "masked_select",
        lambda lib, x: x.masked_select(mask(lib, (3, 4))),
        [(R, (3, 4))],
        "MaskedSelectBackward0",
    ),
    (
        "masked_select_broadcast",
        lambda lib, x: lib.masked_select(x, mask(lib, (2, 3, 4))),
        [(R, (3, 1))],
        "MaskedSelectBackward0",
    ),
    (
        "masked_select_0d",
        lambda lib, x: x.masked_select(lib.tensor(True)),
        [(R, ())],
        "MaskedSelectBackward0",
    ),
    ("where", lambda lib, x, y: lib.where(x > 0, x, y), [(R, (3, 4)), (R, (4,))], "WhereBackward0"),
    ("where_scalar", lambda lib, x: lib.where(x > 0, x, 0.5), [(R, (3, 4))], "WhereBackward0"),
    ("where_scalar_first", lambda lib, x: lib.where(x > 0, 2, x), [(R, (3, 4))], "WhereBackward0"),
    ("where_method", lambda lib, x, y: x.where(y > 0, y), [(R, (3, 4)), (R, (3, 4))], "WhereBackward0"),
    ("where_0d", lambda lib, x: lib.where(lib.tensor(True), x, 0.0), [(R, ())], "WhereBackward0"),
    # scattering
    (
        "scatter",
        lambda lib, x, s: x.scatter(0, idx(lib, [[2, 0, 1, 2], [0, 1, 2, 1]]), s),
        [(R, (3, 4)), (R, (2, 4))],
        "ScatterBackward0",
    ),
    (
        "scatter_value",
        lambda lib, x: x.scatter(1, idx(lib, [[3, 0], [1, 2]]), 2.5),
        [(R, (3, 4))],
        "ScatterBackward1",
    ),
    (
        "scatter_value_kw",
        lambda lib, x: lib.scatter(x, -1, idx(lib, [[1]]), value=-1.0),
        [(R, (3, 4))],
        "ScatterBackward1",
    ),
    ("scatter_0d", lambda lib, x, s: x.scatter(0, idx(lib, 0), s), [(R, ()), (R, ())], "ScatterBackward0"),
    (
        "scatter_add",
        lambda lib, x, s: x.scatter_add(0, idx(lib, [[2, 0, 2, 2], [2, 0, 1, 1]]), s),
        [(R, (3, 4)), (R, (2, 4))],
        "ScatterAddBackward0",
    ),
    (
        "index_add",
        lambda lib, x, s: x.index_add(0, idx(lib, [2, 0, 2]), s),
        [(R, (3, 4)), (R, (3, 4))],
        "IndexAddBackward0",
    ),
    (
        "index_add_alpha_dim",
        lambda lib, x, s: lib.index_add(x, 1, idx(lib, [3, 1]), s, alpha=-2.5),
        [(R, (3, 4)), (R, (3, 2))],
        "IndexAddBackward0",
    ),
    (
        "index_add_0d",
        lambda lib, x, s: x.index_add(0, idx(lib, [0]), s),
        [(R, ()), (R, ())],
        "IndexAddBackward0",
    ),
    (
        "index_copy",
        lambda lib, x, s: x.index_copy(1, idx(lib, [3, 0]), s),
        [(R, (3, 4)), (R, (3, 2))],
        "IndexCopyBackward0",
    ),
    (
        "index_copy_0d",
        lambda lib, x, s: x.index_copy(0, idx(lib, [0]), s),
        [(R, ()), (R, ())],
        "IndexCopyBackward0",
    ),
    (
        "index_fill",
        lambda lib, x: x.index_fill(1, idx(lib, [3, 0, 3]), -2.0),
        [(R, (3, 4))],
        "IndexFillBackward0",
    ),
    (
        "index_fill_tensor",
        lambda lib, x, v: lib.index_fill(x, 0, idx(lib, [1, 2]), v),
        [(R, (3, 4)), (R, ())],
        "IndexFillBackward1",
    ),
    ("index_fill_0d", lambda lib, x: x.index_fill(0, idx(lib, 0), 1.0), [(R, ())], "IndexFillBackward0"),
    (
        "masked_fill",
        lambda lib, x: x.masked_fill(mask(lib, (3, 4)), 2.0),
        [(R, (3, 4))],
        "MaskedFillBackward0",
    ),
    (
        "masked_fill_broadcast",
        lambda lib, x: lib.masked_fill(x, mask(lib, (2, 3, 4)), -1.0),
        [(R, (3, 1))],
        "MaskedFillBackward0",
    ),
    (
        "masked_fill_tensor",
        lambda lib, x, v: x.masked_fill(mask(lib, (4,)), v),
        [(R, (3, 4)), (R, ())],
        "MaskedFillBackward1",
    ),
    (
        "masked_scatter",
        lambda lib, x, s: x.masked_scatter(mask(lib, (3, 4)), s),
        [(R, (3, 4)), (R, (2, 7))],
        "MaskedScatterBackward0",
    ),
    (
        "masked_scatter_broadcast",
        lambda lib, x, s: lib.masked_scatter(x, mask(lib, (2, 3, 4)), s),
        [(R, (3, 4)), (R, (24,))],
        "MaskedScatterBackward0",
    ),
    (
        "masked_scatter_0d",
        lambda lib, x, s: x.masked_scatter(lib.tensor(True), s),
        [(R, ()), (R, (2,))],
        "MaskedScatterBackward0",
    ),
    # reordering
    ("flip", lambda lib, x: x.flip(0, 2), [(R, (2, 3, 4))], "FlipBackward0"),
    ("flip_fn_neg", lambda lib, x: lib.flip(x, (-1,)), [(R, (2, 3))], "FlipBackward0"),
    ("flip_0d", lambda lib, x: x.flip(0), [(R, ())], "FlipBackward0"),
    ("fliplr", lambda lib, x: x.fliplr(), [(R, (2, 3, 2))], "FlipBackward0"),
    ("flipud", lambda lib, x: lib.flipud(x), [(R, (3,))], "FlipBackward0"),
    ("roll", lambda lib, x: x.roll(1, 0), [(R, (3, 4))], "RollBackward0"),
    ("roll_flat", lambda lib, x: lib.roll(x, -5), [(R, (3, 4))], "RollBackward0"),
    ("roll_dims", lambda lib, x: x.roll((2, -1), (1, 0)), [(R, (3, 4))], "RollBackward0"),
    ("roll_0d", lambda lib, x: x.roll(3), [(R, ())], "RollBackward0"),
    ("rot90", lambda lib, x: x.rot90(), [(R, (3, 4))], "Rot90Backward0"),
    ("rot90_k", lambda lib, x: lib.rot90(x, -3, [2, 0]), [(R, (2, 3, 4))], "Rot90Backward0"),
    ("rot90_2", lambda lib, x: x.rot90(2, (0, 1)), [(R, (3, 4))], "Rot90Backward0"),
    ("rot90_0", lambda lib, x: x.rot90(4), [(R, (3, 4))], "Rot90Backward0"),
    ("repeat", lambda lib, x: x.repeat(2, 1, 3), [(R, (3, 2))], "RepeatBackward0"),
    ("repeat_tuple", lambda lib, x: x.repeat((1, 2)), [(R, (3, 2))], "RepeatBackward0"),
    ("repeat_0d", lambda lib, x: x.repeat(3), [(R, ())], "RepeatBackward0"),
    ("tile", lambda lib, x: x.tile((2,)), [(R, (3, 2))], "RepeatBackward0"),
    ("tile_more", lambda lib, x: lib.tile(x, (2, 1, 2)), [(R, (3, 2))], "RepeatBackward0"),
    ("repeat_interleave", lambda lib, x: x.repeat_interleave(2), [(R, (3, 2))], "ViewBackward0"),
    (
        "repeat_interleave_dim",
        lambda lib, x: lib.repeat_interleave(x, 3, dim=1),
        [(R, (3, 2))],
        "ViewBackward0",
    ),
    (
        "repeat_interleave_tensor",
        lambda lib, x: x.repeat_interleave(idx(lib, [1, 0, 3]), dim=0),
        [(R, (3, 2))],
        "IndexSelectBackward0",
    ),
    (
        "repeat_interleave_tensor_1",
        lambda lib, x: x.repeat_interleave(idx(lib, [2]), dim=-1, output_size=4),
        [(R, (3, 2))],
        "IndexSelectBackward0",
    ),
    ("repeat_interleave_0d", lambda lib, x: x.repeat_interleave(2), [(R, ())], "ViewBackward0"),
    # triangles and diagonals
    ("tril", lambda lib, x: x.tril(), [(R, (3, 4))], "TrilBackward0"),
    ("tril_k", lambda lib, x: lib.tril(x, -1), [(R, (2, 3, 4))], "TrilBackward0"),
    ("triu", lambda lib, x: x.triu(1), [(R, (4, 3))], "TriuBackward0"),
    ("triu_neg", lambda lib, x: lib.triu(x, diagonal=-2), [(R, (2, 4, 3))], "TriuBackward0"),
    ("diag_1d", lambda lib, x: x.diag(), [(R, (3,))], "DiagEmbedBackward0"),
    ("diag_1d_offset", lambda lib, x: lib.diag(x, -2), [(R, (3,))], "DiagEmbedBackward0"),
    ("diag_2d", lambda lib, x: x.diag(1), [(R, (3, 4))], "DiagonalBackward0_copy"),
    ("diag_embed", lambda lib, x: x.diag_embed(), [(R, (2, 3))], "DiagEmbedBackward0"),
    ("diag_embed_dims", lambda lib, x: lib.diag_embed(x, 1, 0, 2), [(R, (2, 3))], "DiagEmbedBackward0"),
    (
        "diag_embed_neg",
        lambda lib, x: x.diag_embed(offset=-1, dim1=-1, dim2=0),
        [(R, (3,))],
        "DiagEmbedBackward0",
    ),
    ("trace", lambda lib, x: x.trace(), [(R, (3, 4))], "TraceBackward0"),
    ("trace_fn", lambda lib, x: lib.trace(x), [(R, (4, 2))], "TraceBackward0"),
    # sorting
    ("sort", lambda lib, x: x.sort(), [(D, (3, 4))], "SortBackward0"),
    ("sort_dim_desc", lambda lib, x: lib.sort(x, 0, descending=True), [(D, (3, 4))], "SortBackward0"),
    (
        "sort_stable",
        lambda lib, x: x.sort(stable=True, dim=-1, descending=True),
        [(D, (3, 4))],
        "SortBackward1",
    ),
    ("sort_0d", lambda lib, x: x.sort(), [(D, ())], "SortBackward0"),
    ("msort", lambda lib, x: x.msort(), [(D, (3, 4))], "SortBackward0"),
    ("topk", lambda lib, x: x.topk(2), [(D, (3, 4))], "TopkBackward0"),
    (
        "topk_smallest_dim",
        lambda lib, x: lib.topk(x, 2, dim=0, largest=False),
        [(D, (3, 4))],
        "TopkBackward0",
    ),
    ("topk_0d", lambda lib, x: x.topk(1), [(D, ())], "TopkBackward0"),
    ("kthvalue", lambda lib, x: x.kthvalue(2), [(D, (3, 4))], "KthvalueBackward0"),
    (
        "kthvalue_keepdim",
        lambda lib, x: lib.kthvalue(x, 3, 0, keepdim=True),
        [(D, (3, 4))],
        "KthvalueBackward0",
    ),
    ("kthvalue_0d", lambda lib, x: x.kthvalue(1), [(D, ())], "KthvalueBackward0"),
]


@pytest.mark.parametrize("fn, kinds, node", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_op(fn, kinds, node):
    check_op(fn, kinds, node=node)


# A src larger than the index: torch's own backward refuses these ("Function ScatterBackward0 returned an
# invalid gradient at index 1 - got [2, 1] but expected shape compatible with [3, 2]"); the engine gives the
# gradient in src's shape (zero outside the index). Finite differences, and torch's forward.
SRC_LARGER = [
    (
        "scatter",
        lambda lib, x, s: lib.scatter(x, 1, idx(lib, [[3], [0]]), s),
        [(R, (3, 4)), (R, (3, 2))],
        "ScatterBackward0",
    ),
    (
        "scatter_add",
        lambda lib, x, s: lib.scatter_add(x, 1, idx(lib, [[3, 3], [0, 3]]), s),
        [(R, (3, 4)), (R, (3, 3))],
        "ScatterAddBackward0",
    ),
    (
        "scatter_reduce",
        lambda lib, x, s: x.scatter_reduce(0, idx(lib, [[2, 2]]), s, "amax", include_self=False),
        [(D, (3, 4)), (D, (2, 3))],
        "ScatterReduceBackward0",
    ),
]


@pytest.mark.parametrize("fn, kinds, node", [c[1:] for c in SRC_LARGER], ids=[c[0] for c in SRC_LARGER])
def test_a_src_larger_than_the_index_gets_its_gradient_in_its_shape(fn, kinds, node):
    arrays = make_arrays(kinds)
    x, s = (engine.tensor(a, requires_grad=True) for a in arrays)
    assert fn(engine, x, s).grad_fn.name() == node
    check_grad(lambda x, s: fn(engine, x, s), x, s)
    check_gradgrad(lambda x, s: fn(engine, x, s), x, s)
    if torch is not None:
        compare_with_torch(fn, arrays, grad=False)


# --------------------------------------------------------------------- scatter_reduce, in place

REDUCE = [
    (reduce, include_self)
    for reduce in ("sum", "prod", "mean", "amax", "amin")
    for include_self in (True, False)
]


@pytest.mark.parametrize("reduce, include_self", REDUCE)
def test_scatter_reduce(reduce, include_self):
    index = [[0, 2, 2, 0], [0, 0, 1, 2]]  # repeated targets and untouched positions
    check_op(
        lambda lib, x, s: x.scatter_reduce(0, idx(lib, index), s, reduce, include_self=include_self),
        [(D, (3, 4)), (D, (2, 4))],
        node="ScatterReduceBackward0",
    )


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_with_zeros(include_self):
    """Zeros in self and src: the gradient of the other factors is the product without the zero."""

    def zeros(rng, n):
        values = rng.uniform(0.5, 1.5, n)
        values[::3] = 0.0
        return values

    check_op(
        lambda lib, x, s: lib.scatter_reduce(
            x, 1, idx(lib, [[0, 0, 1], [2, 2, 2]]), s, "prod", include_self=include_self
        ),
        [(zeros, (2, 3)), (zeros, (2, 3))],
        node="ScatterReduceBackward0",
    )


# (id, call(lib, target, *others) changing `target` in place, kinds, node)
IN_PLACE = [
    (
        "scatter_",
        lambda lib, t, s: t.scatter_(0, idx(lib, [[2, 0, 1, 2], [0, 1, 2, 1]]), s),
        [(R, (3, 4)), (R, (2, 4))],
        "ScatterBackward0",
    ),
    (
        "scatter_value_",
        lambda lib, t: t.scatter_(1, idx(lib, [[3], [1]]), 4.0),
        [(R, (3, 4))],
        "ScatterBackward1",
    ),
    (
        "scatter_add_",
        lambda lib, t, s: t.scatter_add_(0, idx(lib, [[2, 2, 1, 2]]), s),
        [(R, (3, 4)), (R, (1, 4))],
        "ScatterAddBackward0",
    ),
    (
        "scatter_reduce_",
        lambda lib, t, s: t.scatter_reduce_(0, idx(lib, [[2, 2, 1, 2]]), s, "amax"),
        [(D, (3, 4)), (D, (1, 4))],
        "ScatterReduceBackward0",
    ),
    (
        "index_add_",
        lambda lib, t, s: t.index_add_(1, idx(lib, [0, 0]), s, alpha=2),
        [(R, (3, 4)), (R, (3, 2))],
        "IndexAddBackward0",
    ),
    (
        "index_copy_",
        lambda lib, t, s: t.index_copy_(0, idx(lib, [2]), s),
        [(R, (3, 4)), (R, (1, 4))],
        "IndexCopyBackward0",
    ),
    (
        "index_fill_",
        lambda lib, t: t.index_fill_(1, idx(lib, [1, 3]), 0.5),
        [(R, (3, 4))],
        "IndexFillBackward0",
    ),
    (
        "index_fill_tensor_",
        lambda lib, t, v: t.index_fill_(0, idx(lib, [1]), v),
        [(R, (3, 4)), (R, ())],
        "IndexFillBackward1",
    ),
    (
        "masked_fill_",
        lambda lib, t: t.masked_fill_(mask(lib, (3, 4)), 1.5),
        [(R, (3, 4))],
        "MaskedFillBackward0",
    ),
    (
        "masked_fill_tensor_",
        lambda lib, t, v: t.masked_fill_(mask(lib, (4,)), v),
        [(R, (3, 4)), (R, ())],
        "MaskedFillBackward1",
    ),
    (
        "masked_scatter_",
        lambda lib, t, s: t.masked_scatter_(mask(lib, (3, 4)), s),
        [(R, (3, 4)), (R, (12,))],
        "MaskedScatterBackward0",
    ),
    ("tril_", lambda lib, t: t.tril_(1), [(R, (3, 4))], "TrilBackward0"),
    ("triu_", lambda lib, t: t.triu_(), [(R, (2, 3, 4))], "TriuBackward0"),
]


@pytest.mark.parametrize("call, kinds, node", [c[1:] for c in IN_PLACE], ids=[c[0] for c in IN_PLACE])
def test_in_place(call, kinds, node):
    check_op(lambda lib, x, *others: call(lib, x * 1, *others), kinds, node=node)


@pytest.mark.parametrize("call, kinds", [c[1:3] for c in IN_PLACE], ids=[c[0] for c in IN_PLACE])
def test_in_place_returns_its_target_one_version_on_and_refuses_a_leaf(lib, call, kinds):
    target, *others = (lib.tensor(a) for a in make_arrays(kinds))
    before = target._version
    assert call(lib, target, *others) is target and target._version == before + 1
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        call(lib, target.requires_grad_(), *others)


# ------------------------------------------------------------------------- views are views

# (id, view(lib, base), base shape): every view op, and an in-place change through it
VIEWS = [
    ("narrow", lambda lib, t: t.narrow(1, 1, 2), (3, 4)),
    ("select", lambda lib, t: lib.select(t, 0, -1), (3, 4)),
    ("diagonal", lambda lib, t: t.diagonal(1), (3, 4)),
    ("diagonal_dims", lambda lib, t: lib.diagonal(t, -1, 0, 2), (3, 2, 4)),
    ("unfold", lambda lib, t: t.unfold(1, 2, 2), (3, 4)),
    ("movedim", lambda lib, t: t.movedim(0, -1), (2, 3, 2)),
    ("moveaxis", lambda lib, t: lib.moveaxis(t, (0, 1), (1, 0)), (3, 4)),
    ("swapaxes", lambda lib, t: t.swapaxes(0, 1), (3, 4)),
    ("swapdims", lambda lib, t: lib.swapdims(t, 0, 1), (3, 4)),
    ("unflatten", lambda lib, t: t.unflatten(1, (2, 2)), (3, 4)),
    ("as_strided", lambda lib, t: t.as_strided((2, 2), (4, 1), 1), (3, 4)),
    ("as_strided_of_view", lambda lib, t: t[1:].as_strided((2,), (5,)), (3, 4)),
    ("tensor_split", lambda lib, t: t.tensor_split(2, dim=1)[1], (3, 4)),
    ("view_as", lambda lib, t: t.view_as(lib.zeros(2, 6)), (3, 4)),
    ("reshape_as", lambda lib, t: t.reshape_as(lib.zeros(6, 2)), (3, 4)),
    ("view_of_view", lambda lib, t: t.diagonal().unflatten(0, (3, 1)).narrow(0, 1, 2), (3, 4)),
]


@pytest.mark.parametrize("view, shape", [c[1:] for c in VIEWS], ids=[c[0] for c in VIEWS])
def test_a_view_shares_storage_and_version_with_its_base(lib, view, shape):
    base = lib.zeros(*shape)
    v = view(lib, base)
    assert v._base is base
    v.fill_(1.0)
    assert base._version == v._version == 1
    assert base.sum().item() == v.numel()
    assert (view(lib, base) == 1).all().item()


@pytest.mark.parametrize("view, shape", [c[1:] for c in VIEWS], ids=[c[0] for c in VIEWS])
def test_an_in_place_change_through_a_view_reaches_the_base_and_its_gradients(view, shape):
    def fn(lib, x, y):
        base = x * 1
        v = view(lib, base)
        v.mul_(y.reshape(-1)[: v.numel()].reshape(v.shape))
        return base * 1

    check_op(fn, [(R, shape), (R, (12,))], node="MulBackward0")


@pytest.mark.parametrize(
    "view",
    [
        lambda lib, t: t.broadcast_to((2, 3, 1)),
        lambda lib, t: t.expand_as(lib.zeros(3, 2)),
        lambda lib, t: lib.meshgrid(t.reshape(-1), lib.zeros(2), indexing="ij")[0],
        lambda lib, t: lib.broadcast_tensors(t, lib.zeros(3, 2))[0],
    ],
    ids=["broadcast_to", "expand_as", "meshgrid", "broadcast_tensors"],
)
def test_an_expanded_view_is_not_written_in_place(view):
    check_error(lambda lib: view(lib, lib.zeros(3, 1)).add_(1.0), "refers to a single memory location")


SEVERAL = [
    ("split", lambda lib, t: t.split(2), "Split"),
    ("split_with_sizes", lambda lib, t: t.split_with_sizes([1, 3]), "SplitWithSizes"),
    ("chunk", lambda lib, t: t.chunk(2), "Split"),
    ("unbind", lambda lib, t: t.unbind(), "Unbind"),
]


@pytest.mark.parametrize("pieces, node", [c[1:] for c in SEVERAL], ids=[c[0] for c in SEVERAL])
def test_pieces_of_one_node_are_views_written_through_without_grad(lib, pieces, node):
    base = lib.zeros(4, 3)
    parts = pieces(lib, base)
    assert all(p._base is base for p in parts)
    parts[-1].add_(1.0)
    assert base._version == parts[0]._version == 1
    assert base.sum().item() == parts[-1].numel()


@pytest.mark.parametrize("pieces, node", [c[1:] for c in SEVERAL], ids=[c[0] for c in SEVERAL])
def test_pieces_of_one_node_refuse_an_in_place_change_with_grad(pieces, node):
    def change(lib):
        parts = pieces(lib, lib.ones(4, 3, requires_grad=True) * 1)
        assert parts[0].grad_fn is parts[1].grad_fn and parts[1].output_nr == 1
        parts[0].mul_(2)

    check_error(change, f"Output 0 of {node} is a view and is being modified inplace.")


@pytest.mark.parametrize("pieces, node", [c[1:] for c in SEVERAL], ids=[c[0] for c in SEVERAL])
def test_pieces_are_refused_once_their_base_changed(pieces, node):
    def use(lib):
        base = lib.ones(4, 3, requires_grad=True) * 1
        parts = pieces(lib, base)
        base.add_(1.0)
        (parts[0] * 2).sum().backward()

    check_error(
        use, f"Output 0 of {node} is a view and its base or another view of its base has been modified"
    )


# ------------------------------------------------------- integer and bool inputs, forward-only ops

INT = "int"
BOOL = "bool"


def permutation(rng, n):
    """Distinct integers: no ties for topk, whose order among equal values torch leaves open."""
    return rng.permutation(n) - n // 2


FORWARD = [
    ("gather_int", lambda lib, x: x.gather(1, idx(lib, [[0, 0], [2, 1]])), [(INT, (2, 3))]),
    ("index_select_bool", lambda lib, x: x.index_select(0, idx(lib, [1, 1])), [(BOOL, (2, 3))]),
    ("scatter_int_value", lambda lib, x: x.scatter(0, idx(lib, [[1, 0, 1]]), 1.5), [(INT, (2, 3))]),
    (
        "scatter_add_int",
        lambda lib, x, s: x.scatter_add(0, idx(lib, [[1, 1, 1]]), s),
        [(INT, (2, 3)), (INT, (1, 3))],
    ),
    (
        "scatter_reduce_int_mean",
        lambda lib, x, s: x.scatter_reduce(0, idx(lib, [[0, 0, 0], [0, 0, 1]]), s, "mean"),
        [(INT, (2, 3)), (INT, (2, 3))],
    ),
    (
        "scatter_reduce_int_mean_without_self",
        lambda lib, x, s: x.scatter_reduce(
            0, idx(lib, [[0, 0, 0], [0, 0, 1]]), s, "mean", include_self=False
        ),
        [(INT, (2, 3)), (INT, (2, 3))],
    ),
    (
        "scatter_reduce_int_amin",
        lambda lib, x, s: x.scatter_reduce(1, idx(lib, [[2, 2], [0, 2]]), s, "amin", include_self=False),
        [(INT, (2, 3)), (INT, (2, 2))],
    ),
    (
        "scatter_multiply",
        lambda lib, x, s: x.scatter(0, idx(lib, [[1, 1, 0]]), s, reduce="multiply"),
        [(INT, (2, 3)), (INT, (1, 3))],
    ),
    (
        "scatter_add_value",
        lambda lib, x: x.scatter(1, idx(lib, [[1, 1], [0, 2]]), 2, reduce="add"),
        [(INT, (2, 3))],
    ),
    (
        "index_add_int_alpha",
        lambda lib, x, s: x.index_add(0, idx(lib, [1]), s, alpha=3),
        [(INT, (2, 3)), (INT, (1, 3))],
    ),
    ("index_fill_int", lambda lib, x: x.index_fill(1, idx(lib, [0]), 2.7), [(INT, (2, 3))]),
    ("masked_fill_int", lambda lib, x: x.masked_fill(mask(lib, (2, 3)), 1.7), [(INT, (2, 3))]),
    ("masked_fill_bool", lambda lib, x: x.masked_fill(mask(lib, (3,)), True), [(BOOL, (2, 3))]),
    ("masked_select_int", lambda lib, x: x.masked_select(mask(lib, (2, 3))), [(INT, (2, 3))]),
    ("take_int", lambda lib, x: x.take(idx(lib, [5, -6])), [(INT, (2, 3))]),
    ("flip_bool", lambda lib, x: x.flip(1), [(BOOL, (2, 3))]),
    ("roll_int", lambda lib, x: x.roll(1, 1), [(INT, (2, 3))]),
    ("rot90_int", lambda lib, x: x.rot90(3), [(INT, (2, 3))]),
    ("repeat_bool", lambda lib, x: x.repeat(2, 2), [(BOOL, (2, 3))]),
    ("repeat_interleave_int", lambda lib, x: x.repeat_interleave(idx(lib, [2, 0]), dim=0), [(INT, (2, 3))]),
    ("repeat_interleave_counts", lambda lib: lib.repeat_interleave(idx(lib, [2, 0, 3])), []),
    ("tril_int", lambda lib, x: x.tril(-1), [(INT, (3, 3))]),
    ("triu_bool", lambda lib, x: x.triu(), [(BOOL, (3, 3))]),
    ("diag_int", lambda lib, x: x.diag(), [(INT, (3,))]),
    ("diag_embed_bool", lambda lib, x: x.diag_embed(), [(BOOL, (2, 3))]),
    ("trace_int32", lambda lib, x: x.int().trace(), [(INT, (3, 3))]),
    ("trace_int", lambda lib, x: x.trace(), [(INT, (3, 3))]),
    ("sort_int", lambda lib, x: x.sort(descending=True, stable=True), [(INT, (3, 4))]),
    ("sort_bool", lambda lib, x: x.sort(stable=True), [(BOOL, (5,))]),
    ("argsort", lambda lib, x: x.argsort(dim=0), [(D, (3, 4))]),
    ("argsort_stable_desc", lambda lib, x: lib.argsort(x, descending=True, stable=True), [(INT, (3, 6))]),
    ("topk_int", lambda lib, x: x.topk(3, largest=False), [(permutation, (2, 6))]),
    ("kthvalue_int", lambda lib, x: x.kthvalue(1, 0), [(D, (3, 4))]),
    ("msort_int", lambda lib, x: lib.msort(x), [(INT, (4, 2))]),
    ("nonzero", lambda lib, x: x.nonzero(), [(INT, (3, 4))]),
    ("nonzero_tuple", lambda lib, x: lib.nonzero(x, as_tuple=True), [(BOOL, (3, 4))]),
    ("nonzero_0d", lambda lib, x: x.nonzero(), [(INT, ())]),
    ("nonzero_0d_tuple", lambda lib, x: x.nonzero(as_tuple=True), [(INT, ())]),
    ("argwhere", lambda lib, x: lib.argwhere(x), [(INT, (2, 3))]),
    ("where_one_argument", lambda lib, x: lib.where(x), [(BOOL, (2, 3))]),
    ("where_scalars_float", lambda lib, x: lib.where(x, 1.0, 0.0), [(BOOL, (2, 3))]),
    ("where_scalars_int", lambda lib, x: lib.where(x, 1, -1), [(BOOL, (2, 3))]),
    ("where_scalars_bool", lambda lib, x: lib.where(x, True, False), [(BOOL, (2, 3))]),
    (
        "where_int_tensor_float_scalar",
        lambda lib, c, x: lib.where(c, x, 2.5),
        [(BOOL, (2, 3)), (INT, (2, 3))],
    ),
    ("unique", lambda lib, x: lib.unique(x), [(INT, (3, 4))]),
    ("unique_all", lambda lib, x: x.unique(return_inverse=True, return_counts=True), [(INT, (3, 4))]),
    ("unique_unsorted", lambda lib, x: lib.unique(x, sorted=False, return_counts=True), [(INT, (7,))]),
    (
        "unique_dim",
        lambda lib, x: lib.unique(x % 2, dim=1, return_inverse=True, return_counts=True),
        [(INT, (2, 5))],
    ),
    ("unique_0d", lambda lib, x: lib.unique(x, return_inverse=True), [(INT, ())]),
    ("split_int", lambda lib, x: x.split(2, 1), [(INT, (2, 3))]),
    ("unbind_bool", lambda lib, x: x.unbind(1), [(BOOL, (2, 3))]),
    ("diagonal_int", lambda lib, x: x.diagonal(), [(INT, (3, 2))]),
    ("unfold_int", lambda lib, x: x.unfold(0, 2, 1), [(INT, (3, 2))]),
    ("meshgrid_int", lambda lib, x, y: lib.meshgrid(x, y, indexing="xy"), [(INT, (2,)), (INT, (3,))]),
]


def outputs(out) -> list:
    return list(out) if isinstance(out, tuple) else [out]


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter with Tensor src is deprecated")
@pytest.mark.parametrize("fn, kinds", [c[1:] for c in FORWARD], ids=[c[0] for c in FORWARD])
def test_forward_matches_torch(fn, kinds):
    arrays = make_arrays(kinds)
    ours = outputs(fn(engine, *(engine.tensor(a) for a in arrays)))
    assert all(not o.requires_grad for o in ours)
    if torch is None:
        pytest.skip("torch is not installed")
    theirs = outputs(fn(torch, *(torch.tensor(a) for a in arrays)))
    assert len(ours) == len(theirs)
    for e, t in zip(ours, theirs):
        assert str(e.dtype).replace("engine.", "") == str(t.dtype).replace("torch.", "")
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_unique_records_a_node_whose_derivative_is_not_implemented():
    check_op(lambda lib, x: lib.unique(x), [(R, (5,))], node="Unique2Backward0", grad=False)
    check_op(lambda lib, x: x.unique(dim=0), [(R, (2, 3))], node="UniqueDimBackward0", grad=False)
    for call, name in ((lambda x: x.unique(), "_unique2"), (lambda x: x.unique(dim=0), "unique_dim")):
        check_error(
            lambda lib, call=call: call(lib.ones(2, 3, requires_grad=True)).sum().backward(),
            f"the derivative for '{name}' is not implemented.",
            NotImplementedError,
        )


def test_scatter_with_reduce_is_not_differentiable():
    x = engine.ones(2, 3, requires_grad=True)
    out = x.scatter(0, idx(engine, [[1, 1, 0]]), 2.0, reduce="multiply")
    assert out.grad_fn.name() == "engine::autograd::NotImplemented"
    check_error(
        lambda lib: (
            lib.ones(2, 3, requires_grad=True)
            .scatter(0, idx(lib, [[1, 0, 0]]), 2.0, reduce="add")
            .sum()
            .backward()
        ),
        "derivative for aten::scatter is not implemented",
    )
    with pytest.warns(
        UserWarning, match="The reduce argument of torch.scatter with Tensor src is deprecated"
    ):
        x.scatter(0, idx(engine, [[1, 1, 0]]), x * 2, reduce="add")


def test_sort_of_ties_keeps_their_order_when_stable(lib):
    x = lib.tensor([[2.0, 1.0, 2.0, 1.0, float("nan"), 2.0]])
    values, indices = x.sort(stable=True)
    assert indices.tolist() == [[1, 3, 0, 2, 5, 4]]
    assert lib.sort(x, descending=True, stable=True).indices.tolist() == [[4, 0, 2, 5, 1, 3]]
    assert x.argsort(stable=True, descending=True).tolist() == [[4, 0, 2, 5, 1, 3]]


def test_return_types_have_torchs_fields(lib):
    x = lib.tensor([[3.0, 1.0, 2.0]])
    for result in (x.sort(), x.topk(2), x.kthvalue(1)):
        values, indices = result
        assert result.values is values and result.indices is indices
        assert indices.dtype == lib.int64


def test_a_multi_output_node_takes_one_gradient_per_output(lib):
    x = lib.arange(6.0, requires_grad=True)
    pieces = x.split(2)
    node = pieces[0].grad_fn
    grad = node(None, lib.ones(2), None)
    assert grad.tolist() == [0.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    with pytest.raises(TypeError, match="expected 3 arguments, got 1 instead"):
        node(lib.ones(2))


def test_meshgrid_without_indexing_warns_and_is_ij(lib):
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        a, b = lib.meshgrid(lib.arange(2), lib.arange(3))
    assert a.shape == (2, 3) and b.tolist() == [[0, 1, 2], [0, 1, 2]]


def test_as_strided_defaults_to_the_views_storage_offset(lib):
    base = lib.arange(12.0)
    v = base[5:]
    assert v.as_strided((2, 2), (1, 3)).tolist() == [[5.0, 8.0], [6.0, 9.0]]
    assert v.as_strided((2,), (1,), 0).tolist() == [0.0, 1.0]


# ------------------------------------------------------------------------------- errors

X = (4, 5)


def x45(lib):
    return lib.zeros(*X)


ERRORS = [
    ("select_out_of_range", lambda lib: x45(lib).select(0, 4), IndexError),
    ("select_negative_out_of_range", lambda lib: lib.select(x45(lib), 1, -6), IndexError),
    ("select_0d", lambda lib: lib.tensor(1.0).select(0, 0), IndexError),
    ("getitem_out_of_range", lambda lib: x45(lib)[4], IndexError),
    ("narrow_start", lambda lib: x45(lib).narrow(1, 6, 1), IndexError),
    ("narrow_negative_start", lambda lib: x45(lib).narrow(1, -6, 1), IndexError),
    ("narrow_length", lambda lib: x45(lib).narrow(1, 2, 4), RuntimeError),
    ("narrow_negative_length", lambda lib: x45(lib).narrow(1, 2, -1), RuntimeError),
    ("narrow_0d", lambda lib: lib.tensor(1.0).narrow(0, 0, 1), RuntimeError),
    ("narrow_float_start", lambda lib: x45(lib).narrow(1, lib.tensor(1.0), 2), RuntimeError),
    ("narrow_dim", lambda lib: x45(lib).narrow(2, 0, 1), IndexError),
    ("split_zero", lambda lib: x45(lib).split(0), RuntimeError),
    ("split_negative", lambda lib: x45(lib).split(-1), RuntimeError),
    ("split_sizes_sum", lambda lib: x45(lib).split([1, 2]), RuntimeError),
    ("split_0d", lambda lib: lib.tensor(1.0).split(1), RuntimeError),
    ("split_with_sizes_negative", lambda lib: x45(lib).split_with_sizes([5, -1]), RuntimeError),
    ("chunk_zero", lambda lib: x45(lib).chunk(0), RuntimeError),
    ("chunk_0d", lambda lib: lib.tensor(1.0).chunk(1), RuntimeError),
    ("unbind_0d", lambda lib: lib.tensor(1.0).unbind(), IndexError),
    ("tensor_split_zero", lambda lib: x45(lib).tensor_split(0), RuntimeError),
    ("tensor_split_0d", lambda lib: lib.tensor(1.0).tensor_split(2), RuntimeError),
    ("tensor_split_2d_tensor", lambda lib: x45(lib).tensor_split(idx(lib, [[1]])), RuntimeError),
    ("tensor_split_float_tensor", lambda lib: x45(lib).tensor_split(lib.tensor([1.0])), RuntimeError),
    ("diagonal_same_dims", lambda lib: x45(lib).diagonal(0, 0, 0), RuntimeError),
    ("diagonal_1d", lambda lib: lib.zeros(3).diagonal(), IndexError),
    ("unfold_too_big", lambda lib: x45(lib).unfold(1, 6, 1), RuntimeError),
    ("unfold_step", lambda lib: x45(lib).unfold(1, 2, 0), RuntimeError),
    ("unfold_negative_size", lambda lib: x45(lib).unfold(1, -1, 1), RuntimeError),
    ("unfold_0d", lambda lib: lib.tensor(1.0).unfold(0, 2, 1), RuntimeError),
    ("as_strided_out_of_bounds", lambda lib: x45(lib).as_strided((5, 5), (5, 1)), RuntimeError),
    ("as_strided_negative", lambda lib: x45(lib).as_strided((2,), (-1,)), RuntimeError),
    ("as_strided_lengths", lambda lib: x45(lib).as_strided((2, 2), (1,)), RuntimeError),
    ("movedim_repeated", lambda lib: x45(lib).movedim((0, 0), (0, 1)), RuntimeError),
    ("movedim_repeated_negative", lambda lib: x45(lib).movedim((-1, 1), (0, 1)), RuntimeError),
    ("movedim_repeated_destination", lambda lib: lib.movedim(x45(lib), (0, 1), (0, 0)), RuntimeError),
    ("movedim_lengths", lambda lib: x45(lib).movedim((0, 1), (0,)), RuntimeError),
    ("unflatten_product", lambda lib: x45(lib).unflatten(1, (2, 2)), RuntimeError),
    ("unflatten_empty", lambda lib: x45(lib).unflatten(1, ()), RuntimeError),
    ("broadcast_to", lambda lib: x45(lib).broadcast_to((3, 5)), RuntimeError),
    ("broadcast_tensors", lambda lib: lib.broadcast_tensors(lib.zeros(3), lib.zeros(4)), RuntimeError),
    ("meshgrid_indexing", lambda lib: lib.meshgrid(lib.zeros(2), indexing="foo"), RuntimeError),
    ("meshgrid_dtypes", lambda lib: lib.meshgrid(lib.zeros(2), lib.arange(3), indexing="ij"), RuntimeError),
    ("meshgrid_empty", lambda lib: lib.meshgrid(indexing="ij"), RuntimeError),
    ("index_select_float_index", lambda lib: x45(lib).index_select(0, lib.tensor([0.0])), RuntimeError),
    ("index_select_2d_index", lambda lib: x45(lib).index_select(0, idx(lib, [[0]])), IndexError),
    ("index_select_out_of_range", lambda lib: x45(lib).index_select(0, idx(lib, [4])), IndexError),
    ("index_select_negative", lambda lib: x45(lib).index_select(0, idx(lib, [-1])), IndexError),
    (
        "index_select_0d_two_values",
        lambda lib: lib.tensor(1.0).index_select(0, idx(lib, [0, 0])),
        RuntimeError,
    ),
    ("gather_dims", lambda lib: x45(lib).gather(0, idx(lib, [0])), RuntimeError),
    ("gather_size", lambda lib: x45(lib).gather(1, lib.zeros(5, 2, dtype=lib.int64)), RuntimeError),
    ("gather_out_of_bounds", lambda lib: x45(lib).gather(0, idx(lib, [[4]])), RuntimeError),
    ("gather_negative", lambda lib: x45(lib).gather(0, idx(lib, [[-1]])), RuntimeError),
    ("gather_float_index", lambda lib: x45(lib).gather(0, lib.tensor([[0.0]])), RuntimeError),
    ("scatter_dims", lambda lib: x45(lib).scatter(0, idx(lib, [0]), 1.0), RuntimeError),
    (
        "scatter_src_small",
        lambda lib: x45(lib).scatter(0, lib.zeros(2, 2, dtype=lib.int64), lib.ones(1, 1)),
        RuntimeError,
    ),
    (
        "scatter_dtype",
        lambda lib: x45(lib).scatter(0, idx(lib, [[0]]), lib.ones(1, 1, dtype=lib.float64)),
        RuntimeError,
    ),
    ("scatter_out_of_bounds", lambda lib: x45(lib).scatter(0, idx(lib, [[4]]), 1.0), RuntimeError),
    ("scatter_float_index", lambda lib: x45(lib).scatter(0, lib.tensor([[0.0]]), 1.0), RuntimeError),
    (
        "scatter_reduce_argument",
        lambda lib: x45(lib).scatter(0, idx(lib, [[0]]), 1.0, reduce="max"),
        RuntimeError,
    ),
    (
        "scatter_add_dtype",
        lambda lib: x45(lib).scatter_add(0, idx(lib, [[0]]), lib.ones(1, 1, dtype=lib.float64)),
        RuntimeError,
    ),
    (
        "scatter_reduce_name",
        lambda lib: x45(lib).scatter_reduce(0, idx(lib, [[0]]), x45(lib), "foo"),
        RuntimeError,
    ),
    (
        "scatter_reduce_src_small",
        lambda lib: x45(lib).scatter_reduce(0, lib.zeros(2, 2, dtype=lib.int64), lib.ones(1, 1), "sum"),
        RuntimeError,
    ),
    (
        "index_add_dtype",
        lambda lib: x45(lib).index_add(0, idx(lib, [0]), lib.ones(1, 5, dtype=lib.float64)),
        RuntimeError,
    ),
    ("index_add_count", lambda lib: x45(lib).index_add(0, idx(lib, [0]), lib.ones(2, 5)), RuntimeError),
    ("index_add_shape", lambda lib: x45(lib).index_add(0, idx(lib, [0]), lib.ones(1, 4)), RuntimeError),
    (
        "index_add_out_of_bounds",
        lambda lib: x45(lib).index_add(0, idx(lib, [4]), lib.ones(1, 5)),
        RuntimeError,
    ),
    (
        "index_add_float_index",
        lambda lib: x45(lib).index_add(0, lib.tensor([0.0]), lib.ones(1, 5)),
        RuntimeError,
    ),
    ("index_add_2d_index", lambda lib: x45(lib).index_add(0, idx(lib, [[0]]), lib.ones(1, 5)), IndexError),
    ("index_copy_count", lambda lib: x45(lib).index_copy(0, idx(lib, [0]), lib.ones(2, 5)), IndexError),
    (
        "index_copy_dtype",
        lambda lib: x45(lib).index_copy(0, idx(lib, [0]), lib.ones(1, 5, dtype=lib.float64)),
        RuntimeError,
    ),
    (
        "index_copy_int32_index",
        lambda lib: x45(lib).index_copy(0, lib.tensor([0], dtype=lib.int32), lib.ones(1, 5)),
        RuntimeError,
    ),
    ("index_copy_shape", lambda lib: x45(lib).index_copy(0, idx(lib, [0]), lib.ones(1, 4)), RuntimeError),
    (
        "index_copy_out_of_bounds",
        lambda lib: x45(lib).index_copy(0, idx(lib, [4]), lib.ones(1, 5)),
        IndexError,
    ),
    ("index_fill_2d_index", lambda lib: x45(lib).index_fill(0, idx(lib, [[0]]), 1.0), RuntimeError),
    (
        "index_fill_1d_value",
        lambda lib: x45(lib).index_fill(0, idx(lib, [0]), lib.tensor([1.0])),
        RuntimeError,
    ),
    (
        "index_fill_int32_index",
        lambda lib: x45(lib).index_fill(0, lib.tensor([0], dtype=lib.int32), 1.0),
        IndexError,
    ),
    ("index_fill_out_of_bounds", lambda lib: x45(lib).index_fill(0, idx(lib, [4]), 1.0), IndexError),
    ("masked_fill_float_mask", lambda lib: x45(lib).masked_fill(lib.ones(*X), 1.0), RuntimeError),
    (
        "masked_fill_1d_value",
        lambda lib: x45(lib).masked_fill(lib.ones(*X) > 0, lib.tensor([1.0])),
        RuntimeError,
    ),
    ("masked_fill_shapes", lambda lib: x45(lib).masked_fill(lib.ones(3, 5) > 0, 1.0), RuntimeError),
    (
        "masked_fill_in_place_broadcast",
        lambda lib: x45(lib).masked_fill_(lib.ones(2, 4, 5) > 0, 1.0),
        RuntimeError,
    ),
    ("masked_select_float_mask", lambda lib: x45(lib).masked_select(lib.ones(*X)), RuntimeError),
    ("masked_select_shapes", lambda lib: x45(lib).masked_select(lib.ones(3, 5) > 0), RuntimeError),
    (
        "masked_scatter_float_mask",
        lambda lib: x45(lib).masked_scatter(lib.ones(*X), lib.ones(20)),
        RuntimeError,
    ),
    (
        "masked_scatter_too_few",
        lambda lib: x45(lib).masked_scatter(lib.ones(*X) > 0, lib.ones(3)),
        RuntimeError,
    ),
    (
        "masked_scatter_dtype",
        lambda lib: x45(lib).masked_scatter(lib.ones(*X) > 0, lib.ones(30, dtype=lib.float64)),
        RuntimeError,
    ),
    ("take_out_of_range", lambda lib: x45(lib).take(idx(lib, [20])), IndexError),
    ("take_negative_out_of_range", lambda lib: x45(lib).take(idx(lib, [-21])), IndexError),
    ("take_int32_index", lambda lib: x45(lib).take(lib.tensor([0], dtype=lib.int32)), RuntimeError),
    ("take_along_dim_float", lambda lib: lib.take_along_dim(x45(lib), lib.tensor([[0.0]]), 0), RuntimeError),
    ("take_along_dim_dims", lambda lib: lib.take_along_dim(x45(lib), idx(lib, [0]), 0), RuntimeError),
    ("take_along_dim_none_float", lambda lib: lib.take_along_dim(x45(lib), lib.tensor([0.0])), RuntimeError),
    ("flip_repeated", lambda lib: x45(lib).flip(0, 0), RuntimeError),
    ("flip_dim", lambda lib: x45(lib).flip(2), IndexError),
    ("fliplr_1d", lambda lib: lib.zeros(3).fliplr(), RuntimeError),
    ("flipud_0d", lambda lib: lib.tensor(1.0).flipud(), RuntimeError),
    ("roll_mismatch", lambda lib: x45(lib).roll((1, 2), (0,)), RuntimeError),
    ("roll_empty", lambda lib: x45(lib).roll(()), RuntimeError),
    ("roll_0d_dim", lambda lib: lib.tensor(1.0).roll(1, 0), IndexError),
    ("rot90_one_dim", lambda lib: x45(lib).rot90(1, [0]), RuntimeError),
    ("rot90_same", lambda lib: x45(lib).rot90(1, [0, 0]), RuntimeError),
    ("rot90_1d", lambda lib: lib.zeros(3).rot90(), RuntimeError),
    ("repeat_fewer", lambda lib: x45(lib).repeat(2), RuntimeError),
    ("repeat_negative", lambda lib: x45(lib).repeat(-1, 1), RuntimeError),
    ("repeat_interleave_negative", lambda lib: x45(lib).repeat_interleave(-1), RuntimeError),
    (
        "repeat_interleave_sizes",
        lambda lib: x45(lib).repeat_interleave(idx(lib, [1, 2]), dim=0),
        RuntimeError,
    ),
    ("repeat_interleave_2d", lambda lib: x45(lib).repeat_interleave(idx(lib, [[1]]), dim=0), RuntimeError),
    (
        "repeat_interleave_float",
        lambda lib: x45(lib).repeat_interleave(lib.tensor([1.0]), dim=0),
        NotImplementedError,
    ),
    (
        "repeat_interleave_output_size",
        lambda lib: x45(lib).repeat_interleave(2, dim=0, output_size=7),
        RuntimeError,
    ),
    ("tril_1d", lambda lib: lib.zeros(3).tril(), RuntimeError),
    ("triu_1d_in_place", lambda lib: lib.zeros(3).triu_(), RuntimeError),
    ("diag_3d", lambda lib: lib.zeros(2, 2, 2).diag(), RuntimeError),
    ("diag_embed_same_dims", lambda lib: x45(lib).diag_embed(0, 0, 0), RuntimeError),
    ("trace_1d", lambda lib: lib.zeros(3).trace(), RuntimeError),
    ("trace_bool", lambda lib: lib.zeros(2, 2, dtype=lib.bool).trace(), NotImplementedError),
    ("topk_too_big", lambda lib: x45(lib).topk(6), RuntimeError),
    ("topk_negative", lambda lib: x45(lib).topk(-1), RuntimeError),
    ("kthvalue_too_big", lambda lib: x45(lib).kthvalue(6), RuntimeError),
    ("kthvalue_zero", lambda lib: x45(lib).kthvalue(0), RuntimeError),
    ("kthvalue_float_k", lambda lib: x45(lib).kthvalue(1.5), TypeError),
    ("unique_dim", lambda lib: lib.unique(x45(lib), dim=3), IndexError),
    ("where_float_condition", lambda lib: lib.where(lib.ones(*X), x45(lib), 0.0), RuntimeError),
]


@pytest.mark.parametrize("fn, exception", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_error(fn, exception):
    check_error(fn, exception=exception)


def test_meshgrid_refuses_a_2d_tensor():
    with pytest.raises(
        RuntimeError, match=r"^engine.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
    ):
        engine.meshgrid(engine.zeros(2, 2), indexing="ij")


# ------------------------------------------------------------- one code path for CPU and GPU


def _first_float(out):
    return next(o for o in outputs(out) if o.is_floating_point())


def _run_on(device, fn, arrays):
    """Outputs, gradients and second-order gradients of fn on `device`, as host arrays."""
    inputs = [engine.tensor(a, requires_grad=True, device=device) for a in arrays]
    out = _first_float(fn(engine, *inputs))
    rng = np.random.default_rng(0)
    v = engine.tensor(rng.standard_normal(tuple(out.shape)), device=device)
    grads = engine.autograd.grad(out, inputs, v, allow_unused=True, create_graph=True)
    found = [out] + [g for g in grads if g is not None]
    terms = [
        (g * engine.tensor(rng.standard_normal(tuple(g.shape)), device=device)).sum()
        for g in grads
        if g is not None and g.requires_grad
    ]
    if terms:
        found += [g for g in engine.autograd.grad(sum(terms), inputs, allow_unused=True) if g is not None]
    return found


DEVICE_CASES = CASES + [(c[0], lambda lib, x, *o, c=c: c[1](lib, x * 1, *o), c[2], c[3]) for c in IN_PLACE]


@pytest.mark.parametrize("fn, kinds", [c[1:3] for c in DEVICE_CASES], ids=[c[0] for c in DEVICE_CASES])
def test_on_cuda_as_on_the_cpu(fake_cuda, fn, kinds):
    """Forward, backward and double backward on the CuPy stand-in equal the CPU's: every kernel and
    formula reaches its arrays through `xp` (tests/fake_cupy.py refuses numpy-only paths)."""
    arrays = make_arrays(kinds)
    expected = _run_on("cpu", fn, arrays)
    engine.set_default_device("cuda")  # the index and mask tensors the case makes go there too
    got = _run_on("cuda", fn, arrays)
    assert all(t.device.type == "cuda" for t in got) and len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(
            backend.to_numpy(g.detach()._data), e.detach().numpy(), rtol=1e-12, atol=1e-14
        )


AXIS = [
    lambda lib, x: lib.sort(x, axis=0).values,
    lambda lib, x: x.gather(axis=1, index=idx(lib, [[0], [2], [1]])),
    lambda lib, x: lib.index_select(x, axis=-1, index=idx(lib, [1])),
    lambda lib, x: x.unbind(axis=1)[0],
    lambda lib, x: x.kthvalue(2, axis=0).values,
    lambda lib, x: x.topk(1, axis=0).values,
    lambda lib, x: x.narrow(axis=1, start=1, length=2),
    lambda lib, x: x.chunk(2, axis=1)[1],
    lambda lib, x: lib.take_along_dim(x, idx(lib, [[0, 1, 0, 2]]), axis=0),
    lambda lib, x: x.repeat_interleave(2, axis=0),
    lambda lib, x: x.index_add(axis=0, index=idx(lib, [1]), source=x[:1]),
    lambda lib, x: x.split(split_size=2)[1],
]


@pytest.mark.parametrize("fn", AXIS)
def test_axis_and_torchs_keyword_names(fn):
    check_op(fn, [(D, (3, 4))])


def test_where_takes_a_uint8_condition_with_torchs_warning(lib):
    with pytest.warns(UserWarning, match="where received a uint8 condition tensor"):
        out = lib.where(lib.tensor([1, 0, 2], dtype=lib.uint8), lib.ones(3), 0.0)
    assert out.tolist() == [1.0, 0.0, 1.0]
