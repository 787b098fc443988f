"""Shape and indexing ops beyond the registry's checks (tests/ops/shaping.py has each op's values, node
names, derivatives, torch's values and gradients, and the CuPy stand-in's): forwards torch alone pins,
in-place forms, error messages.

Views are checked to be views: they share storage and version counter with their base, and an
in-place change through one reaches the base with the gradients torch gives.
"""

from __future__ import annotations

import numpy as np
import pytest
from numgrad import check_grad, check_gradgrad
from opcheck import check_error, check_op, compare_with_torch, make_arrays, torch

import engine
from ops.shaping import IN_PLACE

R = "r"
D = "d"


def idx(lib, values):
    return lib.tensor(values, dtype=lib.int64)


def mask(lib, shape, seed=3):
    return lib.tensor(np.random.default_rng(seed).integers(0, 2, shape).astype(bool))


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


@pytest.mark.parametrize(
    "call, kinds", [c[2:4] for c in IN_PLACE], ids=["-".join(filter(None, c[:2])) for c in IN_PLACE]
)
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
    # torch warns once per process: whichever test reaches meshgrid first would see it
    always = lib.is_warn_always_enabled() if lib.__name__ == "torch" else None
    if always is not None:
        lib.set_warn_always(True)
    try:
        with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
            a, b = lib.meshgrid(lib.arange(2), lib.arange(3))
    finally:
        if always is not None:
            lib.set_warn_always(always)
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
