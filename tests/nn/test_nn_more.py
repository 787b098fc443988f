"""Issue 14's engine.nn: activations, distances, losses, norms, pooling, padding, convolutions,
upsampling, attention, their modules, nn.utils and module backward hooks.

Each op is checked by tests/opcheck.py: finite differences (first and second order) and, with
torch installed, torch's values, dtypes, shapes, node names and gradients; errors are torch's
exception and message, `torch` read as `engine`.
"""

import numpy as np
import pytest
from opcheck import _tensors, check_error, check_op, compare_with_torch, make_arrays

import engine

try:
    import torch
except ImportError:
    torch = None


def F(lib):
    return lib.nn.functional


def graph(t):
    """The node names of t's graph, depth first, as nested tuples (`torch::autograd::` prefixes dropped)."""

    def walk(fn):
        if fn is None:
            return None
        name = fn.name().split("::")[-1]
        if name == "AccumulateGrad":
            return name
        return (name, tuple(walk(child) for child, _ in fn.next_functions))

    return walk((t[0] if isinstance(t, tuple) else t).grad_fn)


def check_graph(fn, kinds) -> None:
    """The whole graph of `fn(lib, *tensors)` reads node for node like torch's (when torch is installed)."""
    if torch is None:
        return
    arrays = make_arrays(kinds)
    out_e, out_t = fn(engine, *_tensors(engine, arrays)), fn(torch, *_tensors(torch, arrays))
    assert graph(out_e) == graph(out_t)


def check_op_and_graph(fn, kinds, node) -> None:
    check_op(fn, kinds, node=node)
    check_graph(fn, kinds)


def sign(rng, n):
    return rng.choice([-1.0, 1.0], n)


def prob(rng, n):
    return rng.uniform(0.05, 0.95, n)


def counts(rng, n):
    return rng.integers(0, 5, n).astype(float)


def off_integers(rng, n):
    """Values in (-4, 4), at least 0.1 from every integer: the kinks of hardtanh, hardsigmoid, relu6, elu."""
    return rng.integers(-4, 4, n) + rng.uniform(0.1, 0.9, n)


# ----------------------------------------------------------------------------------- activations

ACTIVATIONS = {
    "silu": (lambda lib, x: F(lib).silu(x), "SiluBackward0"),
    "mish": (lambda lib, x: F(lib).mish(x), "MishBackward0"),
    "hardsigmoid": (lambda lib, x: F(lib).hardsigmoid(x), "HardsigmoidBackward0"),
    "hardswish": (lambda lib, x: F(lib).hardswish(x), "HardswishBackward0"),
    "hardtanh": (lambda lib, x: F(lib).hardtanh(x), "HardtanhBackward0"),
    "hardtanh_bounds": (lambda lib, x: F(lib).hardtanh(x, min_val=-2.0, max_val=3), "HardtanhBackward0"),
    "relu6": (lambda lib, x: F(lib).relu6(x * 2), "HardtanhBackward0"),
    "elu": (lambda lib, x: F(lib).elu(x), "EluBackward0"),
    "elu_alpha": (lambda lib, x: F(lib).elu(x, alpha=0.5), "EluBackward0"),
    "selu": (lambda lib, x: F(lib).selu(x), "EluBackward0"),
    "celu": (lambda lib, x: F(lib).celu(x, alpha=0.7), "CeluBackward0"),
    "logsigmoid": (lambda lib, x: F(lib).logsigmoid(x), "LogSigmoidBackward0"),
    "softplus": (lambda lib, x: F(lib).softplus(x), "SoftplusBackward0"),
    "softplus_beta_threshold": (
        lambda lib, x: F(lib).softplus(x, beta=2, threshold=3.5),
        "SoftplusBackward0",
    ),
    "softsign": (lambda lib, x: F(lib).softsign(x), "DivBackward0"),
    "tanhshrink": (lambda lib, x: F(lib).tanhshrink(x), "SubBackward0"),
    "gelu_tanh": (lambda lib, x: F(lib).gelu(x, approximate="tanh"), "GeluBackward0"),
    "softmin": (lambda lib, x: F(lib).softmin(x, dim=-1), "SoftmaxBackward0"),
    "softmin_dtype": (lambda lib, x: F(lib).softmin(x, 0, dtype=lib.float64), "SoftmaxBackward0"),
    "elu_inplace": (lambda lib, x: F(lib).elu(x * 1, inplace=True), "EluBackward1"),
    "elu_": (lambda lib, x: F(lib).elu_(x * 1, 0.3), "EluBackward1"),
    "selu_inplace": (lambda lib, x: F(lib).selu(x * 1, inplace=True), "EluBackward1"),
    "celu_inplace": (lambda lib, x: F(lib).celu(x * 1, 1.5, True), "CeluBackward1"),
    "silu_inplace": (lambda lib, x: F(lib).silu(x * 1, inplace=True), "SiluBackward0"),
    "mish_inplace": (lambda lib, x: F(lib).mish(x * 1, inplace=True), "MishBackward0"),
    "hardtanh_": (lambda lib, x: F(lib).hardtanh_(x * 1, -2, 2), "HardtanhBackward0"),
    "relu6_inplace": (lambda lib, x: F(lib).relu6(x * 2, inplace=True), "HardtanhBackward0"),
    "hardswish_inplace": (lambda lib, x: F(lib).hardswish(x * 1, inplace=True), "HardswishBackward0"),
    "hardsigmoid_inplace": (lambda lib, x: F(lib).hardsigmoid(x * 1, True), "HardsigmoidBackward0"),
}


# (softmax over dim -1 of a 0-dim tensor, under create_graph, is the reductions' part of the issue)
@pytest.mark.parametrize(
    "name, shape",
    [
        (name, shape)
        for name in sorted(ACTIVATIONS)
        for shape in ((3, 4), (), (2, 1, 3))
        if not (name.startswith("softmin") and shape == ())
    ],  # fmt: skip
)
def test_activation(name, shape):
    fn, node = ACTIVATIONS[name]
    check_op(fn, [(off_integers, shape)], node=node)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: F(lib).glu(x),
        lambda lib, x: F(lib).glu(x, dim=0),
        lambda lib, x: F(lib).glu(x, -2),
    ],
    ids=["last", "first", "negative"],
)
def test_glu(fn):
    check_op(fn, [("r", (4, 6))], node="GluBackward0")


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(
    "name", ["silu", "mish", "hardswish", "elu", "selu", "celu", "logsigmoid", "softplus"]
)
def test_activation_keeps_the_float_dtype(name, dtype):
    fn = ACTIVATIONS[name][0]
    rtol = 1e-5 if dtype == "float32" else 2e-3
    compare_with_torch(
        lambda lib, x: fn(lib, x.to(getattr(lib, dtype))),
        make_arrays([(off_integers, (3, 4))]),
        rtol=rtol,
        atol=rtol,
    )


@pytest.mark.parametrize(
    "name, kernel",
    [
        ("silu", "silu"),
        ("mish", "mish"),
        ("hardsigmoid", "hardsigmoid"),
        ("hardswish", "hardswish"),
        ("elu", "elu"),
        ("selu", "elu"),
        ("celu", "elu"),
        ("logsigmoid", "log_sigmoid"),
        ("softplus", "softplus"),
        ("glu", "glu"),
    ],  # fmt: skip
)
@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_float_activation_refuses_integers(name, kernel, dtype):
    message = f"\"{kernel}_cpu\" not implemented for '{'Long' if dtype == 'int64' else 'Bool'}'"
    check_error(
        lambda lib: getattr(F(lib), name)(lib.tensor([[1, 0], [0, 1]]).to(getattr(lib, dtype))),
        message,
        NotImplementedError,
    )


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: F(lib).hardtanh(x, -2, 2),
        lambda lib, x: F(lib).relu6(x * 3),
        lambda lib, x: F(lib).softsign(x),
    ],
    ids=["hardtanh", "relu6", "softsign"],
)
def test_activation_of_integers(fn):
    compare_with_torch(fn, [np.array([[-3, 1], [0, 7]])], grad=False)


@pytest.mark.parametrize(
    "fn, message, exception",
    [
        (lambda lib: F(lib).glu(lib.ones(3, 5)), "Halving dimension must be even", RuntimeError),
        (lambda lib: F(lib).glu(lib.ones(3, 4), 0), "but dimension 0 is size 3", RuntimeError),
        (lambda lib: F(lib).glu(lib.tensor(1.0)), "glu does not support scalars", RuntimeError),
        (lambda lib: F(lib).glu(lib.ones(3, 4), 2), "Dimension out of range", IndexError),
        (lambda lib: F(lib).celu(lib.ones(3), alpha=0.0), "alpha cannot be 0 for CELU", RuntimeError),
        (
            lambda lib: F(lib).hardtanh(lib.ones(3), 2, 1),
            "min_val cannot be greater than max_val",
            ValueError,
        ),
        (lambda lib: F(lib).hardtanh(lib.ones(3, dtype=lib.bool)), "Bool inputs not supported", RuntimeError),
        (
            lambda lib: F(lib).softsign(lib.ones(3, dtype=lib.bool)),
            "not implemented for 'Bool'",
            NotImplementedError,
        ),
        (
            lambda lib: F(lib).elu_(lib.ones(3, requires_grad=True) * 1, alpha=-1.0).sum().backward(),
            "In-place elu backward calculation is triggered with a negative slope",
            RuntimeError,
        ),
    ],
    ids=[
        "glu-odd",
        "glu-dim",
        "glu-scalar",
        "glu-dim-range",
        "celu-alpha",
        "hardtanh-bounds",
        "hardtanh-bool",
        "softsign-bool",
        "elu-inplace-negative",
    ],  # fmt: skip
)
def test_activation_errors(fn, message, exception):
    check_error(fn, message, exception)


def test_softmin_without_dim_warns_as_torch():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin has been deprecated"):
        out = engine.nn.functional.softmin(engine.ones(2, 3))
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 1 / 3))


def test_in_place_activation_writes_into_its_input():
    x = engine.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = x * 1
    out = engine.nn.functional.selu(y, inplace=True)
    assert out is y and y._version == 1
    assert y.grad_fn.name() == "EluBackward1"
    y.sum().backward()
    scale, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
    np.testing.assert_allclose(x.grad.numpy(), [scale * alpha * np.exp(-1.0), scale, scale])


# ------------------------------------------------------------------------------------ distances


def cdist(lib):
    return lib.cdist


DISTANCES = {
    "normalize": (lambda lib, x: F(lib).normalize(x), [("r", (3, 4))], "DivBackward0"),
    "normalize_p1_dim0": (lambda lib, x: F(lib).normalize(x, p=1, dim=0), [("r", (3, 4))], "DivBackward0"),
    "normalize_p3_neg": (
        lambda lib, x: F(lib).normalize(x, 3, -1, eps=0.1),
        [("r", (2, 3, 4))],
        "DivBackward0",
    ),
    "cosine_similarity": (
        lambda lib, x, y: F(lib).cosine_similarity(x, y),
        [("r", (3, 4)), ("r", (3, 4))],
        "SumBackward1",
    ),
    "cosine_similarity_broadcast": (
        lambda lib, x, y: F(lib).cosine_similarity(x, y, dim=-1),
        [("r", (3, 4)), ("r", (4,))],
        "SumBackward1",
    ),
    "cosine_similarity_1d": (
        lambda lib, x, y: F(lib).cosine_similarity(x, y, 0),
        [("r", (4,)), ("r", (4,))],
        "SumBackward1",
    ),
    "pairwise_distance": (
        lambda lib, x, y: F(lib).pairwise_distance(x, y),
        [("r", (3, 4)), ("r", (3, 4))],
        "NormBackward1",
    ),
    "pairwise_distance_p1_keepdim": (
        lambda lib, x, y: F(lib).pairwise_distance(x, y, p=1, keepdim=True),
        [("r", (3, 4)), ("r", (4,))],
        "NormBackward1",
    ),
    "pairwise_distance_p3.5": (
        lambda lib, x, y: F(lib).pairwise_distance(x, y, p=3.5),
        [("r", (3, 4)), ("r", (3, 4))],
        "NormBackward1",
    ),
    "pairwise_distance_p0.5": (
        lambda lib, x, y: F(lib).pairwise_distance(x, y, 0.5),
        [("r", (3, 4)), ("r", (3, 4))],
        "NormBackward1",
    ),
    "pairwise_distance_p1.5": (
        lambda lib, x, y: F(lib).pairwise_distance(x, y, 1.5),
        [("r", (3, 4)), ("r", (3, 4))],
        "NormBackward1",
    ),
    "pairwise_distance_inf": (
        lambda lib, x, y: F(lib).pairwise_distance(x, y, float("inf")),
        [("d", (3, 4)), ("r", (3, 4))],
        "NormBackward1",
    ),
    "pairwise_distance_1d": (
        lambda lib, x, y: F(lib).pairwise_distance(x, y),
        [("r", (4,)), ("r", (4,))],
        "NormBackward1",
    ),
    "torch.pairwise_distance": (
        lambda lib, x, y: lib.pairwise_distance(x, y),
        [("r", (3, 4)), ("r", (3, 4))],
        "NormBackward1",
    ),
    "torch.cosine_similarity": (
        lambda lib, x, y: lib.cosine_similarity(x, y),
        [("r", (3, 4)), ("r", (3, 4))],
        "SumBackward1",
    ),
    "cdist": (lambda lib, x, y: lib.cdist(x, y), [("r", (4, 3)), ("r", (5, 3))], "CdistBackward0"),
    "cdist_p1": (lambda lib, x, y: lib.cdist(x, y, p=1), [("r", (4, 3)), ("r", (5, 3))], "CdistBackward0"),
    "cdist_p0": (lambda lib, x, y: lib.cdist(x, y, p=0), [("r", (4, 3)), ("r", (5, 3))], "CdistBackward0"),
    "cdist_p3_batch": (
        lambda lib, x, y: lib.cdist(x, y, p=3),
        [("r", (2, 4, 3)), ("r", (5, 3))],
        "CdistBackward0",
    ),
    "cdist_p0.7": (lambda lib, x, y: lib.cdist(x, y, 0.7), [("r", (4, 3)), ("r", (5, 3))], "CdistBackward0"),
    "cdist_inf": (
        lambda lib, x, y: lib.cdist(x, y, float("inf")),
        [("d", (4, 3)), ("r", (5, 3))],
        "CdistBackward0",
    ),
    "cdist_mm": (
        lambda lib, x, y: lib.cdist(x, y, compute_mode="use_mm_for_euclid_dist"),
        [("r", (4, 3)), ("r", (5, 3))],
        "ViewBackward0",
    ),
    "cdist_mm_if_necessary": (
        lambda lib, x, y: lib.cdist(x, y),
        [("r", (27, 2)), ("r", (3, 2))],
        "ViewBackward0",
    ),
    "cdist_mm_batch_broadcast": (
        lambda lib, x, y: lib.cdist(x, y),
        [("r", (2, 27, 2)), ("r", (3, 2))],
        "ViewBackward0",
    ),
    "cdist_mm_batches": (
        lambda lib, x, y: lib.cdist(x, y, compute_mode="use_mm_for_euclid_dist"),
        [("r", (2, 1, 4, 2)), ("r", (3, 5, 2))],
        "ViewBackward0",
    ),
    "cdist_no_mm": (
        lambda lib, x, y: lib.cdist(x, y, compute_mode="donot_use_mm_for_euclid_dist"),
        [("r", (27, 2)), ("r", (3, 2))],
        "CdistBackward0",
    ),
}


@pytest.mark.parametrize("name", sorted(DISTANCES))
def test_distance(name):
    check_op_and_graph(*DISTANCES[name])


def test_cosine_similarity_promotes_to_the_common_float_dtype():
    fn = lambda lib, x, y: F(lib).cosine_similarity(x.float(), y)  # noqa: E731
    compare_with_torch(fn, make_arrays([("r", (3, 4)), ("r", (3, 4))]), rtol=1e-6, atol=1e-7)
    check_graph(fn, [("r", (3, 4)), ("r", (3, 4))])


def test_integer_pairwise_distance_is_float32():
    compare_with_torch(
        lambda lib, x, y: F(lib).pairwise_distance(x, y), [np.ones((3, 4), int), np.zeros((3, 4), int)]
    )


@pytest.mark.parametrize(
    "fn, message, exception",
    [
        (
            lambda lib: lib.cdist(lib.ones(3), lib.ones(2, 3)),
            "cdist only supports at least 2D tensors",
            RuntimeError,
        ),
        (
            lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 2)),
            "must have the same number of columns",
            RuntimeError,
        ),
        (
            lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, 3)),
            "floating-point dtypes",
            RuntimeError,
        ),
        (lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), p=-1), "non-negative p values", RuntimeError),
        (
            lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.float64)),
            "expected scalar type",
            RuntimeError,
        ),
        (lambda lib: lib.cdist(lib.ones(2, 4, 3), lib.ones(3, 5, 3)), "must match the size", RuntimeError),
        (
            lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), compute_mode="x"),
            "not a valid value",
            ValueError,
        ),
        (
            lambda lib: F(lib).cosine_similarity(lib.ones(3, 4), lib.ones(2, 4)),
            "must match the size",
            RuntimeError,
        ),
        (
            lambda lib: F(lib).cosine_similarity(
                lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64), 0
            ),
            "expected common dtype to be floating point",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).cosine_similarity(lib.ones(3, 4), lib.ones(3, 4), dim=2),
            "Dimension out of range",
            IndexError,
        ),
        (
            lambda lib: F(lib).normalize(lib.ones(3, 4, dtype=lib.int64)),
            "Expected a floating point",
            RuntimeError,
        ),
    ],
    ids=[
        "cdist-1d",
        "cdist-columns",
        "cdist-int",
        "cdist-p",
        "cdist-dtypes",
        "cdist-batch",
        "cdist-mode",
        "cosine-shapes",
        "cosine-int",
        "cosine-dim",
        "normalize-int",
    ],  # fmt: skip
)
def test_distance_errors(fn, message, exception):
    check_error(fn, message, exception)


def test_cosine_similarity_clamps_tiny_norms_to_eps():
    x = engine.zeros(2, 3, requires_grad=True)
    out = engine.nn.functional.cosine_similarity(x, engine.ones(2, 3))
    assert out.tolist() == [0.0, 0.0]
    out.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


# --------------------------------------------------------------------------------------- losses

LOSSES = {
    "huber": (
        lambda lib, x, t: F(lib).huber_loss(x, t),
        [("r", (3, 4)), ("r", (3, 4))],
        "HuberLossBackward0",
    ),
    "huber_none_delta": (
        lambda lib, x, t: F(lib).huber_loss(x, t, reduction="none", delta=0.5),
        [("r", (3, 4)), ("r", (3, 4))],
        "HuberLossBackward0",
    ),
    "huber_sum_broadcast": (
        lambda lib, x, t: F(lib).huber_loss(x, t, "sum", 2.0),
        [("r", (3, 4)), ("r", (4,))],
        "HuberLossBackward0",
    ),
    "huber_weight": (
        lambda lib, x, t, w: F(lib).huber_loss(x, t, weight=w),
        [("r", (3, 4)), ("r", (3, 4)), ("p", (3, 4))],
        "MeanBackward0",
    ),
    "huber_0d": (lambda lib, x, t: F(lib).huber_loss(x, t), [("r", ()), ("r", ())], "HuberLossBackward0"),
    "soft_margin": (
        lambda lib, x: F(lib).soft_margin_loss(x, lib.tensor(np.sign(np.arange(12.0) - 5.5).reshape(3, 4))),
        [("r", (3, 4))],
        "SoftMarginLossBackward0",
    ),
    "soft_margin_none_broadcast": (
        lambda lib, x: F(lib).soft_margin_loss(x, lib.tensor([1.0, -1, 1, 1]), reduction="none"),
        [("r", (3, 4))],
        "SoftMarginLossBackward0",
    ),
    "kl_div_batchmean": (
        lambda lib, x, t: F(lib).kl_div(x, t, reduction="batchmean"),
        [("r", (3, 4)), (prob, (3, 4))],
        "DivBackward0",
    ),
    "kl_div_log_target": (
        lambda lib, x, t: F(lib).kl_div(x, t, reduction="sum", log_target=True),
        [("r", (3, 4)), ("r", (3, 4))],
        "SumBackward0",
    ),
    "kl_div_none": (
        lambda lib, x, t: F(lib).kl_div(x, t, reduction="none"),
        [("r", (3, 4)), (prob, (3, 4))],
        "SubBackward0",
    ),
    "kl_div_batchmean_0d": (
        lambda lib, x, t: F(lib).kl_div(x, t, reduction="batchmean"),
        [("r", ()), (prob, ())],
        "SumBackward0",
    ),
    "poisson_nll": (
        lambda lib, x, t: F(lib).poisson_nll_loss(x, t),
        [("r", (3, 4)), (counts, (3, 4))],
        "MeanBackward0",
    ),
    "poisson_nll_full": (
        lambda lib, x, t: F(lib).poisson_nll_loss(x, t, log_input=False, full=True, reduction="sum"),
        [("p", (3, 4)), ("p", (3, 4))],
        "SumBackward0",
    ),
    "poisson_nll_eps_none": (
        lambda lib, x, t: F(lib).poisson_nll_loss(x, t, False, eps=0.1, reduction="none"),
        [("p", (3, 4)), (counts, (3, 4))],
        "SubBackward0",
    ),
    "margin_ranking": (
        lambda lib, x, y: F(lib).margin_ranking_loss(x, y, lib.tensor([1.0, -1, 1])),
        [("r", (3,)), ("r", (3,))],
        "MeanBackward0",
    ),
    "margin_ranking_target_grad": (
        lambda lib, x, y, t: F(lib).margin_ranking_loss(x, y, t, margin=0.3, reduction="none"),
        [("r", (3,)), ("r", (3,)), (sign, (3,))],
        "ClampMinBackward0",
    ),
    "triplet": (
        lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n),
        [("r", (3, 4)), ("r", (3, 4)), ("r", (3, 4))],
        "MeanBackward0",
    ),
    "triplet_swap_p1": (
        lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n, margin=2, p=1, swap=True, reduction="sum"),
        [("r", (3, 4)), ("r", (3, 4)), ("r", (3, 4))],
        "SumBackward0",
    ),
    "multilabel_soft_margin": (
        lambda lib, x, t: F(lib).multilabel_soft_margin_loss(x, t),
        [("r", (3, 4)), (prob, (3, 4))],
        "MeanBackward0",
    ),
    "multilabel_soft_margin_weight": (
        lambda lib, x, t, w: F(lib).multilabel_soft_margin_loss(x, t, weight=w, reduction="none"),
        [("r", (3, 4)), (prob, (3, 4)), ("p", (4,))],
        "DivBackward0",
    ),
    "cosine_embedding": (
        lambda lib, x, y: F(lib).cosine_embedding_loss(x, y, lib.tensor([1.0, -1, 1])),
        [("r", (3, 4)), ("r", (3, 4))],
        "MeanBackward0",
    ),
    "cosine_embedding_int_target": (
        lambda lib, x, y: F(lib).cosine_embedding_loss(
            x, y, lib.tensor([1, -1, -1]), margin=-0.5, reduction="none"
        ),
        [("r", (3, 4)), ("r", (3, 4))],
        "AddBackward0",
    ),
    "cosine_embedding_0d_target": (
        lambda lib, x, y: F(lib).cosine_embedding_loss(x, y, lib.tensor(-1.0), margin=-0.9, reduction="sum"),
        [("r", (4,)), ("r", (4,))],
        "SumBackward0",
    ),
}


@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss(name):
    check_op_and_graph(*LOSSES[name])


@pytest.mark.parametrize(
    "fn, message, exception",
    [
        (
            lambda lib: F(lib).huber_loss(lib.ones(3), lib.ones(3), delta=0),
            "non-positive values for delta",
            RuntimeError,
        ),
        (
            lambda lib: F(lib).huber_loss(lib.ones(3), lib.ones(3), "x"),
            "x is not a valid value for reduction",
            ValueError,
        ),
        (lambda lib: F(lib).kl_div(lib.ones(3), lib.ones(3), reduction="x"), "not a valid value", ValueError),
        (
            lambda lib: F(lib).kl_div(lib.ones(3), lib.ones(3, dtype=lib.int64), reduction="sum"),
            "kl_div: Integral inputs not supported.",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).poisson_nll_loss(lib.ones(3), lib.ones(3), reduction="x"),
            "not a valid value",
            ValueError,
        ),
        (
            lambda lib: F(lib).margin_ranking_loss(lib.ones(3), lib.ones(3), lib.ones(3, 1)),
            "All input tensors should have same dimension",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).triplet_margin_loss(lib.ones(3, 4), lib.ones(3, 4), lib.ones(4)),
            "expected to have the same number of dimensions",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).triplet_margin_loss(lib.ones(3, 4), lib.ones(3, 4), lib.ones(3, 4), margin=0),
            "margin must be greater than 0",
            ValueError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).cosine_embedding_loss(lib.ones(3, 4), lib.ones(3, 4), lib.ones(3, 1)),
            "0D or 1D target tensor expected",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).cosine_embedding_loss(lib.ones(3, 4), lib.ones(3, 4), lib.tensor(1.0)),
            "0D target tensor expects 1D input tensors",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).cosine_embedding_loss(lib.ones(4), lib.ones(4), lib.ones(3)),
            "1D target tensor expects 2D input tensors",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).multilabel_soft_margin_loss(lib.ones(3, 4), lib.ones(3, 4), reduction="x"),
            "x is not valid",
            ValueError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).soft_margin_loss(lib.ones(3), lib.ones(3), reduction="x"),
            "not a valid value",
            ValueError,
        ),
        (
            lambda lib: F(lib).soft_margin_loss(lib.ones(3), lib.ones(3, requires_grad=True)),
            "not differentiable with respect to argument 'target'",
            RuntimeError,
        ),  # fmt: skip
        (lambda lib: lib.nn.TripletMarginLoss(margin=-1), "expected margin to be greater than 0", ValueError),
    ],
    ids=[
        "huber-delta",
        "huber-reduction",
        "kl-reduction",
        "kl-int",
        "poisson-reduction",
        "ranking-dims",
        "triplet-dims",
        "triplet-margin",
        "cosine-target-dim",
        "cosine-0d-target",
        "cosine-1d-target",
        "multilabel-reduction",
        "soft-margin-reduction",
        "soft-margin-target-grad",
        "triplet-module-margin",
    ],  # fmt: skip
)
def test_loss_errors(fn, message, exception):
    check_error(fn, message, exception)


def test_kl_div_mean_warns_as_torch():
    with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss by both the batch size"):
        engine.nn.functional.kl_div(engine.zeros(2, 3), engine.full((2, 3), 0.5))


def test_huber_loss_size_mismatch_warns_as_torch():
    with pytest.warns(UserWarning, match="Using a target size"):
        engine.nn.functional.huber_loss(engine.zeros(2, 3), engine.zeros(3))


TWO = [("r", (3, 4)), (prob, (3, 4))]
THREE = [("r", (3,)), ("r", (3,)), (sign, (3,))]
LOSS_MODULES = [
    ("KLDivLoss", dict(reduction="batchmean", log_target=True), "KLDivLoss()", TWO),
    ("HuberLoss", dict(delta=0.5), "HuberLoss()", TWO),
    ("PoissonNLLLoss", dict(log_input=False, full=True), "PoissonNLLLoss()", [("p", (3, 4)), ("p", (3, 4))]),
    ("MarginRankingLoss", dict(margin=0.2), "MarginRankingLoss()", THREE),
    (
        "CosineEmbeddingLoss",
        dict(margin=-0.2, reduction="sum"),
        "CosineEmbeddingLoss()",
        [TWO[0], TWO[1], THREE[2]],
    ),
    ("TripletMarginLoss", dict(margin=0.5, p=1.0, swap=True), "TripletMarginLoss()", [("r", (3, 4))] * 3),
    ("SoftMarginLoss", dict(reduction="none"), "SoftMarginLoss()", [("r", (3, 4))]),
    ("MultiLabelSoftMarginLoss", dict(), "MultiLabelSoftMarginLoss()", TWO),
    ("CosineSimilarity", dict(dim=0, eps=1e-3), "CosineSimilarity()", TWO),
    ("PairwiseDistance", dict(p=3.0, keepdim=True), "PairwiseDistance()", TWO),
]


@pytest.mark.parametrize("name, kwargs, text, kinds", LOSS_MODULES, ids=[c[0] for c in LOSS_MODULES])
def test_loss_module(name, kwargs, text, kinds):
    module = getattr(engine.nn, name)(**kwargs)
    assert repr(module) == text
    for key, value in kwargs.items():
        assert getattr(module, "norm" if key == "p" and name == "PairwiseDistance" else key) == value
    extra = (
        (lambda lib: (lib.tensor([1.0, -1.0, 1.0, 1.0]),)) if name == "SoftMarginLoss" else (lambda lib: ())
    )
    check_op(lambda lib, *xs: getattr(lib.nn, name)(**kwargs)(*xs, *extra(lib)), kinds)


# ---------------------------------------------------------------------------------------- norms

NORMS = {
    "group_norm": (
        lambda lib, x, w, b: F(lib).group_norm(x, 3, w, b),
        [("r", (2, 6, 3)), ("r", (6,)), ("r", (6,))],
        "NativeGroupNormBackward0",
    ),  # fmt: skip
    "group_norm_2d_no_affine": (
        lambda lib, x: F(lib).group_norm(x, 2, eps=0.1),
        [("r", (3, 4))],
        "NativeGroupNormBackward0",
    ),
    "group_norm_4d_weight": (
        lambda lib, x, w: F(lib).group_norm(x, 1, w),
        [("r", (2, 2, 3, 2)), ("r", (2,))],
        "NativeGroupNormBackward0",
    ),
    "torch.group_norm": (lambda lib, x: lib.group_norm(x, 2), [("r", (2, 4, 3))], "NativeGroupNormBackward0"),
    "instance_norm": (
        lambda lib, x, w, b: F(lib).instance_norm(x, weight=w, bias=b),
        [("r", (2, 3, 4)), ("r", (3,)), ("r", (3,))],
        "ViewBackward0",
    ),
    "instance_norm_2d": (
        lambda lib, x: F(lib).instance_norm(x, eps=0.1),
        [("r", (2, 2, 3, 2))],
        "ViewBackward0",
    ),
    "instance_norm_running_stats": (
        lambda lib, x: F(lib).instance_norm(
            x, lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        ),
        [("r", (2, 3, 4))],
        "ViewBackward0",
    ),
    "instance_norm_eval": (
        lambda lib, x, w: F(lib).instance_norm(
            x,
            lib.full((3,), 0.1, dtype=lib.float64),
            lib.full((3,), 2.0, dtype=lib.float64),
            w,
            use_input_stats=False,
        ),
        [("r", (2, 3, 4)), ("r", (3,))],
        "ViewBackward0",
    ),
    "local_response_norm_3d": (
        lambda lib, x: F(lib).local_response_norm(x, 3),
        [("r", (2, 5, 4))],
        "DivBackward0",
    ),
    "local_response_norm_4d": (
        lambda lib, x: F(lib).local_response_norm(x, 2, alpha=0.1, beta=0.5, k=2.0),
        [("r", (2, 5, 3, 2))],
        "DivBackward0",
    ),
    "local_response_norm_5d": (
        lambda lib, x: F(lib).local_response_norm(x, 4, 0.3),
        [("r", (1, 5, 2, 2, 2))],
        "DivBackward0",
    ),
    "avg_pool3d": (lambda lib, x: F(lib).avg_pool3d(x, 2), [("r", (1, 2, 2, 4, 4))], "AvgPool3DBackward0"),
    "avg_pool3d_options": (
        lambda lib, x: F(lib).avg_pool3d(
            x, (2, 3, 2), stride=1, padding=1, ceil_mode=True, count_include_pad=False
        ),
        [("r", (2, 3, 4, 3))],
        "AvgPool3DBackward0",
    ),
    "avg_pool3d_divisor": (
        lambda lib, x: F(lib).avg_pool3d(x, (1, 2, 2), (1, 1, 2), divisor_override=3),
        [("r", (1, 2, 2, 3, 4))],
        "AvgPool3DBackward0",
    ),
}


@pytest.mark.parametrize("name", sorted(NORMS))
def test_norm(name):
    check_op_and_graph(*NORMS[name])


def test_instance_norm_updates_the_running_statistics_as_torch():
    data = np.random.default_rng(3).standard_normal((2, 3, 5))
    for lib in [engine] + ([torch] if torch is not None else []):
        mean, var = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        F(lib).instance_norm(lib.tensor(data), mean, var, momentum=0.3)
        if lib is engine:
            ours = mean.numpy(), var.numpy()
        else:
            np.testing.assert_allclose(ours[0], mean.numpy())
            np.testing.assert_allclose(ours[1], var.numpy())
    expected_mean = 0.3 * data.mean(axis=2).mean(axis=0)
    np.testing.assert_allclose(ours[0], expected_mean)


@pytest.mark.parametrize(
    "fn, message, exception",
    [
        (lambda lib: F(lib).group_norm(lib.ones(2, 5, 3), 3), "divisible by num_groups", RuntimeError),
        (lambda lib: F(lib).group_norm(lib.ones(6), 3), "Expected at least 2 dimensions", RuntimeError),
        (
            lambda lib: F(lib).group_norm(lib.ones(2, 6, 3), 3, lib.ones(5)),
            "Expected weight to be a vector",
            RuntimeError,
        ),
        (
            lambda lib: F(lib).group_norm(lib.ones(2, 6, 3), 3, None, lib.ones(3, 2)),
            "Expected bias",
            RuntimeError,
        ),
        (
            lambda lib: F(lib).group_norm(lib.ones(1, 3, 1), 3),
            "Expected more than 1 value per channel",
            ValueError,
        ),
        (
            lambda lib: F(lib).group_norm(lib.ones(2, 6, 3, dtype=lib.int64), 3),
            "GroupNormKernelImpl",
            NotImplementedError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).instance_norm(lib.ones(2, 3, 4), use_input_stats=False),
            "Expected running_mean",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).instance_norm(lib.ones(2, 3, 1)),
            "Expected more than 1 spatial element",
            ValueError,
        ),
        (
            lambda lib: F(lib).instance_norm(lib.ones(2, 3, 4), weight=lib.ones(4)),
            "weight should contain 6 elements",
            RuntimeError,
        ),  # fmt: skip
        (lambda lib: F(lib).local_response_norm(lib.ones(2, 5), 3), "Expected 3D or higher", ValueError),
        (
            lambda lib: lib.nn.GroupNorm(4, 6),
            "num_channels (6) must be divisible by num_groups (4)",
            ValueError,
        ),
        (
            lambda lib: lib.nn.InstanceNorm2d(3)(lib.ones(2, 3, 4, 4, 1)),
            "expected 3D or 4D input (got 5D input)",
            ValueError,
        ),  # fmt: skip
        (
            lambda lib: lib.nn.InstanceNorm1d(3, affine=True)(lib.ones(2, 4, 4)),
            "expected input's size at dim=1",
            ValueError,
        ),  # fmt: skip
        (lambda lib: F(lib).avg_pool3d(lib.ones(2, 3, 4), 2), "non-empty 4D or 5D", RuntimeError),
        (
            lambda lib: F(lib).avg_pool3d(lib.ones(1, 1, 4, 6, 6), 2, padding=2),
            "pad should be at most half",
            RuntimeError,
        ),
        (
            lambda lib: F(lib).avg_pool3d(lib.ones(1, 1, 4, 6, 6), 2, padding=(1, 1)),
            "tuple of three ints",
            RuntimeError,
        ),
        (lambda lib: F(lib).avg_pool3d(lib.ones(1, 1, 4, 6, 6), 7), "smaller than kernel size", RuntimeError),
        (
            lambda lib: F(lib).avg_pool3d(lib.ones(1, 1, 4, 6, 6), 2, divisor_override=0),
            "divisor must be not zero",
            RuntimeError,
        ),  # fmt: skip
    ],
    ids=[
        "gn-groups",
        "gn-1d",
        "gn-weight",
        "gn-bias",
        "gn-one-value",
        "gn-int",
        "in-no-stats",
        "in-spatial",
        "in-weight",
        "lrn-2d",
        "GroupNorm-groups",
        "InstanceNorm2d-dims",
        "InstanceNorm1d-features",
        "avg3d-dims",
        "avg3d-pad",
        "avg3d-pad-tuple",
        "avg3d-small",
        "avg3d-divisor",
    ],  # fmt: skip
)
def test_norm_errors(fn, message, exception):
    check_error(fn, message, exception)


def test_instance_norm_with_unmatched_features_warns_when_not_affine():
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        engine.nn.InstanceNorm1d(3)(engine.ones(2, 4, 5))


NORM_MODULES = [
    ("GroupNorm", (3, 6), {}, "GroupNorm(3, 6, eps=1e-05, affine=True, bias=True)", (2, 6, 4)),
    ("GroupNorm", (2, 4), dict(affine=False, eps=1e-3), "GroupNorm(2, 4, eps=0.001, affine=False, bias=False)", (2, 4)),
    ("InstanceNorm1d", (3,), {},
     "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)", (2, 3, 5)),
    ("InstanceNorm1d", (3,), dict(affine=True),
     "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=False)", (3, 5)),
    ("InstanceNorm2d", (3,), dict(affine=True, track_running_stats=True),
     "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)", (2, 3, 4, 4)),
    ("InstanceNorm3d", (2,), dict(momentum=None),
     "InstanceNorm3d(2, eps=1e-05, momentum=None, affine=False, bias=False, track_running_stats=False)", (2, 2, 2, 3)),
    ("LocalResponseNorm", (2, 1e-3, 0.5, 2), {}, "LocalResponseNorm(2, alpha=0.001, beta=0.5, k=2)", (2, 4, 3)),
]  # fmt: skip


@pytest.mark.parametrize("name, args, kwargs, text, shape", NORM_MODULES, ids=[m[3] for m in NORM_MODULES])
def test_norm_module(name, args, kwargs, text, shape):
    module = getattr(engine.nn, name)(*args, **kwargs).double()
    assert repr(module) == text
    for p in module.parameters():
        expected = 1.0 if p is module.weight else 0.0
        assert p.tolist() == [expected] * p.numel()
    if torch is not None:
        theirs = getattr(torch.nn, name)(*args, **kwargs).double()
        assert list(module.state_dict()) == list(theirs.state_dict())
        module.train(), theirs.train()
    check_op(lambda lib, x: (module if lib is engine else theirs)(x), [("r", shape)])


# ------------------------------------------------------------------------ pooling and pixel shuffles


def _unpool(lib, x, kernel=2, stride=None, output_size=None):
    """max_pool2d's values and indices, unpooled (the pooling is of a constant: only the unpool is checked)."""
    values, indices = F(lib).max_pool2d(
        lib.tensor(np.arange(32.0).reshape(1, 2, 4, 4)), kernel, stride, return_indices=True
    )
    return F(lib).max_unpool2d(x * values, indices, kernel, stride, output_size=output_size)


POOLS = {
    "adaptive_avg_pool2d": (
        lambda lib, x: F(lib).adaptive_avg_pool2d(x, (2, 3)),
        [("r", (2, 3, 5, 7))],
        "AdaptiveAvgPool2DBackward0",
    ),  # fmt: skip
    "adaptive_avg_pool2d_none": (
        lambda lib, x: F(lib).adaptive_avg_pool2d(x, (None, 3)),
        [("r", (2, 5, 7))],
        "AdaptiveAvgPool2DBackward0",
    ),  # fmt: skip
    "adaptive_avg_pool2d_upsizes": (
        lambda lib, x: F(lib).adaptive_avg_pool2d(x, 4),
        [("r", (1, 2, 3, 2))],
        "AdaptiveAvgPool2DBackward0",
    ),  # fmt: skip
    "adaptive_avg_pool2d_1x1": (
        lambda lib, x: F(lib).adaptive_avg_pool2d(x, 1),
        [("r", (2, 3, 5, 4))],
        "MeanBackward1",
    ),
    "adaptive_avg_pool1d": (
        lambda lib, x: F(lib).adaptive_avg_pool1d(x, 3),
        [("r", (2, 3, 7))],
        "SqueezeBackward1",
    ),
    "adaptive_avg_pool1d_1": (
        lambda lib, x: F(lib).adaptive_avg_pool1d(x, (1,)),
        [("r", (3, 7))],
        "SqueezeBackward1",
    ),
    "torch.adaptive_avg_pool1d": (
        lambda lib, x: lib.adaptive_avg_pool1d(x, 2),
        [("r", (3, 7))],
        "SqueezeBackward1",
    ),
    "adaptive_max_pool2d": (
        lambda lib, x: F(lib).adaptive_max_pool2d(x, (2, 3)),
        [("d", (2, 2, 5, 7))],
        "AdaptiveMaxPool2DBackward0",
    ),  # fmt: skip
    "adaptive_max_pool2d_indices": (
        lambda lib, x: F(lib).adaptive_max_pool2d(x, (3, 2), return_indices=True),
        [("d", (3, 5, 4))],
        "AdaptiveMaxPool2DBackward0",
    ),  # fmt: skip
    "adaptive_max_pool2d_overlapping": (
        lambda lib, x: F(lib).adaptive_max_pool2d(x, 4),
        [("d", (1, 1, 5, 5))],
        "AdaptiveMaxPool2DBackward0",
    ),  # fmt: skip
    "adaptive_max_pool1d": (
        lambda lib, x: F(lib).adaptive_max_pool1d(x, 3, True),
        [("d", (2, 7))],
        "SqueezeBackward1",
    ),
    "max_unpool2d": (lambda lib, x: _unpool(lib, x), [("r", (1, 2, 2, 2))], "MaxUnpool2DBackward0"),
    "max_unpool2d_output_size": (
        lambda lib, x: _unpool(lib, x, output_size=(5, 5)),
        [("r", (1, 2, 2, 2))],
        "MaxUnpool2DBackward0",
    ),  # fmt: skip
    "max_unpool2d_stride": (
        lambda lib, x: _unpool(lib, x, 2, 1),
        [("r", (1, 2, 3, 3))],
        "MaxUnpool2DBackward0",
    ),
    "lp_pool1d": (lambda lib, x: F(lib).lp_pool1d(x, 3, 2), [("p", (2, 3, 6))], "PowBackward0"),
    "lp_pool2d": (
        lambda lib, x: F(lib).lp_pool2d(x, 1.5, (2, 3), stride=1, ceil_mode=True),
        [("p", (1, 2, 4, 5))],
        "PowBackward0",
    ),  # fmt: skip
    "lp_pool3d": (lambda lib, x: F(lib).lp_pool3d(x, 2, 2), [("r", (1, 2, 2, 4, 4))], "PowBackward0"),
    "pixel_shuffle": (
        lambda lib, x: F(lib).pixel_shuffle(x, 2),
        [("r", (2, 8, 2, 3))],
        "PixelShuffleBackward0",
    ),
    "pixel_shuffle_3d_input": (
        lambda lib, x: F(lib).pixel_shuffle(x, 3),
        [("r", (9, 2, 1))],
        "PixelShuffleBackward0",
    ),
    "pixel_shuffle_5d_input": (
        lambda lib, x: lib.pixel_shuffle(x, 1),
        [("r", (1, 2, 3, 2, 2))],
        "PixelShuffleBackward0",
    ),
    "pixel_unshuffle": (
        lambda lib, x: F(lib).pixel_unshuffle(x, 2),
        [("r", (2, 2, 4, 6))],
        "PixelUnshuffleBackward0",
    ),
    "pixel_unshuffle_3d_input": (
        lambda lib, x: lib.pixel_unshuffle(x, 3),
        [("r", (1, 3, 6))],
        "PixelUnshuffleBackward0",
    ),
    "max_pool2d_one_element_tuples": (
        lambda lib, x: F(lib).max_pool2d(x, (2,), padding=(1,)),
        [("d", (1, 1, 4, 4))],
        "MaxPool2DWithIndicesBackward0",
    ),  # fmt: skip
}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_pool(name):
    check_op_and_graph(*POOLS[name])


def test_pixel_shuffle_of_integers_is_forward_only():
    compare_with_torch(lambda lib, x: F(lib).pixel_shuffle(x, 2), [np.arange(16).reshape(4, 2, 2)])


@pytest.mark.parametrize(
    "fn, message, exception",
    [
        *[
            (
                lambda lib, name=name, arg=arg, value=value: getattr(F(lib), name)(
                    lib.ones(1, 1, 6, 6), **{"kernel_size": 2, arg: value}
                ),
                f"{name}: {arg}",
                RuntimeError,
            )  # fmt: skip
            for name in ("max_pool2d", "avg_pool2d")
            for arg, value in (("kernel_size", (2, 2, 2)), ("stride", (1, 1, 1)), ("padding", (1, 1, 1)))
        ],
        (
            lambda lib: F(lib).max_pool2d(lib.ones(1, 1, 6, 6), 2, dilation=(1, 1, 1)),
            "dilation must be",
            RuntimeError,
        ),
        (
            lambda lib: F(lib).adaptive_avg_pool2d(lib.ones(5, 7), (2, 2)),
            "Input dimension should be at least 3",
            ValueError,
        ),  # fmt: skip
        (lambda lib: F(lib).adaptive_avg_pool2d(lib.ones(5, 7), 2), "Expected 3D or 4D tensor", RuntimeError),
        (
            lambda lib: F(lib).adaptive_avg_pool2d(lib.ones(1, 1, 5, 7), (2, 3, 4)),
            "output_size must be 2",
            RuntimeError,
        ),
        (
            lambda lib: F(lib).adaptive_avg_pool2d(lib.ones(1, 5, 7), (-1, 3)),
            "greater than or equal to 0",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).adaptive_avg_pool2d(lib.ones(2, 3, 0, 7), 2),
            "non-zero size for non-batch",
            RuntimeError,
        ),
        (
            lambda lib: F(lib).adaptive_avg_pool2d(lib.ones(1, 2, 4, 4, dtype=lib.int64), 2),
            "not implemented for 'Long'",
            NotImplementedError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).adaptive_avg_pool1d(lib.ones(2, 3, 4, 5), 3),
            "Expected 2 to 3 dimensions",
            RuntimeError,
        ),
        (
            lambda lib: F(lib).adaptive_avg_pool1d(lib.ones(3, 5), (3, 2)),
            "should contain one int",
            RuntimeError,
        ),
        (lambda lib: F(lib).adaptive_max_pool2d(lib.ones(5, 7), 1), "Expected 3D or 4D tensor", RuntimeError),
        (
            lambda lib: F(lib).adaptive_max_pool2d(lib.ones(1, 1, 5, 7), (2, 3, 4)),
            "output_size.size() must be 2",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).adaptive_max_pool1d(lib.ones(3, 0), 2),
            "non-zero size for non-batch",
            RuntimeError,
        ),
        (
            lambda lib: F(lib).max_unpool2d(lib.ones(1, 2, 2, 2), lib.zeros(1, 2, 2, 2, dtype=lib.int32), 2),
            "should be type int64",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).max_unpool2d(lib.ones(2, 2), lib.zeros(2, 2, dtype=lib.int64), 2),
            "should be a 3d or 4d Tensor",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).max_unpool2d(lib.ones(1, 2, 2), lib.zeros(1, 1, 2, dtype=lib.int64), 2),
            "Expected shape of indices",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).max_unpool2d(lib.ones(1, 2, 2), lib.full((1, 2, 2), 18, dtype=lib.int64), 2),
            "Found an invalid max index: 18",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).max_unpool2d(
                lib.ones(1, 2, 2), lib.zeros(1, 2, 2, dtype=lib.int64), 2, output_size=(7, 5)
            ),
            "invalid output_size",
            ValueError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).max_unpool2d(
                lib.ones(1, 2, 2), lib.zeros(1, 2, 2, dtype=lib.int64), 2, output_size=(5,)
            ),
            "should be a sequence containing 2 or 4 elements",
            ValueError,
        ),  # fmt: skip
        (lambda lib: F(lib).pixel_shuffle(lib.ones(8, 2), 2), "at least 3 dimensions", RuntimeError),
        (lambda lib: F(lib).pixel_shuffle(lib.ones(8, 2, 3), 0), "positive upscale_factor", RuntimeError),
        (lambda lib: F(lib).pixel_shuffle(lib.ones(6, 2, 3), 2), "is not divisible by 4", RuntimeError),
        (lambda lib: F(lib).pixel_unshuffle(lib.ones(4, 6), 2), "at least 3 dimensions", RuntimeError),
        (lambda lib: F(lib).pixel_unshuffle(lib.ones(1, 4, 6), 0), "positive downscale_factor", RuntimeError),
        (lambda lib: F(lib).pixel_unshuffle(lib.ones(1, 5, 6), 2), "height to be divisible", RuntimeError),
        (lambda lib: F(lib).pixel_unshuffle(lib.ones(1, 4, 5), 2), "width to be divisible", RuntimeError),
        (
            lambda lib: F(lib).lp_pool2d(lib.ones(1, 1, 4, 4), 2, (2, 2, 2)),
            "too many values to unpack",
            ValueError,
        ),
    ],
)
def test_pool_errors(fn, message, exception):
    check_error(fn, message, exception)


def test_adaptive_max_pool_indices_match_torch_with_ties_and_nans():
    data = np.array(
        [[[[1.0, 3.0, 3.0, 0.0, 2.0], [np.nan, 1.0, 3.0, 3.0, np.nan], [0.0, 0.0, 5.0, 5.0, 1.0]]]]
    )
    compare_with_torch(lambda lib, x: F(lib).adaptive_max_pool2d(x, (2, 3), return_indices=True), [data])


POOL_MODULES = [
    ("AdaptiveAvgPool2d", ((2, None),), "AdaptiveAvgPool2d(output_size=(2, None))", (2, 3, 5, 4)),
    ("AdaptiveAvgPool1d", (3,), "AdaptiveAvgPool1d(output_size=3)", (2, 3, 7)),
    ("AdaptiveMaxPool2d", (3,), "AdaptiveMaxPool2d(output_size=3)", (2, 5, 4)),
    ("AdaptiveMaxPool1d", (2,), "AdaptiveMaxPool1d(output_size=2)", (3, 5)),
    ("LPPool2d", (2, 3), "LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)", (1, 2, 5, 6)),
    (
        "LPPool1d",
        (1.5, 2, 1, True),
        "LPPool1d(norm_type=1.5, kernel_size=2, stride=1, ceil_mode=True)",
        (2, 5),
    ),
    ("LPPool3d", (2, 2), "LPPool3d(norm_type=2, kernel_size=2, stride=None, ceil_mode=False)", (1, 2, 2, 4)),
    ("PixelShuffle", (2,), "PixelShuffle(upscale_factor=2)", (1, 8, 2, 3)),
    ("PixelUnshuffle", (3,), "PixelUnshuffle(downscale_factor=3)", (1, 3, 6)),
    ("AvgPool3d", (2, 1), "AvgPool3d(kernel_size=2, stride=1, padding=0)", (1, 2, 3, 3)),
]


@pytest.mark.parametrize("name, args, text, shape", POOL_MODULES, ids=[m[0] for m in POOL_MODULES])
def test_pool_module(name, args, text, shape):
    assert repr(getattr(engine.nn, name)(*args)) == text
    check_op(lambda lib, x: getattr(lib.nn, name)(*args)(x), [("d" if "Max" in name else "p", shape)])


def test_max_unpool_modules():
    assert repr(engine.nn.MaxUnpool2d(2)) == "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"
    assert repr(engine.nn.MaxUnpool1d(3, 2, 1)) == "MaxUnpool1d(kernel_size=(3,), stride=(2,), padding=(1,))"

    def fn(lib, x):
        values, indices = lib.nn.MaxPool1d(2, return_indices=True)(x)
        return lib.nn.MaxUnpool1d(2)(values, indices, output_size=[7])

    check_op(fn, [("d", (2, 3, 6))], node="SqueezeBackward1")


# ------------------------------------------------------------------------- padding and embedding bags

CIRCULAR = [
    ((1, 2), (3, 5)),
    ((0, 2), (3, 5)),
    ((-1, 2), (3, 5)),
    ((2, -1), (2, 3, 5)),
    ((5, 5), (3, 5)),
    ((1, 1, 1, 1), (1, 2, 3, 4)),
    ((1, 0, 0, 1), (2, 3, 4)),
    ((0, 0, 0, 0), (1, 2, 3, 4)),
    ((1, 2, 0, 1, 2, 1), (1, 1, 3, 4, 3)),
    ((-1, 1, 1, 1), (2, 3, 4)),
]


@pytest.mark.parametrize("pad, shape", CIRCULAR, ids=[str(p) for p, _ in CIRCULAR])
def test_circular_pad(pad, shape):
    check_op_and_graph(
        lambda lib, x: F(lib).pad(x, pad, mode="circular"), [("r", shape)], "engine::autograd::CopySlices"
    )


def test_circular_pad_wraps_around():
    out = engine.nn.functional.pad(engine.arange(6.0).reshape(1, 2, 3), (1, 2), mode="circular")
    assert out.tolist() == [[[2.0, 0.0, 1.0, 2.0, 0.0, 1.0], [5.0, 3.0, 4.0, 5.0, 3.0, 4.0]]]


@pytest.mark.parametrize(
    "fn, message, exception",
    [
        (
            lambda lib: F(lib).pad(lib.ones(3, 5), (6, 0), mode="circular"),
            "wrapping around more than once",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).pad(lib.ones(3, 5), (1, 1, 1, 1), mode="circular"),
            "Padding size 4 is not supported",
            NotImplementedError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).pad(lib.ones(1, 2, 3, 4), (1, 1), mode="circular"),
            "Padding size 2 is not supported",
            NotImplementedError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).pad(lib.ones(1, 2, 3), (1, 1), mode="reflect", value=1.0),
            "doesn't take in value",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).pad(lib.ones(1, 2, 3), (1, 1), mode="circular", value=0.5),
            "doesn't take in value",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).pad(lib.ones(1, 2, 3), (1, 1), mode="wrap"),
            "Unrecognised padding mode wrap",
            NotImplementedError,
        ),  # fmt: skip
    ],
    ids=["wraps-twice", "too-many-pads", "too-few-pads", "reflect-value", "circular-value", "unknown-mode"],
)
def test_pad_errors(fn, message, exception):
    check_error(fn, message, exception)


def test_conv_with_circular_padding_mode_matches_torch():
    if torch is None:
        return
    torch.manual_seed(0)
    theirs = torch.nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular").double()
    ours = engine.nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular").double()
    ours.load_state_dict({k: engine.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    check_op(
        lambda lib, x: (ours if lib is engine else theirs)(x),
        [("r", (1, 2, 4, 5))],
        node="ConvolutionBackward0",
    )


def _bag(mode="mean", offsets=(0, 4), **kwargs):
    def fn(lib, weight, *psw):
        indices = lib.tensor([1, 2, 4, 5, 4, 3, 2, 9])
        offs = None if offsets is None else lib.tensor(list(offsets))
        if offsets is None:
            indices = indices.reshape(2, 4)
        return F(lib).embedding_bag(
            indices, weight, offs, mode=mode, per_sample_weights=psw[0] if psw else None, **kwargs
        )

    return fn


BAGS = {
    "mean": (_bag(), [("r", (10, 3))]),
    "sum": (_bag("sum"), [("r", (10, 3))]),
    "max": (_bag("max"), [("d", (10, 3))]),
    "2d_input": (_bag("sum", None), [("r", (10, 3))]),
    "empty_bags": (_bag("mean", (0, 4, 4, 8)), [("r", (10, 3))]),
    "empty_bags_max": (_bag("max", (0, 4, 4, 8)), [("d", (10, 3))]),
    "include_last_offset": (_bag("mean", (0, 4, 8), include_last_offset=True), [("r", (10, 3))]),
    "padding_idx": (_bag("mean", padding_idx=4), [("r", (10, 3))]),
    "padding_idx_negative_max": (_bag("max", (0, 2, 3), padding_idx=-6), [("d", (10, 3))]),
    "per_sample_weights": (_bag("sum"), [("r", (10, 3)), ("r", (8,))]),
    "per_sample_weights_padding": (_bag("sum", padding_idx=2), [("r", (10, 3)), ("r", (8,))]),
}


@pytest.mark.parametrize("name", sorted(BAGS))
def test_embedding_bag(name):
    fn, kinds = BAGS[name]
    check_op(fn, kinds, node="EmbeddingBagBackward0")


def test_embedding_bag_scale_grad_by_freq_divides_by_each_index_count():
    """Each row's gradient over how often its index occurs in the batch, as documented (and as F.embedding
    does). PyTorch 2.13's CPU kernel looks the counts up by position in the sorted indices instead, so its
    numbers differ where a row's rank and its count disagree; the engine keeps the documented rule."""
    weight = engine.ones(10, 1, dtype=engine.float64, requires_grad=True)
    indices, offsets = engine.tensor([1, 2, 4, 5, 4, 3, 2, 9]), engine.tensor([0, 4])
    out = engine.nn.functional.embedding_bag(indices, weight, offsets, mode="sum", scale_grad_by_freq=True)
    out.backward(engine.tensor([[1.0], [10.0]], dtype=engine.float64))
    assert weight.grad.flatten().tolist() == [0, 1, 11 / 2, 10, 11 / 2, 1, 0, 0, 0, 10]


def test_embedding_bag_int32_indices():
    def fn(lib, weight):
        idx = lib.tensor([1, 2, 4, 5], dtype=lib.int32)
        return F(lib).embedding_bag(idx, weight, lib.tensor([0, 1], dtype=lib.int32), mode="sum")

    check_op(fn, [("r", (10, 3))], node="EmbeddingBagBackward0")


def _bag_error(**kwargs):
    def fn(lib):
        args = dict(input=lib.tensor([1, 2, 4, 5]), weight=lib.ones(10, 3), offsets=lib.tensor([0, 2]))
        args.update({k: v(lib) if callable(v) else v for k, v in kwargs.items()})
        return F(lib).embedding_bag(**args)

    return fn


@pytest.mark.parametrize(
    "fn, message, exception",
    [
        (_bag_error(offsets=lambda lib: lib.tensor([1, 2])), "offsets[0] has to be 0", RuntimeError),
        (
            _bag_error(offsets=lambda lib: lib.tensor([0, 9])),
            "can not be greater than input's length",
            RuntimeError,
        ),
        (
            _bag_error(input=lambda lib: lib.tensor([1, 10])),
            "Index 1 of input takes value 10",
            RuntimeError,
        ),
        (
            _bag_error(
                input=lambda lib: lib.tensor([-1, 3]), weight=lambda lib: lib.ones(10, 3, dtype=lib.float64)
            ),
            "Expected idx >= 0 && idx < num_embeddings but found idx to be -1",
            RuntimeError,
        ),
        (
            _bag_error(input=lambda lib: lib.tensor([1.0, 2.0])),
            "'indices' to have one of the following",
            RuntimeError,
        ),
        (_bag_error(offsets=None), "offsets has to be a 1D Tensor but got None", ValueError),
        (
            _bag_error(input=lambda lib: lib.ones(2, 2, dtype=lib.int64)),
            "if input is 2D, then offsets has to be None",
            ValueError,
        ),  # fmt: skip
        (_bag_error(offsets=lambda lib: lib.tensor([[0, 2]])), "offsets has to be a 1D Tensor", ValueError),
        (
            _bag_error(input=lambda lib: lib.ones(2, 2, 2, dtype=lib.int64), offsets=None),
            "input has to be 1D or 2D",
            ValueError,
        ),  # fmt: skip
        (_bag_error(mode="min"), "mode has to be one of sum, mean or max", ValueError),
        (
            _bag_error(per_sample_weights=lambda lib: lib.ones(4)),
            "only supported for mode='sum'",
            NotImplementedError,
        ),
        (
            _bag_error(mode="sum", per_sample_weights=lambda lib: lib.ones(3)),
            "must have the same shape",
            ValueError,
        ),
        (_bag_error(weight=lambda lib: lib.ones(10)), "weight has to be a 2D Tensor", ValueError),
        (
            _bag_error(mode="max", scale_grad_by_freq=True),
            "does not support scaling the gradient",
            ValueError,
        ),
        (_bag_error(padding_idx=10), "padding_idx must be within the number of embeddings", RuntimeError),
    ],
    ids=[
        "offsets-start",
        "offsets-end",
        "index-range",
        "index-range-double",
        "float-indices",
        "no-offsets",
        "2d-offsets",
        "offsets-2d",
        "3d-input",
        "mode",
        "psw-mode",
        "psw-shape",
        "weight-1d",
        "max-freq",
        "padding-idx",
    ],  # fmt: skip
)
def test_embedding_bag_errors(fn, message, exception):
    check_error(fn, message, exception)


def test_embedding_bag_module():
    bag = engine.nn.EmbeddingBag(10, 3, mode="max", padding_idx=2, max_norm=1.0, include_last_offset=True)
    assert repr(bag) == "EmbeddingBag(10, 3, max_norm=1.0, mode='max', padding_idx=2)"
    assert repr(engine.nn.EmbeddingBag(10, 3)) == "EmbeddingBag(10, 3, mode='mean')"
    assert bag.weight[2].tolist() == [0.0, 0.0, 0.0] and bag.weight.shape == (10, 3)
    big = engine.nn.EmbeddingBag(200, 50).weight.detach().numpy()
    assert abs(big.mean()) < 0.05 and abs(big.std() - 1) < 0.05  # N(0, 1), as torch initialises it
    out = bag(engine.tensor([1, 2, 3, 4]), engine.tensor([0, 2, 4]))
    assert out.shape == (2, 3) and out.grad_fn.name() == "EmbeddingBagBackward0"
    pretrained = engine.nn.EmbeddingBag.from_pretrained(engine.ones(4, 2), mode="sum")
    assert not pretrained.weight.requires_grad
    assert pretrained(engine.tensor([[0, 1], [2, 3]])).tolist() == [[2.0, 2.0], [2.0, 2.0]]


# --------------------------------------------------------------------------------- convolutions

CONVS = {
    "conv3d": (
        lambda lib, x, w, b: F(lib).conv3d(x, w, b),
        [("r", (2, 2, 3, 4, 3)), ("r", (3, 2, 2, 2, 2)), ("r", (3,))],
    ),
    "conv3d_options": (
        lambda lib, x, w: F(lib).conv3d(x, w, stride=(1, 2, 1), padding=1, dilation=(1, 1, 2), groups=2),
        [("r", (1, 4, 3, 4, 5)), ("r", (2, 2, 2, 2, 2))],
    ),
    "conv3d_unbatched": (
        lambda lib, x, w: lib.conv3d(x, w, padding="same"),
        [("r", (2, 3, 3, 3)), ("r", (2, 2, 2, 1, 3))],
    ),
    "conv_transpose1d": (
        lambda lib, x, w, b: F(lib).conv_transpose1d(x, w, b),
        [("r", (2, 4, 5)), ("r", (4, 2, 3)), ("r", (2,))],
    ),
    "conv_transpose1d_stride_groups": (
        lambda lib, x, w: F(lib).conv_transpose1d(x, w, stride=2, padding=1, output_padding=1, groups=2),
        [("r", (1, 4, 5)), ("r", (4, 3, 3))],
    ),
    "conv_transpose1d_dilation_output_padding": (
        lambda lib, x, w: F(lib).conv_transpose1d(x, w, output_padding=1, dilation=2),
        [("r", (1, 4, 6)), ("r", (4, 2, 3))],
    ),
    "conv_transpose2d": (
        lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, stride=(2, 1), padding=(1, 0)),
        [("r", (2, 3, 4, 3)), ("r", (3, 2, 3, 2)), ("r", (2,))],
    ),
    "conv_transpose2d_unbatched": (
        lambda lib, x, w: lib.conv_transpose2d(x, w, stride=3, output_padding=(2, 1), dilation=2),
        [("r", (2, 3, 2)), ("r", (2, 2, 2, 2))],
    ),
    "conv_transpose2d_padding_past_output_padding": (
        lambda lib, x, w: F(lib).conv_transpose2d(x, w, stride=2, padding=2, output_padding=1),
        [("r", (1, 2, 4, 4)), ("r", (2, 1, 5, 5))],
    ),
    "conv_transpose3d": (
        lambda lib, x, w, b: F(lib).conv_transpose3d(x, w, b, stride=2, output_padding=(1, 0, 1)),
        [("r", (1, 2, 2, 3, 2)), ("r", (2, 2, 2, 2, 2)), ("r", (2,))],
    ),
}


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
@pytest.mark.parametrize("name", sorted(CONVS))
def test_convolution(name):
    fn, kinds = CONVS[name]
    check_op_and_graph(fn, kinds, "SqueezeBackward1" if "unbatched" in name else "ConvolutionBackward0")


@pytest.mark.parametrize(
    "fn, message, exception",
    [
        (
            lambda lib: F(lib).conv_transpose1d(lib.ones(1, 3, 6), lib.ones(4, 2, 3)),
            "Given transposed=1",
            RuntimeError,
        ),
        (
            lambda lib: F(lib).conv_transpose1d(lib.ones(1, 4, 6), lib.ones(4, 2)),
            "at least three dimensions",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).conv_transpose1d(lib.ones(1, 1, 4, 6), lib.ones(4, 2, 3)),
            "Expected 2D (unbatched) or 3D",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).conv_transpose1d(lib.ones(1, 4, 6), lib.ones(4, 2, 3), output_padding=1),
            "output padding must be smaller than either stride or dilation",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).conv_transpose2d(lib.ones(1, 4, 6, 6), lib.ones(4, 2, 3, 3), output_padding=1),
            "output_padding_height: 1",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).conv_transpose3d(
                lib.ones(1, 4, 3, 3, 3), lib.ones(4, 2, 2, 2, 2), output_padding=1
            ),
            "output_padding_depth: 1",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).conv_transpose1d(lib.ones(1, 4, 6), lib.ones(4, 2, 3), groups=3),
            "divisible by 3",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).conv_transpose2d(lib.ones(1, 4, 5, 5), lib.ones(4, 2, 3, 3), lib.ones(3)),
            "expected bias to be 1-dimensional with 2 elements",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).conv_transpose2d(
                lib.ones(1, 4, 5, 5), lib.ones(4, 2, 3, 3, dtype=lib.float64)
            ),
            "expected scalar type Float but found Double",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).conv_transpose2d(lib.ones(1, 4, 1, 1), lib.ones(4, 2, 1, 1), padding=2),
            "Output size is too small",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).conv_transpose2d(lib.ones(1, 4, 5, 5), lib.ones(4, 2, 3, 3), groups=0),
            "non-positive groups is not supported",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).conv3d(lib.ones(1, 2, 3, 4), lib.ones(2, 2, 2, 2, 2)),
            "expected input[1, 1, 2, 3, 4]",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: lib.nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect"),
            'Only "zeros" padding mode',
            ValueError,
        ),
        (
            lambda lib: lib.nn.ConvTranspose2d(4, 6, 3, stride=2)(lib.ones(1, 4, 5, 5), output_size=(13, 13)),
            "requested an output size of (13, 13)",
            ValueError,
        ),  # fmt: skip
        (
            lambda lib: lib.nn.ConvTranspose2d(4, 6, 3, stride=2)(lib.ones(1, 4, 5, 5), output_size=(12,)),
            "output_size must have 2 or 4 elements (got 1)",
            ValueError,
        ),  # fmt: skip
    ],
)
def test_convolution_errors(fn, message, exception):
    check_error(fn, message, exception)


CONV_MODULES = [
    ("Conv3d", (2, 4, 3), dict(padding=1, dilation=2),
     "Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1), dilation=(2, 2, 2))", (4, 2, 3, 3, 3)),
    ("ConvTranspose1d", (2, 3, 2), {}, "ConvTranspose1d(2, 3, kernel_size=(2,), stride=(1,))", (2, 3, 2)),
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, output_padding=1, groups=2, bias=False),
     "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1), groups=2, bias=False)",
     (4, 3, 3, 3)),
    ("ConvTranspose3d", (2, 2, (1, 2, 3)), {}, "ConvTranspose3d(2, 2, kernel_size=(1, 2, 3), stride=(1, 1, 1))",
     (2, 2, 1, 2, 3)),
]  # fmt: skip


@pytest.mark.parametrize(
    "name, args, kwargs, text, weight_shape", CONV_MODULES, ids=[m[0] for m in CONV_MODULES]
)
def test_convolution_module(name, args, kwargs, text, weight_shape):
    module = getattr(engine.nn, name)(*args, **kwargs)
    assert repr(module) == text
    assert module.weight.shape == weight_shape
    # kaiming_uniform_(a=sqrt(5)): U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = weight.shape[1] * kernel elements
    bound = 1 / np.sqrt(weight_shape[1] * np.prod(weight_shape[2:]))
    assert np.abs(module.weight.detach().numpy()).max() <= bound
    if module.bias is not None:
        assert module.bias.shape == (args[1],) and np.abs(module.bias.detach().numpy()).max() <= bound
    if torch is not None:
        theirs = getattr(torch.nn, name)(*args, **kwargs)
        assert repr(theirs) == text and tuple(theirs.weight.shape) == weight_shape


def test_conv_transpose_module_output_size():
    if torch is None:
        return
    theirs = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1).double()
    ours = engine.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1).double()
    ours.load_state_dict({k: engine.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    check_op(
        lambda lib, x: (ours if lib is engine else theirs)(x, output_size=[1, 3, 8, 7]), [("r", (1, 2, 4, 4))]
    )


def test_conv_transpose_is_the_adjoint_of_conv():
    rng = np.random.default_rng(5)
    x, w, y = (
        rng.standard_normal((2, 4, 5, 6)),
        rng.standard_normal((4, 3, 3, 2)),
        rng.standard_normal((2, 3, 9, 14)),
    )
    conv = engine.nn.functional.conv2d(
        engine.tensor(y), engine.tensor(w), stride=2, padding=(1, 0), dilation=(1, 2)
    )
    transposed = engine.nn.functional.conv_transpose2d(
        engine.tensor(x), engine.tensor(w), stride=2, padding=(1, 0), output_padding=(0, 1), dilation=(1, 2)
    )
    assert transposed.shape == (2, 3, 9, 14) and conv.shape == (2, 4, 5, 6)
    np.testing.assert_allclose((conv.numpy() * x).sum(), (transposed.numpy() * y).sum())


# ---------------------------------------------------------------------------------- upsampling

_UPSAMPLING_SHAPES = {
    "nearest": [(1, 2, 5), (2, 1, 4, 5), (1, 1, 3, 4, 2)],
    "nearest-exact": [(1, 2, 5), (1, 1, 4, 5), (1, 1, 3, 2, 4)],
    "linear": [(1, 2, 5)],
    "bilinear": [(2, 1, 4, 5)],
    "trilinear": [(1, 1, 3, 4, 2)],
    "bicubic": [(1, 2, 4, 5)],
    "area": [(1, 2, 5), (1, 1, 4, 5), (1, 1, 3, 4, 5)],
}
_UPSAMPLING_ARGS = [
    dict(scale_factor=2),
    dict(scale_factor=1.7),
    dict(scale_factor=0.6),
    dict(size=7),
    dict(size=3),
    dict(scale_factor=1.7, recompute_scale_factor=True),
]
UPSAMPLING = [
    (mode, shape, kwargs, align_corners)
    for mode, shapes in _UPSAMPLING_SHAPES.items()
    for shape in shapes
    for kwargs in _UPSAMPLING_ARGS + [dict(scale_factor=(2.5, 0.6, 1.7)[: len(shape) - 2])]
    for align_corners in ([None] if mode in ("nearest", "nearest-exact", "area") else [False, True])
]


@pytest.mark.parametrize(
    "mode, shape, kwargs, align_corners",
    UPSAMPLING,
    ids=[f"{m}-{len(s) - 2}d-{k}-{a}" for m, s, k, a in UPSAMPLING],
)
def test_interpolate(mode, shape, kwargs, align_corners):
    def fn(lib, x):
        return F(lib).interpolate(x, mode=mode, align_corners=align_corners, **kwargs)

    check_op(fn, [("r", shape)])
    compare_with_torch(lambda lib, x: fn(lib, x.float()), make_arrays([("r", shape)]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "mode, shape, node",
    [
        ("nearest", (1, 2, 5), "UpsampleNearest1DBackward0"),
        ("nearest", (1, 2, 3, 4), "UpsampleNearest2DBackward0"),
        ("nearest", (1, 1, 2, 3, 2), "UpsampleNearest3DBackward0"),
        ("nearest-exact", (1, 2, 3, 4), "UpsampleNearestExact2DBackward0"),
        ("linear", (1, 2, 5), "UpsampleLinear1DBackward0"),
        ("bilinear", (1, 2, 3, 4), "UpsampleBilinear2DBackward0"),
        ("trilinear", (1, 1, 2, 3, 2), "UpsampleTrilinear3DBackward0"),
        ("bicubic", (1, 2, 3, 4), "UpsampleBicubic2DBackward0"),
        ("area", (1, 2, 3, 4), "AdaptiveAvgPool2DBackward0"),
        ("area", (1, 1, 2, 3, 4), "AdaptiveAvgPool3DBackward0"),
    ],  # fmt: skip
)
def test_interpolate_node(mode, shape, node):
    check_op_and_graph(lambda lib, x: F(lib).interpolate(x, scale_factor=(1.5, 0.7, 2)[: len(shape) - 2], mode=mode),
                       [("r", shape)], node)  # fmt: skip


def test_nearest_3d_gradient_is_the_adjoint_of_its_forward():
    """A dim that keeps its size under a scale factor != 1 is resampled by PyTorch's nearest3d forward but
    treated as a copy by its backward (torch's gradient is then not the forward's); the engine's is."""
    x = engine.arange(24.0, dtype=engine.float64).reshape(1, 1, 3, 4, 2).requires_grad_()
    y = engine.nn.functional.interpolate(x, scale_factor=(1.0, 1.0, 1.3))
    (grad,) = engine.autograd.grad(y.sum(), x)
    counts = np.bincount(y.detach().numpy().reshape(-1).astype(int), minlength=24)
    assert grad.numpy().reshape(-1).tolist() == counts.tolist()


def test_interpolate_of_uint8_nearest_stays_uint8():
    compare_with_torch(
        lambda lib, x: F(lib).interpolate(x, scale_factor=1.5),
        [np.arange(16, dtype=np.uint8).reshape(1, 1, 4, 4)],
    )


@pytest.mark.parametrize(
    "fn, message, exception",
    [
        (
            lambda lib: F(lib).interpolate(lib.ones(1, 2, 4, 5), size=3, scale_factor=2),
            "only one of size",
            ValueError,
        ),
        (lambda lib: F(lib).interpolate(lib.ones(1, 2, 4, 5)), "either size or scale_factor", ValueError),
        (
            lambda lib: F(lib).interpolate(lib.ones(1, 2, 4, 5), size=(3,)),
            "same number of spatial dimensions",
            ValueError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).interpolate(lib.ones(1, 2, 4, 5), scale_factor=(2,)),
            "scale_factor of shape (2,)",
            ValueError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).interpolate(lib.ones(1, 2, 4, 5), size=(3.0, 4)),
            "expected size to be one of int",
            TypeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).interpolate(lib.ones(1, 2, 4, 5), size=3, align_corners=True),
            "align_corners option",
            ValueError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).interpolate(lib.ones(1, 2, 4, 5), size=3, recompute_scale_factor=True),
            "recompute_scale_factor is not meaningful",
            ValueError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).interpolate(lib.ones(2, 4, 5), size=3, mode="bilinear"),
            "Got 3D input, but bilinear",
            NotImplementedError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).interpolate(lib.ones(1, 2, 4, 5), size=3, mode="linear"),
            "Got 4D input, but linear",
            NotImplementedError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).interpolate(lib.ones(4, 5), size=3),
            "Only 3D, 4D and 5D input",
            NotImplementedError,
        ),
        (
            lambda lib: F(lib).interpolate(lib.ones(1, 2, 4, 5), size=3, mode="cubic"),
            "(got cubic)",
            NotImplementedError,
        ),
        (
            lambda lib: F(lib).interpolate(lib.ones(1, 2, 4, 5), size=3, antialias=True),
            "Anti-alias option",
            ValueError,
        ),
        (
            lambda lib: F(lib).interpolate(lib.ones(1, 2, 4, 5), size=(0, 3)),
            "(H: 4, W: 5) output (H: 0, W: 3)",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).interpolate(lib.ones(1, 2, 4), size=0, mode="linear"),
            "input (W: 4) and output (W: 0)",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).interpolate(lib.ones(1, 1, 2, 2, 2), scale_factor=0.3),
            "(D: 2, H: 2, W: 2) output",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).interpolate(lib.ones(1, 1, 4, 4, dtype=lib.int64), scale_factor=2),
            "upsample_nearest2d_channels_last",
            NotImplementedError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).interpolate(lib.ones(1, 1, 4, dtype=lib.uint8), scale_factor=2, mode="linear"),
            "compute_indices_weights_linear",
            NotImplementedError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).interpolate(
                lib.ones(1, 1, 4, 4, dtype=lib.int32), scale_factor=2, mode="bicubic"
            ),
            "compute_indices_weights_cubic",
            NotImplementedError,
        ),  # fmt: skip
        (lambda lib: F(lib).adaptive_avg_pool3d(lib.ones(2, 3), 2), "Expected 4D or 5D tensor", RuntimeError),
        (
            lambda lib: F(lib).adaptive_avg_pool3d(lib.ones(1, 1, 2, 2, 2), (2, -1, 1)),
            "but received {2, -1,1}",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).adaptive_avg_pool3d(lib.ones(1, 1, 2, 2, 2, dtype=lib.int64), 2),
            "adaptive_avg_pool3d_cpu",
            NotImplementedError,
        ),  # fmt: skip
    ],
)
def test_interpolate_errors(fn, message, exception):
    check_error(fn, message, exception)


@pytest.mark.parametrize(
    "fn, name",
    [
        (lambda F, x: F.upsample(x, scale_factor=2), "upsample"),
        (lambda F, x: F.upsample_nearest(x, size=5), "upsample_nearest"),
        (lambda F, x: F.upsample_bilinear(x, scale_factor=1.5), "upsample_bilinear"),
    ],  # fmt: skip
)
def test_deprecated_upsample_functions_warn(fn, name):
    with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
        out = fn(engine.nn.functional, engine.ones(1, 1, 2, 2))
    assert out.grad_fn is None and out.dim() == 4


UPSAMPLE_MODULES = [
    ("Upsample", dict(scale_factor=2), "Upsample(scale_factor=2.0, mode='nearest')", (1, 2, 3, 4)),
    (
        "Upsample",
        dict(size=(5, 3), mode="bilinear", align_corners=True),
        "Upsample(size=(5, 3), mode='bilinear')",
        (1, 2, 3, 4),
    ),  # fmt: skip
    (
        "Upsample",
        dict(scale_factor=(2, 1.5), mode="bicubic"),
        "Upsample(scale_factor=(2.0, 1.5), mode='bicubic')",
        (1, 1, 3, 4),
    ),  # fmt: skip
    ("UpsamplingNearest2d", dict(size=5), "UpsamplingNearest2d(size=5, mode='nearest')", (1, 2, 3, 4)),
    (
        "UpsamplingBilinear2d",
        dict(scale_factor=1.5),
        "UpsamplingBilinear2d(scale_factor=1.5, mode='bilinear')",
        (1, 2, 3, 4),
    ),  # fmt: skip
    (
        "AdaptiveAvgPool3d",
        dict(output_size=(2, 1, 3)),
        "AdaptiveAvgPool3d(output_size=(2, 1, 3))",
        (1, 2, 3, 4, 5),
    ),
]


@pytest.mark.parametrize("name, kwargs, text, shape", UPSAMPLE_MODULES, ids=[m[2] for m in UPSAMPLE_MODULES])
def test_upsample_module(name, kwargs, text, shape):
    assert repr(getattr(engine.nn, name)(**kwargs)) == text
    check_op(lambda lib, x: getattr(lib.nn, name)(**kwargs)(x), [("r", shape)])


# ----------------------------------------------------------------------------------- attention

_RNG = np.random.default_rng(0)
_FLOAT_MASK = _RNG.standard_normal((4, 6))
_BOOL_MASK = _RNG.random((4, 6)) > 0.3
_BOOL_MASK[1] = False  # a row attending to nothing: zeros, as PyTorch's safe softmax gives
_QKV = [("r", (2, 3, 4, 5)), ("r", (2, 3, 6, 5)), ("r", (2, 3, 6, 5))]


SDPA = {
    "fused": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v),
        _QKV,
        "ScaledDotProductFlashAttentionForCpuBackward0",
    ),
    "fused_float_mask": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, lib.tensor(_FLOAT_MASK)),
        _QKV,
        "ScaledDotProductFlashAttentionForCpuBackward0",
    ),  # fmt: skip
    "fused_bool_mask": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, attn_mask=lib.tensor(_BOOL_MASK)),
        _QKV,
        "ScaledDotProductFlashAttentionForCpuBackward0",
    ),  # fmt: skip
    "fused_causal": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, is_causal=True),
        _QKV,
        "ScaledDotProductFlashAttentionForCpuBackward0",
    ),  # fmt: skip
    "fused_causal_and_mask": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(
            q, k, v, lib.tensor(_FLOAT_MASK), is_causal=True
        ),
        _QKV,
        "ScaledDotProductFlashAttentionForCpuBackward0",
    ),  # fmt: skip
    "fused_scale": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, scale=0.3),
        _QKV,
        "ScaledDotProductFlashAttentionForCpuBackward0",
    ),  # fmt: skip
    "fused_gqa": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, enable_gqa=True),
        [("r", (2, 6, 4, 5)), _QKV[1], _QKV[2]],
        "ScaledDotProductFlashAttentionForCpuBackward0",
    ),  # fmt: skip
    "fused_4d_mask": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(
            q, k, v, lib.tensor(_FLOAT_MASK[None, None])
        ),
        _QKV,
        "ScaledDotProductFlashAttentionForCpuBackward0",
    ),  # fmt: skip
    "math_mask_requires_grad": (
        lambda lib, q, k, v, m: F(lib).scaled_dot_product_attention(q, k, v, m),
        _QKV + [("r", (4, 6))],
        "UnsafeViewBackward0",
    ),  # fmt: skip
    "math_3d": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v),
        [(d, s[1:]) for d, s in _QKV],
        "UnsafeViewBackward0",
    ),  # fmt: skip
    "math_3d_causal": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, is_causal=True),
        [(d, s[1:]) for d, s in _QKV],
        "UnsafeViewBackward0",
    ),  # fmt: skip
    "math_2d": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v),
        [(d, s[2:]) for d, s in _QKV],
        "MmBackward0",
    ),  # fmt: skip
    "math_value_dim": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v),
        [_QKV[0], _QKV[1], ("r", (2, 3, 6, 7))],
        "UnsafeViewBackward0",
    ),  # fmt: skip
    "math_3d_mask": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, lib.tensor(_BOOL_MASK[None])),
        _QKV,
        "UnsafeViewBackward0",
    ),  # fmt: skip
    "math_negative_scale": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, scale=-0.4),
        [(d, s[1:]) for d, s in _QKV],
        "UnsafeViewBackward0",
    ),  # fmt: skip
    "math_gqa": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, enable_gqa=True),
        [("r", (6, 4, 5)), ("r", (3, 6, 5)), ("r", (3, 6, 5))],
        "UnsafeViewBackward0",
    ),  # fmt: skip
}


@pytest.mark.parametrize("name", sorted(SDPA))
def test_scaled_dot_product_attention(name):
    fn, kinds, node = SDPA[name]
    check_op(fn, kinds, node=node)
    if name != "math_gqa":  # torch repeats k and v by unsqueeze, expand, clone, view; the engine by one index
        check_graph(fn, kinds)


def test_scaled_dot_product_attention_dropout():
    """Dropout is the math path's (MulBackward0 on the probabilities, expanded and viewed for the
    last bmm, as torch's matmul does); seeded, the gradient is checked."""
    from numgrad import check_grad

    q, k, v = (engine.tensor(a, requires_grad=True) for a in make_arrays(_QKV))

    def fn(q, k, v):
        engine.manual_seed(3)
        return engine.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.4)

    out = fn(q, k, v)
    assert out.grad_fn.name() == "UnsafeViewBackward0"
    bmm = out.grad_fn.next_functions[0][0]
    probabilities = bmm.next_functions[0][0].next_functions[0][0]
    assert (bmm.name(), probabilities.name()) == ("BmmBackward0", "ExpandBackward0")
    assert probabilities.next_functions[0][0].name() == "MulBackward0"
    check_grad(fn, q, k, v)


@pytest.mark.parametrize(
    "fn, message, exception",
    [
        (
            lambda lib: F(lib).scaled_dot_product_attention(lib.ones(5), lib.ones(5), lib.ones(5)),
            "at least 2 dimensional",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).scaled_dot_product_attention(
                lib.ones(2, 3), lib.ones(2, 3, dtype=lib.float64), lib.ones(2, 3)
            ),
            "Expected query, key, and value to have the same dtype",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).scaled_dot_product_attention(*[lib.ones(1, 1, 2, 2, dtype=lib.int64)] * 3),
            "expected scalar type Float but found Long",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).scaled_dot_product_attention(
                *[lib.ones(3, 2, 2)] * 3, lib.ones(2, 2, dtype=lib.int64)
            ),
            "Expected attn_mask dtype to be bool or float",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: F(lib).scaled_dot_product_attention(
                *[lib.ones(3, 2, 2)] * 3, lib.ones(2, 2), is_causal=True
            ),
            "Explicit attn_mask should not be set when is_causal=True",
            RuntimeError,
        ),  # fmt: skip
    ],
    ids=["1d", "dtypes", "integers", "mask-dtype", "causal-and-mask"],
)
def test_scaled_dot_product_attention_errors(fn, message, exception):
    check_error(fn, message, exception)


def _module_pair(name, *args, **kwargs):
    """The engine's module and torch's, with torch's parameters; without torch, the engine's twice.
    A callable keyword value is given the library (`activation=lambda lib: lib.nn.GELU()`)."""

    def made(lib):
        options = {k: v(lib) if callable(v) else v for k, v in kwargs.items()}
        return getattr(lib.nn, name)(*args, **options).double().eval()

    ours = made(engine)
    if torch is None:
        return ours, ours
    torch.manual_seed(0)
    theirs = made(torch)
    ours.load_state_dict({k: engine.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


_KPM = np.array([[False, False, True], [False, True, False]])
_AM = np.array([[False, True, False], [True, False, False]])
_SEQ = [("r", (2, 2, 4))]  # (target length, batch, embed)
_CROSS = [("r", (2, 2, 4)), ("r", (3, 2, 4))]

MHA = {
    "self": ({}, lambda lib, m, x: m(x, x, x), _SEQ),
    "self_without_weights": ({}, lambda lib, m, x: m(x, x, x, need_weights=False)[0], _SEQ),
    "per_head_weights": ({}, lambda lib, m, x: m(x, x, x, average_attn_weights=False), _SEQ),
    "cross": ({}, lambda lib, m, q, k, v: m(q, k, v), [_CROSS[0], _CROSS[1], _CROSS[1]]),
    "key_is_value": ({}, lambda lib, m, q, k: m(q, k, k), _CROSS),
    "kdim_vdim": (
        dict(kdim=3, vdim=5),
        lambda lib, m, q, k, v: m(q, k, v),
        [_CROSS[0], ("r", (3, 2, 3)), ("r", (3, 2, 5))],
    ),
    "bias_kv_zero_attn": (
        dict(add_bias_kv=True, add_zero_attn=True),
        lambda lib, m, q, k: m(q, k, k),
        _CROSS,
    ),
    "key_padding_mask": ({}, lambda lib, m, q, k: m(q, k, k, key_padding_mask=lib.tensor(_KPM)), _CROSS),
    "key_padding_mask_sdpa": (
        {},
        lambda lib, m, q, k: m(q, k, k, key_padding_mask=lib.tensor(_KPM), need_weights=False)[0],
        _CROSS,
    ),
    "attn_mask": ({}, lambda lib, m, q, k: m(q, k, k, attn_mask=lib.tensor(_AM)), _CROSS),
    "float_attn_mask_sdpa": (
        {},
        lambda lib, m, q, k: m(q, k, k, attn_mask=lib.tensor(_FLOAT_MASK[:2, :3]), need_weights=False)[0],
        _CROSS,
    ),
    "both_masks": (
        {},
        lambda lib, m, q, k: m(q, k, k, attn_mask=lib.tensor(_AM), key_padding_mask=lib.tensor(_KPM)),
        _CROSS,
    ),
    "batch_first": (dict(batch_first=True), lambda lib, m, x: m(x, x, x), [("r", (2, 3, 4))]),
    "unbatched": ({}, lambda lib, m, x: m(x, x, x), [("r", (3, 4))]),
    "no_bias": (dict(bias=False), lambda lib, m, x: m(x, x, x), _SEQ),
    "is_causal": (
        {},
        lambda lib, m, x: m(
            x,
            x,
            x,
            attn_mask=lib.tensor(np.triu(np.ones((2, 2), bool), 1)),
            is_causal=True,
            need_weights=False,
        )[0],
        _SEQ,
    ),  # fmt: skip
}


@pytest.mark.parametrize("name", sorted(MHA))
def test_multihead_attention(name):
    kwargs, call, kinds = MHA[name]
    ours, theirs = _module_pair("MultiheadAttention", 4, 2, **kwargs)
    check_op(lambda lib, *xs: call(lib, ours if lib is engine else theirs, *xs), kinds)


TRANSFORMER = {
    "post_norm_relu": ({}, lambda lib, m, x: m(x), _SEQ),
    "pre_norm_gelu": (dict(norm_first=True, activation="gelu"), lambda lib, m, x: m(x), _SEQ),
    "gelu_module": (dict(activation=lambda lib: lib.nn.GELU()), lambda lib, m, x: m(x), _SEQ),
    "batch_first_padding_mask": (
        dict(batch_first=True),
        lambda lib, m, x: m(x, src_key_padding_mask=lib.tensor(_KPM.T)),
        [("r", (3, 2, 4))],
    ),  # fmt: skip
    "src_mask": ({}, lambda lib, m, x: m(x, src_mask=lib.tensor(_AM[:, :2])), _SEQ),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMER))
def test_transformer_encoder_layer(name):
    kwargs, call, kinds = TRANSFORMER[name]
    ours, theirs = _module_pair("TransformerEncoderLayer", 4, 2, 6, **kwargs)
    check_op(lambda lib, *xs: call(lib, ours if lib is engine else theirs, *xs), kinds)


def test_attention_module_parameters_reprs_and_initialisation():
    mha = engine.nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True)
    assert [n for n, _ in mha.named_parameters()] == [
        "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "bias_k", "bias_v", "out_proj.weight",
        "out_proj.bias",
    ]  # fmt: skip
    assert repr(mha) == (
        "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)\n)"
    )
    assert mha.in_proj_bias.tolist() == [0.0] * 24 and mha.out_proj.bias.tolist() == [0.0] * 8
    packed = engine.nn.MultiheadAttention(40, 4).in_proj_weight.detach().numpy()
    bound = np.sqrt(6 / (40 + 120))  # xavier_uniform_ of the (3E, E) packed weight
    assert np.abs(packed).max() <= bound and packed.std() > bound / 2
    layer = engine.nn.TransformerEncoderLayer(4, 2, 8)
    assert [n for n, _ in layer.named_parameters()][:4] == [
        "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias",
    ]  # fmt: skip
    assert repr(layer).splitlines()[1:5] == [
        "  (self_attn): MultiheadAttention(",
        "    (out_proj): NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)",
        "  )",
        "  (linear1): Linear(in_features=4, out_features=8, bias=True)",
    ]
    if torch is not None:
        assert repr(layer) == repr(torch.nn.TransformerEncoderLayer(4, 2, 8))


@pytest.mark.parametrize(
    "fn, message, exception",
    [
        (
            lambda lib: lib.nn.MultiheadAttention(5, 2),
            "embed_dim must be divisible by num_heads",
            AssertionError,
        ),
        (
            lambda lib: lib.nn.MultiheadAttention(0, 2),
            "embed_dim and num_heads must be greater than 0",
            ValueError,
        ),
        (
            lambda lib: lib.nn.MultiheadAttention(4, 2)(lib.ones(2, 4), lib.ones(2, 1, 4), lib.ones(2, 1, 4)),
            "expected `key` and `value` to be 2-D",
            AssertionError,
        ),  # fmt: skip
        (
            lambda lib: lib.nn.MultiheadAttention(4, 2)(*[lib.ones(2, 1, 4)] * 3, attn_mask=lib.ones(3, 3)),
            "The shape of the 2D attn_mask is",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: lib.nn.MultiheadAttention(4, 2)(*[lib.ones(2, 1, 4)] * 3, is_causal=True),
            "Need attn_mask if specifying the is_causal hint",
            RuntimeError,
        ),  # fmt: skip
        (
            lambda lib: lib.nn.MultiheadAttention(4, 2)(
                *[lib.ones(2, 1, 4)] * 3, key_padding_mask=lib.ones(1, 2, dtype=lib.int64)
            ),
            "only bool and floating types of key_padding_mask are supported",
            AssertionError,
        ),  # fmt: skip
        (
            lambda lib: lib.nn.TransformerEncoderLayer(4, 2, activation="tanh"),
            "activation should be relu/gelu",
            RuntimeError,
        ),  # fmt: skip
    ],
    ids=["heads", "zero", "unbatched-key", "mask-shape", "causal-without-mask", "mask-dtype", "activation"],
)
def test_attention_module_errors(fn, message, exception):
    check_error(fn, message, exception)


# --------------------------------------------------------------------------- nn.utils and hooks


def _grads_and_params(lib, dtype="float64"):
    rng = np.random.default_rng(0)
    params = [
        lib.nn.Parameter(lib.tensor(rng.standard_normal(s)).to(getattr(lib, dtype)))
        for s in ((3, 4), (5,), (2, 2))
    ]
    for p in params[:2]:  # the last has no gradient
        p.grad = lib.tensor(rng.standard_normal(tuple(p.shape))).to(getattr(lib, dtype))
    return params


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
@pytest.mark.parametrize("norm_type", [2, 1, 3.5, float("inf"), 0, -float("inf")])
def test_clip_grad_norm(norm_type, max_norm, dtype):
    params = _grads_and_params(engine, dtype)
    before = [p.grad.numpy().copy() for p in params[:2]]
    total = engine.nn.utils.clip_grad_norm_(params, max_norm, norm_type)
    special = {2: np.linalg.norm, 1: lambda a: np.abs(a).sum(), float("inf"): lambda a: np.abs(a).max(),
               0: np.count_nonzero, -float("inf"): lambda a: np.abs(a).min()}  # fmt: skip

    def norm(a):
        return (
            special[norm_type](a)
            if norm_type in special
            else (np.abs(a) ** norm_type).sum() ** (1 / norm_type)
        )

    expected = norm(np.array([norm(g.reshape(-1)) for g in before]))  # the norm of the gradients' norms
    rtol = 1e-12 if dtype == "float64" else 1e-6
    assert total.shape == () and str(total.dtype) == f"engine.{dtype}"
    np.testing.assert_allclose(total.numpy(), expected, rtol=rtol)
    coef = min(max_norm / (expected + 1e-6), 1.0)
    for p, g in zip(params, before):
        np.testing.assert_allclose(p.grad.numpy(), g * coef, rtol=rtol * 10)
    if torch is not None:
        theirs = _grads_and_params(torch, dtype)
        np.testing.assert_allclose(
            total.numpy(), torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type).numpy(), rtol=rtol
        )
        for p, q in zip(params[:2], theirs[:2]):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=rtol * 10)


def test_clip_grad_norm_details():
    assert engine.nn.utils.clip_grad_norm_([], 1.0).tolist() == 0.0
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        engine.nn.utils.clip_grad_norm_((p for p in []), 1.0)
    single = engine.nn.Parameter(engine.ones(4))
    single.grad = engine.full((4,), 2.0)
    assert engine.nn.utils.clip_grad_norm_(single, 1.0).item() == 4.0
    np.testing.assert_allclose(single.grad.numpy(), np.full(4, 0.5), rtol=1e-6)
    bad = engine.nn.Parameter(engine.ones(2))
    bad.grad = engine.tensor([1.0, float("nan")])
    with pytest.raises(
        RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"
    ):
        engine.nn.utils.clip_grad_norm_([bad], 1.0, error_if_nonfinite=True)
    with pytest.warns(FutureWarning, match="`torch.nn.utils.clip_grad_norm` is now deprecated"):
        engine.nn.utils.clip_grad_norm([single], 1.0)
    total = engine.nn.utils.get_total_norm([engine.ones(3), engine.ones(1)])
    assert total.item() == 2.0
    engine.nn.utils.clip_grads_with_norm_([single], 0.25, engine.tensor(1.0))
    np.testing.assert_allclose(single.grad.numpy(), np.full(4, 0.125), rtol=1e-5)


def test_clip_grad_value():
    params = _grads_and_params(engine)
    before = [p.grad.numpy().copy() for p in params[:2]]
    versions = [p.grad._version for p in params[:2]]
    assert engine.nn.utils.clip_grad_value_(params, 0.5) is None
    for p, g, v in zip(params, before, versions):
        np.testing.assert_array_equal(p.grad.numpy(), np.clip(g, -0.5, 0.5))
        assert p.grad._version == v + 1  # in place
    if torch is not None:
        theirs = _grads_and_params(torch)
        torch.nn.utils.clip_grad_value_(theirs, 0.5)
        for p, q in zip(params[:2], theirs[:2]):
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


def test_parameters_to_vector_and_back():
    def fn(lib, a, b):
        return lib.nn.utils.parameters_to_vector([a, b])

    check_op_and_graph(fn, [("r", (2, 3)), ("r", (4,))], "CatBackward0")
    model = engine.nn.Linear(3, 2)
    vec = engine.nn.utils.parameters_to_vector(model.parameters())
    assert vec.shape == (8,) and vec.grad_fn.name() == "CatBackward0"
    new = engine.arange(8.0)
    engine.nn.utils.vector_to_parameters(new, model.parameters())
    assert model.weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and model.bias.tolist() == [6.0, 7.0]
    assert isinstance(model.weight, engine.nn.Parameter) and model.weight.requires_grad
    check_error(
        lambda lib: lib.nn.utils.vector_to_parameters([1.0], []),
        "expected engine.Tensor, but got: list",
        TypeError,
    )


def _hooked(lib, kind):
    """What a Linear's full backward (pre) hooks see and what the gradients become, as plain data."""
    log = []
    linear = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        linear.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 10))
        linear.bias.copy_(lib.tensor([0.5, -0.5]))

    def data(grads):
        return [None if g is None else np.round(g.detach().numpy(), 9).tolist() for g in grads]

    def hook(module, grad_input, grad_output):
        assert module is linear
        log.append(("hook", data(grad_input), data(grad_output)))
        return tuple(None if g is None else g * 2 for g in grad_input) if kind == "double-inputs" else None

    def pre_hook(module, grad_output):
        log.append(("pre", data(grad_output)))
        return tuple(g * 10 for g in grad_output) if kind == "scale-outputs" else None

    handles = [linear.register_full_backward_hook(hook), linear.register_full_backward_pre_hook(pre_hook)]
    x = lib.tensor(np.ones((4, 3)), requires_grad=kind != "no-input-grad")
    out = linear(x)
    log.append(("node", out.grad_fn.name(), out.grad_fn.next_functions[0][0].name()))
    (out * lib.tensor(np.arange(8.0).reshape(4, 2))).sum().backward()
    log.append(("x.grad", None if x.grad is None else data([x.grad])))
    log.append(("weight.grad", data([linear.weight.grad])))
    if kind == "removed":
        for h in handles:
            h.remove()
        linear(x).sum().backward()
    return log


@pytest.mark.filterwarnings("ignore:Full backward hook is firing")
@pytest.mark.parametrize("kind", ["plain", "double-inputs", "scale-outputs", "no-input-grad", "removed"])
def test_module_full_backward_hooks(kind):
    ours = _hooked(engine, kind)
    assert ours[0] == ("node", "BackwardHookFunctionBackward", "AddmmBackward0")
    assert [entry[0] for entry in ours[1:3]] == ["pre", "hook"]
    if torch is not None:
        theirs = _hooked(torch, kind)
        for a, b in zip(ours, theirs, strict=True):
            assert a[0] == b[0]
            for x, y in zip(a[1:], b[1:]):
                if isinstance(x, str) or x is None:
                    assert x == y
                else:
                    np.testing.assert_allclose(np.array(x, dtype=float), np.array(y, dtype=float), rtol=1e-12)


def test_module_backward_hooks_with_several_inputs_and_outputs():
    seen = []

    class Pair(engine.nn.Module):
        def forward(self, a, k, b):
            return a * k, b.sum(), 3

    pair = Pair()
    pair.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go)))
    a, b = engine.ones(2, requires_grad=True), engine.ones(3, requires_grad=True)
    out = pair(a, 2.0, b)
    assert out[2] == 3 and out[0].grad_fn.name() == "BackwardHookFunctionBackward"
    (out[0].sum() + out[1]).backward()
    (grad_input, grad_output) = seen[0]
    assert (
        grad_input[0].tolist() == [2.0, 2.0] and grad_input[1] is None and grad_input[2].tolist() == [1.0] * 3
    )
    assert grad_output[0].tolist() == [1.0, 1.0] and grad_output[1].tolist() == 1.0 and grad_output[2] is None


def test_module_backward_hook_errors_and_warnings():
    linear = engine.nn.Linear(2, 2)
    linear.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(
        RuntimeError, match="Backward hook returned an invalid number of grad_input, got 2, but expected 1"
    ):
        linear(engine.ones(1, 2, requires_grad=True)).sum().backward()
    other = engine.nn.Linear(2, 2)
    other.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    with pytest.raises(
        RuntimeError, match="Backward pre hook returned an invalid number of grad_output, got 2"
    ):
        other(engine.ones(1, 2, requires_grad=True)).sum().backward()
    third = engine.nn.Linear(2, 2)
    third.register_full_backward_hook(lambda m, gi, go: (engine.ones(1, 2),))
    with pytest.warns(UserWarning, match="Full backward hook is firing"):
        with pytest.raises(RuntimeError, match="no input requires gradient should always return None"):
            third(engine.ones(1, 2)).sum().backward()
    fourth = engine.nn.Identity()
    fourth.register_full_backward_hook(lambda m, gi, go: None)
    with pytest.warns(UserWarning, match="module output should be a Tensor or a tuple of Tensors"):
        fourth([engine.ones(1, requires_grad=True)])


# --------------------------------------------------------------------- module reprs, torch.<name>

ACTIVATION_MODULES = [
    ("SiLU", (True,), "SiLU(inplace=True)"),
    ("Mish", (), "Mish()"),
    ("ELU", (), "ELU(alpha=1.0)"),
    ("ELU", (0.5, True), "ELU(alpha=0.5, inplace=True)"),
    ("CELU", (0.5,), "CELU(alpha=0.5)"),
    ("SELU", (True,), "SELU(inplace=True)"),
    ("Hardtanh", (), "Hardtanh(min_val=-1.0, max_val=1.0)"),
    ("Hardtanh", (-2, 3, True), "Hardtanh(min_val=-2, max_val=3, inplace=True)"),
    ("ReLU6", (), "ReLU6()"),
    ("ReLU6", (True,), "ReLU6(inplace=True)"),
    ("Hardsigmoid", (), "Hardsigmoid()"),
    ("Hardswish", (True,), "Hardswish()"),
    ("Softsign", (), "Softsign()"),
    ("Tanhshrink", (), "Tanhshrink()"),
    ("LogSigmoid", (), "LogSigmoid()"),
    ("Softplus", (), "Softplus(beta=1.0, threshold=20.0)"),
    ("Softplus", (2, 10), "Softplus(beta=2, threshold=10)"),
    ("GLU", (), "GLU(dim=-1)"),
    ("Softmin", (1,), "Softmin(dim=1)"),
]


@pytest.mark.parametrize("name, args, text", ACTIVATION_MODULES, ids=[m[2] for m in ACTIVATION_MODULES])
def test_activation_module(name, args, text):
    assert repr(getattr(engine.nn, name)(*args)) == text
    inplace = True in args

    def fn(lib, x):
        return getattr(lib.nn, name)(*args)(x * 1 if inplace else x)

    check_op(fn, [(off_integers, (3, 4))])


def test_hardtanh_module_refuses_inverted_bounds():
    check_error(
        lambda lib: lib.nn.Hardtanh(1, 1), "max_val (1) must be greater than min_val (1)", AssertionError
    )


PAD_MODULES = [
    ("ReflectionPad1d", (2,), "ReflectionPad1d((2, 2))", (2, 3, 4)),
    ("ReflectionPad2d", ((1, 0, 2, 1),), "ReflectionPad2d((1, 0, 2, 1))", (1, 2, 3, 4)),
    ("ReplicationPad3d", (1,), "ReplicationPad3d((1, 1, 1, 1, 1, 1))", (1, 2, 2, 3)),
    ("CircularPad1d", ((1, 2),), "CircularPad1d((1, 2))", (2, 3, 4)),
    ("CircularPad2d", (1,), "CircularPad2d((1, 1, 1, 1))", (2, 3, 4)),
    ("CircularPad3d", (1,), "CircularPad3d((1, 1, 1, 1, 1, 1))", (1, 2, 2, 3, 2)),
    ("ZeroPad2d", (2,), "ZeroPad2d((2, 2, 2, 2))", (1, 2, 3)),
    ("ConstantPad1d", (2, 3.5), "ConstantPad1d(padding=(2, 2), value=3.5)", (2, 3)),
    (
        "ConstantPad3d",
        ((1, 1, 1, 1, 0, 2), 0.0),
        "ConstantPad3d(padding=(1, 1, 1, 1, 0, 2), value=0.0)",
        (1, 2, 2, 2),
    ),
    ("Unfold", (2,), "Unfold(kernel_size=2, dilation=1, padding=0, stride=1)", (1, 2, 3, 4)),
    (
        "Fold",
        ((3, 4), 2),
        "Fold(output_size=(3, 4), kernel_size=2, dilation=1, padding=0, stride=1)",
        (1, 8, 6),
    ),
]


@pytest.mark.parametrize("name, args, text, shape", PAD_MODULES, ids=[m[0] for m in PAD_MODULES])
def test_pad_and_fold_modules(name, args, text, shape):
    assert repr(getattr(engine.nn, name)(*args)) == text
    check_op(lambda lib, x: getattr(lib.nn, name)(*args)(x), [("r", shape)])


def test_circular_pad_module_checks_its_input():
    check_error(
        lambda lib: lib.nn.CircularPad2d(1)(lib.ones(2, 2)),
        "expected 3D or 4D input (got 2D input)",
        ValueError,
    )


TORCH_LEVEL = {
    "selu": (lambda lib, x: lib.selu(x), [("r", (3, 4))]),
    "selu_": (lambda lib, x: lib.selu_(x * 1), [("r", (3, 4))]),
    "celu": (lambda lib, x: lib.celu(x, 0.5), [("r", (3, 4))]),
    "celu_": (lambda lib, x: lib.celu_(x * 1), [("r", (3, 4))]),
    "instance_norm": (
        lambda lib, x, w: lib.instance_norm(x, w, None, None, None, True, 0.1, 1e-5, False),
        [("r", (2, 3, 4)), ("r", (3,))],
    ),
    "adaptive_max_pool1d": (lambda lib, x: lib.adaptive_max_pool1d(x, 2), [("d", (2, 5))]),
    "conv_transpose1d": (
        lambda lib, x, w: lib.conv_transpose1d(x, w, stride=2),
        [("r", (1, 2, 4)), ("r", (2, 3, 3))],
    ),
    "conv_transpose3d": (
        lambda lib, x, w: lib.conv_transpose3d(x, w),
        [("r", (1, 2, 2, 2, 2)), ("r", (2, 1, 2, 2, 2))],
    ),
}


@pytest.mark.parametrize("name", sorted(TORCH_LEVEL))
def test_torch_level_name(name):
    fn, kinds = TORCH_LEVEL[name]
    check_op(fn, kinds)
