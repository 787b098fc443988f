"""Reductions and scans: what finite differences cannot see (ties, zeros, NaN, infinities, the dtype
of a gradient) and torch's errors. Values, node names, first and second derivatives and torch's
values and gradients of each are the registry's (tests/ops/reductions.py).

The ops live in engine/ops/reductions.py and, for the names the engine had before, functions.py.
"""

import math
import warnings

import numpy as np
import pytest
from opcheck import check_error, check_op, compare_with_torch

import engine
from engine.ops.reductions import functions as reductions
from ops.support import values

try:
    import torch
except ImportError:
    torch = None

inf, nan = math.inf, math.nan


# ---------------------------------------------------------------------- what torch alone pins


# Ties, zeros, NaN and infinities: finite differences do not apply, torch's choices do
# (which index of equal values, which gradient at a tie, nan or 0).
SPECIAL = [
    ("cummax_ties", lambda lib, x: x.cummax(1), values(1, 3, 3, 2, 5, 5, 2, 2, 2, 1, 3, 3), (2, 6)),
    ("cummin_ties", lambda lib, x: x.cummin(0), values(3, 1, 1, 2, 0, 0, 2, 2), (4, 2)),
    ("cummax_nan", lambda lib, x: x.cummax(0), values(1, nan, 3, nan, 5), (5,)),
    ("cummin_nan", lambda lib, x: x.cummin(0), values(1, nan, 0, nan, 5), (5,)),
    (
        "median_dim_ties",
        lambda lib, x: x.median(1),
        values(2, 1, 2, 2, 1, 1, 1, 1, 1, 1, 4, 4, 1, 4, 4),
        (3, 5),
    ),
    ("median_nan", lambda lib, x: x.median(), values(1, nan, 3), (3,)),
    ("median_dim_nan", lambda lib, x: x.median(1), values(nan, 1, 2, nan, 3, nan, 1, 2), (2, 4)),
    ("nanmedian_all_nan", lambda lib, x: x.nanmedian(1), values(nan, nan, 1, nan), (2, 2)),
    ("mode_ties", lambda lib, x: x.mode(1), values(1, 2, 2, 3, 3, 5, 4, 4, 5, 1, 3, 1, 3, 1, 2), (3, 5)),
    ("mode_dim0_ties", lambda lib, x: x.mode(0), values(1, 2, 2, 3, 5, 4, 4, 5, 1, 2, 4, 3), (3, 4)),
    ("prod_all_zero", lambda lib, x: x.prod(1), values(0, 0, 1, 0, 2, 3), (2, 3)),
    ("prod_two_zeros_nan", lambda lib, x: x.prod(), values(nan, 0, 0, 1), (2, 2)),
    ("prod_dim_zero_nan", lambda lib, x: x.prod(0), values(nan, 0, 0, 1, 2, 3), (3, 2)),
    ("cumprod_zero_then_nan", lambda lib, x: x.cumprod(1), values(-2, -1, 0, nan, 0, -1, 0, nan), (2, 4)),
    ("logsumexp_inf", lambda lib, x: x.logsumexp(1), values(inf, 1, -inf, -inf, 700, 800), (3, 2)),
    ("logcumsumexp_inf", lambda lib, x: x.logcumsumexp(1), values(-inf, 1, -inf, -inf, 1, inf), (3, 2)),
    ("logcumsumexp_large", lambda lib, x: x.logcumsumexp(0), values(-800, 0, 800, 790, -5), (5,)),
    ("vector_norm_zero_rows", lambda lib, x: lib.linalg.vector_norm(x, 2, 1), values(0, 0, 1, 1), (2, 2)),
    *[
        (
            f"vector_norm_{o}_zeros",
            lambda lib, x, o=o: lib.linalg.vector_norm(x, o, 1),
            values(1, -3, 3, 0, 0, 2),
            (2, 3),
        )
        for o in (2, 1, 0, inf, -inf, 3, 1.5, 0.5, -1)
    ],
    ("dist_equal", lambda lib, x: lib.dist(x, x.detach()), values(1, 2), (2,)),
    (
        "aminmax_ties",
        lambda lib, x: (lambda r: r.min * 2 + r.max)(lib.aminmax(x)),
        values(3, 3, 3, 2),
        (2, 2),
    ),
    ("median_ties", lambda lib, x: x.median(), values(3, 3, 3, 2, 1), (5,)),
    ("max_dim_ties", lambda lib, x: x.max(1), values(3, 3, 1, 2), (2, 2)),
    ("min_nan", lambda lib, x: x.min(), values(1, nan, 3, nan), (2, 2)),
    ("std_0d", lambda lib, x: x.std(-1, unbiased=False), values(2), ()),
    ("nanmean_all_nan_row", lambda lib, x: x.nanmean(1), values(nan, nan, 1, 2), (2, 2)),
]


@pytest.mark.torch_parity
@pytest.mark.parametrize("name, fn, make, shape", SPECIAL, ids=[c[0] for c in SPECIAL])
def test_special_values_match_torch(name, fn, make, shape):
    if torch is None:
        pytest.skip("torch is not installed")
    arrays = [np.asarray(make(None, math.prod(shape))).reshape(shape)]
    compare_with_torch(fn, arrays, rtol=1e-12, atol=1e-12)


def test_multi_output_nodes_are_one_node_with_output_numbers():
    x = engine.tensor([[1.0, 5.0, 3.0], [2.0, 2.0, 7.0]], requires_grad=True)
    for pair in (engine.aminmax(x, dim=1), engine.var_mean(x, 0), engine.std_mean(x)):
        first, second = pair
        assert first.grad_fn is second.grad_fn
        assert (first.output_nr, second.output_nr) == (0, 1)
        assert first.grad_fn.next_functions[0][0].variable is x
    low, high = engine.aminmax(x)
    assert type(low).__name__ == "Tensor" and engine.aminmax(x)._fields == ("min", "max")
    high.backward()  # one output alone: the other's gradient is none, not an error
    assert x.grad.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]


def test_multi_output_rows_free_their_saved_input_after_backward():
    x = engine.tensor([1.0, 2.0, 4.0], requires_grad=True)
    var, mean = engine.var_mean(x)
    (var + mean).backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        var.backward()


def test_a_saved_input_modified_in_place_is_refused_by_a_multi_output_node():
    x = engine.tensor([1.0, 2.0, 4.0], requires_grad=True)
    y = x * 1
    low, _ = engine.aminmax(y)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        low.backward()


def test_return_types_have_torchs_names_and_fields():
    x = engine.tensor([[1.0, 5.0, 3.0], [2.0, 2.0, 7.0]])
    for result, name in (
        (x.cummax(1), "cummax"),
        (x.cummin(1), "cummin"),
        (x.median(1), "median"),
        (x.nanmedian(1), "nanmedian"),
        (x.mode(1), "mode"),
        (x.max(1), "max"),
        (x.min(1), "min"),
    ):
        assert type(result).__name__ == name and result._fields == ("values", "indices")
        assert result.indices.dtype == engine.int64
    assert isinstance(engine.var_mean(x), tuple) and not hasattr(engine.var_mean(x), "_fields")
    assert not hasattr(engine.Tensor, "var_mean") and not hasattr(engine.Tensor, "std_mean")


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.sum(dtype=lib.float32),
        lambda lib, x: x.sum(1, dtype=lib.float32),
        lambda lib, x: x.mean(dtype=lib.float32),
        lambda lib, x: lib.mean(x, (0,), dtype=lib.float32),
        lambda lib, x: x.prod(dtype=lib.float32),
        lambda lib, x: x.prod(1, keepdim=True, dtype=lib.float32),
        lambda lib, x: x.cumsum(1, dtype=lib.float32),
        lambda lib, x: x.cumprod(0, dtype=lib.float32),
        lambda lib, x: x.nansum(0, dtype=lib.float32),
        lambda lib, x: x.nanmean(dtype=lib.float32),
        lambda lib, x: x.float().sum(dtype=lib.float64),
        lambda lib, x: lib.linalg.vector_norm(x.float(), 3, dtype=lib.float64),
        lambda lib, x: x.float().norm(dim=1, dtype=lib.float64),
    ],
    ids=[
        "sum",
        "sum_dim",
        "mean",
        "mean_dim",
        "prod",
        "prod_dim",
        "cumsum",
        "cumprod",
        "nansum",
        "nanmean",
        "sum_up",
        "vector_norm",
        "norm",
    ],
)
def test_dtype_argument_computes_in_it_and_gradient_comes_back_in_the_inputs(fn):
    data = np.random.default_rng(3).uniform(0.5, 1.5, (3, 4))
    x = engine.tensor(data, requires_grad=True)
    out = fn(engine, x)
    assert out.grad_fn.next_functions[0][0] is not None
    (grad,) = engine.autograd.grad(out.sum(), x)
    assert grad.dtype == engine.float64
    if torch is not None:
        compare_with_torch(fn, [data], rtol=1e-5, atol=1e-6)
        xt = torch.tensor(data, requires_grad=True)
        assert fn(torch, xt).grad_fn.name() == out.grad_fn.name()


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.max(),
        lambda x: x.min(),
        lambda x: x.max(1)[0],
        lambda x: x.amax(),
        lambda x: x.amin(0),
        lambda x: x.median(),
        lambda x: x.median(0).values,
        lambda x: x.prod(),
        lambda x: x.cumprod(1),
        lambda x: x.cummax(1)[0],
        lambda x: x.logsumexp(1),
        lambda x: x.logcumsumexp(0),
        lambda x: engine.aminmax(x).max,
        lambda x: engine.var_mean(x)[0],
        lambda x: engine.std_mean(x, 1)[0],
        lambda x: x.norm(float("inf")),
        lambda x: x.norm(3),
        lambda x: x.nansum(),
        lambda x: x.dist(x.detach() * 2),
    ],
)
def test_float32_inputs_get_float32_gradients(fn):
    x = engine.tensor([[1.0, 5.0, 3.0], [2.0, 2.0, 7.0]], dtype=engine.float32, requires_grad=True)
    out = fn(x)
    assert out.dtype == engine.float32
    (grad,) = engine.autograd.grad(out.sum(), x)
    assert grad.dtype == engine.float32
    (grad,) = engine.autograd.grad(fn(x).sum(), x, create_graph=True)
    assert grad.dtype == engine.float32


def test_norms_of_order_zero_have_no_gradient():
    x = engine.tensor([1.0, 0.0, 2.0], requires_grad=True)
    y = engine.tensor([1.0, 1.0, 1.0], requires_grad=True)
    reductions.vector_norm(x, 0).backward()
    engine.dist(x, y, 0).backward()
    assert x.grad is None and y.grad is None


@pytest.mark.parametrize(
    "fn, name",
    [
        (lambda lib, x: x.var(), "var"),
        (lambda lib, x: x.std(0), "std"),
        (lambda lib, x: lib.var_mean(x), "var_mean"),
        (lambda lib, x: lib.std_mean(x, correction=2), "std_mean"),
    ],
)
def test_no_degrees_of_freedom_warns_as_torch_and_gives_inf_or_nan(fn, name):
    libs = [engine] + ([torch] if torch is not None else [])
    results = []
    for lib in libs:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = fn(lib, lib.tensor([3.0], requires_grad=True))
        messages = [str(w.message).split(" (Triggered internally")[0] for w in caught]
        assert messages == [
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
            "factor (input numel divided by output numel)."
        ]
        assert caught[0].filename == __file__
        results.append([float(o.detach()) for o in (out if isinstance(out, tuple) else (out,))])
    assert math.isnan(results[0][0]) or math.isinf(results[0][0])
    if len(results) == 2:
        np.testing.assert_equal(results[0], results[1])


def test_variance_without_degrees_of_freedom_backpropagates_nan_not_an_exception():
    x = engine.tensor([3.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x.var().backward()
    assert math.isnan(x.grad.item())


def test_cumprod_with_zeros_is_twice_differentiable_along_every_position():
    x = engine.tensor([[2.0, 0.0, 3.0, 0.0, 1.5]], requires_grad=True)
    check_op(lambda lib, t: t.cumprod(1) * t.cumprod(1), [(values(2.0, 0.0, 3.0, 0.0, 1.5), (1, 5))])
    (g,) = engine.autograd.grad(x.cumprod(1).sum(), x, create_graph=True)
    assert g.requires_grad


@pytest.mark.skipif(not hasattr(engine, "linalg"), reason="engine.linalg is another group's namespace")
def test_engine_linalg_exports_the_norms():
    assert engine.linalg.vector_norm is reductions.vector_norm
    x = engine.tensor([[3.0, 4.0], [0.0, 0.0]])
    assert engine.linalg.norm(x).item() == reductions.linalg_norm(x).item() == 5.0


def test_matrix_norms_of_singular_values_are_left_to_linalg():
    x = engine.ones(2, 3)
    for call in (
        lambda: x.norm("nuc"),
        lambda: reductions.linalg_norm(x, 2),
        lambda: reductions.linalg_norm(x, inf),
    ):
        with pytest.raises(NotImplementedError, match="engine.linalg.matrix_norm"):
            call()


# ------------------------------------------------------------------------------------ errors

ERRORS = [
    # dims
    (
        lambda lib: lib.ones(2, 3).sum((1, -1)),
        RuntimeError,
        "dim 1 appears multiple times in the list of dims",
    ),
    (lambda lib: lib.ones(2, 3).mean((0, 0)), RuntimeError, "dim 0 appears multiple times"),
    (lambda lib: lib.ones(2, 3).var((1, 1)), RuntimeError, "appears multiple times"),
    (lambda lib: lib.tensor(3.0).sum((0, -1)), RuntimeError, "dim 0 appears multiple times"),
    (lambda lib: lib.ones(2, 3).amax((0, 0)), RuntimeError, "appears multiple times"),
    (lambda lib: lib.ones(2, 3).all((0, 0)), RuntimeError, "appears multiple times"),
    (lambda lib: lib.ones(2, 3).count_nonzero((0, 0)), RuntimeError, "appears multiple times"),
    (lambda lib: lib.ones(2, 3).nansum((0, 0)), RuntimeError, "appears multiple times"),
    (
        lambda lib: lib.tensor(3.0).sum(1),
        IndexError,
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
    ),
    (lambda lib: lib.tensor(3.0).max(1), IndexError, "but got 1"),
    (lambda lib: lib.tensor(3.0).prod(1), IndexError, "but got 1"),
    (lambda lib: lib.tensor(3.0).cumsum(2), IndexError, "but got 2"),
    (lambda lib: lib.tensor(3.0).cumprod(1), IndexError, "but got 1"),
    (lambda lib: lib.tensor(3.0).median(1), IndexError, "but got 1"),
    (lambda lib: lib.tensor(3.0).mode(1), IndexError, "but got 1"),
    (lambda lib: lib.tensor(3.0).amin(1), IndexError, "but got 1"),
    (lambda lib: lib.tensor(3.0).argmax(1), IndexError, "but got 1"),
    (lambda lib: lib.ones(2, 3).amax(5), IndexError, "[-2, 1], but got 5"),
    (lambda lib: lib.ones(2, 3).logsumexp(5), IndexError, "but got 5"),
    (lambda lib: lib.ones(2, 3).any(5), IndexError, "but got 5"),
    (lambda lib: lib.ones(2, 3).count_nonzero(-3), IndexError, "but got -3"),
    (lambda lib: lib.ones(2, 3).logcumsumexp(2), IndexError, "but got 2"),
    (lambda lib: lib.ones(2, 3).cummin(-3), IndexError, "but got -3"),
    (
        lambda lib: lib.ones(2, 3).logsumexp(()),
        RuntimeError,
        "output with shape [] doesn't match the broadcast shape [1, 1]",
    ),
    # empty tensors
    (
        lambda lib: lib.zeros(0, 3).max(),
        RuntimeError,
        "max(): Expected reduction dim to be specified for input.numel() == 0.",
    ),
    (lambda lib: lib.zeros(0, 3).min(), RuntimeError, "min(): Expected reduction dim to be specified"),
    (
        lambda lib: lib.zeros(0, 3).max(0),
        IndexError,
        "max(): Expected reduction dim 0 to have non-zero size.",
    ),
    (
        lambda lib: lib.zeros(0, 3).min(0),
        IndexError,
        "min(): Expected reduction dim 0 to have non-zero size.",
    ),
    (lambda lib: lib.zeros(0, 3).amax(), RuntimeError, "amax(): Expected reduction dim to be specified"),
    (
        lambda lib: lib.zeros(0, 3).amin(0),
        IndexError,
        "amin(): Expected reduction dim 0 to have non-zero size.",
    ),
    (
        lambda lib: lib.zeros(0, 3).argmax(),
        IndexError,
        "argmax(): Expected reduction dim to be specified for input.numel() == 0.",
    ),
    (
        lambda lib: lib.zeros(2, 0).argmin(1),
        IndexError,
        "argmin(): Expected reduction dim 1 to have non-zero size.",
    ),
    (
        lambda lib: lib.aminmax(lib.zeros(0, 3)),
        RuntimeError,
        "aminmax(): cannot compute aminmax over an empty dimension",
    ),
    (
        lambda lib: lib.aminmax(lib.zeros(0, 3), dim=0),
        IndexError,
        "aminmax: Expected reduction dim 0 to have non-zero size.",
    ),
    (
        lambda lib: lib.zeros(0, 3).median(0),
        IndexError,
        "median(): Expected reduction dim 0 to have non-zero size.",
    ),
    (
        lambda lib: lib.zeros(0, 3).mode(0),
        IndexError,
        "mode(): Expected reduction dim 0 to have non-zero size.",
    ),
    (
        lambda lib: (
            lib.linalg.vector_norm(lib.zeros(0, 3), inf)
            if lib is not engine
            else reductions.vector_norm(lib.zeros(0, 3), inf)
        ),
        RuntimeError,
        "linalg.vector_norm cannot compute the inf norm on an empty tensor",
    ),
    (
        lambda lib: lib.zeros(0, 3).norm(-1, dim=0),
        RuntimeError,
        "cannot compute the -1 norm on the dimension 0because",
    ),
    (
        lambda lib: lib.zeros(0, 3).norm(-0.5, dim=(0, 1)),
        RuntimeError,
        "the -0.5 norm on the dimension 0because",
    ),
    # dtypes
    (
        lambda lib: lib.tensor([1, 2]).mean(),
        RuntimeError,
        "Input dtype must be either a floating point or complex dtype. Got: Long",
    ),
    (lambda lib: lib.tensor([True]).mean(), RuntimeError, "Got: Bool"),
    (
        lambda lib: lib.ones(2).mean(dtype=lib.int64),
        RuntimeError,
        "Optional dtype must be either a floating point or complex dtype. Got: Long",
    ),
    (
        lambda lib: lib.tensor([1, 2]).var(),
        RuntimeError,
        "std and var only support floating point and complex dtypes",
    ),
    (lambda lib: lib.tensor([1, 2]).std(0), RuntimeError, "std and var only support floating point"),
    (
        lambda lib: lib.var_mean(lib.tensor([1, 2])),
        RuntimeError,
        "var_mean only support floating point and complex dtypes",
    ),
    (
        lambda lib: lib.std_mean(lib.tensor([1, 2])),
        RuntimeError,
        "std_mean only support floating point and complex dtypes",
    ),
    (
        lambda lib: lib.tensor([1, 2]).nanmean(),
        RuntimeError,
        "nanmean(): expected input to have floating point or complex dtype but got Long",
    ),
    (
        lambda lib: lib.ones(2, requires_grad=True).sum(dtype=lib.bool),
        RuntimeError,
        "Autograd not support dtype: Bool",
    ),
    (
        lambda lib: lib.ones(2, requires_grad=True).prod(dtype=lib.int64),
        RuntimeError,
        "Autograd not support dtype: Long",
    ),
    (
        lambda lib: lib.ones(2, requires_grad=True).cumsum(0, dtype=lib.int64),
        RuntimeError,
        "Autograd not support dtype: Long",
    ),
    (
        lambda lib: lib.ones(2, requires_grad=True).nansum(dtype=lib.int32),
        RuntimeError,
        "Autograd not support dtype: Int",
    ),
    (lambda lib: lib.tensor([True]).argmax(), RuntimeError, "argmax(): does not support bool input"),
    (lambda lib: lib.tensor([True]).argmin(0), RuntimeError, "argmin(): does not support bool input"),
    (
        lambda lib: lib.tensor([1, 2]).logcumsumexp(0),
        NotImplementedError,
        "\"logcumsumexp_out_cpu\" not implemented for 'Long'",
    ),
    (
        lambda lib: lib.tensor([True]).median(),
        NotImplementedError,
        "\"median_cpu\" not implemented for 'Bool'",
    ),
    (
        lambda lib: lib.tensor([True]).median(0),
        NotImplementedError,
        "\"median_out\" not implemented for 'Bool'",
    ),
    (
        lambda lib: lib.tensor([1, 2]).norm(),
        RuntimeError,
        "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long",
    ),
    (
        lambda lib: lib.ones(2).norm(dtype=lib.int64),
        RuntimeError,
        "linalg.vector_norm: dtype should be floating point or complex, but got Long",
    ),
    (
        lambda lib: lib.ones(2, dtype=lib.float64).norm(dtype=lib.float32),
        RuntimeError,
        "the dtype of the input (Double) should be convertible without narrowing to the specified dtype (Float)",
    ),
    (
        lambda lib: lib.dist(lib.tensor([1, 2]), lib.tensor([1, 2])),
        RuntimeError,
        "norm(): input dtype should be either floating point or complex. Got Long instead.",
    ),
    # arguments
    (
        lambda lib: lib.ones(2, 3).dist(lib.ones(4)),
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1",
    ),
    (
        lambda lib: lib.ones(2).argmax((0,)),
        TypeError,
        "argmax(): argument 'dim' (position 1) must be int, not tuple",
    ),
    (
        lambda lib: lib.ones(2).argmin(0.0),
        TypeError,
        "argmin(): argument 'dim' (position 1) must be int, not float",
    ),
    (
        lambda lib: lib.aminmax(lib.ones(2, 3), dim=(0, 1)),
        TypeError,
        "aminmax(): argument 'dim' must be int, not tuple",
    ),
    (
        lambda lib: lib.dist(lib.ones(2), lib.ones(2), "fro"),
        TypeError,
        "dist(): argument 'p' (position 3) must be Number, not str",
    ),
    # matrix norms through Tensor.norm and linalg.norm: the checks torch makes first
    (lambda lib: lib.ones(2, 3).norm("foo"), RuntimeError, "linalg.matrix_norm: Order foo not supported."),
    (
        lambda lib: lib.ones(2).norm("nuc"),
        RuntimeError,
        "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.",
    ),
    (
        lambda lib: lib.ones(2, 2, 2).norm("nuc"),
        RuntimeError,
        "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2",
    ),
    (
        lambda lib: lib.ones(2, 2, 2).norm("fro", dim=(0, 1, 2)),
        RuntimeError,
        "dim must be a 2-tuple. Got 0 1 2",
    ),
    (
        lambda lib: lib.linalg.norm(lib.ones(2, 3), 0),
        RuntimeError,
        "linalg.matrix_norm: Order 0 not supported.",
    ),
    (
        lambda lib: lib.linalg.norm(lib.ones(2, 3), 3),
        RuntimeError,
        "linalg.matrix_norm: Order 3 not supported.",
    ),
    (lambda lib: lib.linalg.norm(lib.ones(2), "fro"), RuntimeError, "must have at least 2 dimensions"),
    (
        lambda lib: lib.linalg.norm(lib.ones(2, 3), "fro", dim=1),
        RuntimeError,
        "linalg.matrix_norm: dim must be a 2-tuple. Got 1",
    ),
    (
        lambda lib: lib.linalg.norm(lib.ones(2, 2, 2), 2),
        RuntimeError,
        "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.",
    ),
    (lambda lib: lib.linalg.norm(lib.tensor(2.0), 2), RuntimeError, "the input must be 1D or 2D. Got 0D."),
    (
        lambda lib: lib.linalg.norm(lib.ones(2, 2), dim=(0, 1, 1)),
        RuntimeError,
        "linalg.norm: If dim is specified, it must be of length 1 or 2. Got [0, 1, 1]",
    ),
    (lambda lib: lib.linalg.norm(lib.ones(2, 3), dim=(0, 0)), RuntimeError, "dim 0 appears multiple times"),
]


@pytest.mark.parametrize("fn, exception, message", ERRORS)
def test_errors_are_torchs(fn, exception, message):
    check_error(fn, message, exception)


def test_variance_over_an_empty_dim_list_has_the_gradient_of_the_full_variance():
    """torch 2.13 gives inf here (it counts no reduced elements in the backward); the engine gives the
    gradient of the value it computes, which finite differences confirm."""
    from numgrad import check_grad, check_gradgrad

    x = engine.tensor(np.random.default_rng(0).uniform(-1, 1, (3, 4)), requires_grad=True)
    check_grad(lambda t: t.var(()), x)
    check_gradgrad(lambda t: t.std((), keepdim=True), x)
