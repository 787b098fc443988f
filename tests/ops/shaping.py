"""Registry entries of shape, view and indexing ops: views, splits, indexing, gathers and scatters, their
in-place forms (on a non-leaf copy of the target), sorting."""

import numpy as np

from ops.opinfo import NUMPY, OpInfo, Sample
from ops.support import D34, MASK34, R34, D, R, idx, mask, on_a_copy

# (op, sample, call(lib, target, *others) changing `target` in place, kinds, node); tests/test_ops_shaping.py
# checks each returns its target one version on and refuses a leaf.
IN_PLACE = [
    (
        "scatter_",
        "",
        lambda lib, t, s: t.scatter_(0, idx(lib, [[2, 0, 1, 2], [0, 1, 2, 1]]), s),
        [(R, (3, 4)), (R, (2, 4))],
        "ScatterBackward0",
    ),
    (
        "scatter_",
        "value",
        lambda lib, t: t.scatter_(1, idx(lib, [[3], [1]]), 4.0),
        [(R, (3, 4))],
        "ScatterBackward1",
    ),
    (
        "scatter_add_",
        "",
        lambda lib, t, s: t.scatter_add_(0, idx(lib, [[2, 2, 1, 2]]), s),
        [(R, (3, 4)), (R, (1, 4))],
        "ScatterAddBackward0",
    ),
    (
        "scatter_reduce_",
        "",
        lambda lib, t, s: t.scatter_reduce_(0, idx(lib, [[2, 2, 1, 2]]), s, "amax"),
        [(D, (3, 4)), (D, (1, 4))],
        "ScatterReduceBackward0",
    ),
    (
        "index_add_",
        "",
        lambda lib, t, s: t.index_add_(1, idx(lib, [0, 0]), s, alpha=2),
        [(R, (3, 4)), (R, (3, 2))],
        "IndexAddBackward0",
    ),
    (
        "index_copy_",
        "",
        lambda lib, t, s: t.index_copy_(0, idx(lib, [2]), s),
        [(R, (3, 4)), (R, (1, 4))],
        "IndexCopyBackward0",
    ),
    (
        "index_fill_",
        "",
        lambda lib, t: t.index_fill_(1, idx(lib, [1, 3]), 0.5),
        [(R, (3, 4))],
        "IndexFillBackward0",
    ),
    (
        "index_fill_",
        "tensor",
        lambda lib, t, v: t.index_fill_(0, idx(lib, [1]), v),
        [(R, (3, 4)), (R, ())],
        "IndexFillBackward1",
    ),
    (
        "masked_fill_",
        "",
        lambda lib, t: t.masked_fill_(mask(lib, (3, 4)), 1.5),
        [(R, (3, 4))],
        "MaskedFillBackward0",
    ),
    (
        "masked_fill_",
        "tensor",
        lambda lib, t, v: t.masked_fill_(mask(lib, (4,)), v),
        [(R, (3, 4)), (R, ())],
        "MaskedFillBackward1",
    ),
    (
        "masked_scatter_",
        "",
        lambda lib, t, s: t.masked_scatter_(mask(lib, (3, 4)), s),
        [(R, (3, 4)), (R, (12,))],
        "MaskedScatterBackward0",
    ),
    ("tril_", "", lambda lib, t: t.tril_(1), [(R, (3, 4))], "TrilBackward0"),
    ("triu_", "", lambda lib, t: t.triu_(), [(R, (2, 3, 4))], "TriuBackward0"),
]


def in_place_ops() -> list[OpInfo]:
    """Each in-place op, its samples run on a non-leaf copy of the target."""
    ops: dict[str, list[Sample]] = {}
    for op, name, call, kinds, node in IN_PLACE:
        ops.setdefault(op, []).append(Sample(name, on_a_copy(call), kinds, node=node))
    return [OpInfo(op, samples) for op, samples in ops.items()]


OPS = [
    OpInfo(
        "reshape",
        [
            Sample("", lambda lib, x: x.reshape(4, 3), [R34], squared=True, ref=NUMPY),
            Sample("tuple", lambda lib, x: x.reshape((2, -1)), [R34], squared=True, ref=NUMPY),
            Sample("flat", lambda lib, x: x.reshape(-1), [R34], squared=True, ref=NUMPY),
            Sample(
                "func",
                lambda lib, x: lib.reshape(x, (6, 2)),
                [R34],
                ref=lambda x: x.reshape(6, 2),
                squared=True,
            ),
        ],
    ),
    OpInfo(
        "view",
        [
            Sample("", lambda lib, x: x.view(2, 6), [R34], ref=lambda x: x.reshape(2, 6), squared=True),
            Sample(
                "infer",
                lambda lib, x: x.view(-1, 2, 3),
                [R34],
                ref=lambda x: x.reshape(-1, 2, 3),
                squared=True,
            ),
            Sample(
                "then_op",
                lambda lib, x: x.t().reshape(12).sin(),
                [R34],
                ref=lambda x: np.sin(x.T.reshape(12)),
                squared=True,
            ),
        ],
    ),
    OpInfo(
        "t",
        [
            Sample("", lambda lib, x: x.t(), [R34], ref=lambda x: x.T, squared=True),
            Sample("1d", lambda lib, x: x.t(), [("r", (4,))], ref=lambda x: x, squared=True),
        ],
    ),
    OpInfo(
        "transpose",
        [
            Sample("", lambda lib, x: x.transpose(0, 1), [R34], ref=lambda x: x.T, squared=True),
            Sample(
                "neg",
                lambda lib, x: x.transpose(-1, -3),
                [("r", (2, 3, 4))],
                ref=lambda x: x.swapaxes(-1, -3),
                squared=True,
            ),
            Sample(
                "func",
                lambda lib, x: lib.transpose(x, 1, 2),
                [("r", (2, 3, 4))],
                ref=lambda x: x.swapaxes(1, 2),
                squared=True,
            ),
        ],
    ),
    OpInfo(
        "permute",
        [
            Sample(
                "",
                lambda lib, x: x.permute(2, 0, 1),
                [("r", (2, 3, 4))],
                ref=lambda x: x.transpose(2, 0, 1),
                squared=True,
            ),
            Sample(
                "tuple_neg",
                lambda lib, x: x.permute((-1, 1, 0)),
                [("r", (2, 3, 4))],
                ref=lambda x: x.transpose(2, 1, 0),
                squared=True,
            ),
        ],
    ),
    OpInfo(
        "expand",
        [
            Sample(
                "",
                lambda lib, x: x.expand(3, 4),
                [("r", (1, 4))],
                ref=lambda x: np.broadcast_to(x, (3, 4)),
                squared=True,
            ),
            Sample(
                "newdim",
                lambda lib, x: x.expand(2, 3, 4),
                [("r", (3, 1))],
                ref=lambda x: np.broadcast_to(x, (2, 3, 4)),
                squared=True,
            ),
            Sample(
                "minus1",
                lambda lib, x: x.expand(-1, 5),
                [("r", (3, 1))],
                ref=lambda x: np.broadcast_to(x, (3, 5)),
                squared=True,
            ),
        ],
    ),
    OpInfo(
        "squeeze",
        [
            Sample("", lambda lib, x: x.squeeze(), [("r", (3, 1, 4, 1))], squared=True, ref=NUMPY),
            Sample("dim", lambda lib, x: x.squeeze(1), [("r", (3, 1, 4))], squared=True, ref=NUMPY),
            Sample("negdim", lambda lib, x: x.squeeze(-1), [("r", (3, 4, 1))], squared=True, ref=NUMPY),
            Sample("noop", lambda lib, x: x.squeeze(0), [R34], ref=lambda x: x, squared=True),
        ],
    ),
    OpInfo(
        "unsqueeze",
        [
            Sample("", lambda lib, x: x.unsqueeze(0), [R34], ref=lambda x: x[None], squared=True),
            Sample("mid", lambda lib, x: x.unsqueeze(1), [R34], ref=lambda x: x[:, None], squared=True),
            Sample("neg", lambda lib, x: x.unsqueeze(-1), [R34], ref=lambda x: x[..., None], squared=True),
        ],
    ),
    OpInfo(
        "flatten",
        [
            Sample("", lambda lib, x: x.flatten(), [("r", (2, 3, 4))], squared=True, ref=NUMPY),
            Sample(
                "start",
                lambda lib, x: x.flatten(1),
                [("r", (2, 3, 4))],
                ref=lambda x: x.reshape(2, 12),
                squared=True,
            ),
            Sample(
                "range",
                lambda lib, x: x.flatten(0, 1),
                [("r", (2, 3, 4))],
                ref=lambda x: x.reshape(6, 4),
                squared=True,
            ),
            Sample(
                "func",
                lambda lib, x: lib.flatten(x),
                [("r", (2, 3, 4))],
                ref=lambda x: x.flatten(),
                squared=True,
            ),
            Sample(
                "graph", lambda lib, img: lib.flatten(img, 1), [("r", (2, 3, 6, 6))], torch_tol=(1e-10, 1e-12)
            ),
        ],
    ),
    OpInfo(
        "getitem",
        [
            Sample("int", lambda lib, x: x[1], [R34], squared=True, ref=NUMPY),
            Sample("negative", lambda lib, x: x[-1], [R34], squared=True, ref=NUMPY),
            Sample("2int", lambda lib, x: x[1, -2], [R34], squared=True, ref=NUMPY),
            Sample("slice", lambda lib, x: x[1:3], [R34], squared=True, ref=NUMPY),
            Sample("slice_step", lambda lib, x: x[::2], [R34], squared=True, ref=NUMPY),
            Sample("slice_2d_step", lambda lib, x: x[1:, 0:4:3], [R34], squared=True, ref=NUMPY),
            Sample("slice_negative", lambda lib, x: x[-2:, :-1], [R34], squared=True, ref=NUMPY),
            Sample("int_list", lambda lib, x: x[[0, 2]], [R34], squared=True, ref=NUMPY),
            Sample("int_list_dup", lambda lib, x: x[[2, 0, 2]], [R34], squared=True, ref=NUMPY),
            Sample(
                "tensor",
                lambda lib, x: x[lib.tensor(np.array([2, 0, 2]))],
                [R34],
                ref=lambda x: x[[2, 0, 2]],
                squared=True,
            ),
            Sample("int_list_neg", lambda lib, x: x[:, [-1, 0]], [R34], squared=True, ref=NUMPY),
            Sample("pairwise", lambda lib, x: x[[0, 1, 2], [3, 1, 3]], [R34], squared=True, ref=NUMPY),
            Sample(
                "bool_mask",
                lambda lib, x: x[lib.tensor(MASK34)],
                [R34],
                ref=lambda x: x[MASK34],
                squared=True,
            ),
            Sample(
                "bool_mask_rows",
                lambda lib, x: x[lib.tensor(np.array([True, False, True]))],
                [R34],
                ref=lambda x: x[[0, 2]],
                squared=True,
            ),
            Sample("mixed_tuple", lambda lib, x: x[1, 1:3], [R34], squared=True, ref=NUMPY),
            Sample(
                "mixed_3d",
                lambda lib, x: x[:, 1, [0, 3]],
                [("r", (2, 3, 4))],
                squared=True,
                ref=NUMPY,
            ),
            Sample("none", lambda lib, x: x[None], [R34], squared=True, ref=NUMPY),
            Sample("none_mid", lambda lib, x: x[:, None, 1:3], [R34], squared=True, ref=NUMPY),
            Sample("ellipsis", lambda lib, x: x[..., 1], [("r", (2, 3, 4))], squared=True, ref=NUMPY),
            Sample(
                "ellipsis_mixed",
                lambda lib, x: x[1, ..., None, 2:],
                [("r", (2, 3, 4))],
                squared=True,
                ref=NUMPY,
            ),
            Sample("then_op", lambda lib, x: x[1:, ::2] * x[:2, 1::2], [R34], squared=True, ref=NUMPY),
        ],
    ),
    OpInfo(
        "cat",
        [
            Sample(
                "dim0",
                lambda lib, x, y: lib.cat([x, y]),
                [("r", (2, 3)), ("r", (4, 3))],
                ref=lambda x, y: np.concatenate([x, y]),
                squared=True,
            ),
            Sample(
                "dim1",
                lambda lib, x, y: lib.cat((x, y), 1),
                [("r", (3, 2)), ("r", (3, 4))],
                ref=lambda x, y: np.concatenate([x, y], 1),
                squared=True,
            ),
            Sample(
                "negdim_three",
                lambda lib, x, y, z: lib.cat([x, y, z], dim=-1),
                [("r", (2, 2)), ("r", (2, 1)), ("r", (2, 3))],
                ref=lambda x, y, z: np.concatenate([x, y, z], -1),
                squared=True,
            ),
            Sample(
                "same",
                lambda lib, x: lib.cat([x, x * 2], 0),
                [R34],
                ref=lambda x: np.concatenate([x, x * 2]),
                squared=True,
            ),
        ],
    ),
    OpInfo(
        "stack",
        [
            Sample(
                "dim0",
                lambda lib, x, y: lib.stack([x, y]),
                [R34, R34],
                ref=lambda x, y: np.stack([x, y]),
                squared=True,
            ),
            Sample(
                "dim1",
                lambda lib, x, y: lib.stack((x, y), 1),
                [R34, R34],
                ref=lambda x, y: np.stack([x, y], 1),
                squared=True,
            ),
            Sample(
                "negdim",
                lambda lib, x, y, z: lib.stack([x, y, z], dim=-1),
                [R34, R34, R34],
                ref=lambda x, y, z: np.stack([x, y, z], -1),
                squared=True,
            ),
        ],
    ),
    OpInfo(
        "where",
        [
            Sample(
                "",
                lambda lib, a, b: lib.where(lib.tensor(MASK34), a, b),
                [R34, R34],
                ref=lambda a, b: np.where(MASK34, a, b),
                squared=True,
            ),
            Sample(
                "bcast",
                lambda lib, a, b: lib.where(lib.tensor(MASK34), a, b),
                [("r", (4,)), ("r", (3, 1))],
                ref=lambda a, b: np.where(MASK34, a, b),
                squared=True,
            ),
            Sample(
                "same",
                lambda lib, a: lib.where(lib.tensor(MASK34), a, a * a),
                [R34],
                ref=lambda a: np.where(MASK34, a, a * a),
                squared=True,
            ),
            Sample(
                "from_compare",
                lambda lib, a: lib.where(a > 0, a, a.exp() - 1),
                [D34],
                ref=lambda a: np.where(a > 0, a, np.exp(a) - 1),
                squared=True,
            ),
            Sample(
                "compare",
                lambda lib, x, y: lib.where(x > 0, x, y),
                [(R, (3, 4)), (R, (4,))],
                node="WhereBackward0",
            ),
            Sample("scalar", lambda lib, x: lib.where(x > 0, x, 0.5), [(R, (3, 4))], node="WhereBackward0"),
            Sample(
                "scalar_first", lambda lib, x: lib.where(x > 0, 2, x), [(R, (3, 4))], node="WhereBackward0"
            ),
            Sample(
                "method",
                lambda lib, x, y: x.where(y > 0, y),
                [(R, (3, 4)), (R, (3, 4))],
                node="WhereBackward0",
            ),
            Sample(
                "0d", lambda lib, x: lib.where(lib.tensor(True), x, 0.0), [(R, ())], node="WhereBackward0"
            ),
        ],
    ),
    OpInfo(
        "clone",
        [
            Sample("", lambda lib, x: x.clone(), [R34], ref=lambda x: x.copy(), squared=True),
            Sample("func", lambda lib, x: lib.clone(x) * x, [R34], ref=lambda x: x * x, squared=True),
        ],
    ),
    OpInfo(
        "split",
        [
            Sample("", lambda lib, x: x.split(2), [(R, (5, 3))], node="SplitBackward0"),
            Sample("dim_neg", lambda lib, x: lib.split(x, 2, dim=-1), [(R, (3, 5))], node="SplitBackward0"),
            Sample(
                "sizes", lambda lib, x: x.split([1, 3, 1], 1), [(R, (2, 5))], node="SplitWithSizesBackward0"
            ),
            Sample(
                "all_pieces",
                lambda lib, x: sum((i + 1) * p.sum() for i, p in enumerate(x.split(2))),
                [(R, (5, 2))],
                node="AddBackward0",
            ),
            Sample("some_pieces", lambda lib, x: x.split(2)[1] * 3, [(R, (5, 2))], node="MulBackward0"),
        ],
    ),
    OpInfo(
        "split_with_sizes",
        [
            Sample(
                "",
                lambda lib, x: x.split_with_sizes([2, 2], dim=0),
                [(R, (4, 2))],
                node="SplitWithSizesBackward0",
            ),
        ],
    ),
    OpInfo(
        "chunk",
        [
            Sample("", lambda lib, x: x.chunk(3), [(R, (7, 2))], node="SplitBackward0"),
            Sample("dim", lambda lib, x: lib.chunk(x, 2, dim=1), [(R, (2, 5))], node="SplitBackward0"),
            Sample("more_than_size", lambda lib, x: x.chunk(6), [(R, (4,))], node="SplitBackward0"),
        ],
    ),
    OpInfo(
        "unbind",
        [
            Sample("", lambda lib, x: x.unbind(), [(R, (3, 2))], node="UnbindBackward0"),
            Sample("dim", lambda lib, x: lib.unbind(x, dim=-1), [(R, (2, 3))], node="UnbindBackward0"),
            Sample(
                "all",
                lambda lib, x: sum((i + 1) * p for i, p in enumerate(x.unbind(1))),
                [(R, (2, 3))],
                node="AddBackward0",
            ),
            Sample("1d", lambda lib, x: x.unbind()[1] * 2, [(R, (3,))], node="MulBackward0"),
        ],
    ),
    OpInfo(
        "tensor_split",
        [
            Sample("sections", lambda lib, x: x.tensor_split(3), [(R, (7, 2))], node="SliceBackward0"),
            Sample(
                "indices",
                lambda lib, x: lib.tensor_split(x, [1, 4], dim=1),
                [(R, (2, 5))],
                node="SliceBackward0",
            ),
            Sample(
                "tensor", lambda lib, x: x.tensor_split(idx(lib, [1, 3])), [(R, (5,))], node="SliceBackward0"
            ),
            Sample("past_end", lambda lib, x: x.tensor_split([2, 9]), [(R, (4,))], node="SliceBackward0"),
        ],
    ),
    OpInfo(
        "narrow",
        [
            Sample("", lambda lib, x: x.narrow(1, 1, 2), [(R, (3, 4))], node="SliceBackward0"),
            Sample(
                "neg_start", lambda lib, x: lib.narrow(x, -1, -3, 2), [(R, (3, 4))], node="SliceBackward0"
            ),
            Sample(
                "tensor_start",
                lambda lib, x: x.narrow(0, lib.tensor(1), 2),
                [(R, (3, 4))],
                node="SliceBackward0",
            ),
        ],
    ),
    OpInfo(
        "select",
        [
            Sample("", lambda lib, x: x.select(1, -1), [(R, (3, 4))], node="SelectBackward0"),
        ],
    ),
    OpInfo(
        "diagonal",
        [
            Sample("", lambda lib, x: x.diagonal(), [(R, (3, 4))], node="DiagonalBackward0"),
            Sample("offset", lambda lib, x: lib.diagonal(x, 1), [(R, (3, 4))], node="DiagonalBackward0"),
            Sample(
                "neg_offset_dims",
                lambda lib, x: x.diagonal(-1, 2, 0),
                [(R, (3, 2, 4))],
                node="DiagonalBackward0",
            ),
            Sample("empty", lambda lib, x: x.diagonal(5), [(R, (3, 4))], node="DiagonalBackward0"),
        ],
    ),
    OpInfo(
        "movedim",
        [
            Sample("", lambda lib, x: x.movedim(0, -1), [(R, (2, 3, 4))], node="PermuteBackward0"),
            Sample(
                "tuple",
                lambda lib, x: lib.movedim(x, (0, 1), (2, 0)),
                [(R, (2, 3, 4))],
                node="PermuteBackward0",
            ),
            Sample("0d", lambda lib, x: x.movedim(0, 0), [(R, ())], node="AliasBackward0"),
        ],
    ),
    OpInfo(
        "moveaxis",
        [
            Sample("", lambda lib, x: lib.moveaxis(x, -1, 0), [(R, (2, 3))], node="PermuteBackward0"),
        ],
    ),
    OpInfo(
        "swapaxes",
        [
            Sample("", lambda lib, x: x.swapaxes(0, -1), [(R, (2, 3, 4))], node="TransposeBackward0"),
        ],
    ),
    OpInfo(
        "swapdims",
        [
            Sample("", lambda lib, x: lib.swapdims(x, 1, 0), [(R, (2, 3))], node="TransposeBackward0"),
        ],
    ),
    OpInfo(
        "unflatten",
        [
            Sample("", lambda lib, x: x.unflatten(1, (2, 3)), [(R, (2, 6))], node="ViewBackward0"),
            Sample(
                "infer", lambda lib, x: lib.unflatten(x, -1, (-1, 2)), [(R, (2, 6))], node="ViewBackward0"
            ),
        ],
    ),
    OpInfo(
        "broadcast_to",
        [
            Sample("", lambda lib, x: x.broadcast_to((2, 3, 4)), [(R, (3, 1))], node="ExpandBackward0"),
            Sample("0d", lambda lib, x: lib.broadcast_to(x, (2,)), [(R, ())], node="ExpandBackward0"),
        ],
    ),
    OpInfo(
        "broadcast_tensors",
        [
            Sample(
                "",
                lambda lib, x, y: lib.broadcast_tensors(x, y),
                [(R, (3, 1)), (R, (4,))],
                node="ExpandBackward0",
            ),
            Sample(
                "same",
                lambda lib, x, y: lib.broadcast_tensors(x, y)[1] * 2,
                [(R, (3, 4)), (R, (4,))],
                node="MulBackward0",
            ),
        ],
    ),
    OpInfo(
        "expand_as",
        [
            Sample("", lambda lib, x, y: x.expand_as(y), [(R, (3, 1)), (R, (3, 4))], node="ExpandBackward0"),
        ],
    ),
    OpInfo(
        "view_as",
        [
            Sample("", lambda lib, x, y: x.view_as(y), [(R, (3, 4)), (R, (2, 6))], node="ViewBackward0"),
        ],
    ),
    OpInfo(
        "reshape_as",
        [
            Sample(
                "",
                lambda lib, x, y: x.t().reshape_as(y),
                [(R, (3, 4)), (R, (2, 6))],
                node="UnsafeViewBackward0",
            ),
        ],
    ),
    OpInfo(
        "meshgrid",
        [
            Sample(
                "ij",
                lambda lib, x, y: lib.meshgrid(x, y, indexing="ij"),
                [(R, (3,)), (R, (4,))],
                node="ExpandBackward0",
            ),
            Sample(
                "xy",
                lambda lib, x, y, z: lib.meshgrid([x, y, z], indexing="xy"),
                [(R, (3,)), (R, (2,)), (R, ())],
                node="ExpandBackward0",
            ),
        ],
    ),
    OpInfo(
        "as_strided",
        [
            Sample("", lambda lib, x: x.as_strided((2, 2), (1, 2)), [(R, (3, 4))], node="AsStridedBackward0"),
            Sample(
                "overlap",
                lambda lib, x: lib.as_strided(x, (3, 3), (1, 1), 2),
                [(R, (3, 4))],
                node="AsStridedBackward0",
            ),
            Sample(
                "of_view",
                lambda lib, x: x[1:].as_strided((2, 3), (2, 1)),
                [(R, (3, 4))],
                node="AsStridedBackward0",
            ),
            Sample(
                "of_transpose",
                lambda lib, x: x.t().as_strided((4,), (3,), 1),
                [(R, (3, 4))],
                node="AsStridedBackward0",
            ),
        ],
    ),
    OpInfo(
        "index_select",
        [
            Sample(
                "",
                lambda lib, x: x.index_select(0, idx(lib, [2, 0, 2])),
                [(R, (3, 4))],
                node="IndexSelectBackward0",
            ),
            Sample(
                "dim_neg",
                lambda lib, x: lib.index_select(x, -1, idx(lib, [3, 1])),
                [(R, (3, 4))],
                node="IndexSelectBackward0",
            ),
            Sample(
                "int32_0d_index",
                lambda lib, x: x.index_select(1, lib.tensor(2, dtype=lib.int32)),
                [(R, (3, 4))],
                node="IndexSelectBackward0",
            ),
            Sample(
                "0d", lambda lib, x: x.index_select(0, idx(lib, [0])), [(R, ())], node="IndexSelectBackward0"
            ),
        ],
    ),
    OpInfo(
        "gather",
        [
            Sample(
                "",
                lambda lib, x: x.gather(0, idx(lib, [[2, 0, 1, 2], [0, 0, 2, 1]])),
                [(R, (3, 4))],
                node="GatherBackward0",
            ),
            Sample(
                "dim1_small_index",
                lambda lib, x: lib.gather(x, 1, idx(lib, [[3, 3], [0, 1]])),
                [(R, (3, 4))],
                node="GatherBackward0",
            ),
            Sample("0d", lambda lib, x: x.gather(0, idx(lib, 0)), [(R, ())], node="GatherBackward0"),
            Sample(
                "0d_index_of_1d", lambda lib, x: x.gather(0, idx(lib, 2)), [(R, (3,))], node="GatherBackward0"
            ),
        ],
    ),
    OpInfo(
        "take",
        [
            Sample(
                "", lambda lib, x: x.take(idx(lib, [[0, 11], [-1, 5]])), [(R, (3, 4))], node="TakeBackward0"
            ),
            Sample("0d", lambda lib, x: lib.take(x, idx(lib, 0)), [(R, ())], node="TakeBackward0"),
        ],
    ),
    OpInfo(
        "take_along_dim",
        [
            Sample(
                "",
                lambda lib, x: lib.take_along_dim(x, idx(lib, [[0], [3], [1]]), dim=1),
                [(R, (3, 4))],
                node="GatherBackward0",
            ),
            Sample(
                "broadcast",
                lambda lib, x: x.take_along_dim(idx(lib, [[2, 1, 0, 0]]), 0),
                [(R, (3, 4))],
                node="GatherBackward0",
            ),
            Sample(
                "none",
                lambda lib, x: lib.take_along_dim(x, idx(lib, [0, 7, 7])),
                [(R, (3, 4))],
                node="GatherBackward0",
            ),
        ],
    ),
    OpInfo(
        "masked_select",
        [
            Sample(
                "",
                lambda lib, x: x.masked_select(mask(lib, (3, 4))),
                [(R, (3, 4))],
                node="MaskedSelectBackward0",
            ),
            Sample(
                "broadcast",
                lambda lib, x: lib.masked_select(x, mask(lib, (2, 3, 4))),
                [(R, (3, 1))],
                node="MaskedSelectBackward0",
            ),
            Sample(
                "0d",
                lambda lib, x: x.masked_select(lib.tensor(True)),
                [(R, ())],
                node="MaskedSelectBackward0",
            ),
        ],
    ),
    OpInfo(
        "scatter",
        [
            Sample(
                "",
                lambda lib, x, s: x.scatter(0, idx(lib, [[2, 0, 1, 2], [0, 1, 2, 1]]), s),
                [(R, (3, 4)), (R, (2, 4))],
                node="ScatterBackward0",
            ),
            Sample(
                "value",
                lambda lib, x: x.scatter(1, idx(lib, [[3, 0], [1, 2]]), 2.5),
                [(R, (3, 4))],
                node="ScatterBackward1",
            ),
            Sample(
                "value_kw",
                lambda lib, x: lib.scatter(x, -1, idx(lib, [[1]]), value=-1.0),
                [(R, (3, 4))],
                node="ScatterBackward1",
            ),
            Sample(
                "0d",
                lambda lib, x, s: x.scatter(0, idx(lib, 0), s),
                [(R, ()), (R, ())],
                node="ScatterBackward0",
            ),
        ],
    ),
    OpInfo(
        "scatter_add",
        [
            Sample(
                "",
                lambda lib, x, s: x.scatter_add(0, idx(lib, [[2, 0, 2, 2], [2, 0, 1, 1]]), s),
                [(R, (3, 4)), (R, (2, 4))],
                node="ScatterAddBackward0",
            ),
        ],
    ),
    OpInfo(
        "index_add",
        [
            Sample(
                "",
                lambda lib, x, s: x.index_add(0, idx(lib, [2, 0, 2]), s),
                [(R, (3, 4)), (R, (3, 4))],
                node="IndexAddBackward0",
            ),
            Sample(
                "alpha_dim",
                lambda lib, x, s: lib.index_add(x, 1, idx(lib, [3, 1]), s, alpha=-2.5),
                [(R, (3, 4)), (R, (3, 2))],
                node="IndexAddBackward0",
            ),
            Sample(
                "0d",
                lambda lib, x, s: x.index_add(0, idx(lib, [0]), s),
                [(R, ()), (R, ())],
                node="IndexAddBackward0",
            ),
        ],
    ),
    OpInfo(
        "index_copy",
        [
            Sample(
                "",
                lambda lib, x, s: x.index_copy(1, idx(lib, [3, 0]), s),
                [(R, (3, 4)), (R, (3, 2))],
                node="IndexCopyBackward0",
            ),
            Sample(
                "0d",
                lambda lib, x, s: x.index_copy(0, idx(lib, [0]), s),
                [(R, ()), (R, ())],
                node="IndexCopyBackward0",
            ),
        ],
    ),
    OpInfo(
        "index_fill",
        [
            Sample(
                "",
                lambda lib, x: x.index_fill(1, idx(lib, [3, 0, 3]), -2.0),
                [(R, (3, 4))],
                node="IndexFillBackward0",
            ),
            Sample(
                "tensor",
                lambda lib, x, v: lib.index_fill(x, 0, idx(lib, [1, 2]), v),
                [(R, (3, 4)), (R, ())],
                node="IndexFillBackward1",
            ),
            Sample(
                "0d", lambda lib, x: x.index_fill(0, idx(lib, 0), 1.0), [(R, ())], node="IndexFillBackward0"
            ),
        ],
    ),
    OpInfo(
        "masked_fill",
        [
            Sample(
                "",
                lambda lib, x: x.masked_fill(mask(lib, (3, 4)), 2.0),
                [(R, (3, 4))],
                node="MaskedFillBackward0",
            ),
            Sample(
                "broadcast",
                lambda lib, x: lib.masked_fill(x, mask(lib, (2, 3, 4)), -1.0),
                [(R, (3, 1))],
                node="MaskedFillBackward0",
            ),
            Sample(
                "tensor",
                lambda lib, x, v: x.masked_fill(mask(lib, (4,)), v),
                [(R, (3, 4)), (R, ())],
                node="MaskedFillBackward1",
            ),
        ],
    ),
    OpInfo(
        "masked_scatter",
        [
            Sample(
                "",
                lambda lib, x, s: x.masked_scatter(mask(lib, (3, 4)), s),
                [(R, (3, 4)), (R, (2, 7))],
                node="MaskedScatterBackward0",
            ),
            Sample(
                "broadcast",
                lambda lib, x, s: lib.masked_scatter(x, mask(lib, (2, 3, 4)), s),
                [(R, (3, 4)), (R, (24,))],
                node="MaskedScatterBackward0",
            ),
            Sample(
                "0d",
                lambda lib, x, s: x.masked_scatter(lib.tensor(True), s),
                [(R, ()), (R, (2,))],
                node="MaskedScatterBackward0",
            ),
        ],
    ),
    OpInfo(
        "flip",
        [
            Sample("", lambda lib, x: x.flip(0, 2), [(R, (2, 3, 4))], node="FlipBackward0"),
            Sample("fn_neg", lambda lib, x: lib.flip(x, (-1,)), [(R, (2, 3))], node="FlipBackward0"),
            Sample("0d", lambda lib, x: x.flip(0), [(R, ())], node="FlipBackward0"),
        ],
    ),
    OpInfo(
        "fliplr",
        [
            Sample("", lambda lib, x: x.fliplr(), [(R, (2, 3, 2))], node="FlipBackward0"),
        ],
    ),
    OpInfo(
        "flipud",
        [
            Sample("", lambda lib, x: lib.flipud(x), [(R, (3,))], node="FlipBackward0"),
        ],
    ),
    OpInfo(
        "roll",
        [
            Sample("", lambda lib, x: x.roll(1, 0), [(R, (3, 4))], node="RollBackward0"),
            Sample("flat", lambda lib, x: lib.roll(x, -5), [(R, (3, 4))], node="RollBackward0"),
            Sample("dims", lambda lib, x: x.roll((2, -1), (1, 0)), [(R, (3, 4))], node="RollBackward0"),
            Sample("0d", lambda lib, x: x.roll(3), [(R, ())], node="RollBackward0"),
        ],
    ),
    OpInfo(
        "rot90",
        [
            Sample("", lambda lib, x: x.rot90(), [(R, (3, 4))], node="Rot90Backward0"),
            Sample("k", lambda lib, x: lib.rot90(x, -3, [2, 0]), [(R, (2, 3, 4))], node="Rot90Backward0"),
            Sample("2", lambda lib, x: x.rot90(2, (0, 1)), [(R, (3, 4))], node="Rot90Backward0"),
            Sample("0", lambda lib, x: x.rot90(4), [(R, (3, 4))], node="Rot90Backward0"),
        ],
    ),
    OpInfo(
        "repeat",
        [
            Sample("", lambda lib, x: x.repeat(2, 1, 3), [(R, (3, 2))], node="RepeatBackward0"),
            Sample("tuple", lambda lib, x: x.repeat((1, 2)), [(R, (3, 2))], node="RepeatBackward0"),
            Sample("0d", lambda lib, x: x.repeat(3), [(R, ())], node="RepeatBackward0"),
        ],
    ),
    OpInfo(
        "tile",
        [
            Sample("", lambda lib, x: x.tile((2,)), [(R, (3, 2))], node="RepeatBackward0"),
            Sample("more", lambda lib, x: lib.tile(x, (2, 1, 2)), [(R, (3, 2))], node="RepeatBackward0"),
        ],
    ),
    OpInfo(
        "repeat_interleave",
        [
            Sample("", lambda lib, x: x.repeat_interleave(2), [(R, (3, 2))], node="ViewBackward0"),
            Sample(
                "dim", lambda lib, x: lib.repeat_interleave(x, 3, dim=1), [(R, (3, 2))], node="ViewBackward0"
            ),
            Sample(
                "tensor",
                lambda lib, x: x.repeat_interleave(idx(lib, [1, 0, 3]), dim=0),
                [(R, (3, 2))],
                node="IndexSelectBackward0",
            ),
            Sample(
                "tensor_1",
                lambda lib, x: x.repeat_interleave(idx(lib, [2]), dim=-1, output_size=4),
                [(R, (3, 2))],
                node="IndexSelectBackward0",
            ),
            Sample("0d", lambda lib, x: x.repeat_interleave(2), [(R, ())], node="ViewBackward0"),
        ],
    ),
    OpInfo(
        "tril",
        [
            Sample("", lambda lib, x: x.tril(), [(R, (3, 4))], node="TrilBackward0"),
            Sample("k", lambda lib, x: lib.tril(x, -1), [(R, (2, 3, 4))], node="TrilBackward0"),
        ],
    ),
    OpInfo(
        "triu",
        [
            Sample("", lambda lib, x: x.triu(1), [(R, (4, 3))], node="TriuBackward0"),
            Sample("neg", lambda lib, x: lib.triu(x, diagonal=-2), [(R, (2, 4, 3))], node="TriuBackward0"),
        ],
    ),
    OpInfo(
        "diag",
        [
            Sample("1d", lambda lib, x: x.diag(), [(R, (3,))], node="DiagEmbedBackward0"),
            Sample("1d_offset", lambda lib, x: lib.diag(x, -2), [(R, (3,))], node="DiagEmbedBackward0"),
            Sample("2d", lambda lib, x: x.diag(1), [(R, (3, 4))], node="DiagonalBackward0_copy"),
        ],
    ),
    OpInfo(
        "diag_embed",
        [
            Sample("", lambda lib, x: x.diag_embed(), [(R, (2, 3))], node="DiagEmbedBackward0"),
            Sample(
                "dims", lambda lib, x: lib.diag_embed(x, 1, 0, 2), [(R, (2, 3))], node="DiagEmbedBackward0"
            ),
            Sample(
                "neg",
                lambda lib, x: x.diag_embed(offset=-1, dim1=-1, dim2=0),
                [(R, (3,))],
                node="DiagEmbedBackward0",
            ),
        ],
    ),
    OpInfo(
        "trace",
        [
            Sample("", lambda lib, x: x.trace(), [(R, (3, 4))], node="TraceBackward0"),
            Sample("fn", lambda lib, x: lib.trace(x), [(R, (4, 2))], node="TraceBackward0"),
        ],
    ),
    OpInfo(
        "sort",
        [
            Sample("", lambda lib, x: x.sort(), [(D, (3, 4))], node="SortBackward0"),
            Sample(
                "dim_desc",
                lambda lib, x: lib.sort(x, 0, descending=True),
                [(D, (3, 4))],
                node="SortBackward0",
            ),
            Sample(
                "stable",
                lambda lib, x: x.sort(stable=True, dim=-1, descending=True),
                [(D, (3, 4))],
                node="SortBackward1",
            ),
            Sample("0d", lambda lib, x: x.sort(), [(D, ())], node="SortBackward0"),
        ],
    ),
    OpInfo(
        "msort",
        [
            Sample("", lambda lib, x: x.msort(), [(D, (3, 4))], node="SortBackward0"),
        ],
    ),
    OpInfo(
        "topk",
        [
            Sample("", lambda lib, x: x.topk(2), [(D, (3, 4))], node="TopkBackward0"),
            Sample(
                "smallest_dim",
                lambda lib, x: lib.topk(x, 2, dim=0, largest=False),
                [(D, (3, 4))],
                node="TopkBackward0",
            ),
            Sample("0d", lambda lib, x: x.topk(1), [(D, ())], node="TopkBackward0"),
        ],
    ),
    OpInfo(
        "kthvalue",
        [
            Sample("", lambda lib, x: x.kthvalue(2), [(D, (3, 4))], node="KthvalueBackward0"),
            Sample(
                "keepdim",
                lambda lib, x: lib.kthvalue(x, 3, 0, keepdim=True),
                [(D, (3, 4))],
                node="KthvalueBackward0",
            ),
            Sample("0d", lambda lib, x: x.kthvalue(1), [(D, ())], node="KthvalueBackward0"),
        ],
    ),
    *in_place_ops(),
]
