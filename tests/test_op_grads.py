"""Forward values, first and second derivatives of every supported op (float64).

The module under test is ENGINE_MODULE ("engine" by default); run with
ENGINE_MODULE=torch to validate these expectations against real PyTorch.

Each case is ``(id, fn, ref, kinds)``:
  fn    takes tensors and returns one tensor;
  ref   the same computation in numpy (None: ``fn`` itself works on ndarrays);
  kinds one input spec per argument, ``(domain, shape)`` with domain
        "r" (any real), "p" (positive, for log/sqrt/pow bases) or
        "d" (distinct, at least 0.1 away from 0 and from each other, so abs,
        relu, max/min and clamp(-0.6, 0.3) are smooth at the test point).
"""

import os

import numpy as np
import pytest
from numgrad import check_grad, check_gradgrad

torch = pytest.importorskip(os.environ.get("ENGINE_MODULE", "engine"))


def make_array(domain, shape, rng):
    n = int(np.prod(shape, dtype=int))
    if domain == "r":
        a = rng.uniform(-1.5, 1.5, n)
    elif domain == "p":
        a = rng.uniform(0.5, 2.0, n)
    else:  # "d": half-integers * 0.3 plus small noise: |x| in [0.11, 0.19] u [0.41, 0.49] u ...
        a = (rng.permutation(n) - n / 2 + 0.5) * 0.3 + rng.uniform(-0.04, 0.04, n)
        a[a == 0] = 0.15
    return a.reshape(shape)


def make_inputs(kinds, seed=0):
    rng = np.random.RandomState(seed)
    arrays = [make_array(domain, shape, rng) for domain, shape in kinds]
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    return arrays, tensors


def softmax_np(a, dim):
    e = np.exp(a - a.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def log_softmax_np(a, dim):
    return np.log(softmax_np(a, dim))


def T(a):
    """Constant (non-differentiable) tensor from a numpy array."""
    return torch.tensor(a)


R34, P34, D34 = ("r", (3, 4)), ("p", (3, 4)), ("d", (3, 4))
MASK34 = np.array([[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]], dtype=bool)


def inplace_chain(x):
    y = x * 1
    y.mul_(2)
    y.add_(x)
    y.exp_()
    return y


def inplace_chain_np(x):
    return np.exp(x * 2 + x)


def setitem_row(x):
    y = x * 1
    y[0] = x[1] * 3
    return y


def inplace_through_view(x):
    y = x.clone()
    v = y[1:]
    v.mul_(x[:2])
    return y


def inplace_through_view_np(x):
    y = x.copy()
    y[1:] *= x[:2]
    return y


def inplace_augmented(x):
    y = x * 2
    y += x
    y *= x
    y -= 1
    y /= x + 2
    return y


def inplace_misc(x):
    y = x.sin()
    y.pow_(2)
    y.sub_(x)
    y.div_(2)
    y.clamp_(-0.6, 0.3)
    return y


def inplace_misc_np(x):
    return np.clip((np.sin(x) ** 2 - x) / 2, -0.6, 0.3)


def inplace_clamp_tensor(x, lo, hi):
    y = x * 1
    y.clamp_(lo, hi)
    return y


def inplace_transposed_view(x):
    y = x * 1
    y.t()[1].mul_(x[:, 0])
    return y


def inplace_transposed_view_np(x):
    y = x * 1
    y[:, 1] *= x[:, 0]
    return y


CASES = [
    # ---- binary arithmetic: tensor-tensor, tensor-scalar, scalar-tensor
    ("add", lambda x, y: x + y, None, [R34, R34]),
    ("sub", lambda x, y: x - y, None, [R34, R34]),
    ("mul", lambda x, y: x * y, None, [R34, R34]),
    ("div", lambda x, y: x / y, None, [R34, P34]),
    ("pow_tt", lambda x, y: x**y, None, [P34, R34]),
    ("add_scalar", lambda x: x + 2, None, [R34]),
    ("radd_scalar", lambda x: 2 + x, None, [R34]),
    ("sub_scalar", lambda x: x - 1.5, None, [R34]),
    ("rsub_scalar", lambda x: 2 - x, None, [R34]),
    ("mul_scalar", lambda x: x * 2.5, None, [R34]),
    ("rmul_scalar", lambda x: 2.5 * x, None, [R34]),
    ("div_scalar", lambda x: x / 3, None, [R34]),
    ("rdiv_scalar", lambda x: 2 / x, None, [P34]),
    ("pow_scalar_int", lambda x: x**3, None, [R34]),
    ("pow_scalar_2", lambda x: x**2, None, [R34]),
    ("pow_scalar_half", lambda x: x**0.5, None, [P34]),
    ("pow_scalar_neg", lambda x: x**-1.5, None, [P34]),
    ("rpow_scalar", lambda x: 2**x, None, [R34]),
    ("rpow_float", lambda x: 1.5**x, None, [R34]),
    ("neg", lambda x: -x, None, [R34]),
    ("neg_method", lambda x: x.neg(), lambda x: -x, [R34]),
    ("neg_func", lambda x: torch.neg(x), lambda x: -x, [R34]),
    # ---- broadcasting
    ("bcast_add_31_14", lambda x, y: x + y, None, [("r", (3, 1)), ("r", (1, 4))]),
    ("bcast_sub_31_14", lambda x, y: x - y, None, [("r", (3, 1)), ("r", (1, 4))]),
    ("bcast_mul_31_14", lambda x, y: x * y, None, [("r", (3, 1)), ("r", (1, 4))]),
    ("bcast_div_31_14", lambda x, y: x / y, None, [("r", (3, 1)), ("p", (1, 4))]),
    ("bcast_pow_31_14", lambda x, y: x**y, None, [("p", (3, 1)), ("r", (1, 4))]),
    ("bcast_add_4_34", lambda x, y: x + y, None, [("r", (4,)), R34]),
    ("bcast_mul_4_34", lambda x, y: x * y, None, [("r", (4,)), R34]),
    ("bcast_div_34_4", lambda x, y: x / y, None, [R34, ("p", (4,))]),
    ("bcast_sub_34_4", lambda x, y: x - y, None, [R34, ("r", (4,))]),
    ("bcast_add_0d_34", lambda s, x: s + x, None, [("r", ()), R34]),
    ("bcast_mul_0d_34", lambda s, x: s * x, None, [("r", ()), R34]),
    ("bcast_div_34_0d", lambda x, s: x / s, None, [R34, ("p", ())]),
    ("bcast_sub_34_0d", lambda x, s: x - s, None, [R34, ("r", ())]),
    ("bcast_pow_34_0d", lambda x, s: x**s, None, [P34, ("r", ())]),
    ("bcast_3d", lambda x, y: x * y + x, None, [("r", (2, 1, 4)), ("r", (3, 1))]),
    # ---- unary
    ("exp", lambda x: x.exp(), np.exp, [R34]),
    ("exp_func", lambda x: torch.exp(x), np.exp, [R34]),
    ("log", lambda x: x.log(), np.log, [P34]),
    ("log_func", lambda x: torch.log(x), np.log, [P34]),
    ("log1p", lambda x: x.log1p(), np.log1p, [P34]),
    ("log1p_func", lambda x: torch.log1p(x), np.log1p, [P34]),
    ("sqrt", lambda x: x.sqrt(), np.sqrt, [P34]),
    ("sqrt_func", lambda x: torch.sqrt(x), np.sqrt, [P34]),
    ("sin", lambda x: x.sin(), np.sin, [R34]),
    ("sin_func", lambda x: torch.sin(x), np.sin, [R34]),
    ("cos", lambda x: x.cos(), np.cos, [R34]),
    ("cos_func", lambda x: torch.cos(x), np.cos, [R34]),
    ("tanh", lambda x: x.tanh(), np.tanh, [R34]),
    ("tanh_func", lambda x: torch.tanh(x), np.tanh, [R34]),
    ("sigmoid", lambda x: x.sigmoid(), lambda x: 1 / (1 + np.exp(-x)), [R34]),
    ("sigmoid_func", lambda x: torch.sigmoid(x), lambda x: 1 / (1 + np.exp(-x)), [R34]),
    ("relu", lambda x: x.relu(), lambda x: np.maximum(x, 0), [D34]),
    ("relu_func", lambda x: torch.relu(x), lambda x: np.maximum(x, 0), [D34]),
    ("abs", lambda x: x.abs(), np.abs, [D34]),
    ("abs_func", lambda x: torch.abs(x), np.abs, [D34]),
    ("abs_builtin", lambda x: abs(x), np.abs, [D34]),
    ("clamp", lambda x: x.clamp(-0.6, 0.3), lambda x: np.clip(x, -0.6, 0.3), [D34]),
    ("clamp_min", lambda x: x.clamp(min=-0.6), lambda x: np.maximum(x, -0.6), [D34]),
    ("clamp_max", lambda x: x.clamp(max=0.3), lambda x: np.minimum(x, 0.3), [D34]),
    (
        "clamp_func",
        lambda x: torch.clamp(x, -0.6, 0.3),
        lambda x: np.clip(x, -0.6, 0.3),
        [D34],
    ),
    # tensor bounds (ClampBackward0): x, min and max all differentiable; bounds broadcast
    ("clamp_tensor", lambda x, lo, hi: x.clamp(lo, hi), np.clip, [D34, D34, D34]),
    ("clamp_tensor_min", lambda x, lo: x.clamp(min=lo), np.maximum, [D34, D34]),
    ("clamp_tensor_max_bcast", lambda x, hi: x.clamp(max=hi), np.minimum, [D34, ("d", (4,))]),
    (
        "clip_tensor_bcast",
        lambda x, lo, hi: torch.clip(x, lo, hi),
        np.clip,
        [("d", (3, 1)), ("d", (4,)), D34],
    ),
    (
        "clamp_tensor_const_bounds",
        lambda x: torch.clamp(x, T(np.full((3, 4), -0.6)), T(np.full(4, 0.3))),
        lambda x: np.clip(x, -0.6, 0.3),
        [D34],
    ),
    ("pow_method", lambda x: x.pow(3), lambda x: x**3, [R34]),
    ("pow_method_t", lambda x, y: x.pow(y), lambda x, y: x**y, [P34, R34]),
    ("pow_func", lambda x: torch.pow(x, 2.5), lambda x: x**2.5, [P34]),
    ("pow_func_scalar_base", lambda x: torch.pow(2.0, x), lambda x: 2.0**x, [R34]),
    # ---- reductions
    ("sum", lambda x: x.sum(), None, [R34]),
    ("sum_func", lambda x: torch.sum(x), np.sum, [R34]),
    ("sum_dim1", lambda x: x.sum(1), None, [R34]),
    ("sum_dim_kw", lambda x: x.sum(dim=0), lambda x: x.sum(axis=0), [R34]),
    (
        "sum_keepdim",
        lambda x: x.sum(1, keepdim=True),
        lambda x: x.sum(1, keepdims=True),
        [R34],
    ),
    ("sum_negdim", lambda x: x.sum(-1), None, [("r", (2, 3, 4))]),
    ("sum_tuple", lambda x: x.sum((0, 2)), None, [("r", (2, 3, 4))]),
    (
        "sum_tuple_neg_keepdim",
        lambda x: x.sum(dim=(0, -1), keepdim=True),
        lambda x: x.sum((0, -1), keepdims=True),
        [("r", (2, 3, 4))],
    ),
    ("sum_0d", lambda x: x.sum(), None, [("r", ())]),
    ("mean", lambda x: x.mean(), None, [R34]),
    ("mean_func", lambda x: torch.mean(x), np.mean, [R34]),
    ("mean_dim0", lambda x: x.mean(0), None, [R34]),
    (
        "mean_keepdim",
        lambda x: x.mean(-1, keepdim=True),
        lambda x: x.mean(-1, keepdims=True),
        [R34],
    ),
    ("mean_tuple", lambda x: x.mean((1, 2)), None, [("r", (2, 3, 4))]),
    (
        "mean_tuple_neg_keepdim",
        lambda x: x.mean(dim=(-3, -1), keepdim=True),
        lambda x: x.mean((0, 2), keepdims=True),
        [("r", (2, 3, 4))],
    ),
    ("var", lambda x: x.var(), lambda x: x.var(ddof=1), [R34]),
    ("var_dim", lambda x: x.var(1), lambda x: x.var(1, ddof=1), [R34]),
    (
        "var_negdim_keepdim",
        lambda x: x.var(-2, keepdim=True),
        lambda x: x.var(0, ddof=1, keepdims=True),
        [R34],
    ),
    ("var_unbiased_false", lambda x: x.var(unbiased=False), lambda x: x.var(), [R34]),
    (
        "var_dim_unbiased_false",
        lambda x: x.var(0, unbiased=False),
        lambda x: x.var(0),
        [R34],
    ),
    (
        "var_correction0",
        lambda x: x.var(dim=1, correction=0),
        lambda x: x.var(1),
        [R34],
    ),
    ("var_func", lambda x: torch.var(x, 1), lambda x: x.var(1, ddof=1), [R34]),
    ("std", lambda x: x.std(), lambda x: x.std(ddof=1), [R34]),
    ("std_dim", lambda x: x.std(0), lambda x: x.std(0, ddof=1), [R34]),
    (
        "std_negdim_keepdim",
        lambda x: x.std(-1, keepdim=True),
        lambda x: x.std(1, ddof=1, keepdims=True),
        [R34],
    ),
    (
        "std_unbiased_false",
        lambda x: x.std(1, unbiased=False),
        lambda x: x.std(1),
        [R34],
    ),
    ("std_correction0", lambda x: x.std(correction=0), lambda x: x.std(), [R34]),
    ("std_func", lambda x: torch.std(x), lambda x: x.std(ddof=1), [R34]),
    ("max_full", lambda x: x.max(), np.max, [D34]),
    ("max_full_func", lambda x: torch.max(x), np.max, [D34]),
    ("min_full", lambda x: x.min(), np.min, [D34]),
    ("max_dim", lambda x: x.max(1)[0], lambda x: x.max(1), [D34]),
    ("max_dim_values", lambda x: x.max(dim=0).values, lambda x: x.max(0), [D34]),
    (
        "max_dim_keepdim",
        lambda x: x.max(-1, keepdim=True)[0],
        lambda x: x.max(-1, keepdims=True),
        [D34],
    ),
    ("max_dim_func", lambda x: torch.max(x, 1)[0], lambda x: x.max(1), [D34]),
    ("min_dim", lambda x: x.min(0)[0], lambda x: x.min(0), [D34]),
    ("min_dim_values", lambda x: x.min(dim=-1).values, lambda x: x.min(-1), [D34]),
    (
        "min_dim_keepdim",
        lambda x: x.min(0, keepdim=True)[0],
        lambda x: x.min(0, keepdims=True),
        [D34],
    ),
    ("norm", lambda x: x.norm(), np.linalg.norm, [R34]),
    ("norm_func", lambda x: torch.norm(x), np.linalg.norm, [R34]),
    ("norm_dim", lambda x: x.norm(dim=1), lambda x: np.sqrt((x**2).sum(1)), [R34]),
    (
        "norm_p2_dim",
        lambda x: x.norm(2, dim=0),
        lambda x: np.sqrt((x**2).sum(0)),
        [R34],
    ),
    (
        "norm_negdim_keepdim",
        lambda x: x.norm(dim=-1, keepdim=True),
        lambda x: np.sqrt((x**2).sum(-1, keepdims=True)),
        [R34],
    ),
    # ---- matmul
    ("matmul_1d_1d", lambda x, y: x @ y, None, [("r", (4,)), ("r", (4,))]),
    ("matmul_2d_1d", lambda x, y: x @ y, None, [R34, ("r", (4,))]),
    ("matmul_1d_2d", lambda x, y: x @ y, None, [("r", (3,)), R34]),
    ("matmul_2d_2d", lambda x, y: x @ y, None, [R34, ("r", (4, 5))]),
    ("matmul_3d_3d", lambda x, y: x @ y, None, [("r", (2, 3, 4)), ("r", (2, 4, 5))]),
    ("matmul_3d_2d", lambda x, y: x @ y, None, [("r", (2, 3, 4)), ("r", (4, 5))]),
    ("matmul_2d_3d", lambda x, y: x @ y, None, [R34, ("r", (2, 4, 5))]),
    (
        "matmul_bcast_batch",
        lambda x, y: x @ y,
        None,
        [("r", (2, 1, 3, 4)), ("r", (3, 4, 2))],
    ),
    ("matmul_1d_3d", lambda x, y: x @ y, None, [("r", (4,)), ("r", (2, 4, 5))]),
    (
        "matmul_method",
        lambda x, y: x.matmul(y),
        lambda x, y: x @ y,
        [R34, ("r", (4, 2))],
    ),
    (
        "matmul_func",
        lambda x, y: torch.matmul(x, y),
        lambda x, y: x @ y,
        [("r", (2, 3, 4)), ("r", (4,))],
    ),
    ("mm_method", lambda x, y: x.mm(y), lambda x, y: x @ y, [R34, ("r", (4, 2))]),
    ("mm_func", lambda x, y: torch.mm(x, y), lambda x, y: x @ y, [R34, ("r", (4, 2))]),
    ("matmul_self", lambda x: x @ x.t(), lambda x: x @ x.T, [R34]),
    # ---- shape / view ops
    ("reshape", lambda x: x.reshape(4, 3), None, [R34]),
    ("reshape_tuple", lambda x: x.reshape((2, -1)), None, [R34]),
    ("reshape_flat", lambda x: x.reshape(-1), None, [R34]),
    (
        "reshape_func",
        lambda x: torch.reshape(x, (6, 2)),
        lambda x: x.reshape(6, 2),
        [R34],
    ),
    ("view", lambda x: x.view(2, 6), lambda x: x.reshape(2, 6), [R34]),
    ("view_infer", lambda x: x.view(-1, 2, 3), lambda x: x.reshape(-1, 2, 3), [R34]),
    ("t", lambda x: x.t(), lambda x: x.T, [R34]),
    ("t_1d", lambda x: x.t(), lambda x: x, [("r", (4,))]),
    ("transpose", lambda x: x.transpose(0, 1), lambda x: x.T, [R34]),
    (
        "transpose_neg",
        lambda x: x.transpose(-1, -3),
        lambda x: x.swapaxes(-1, -3),
        [("r", (2, 3, 4))],
    ),
    (
        "transpose_func",
        lambda x: torch.transpose(x, 1, 2),
        lambda x: x.swapaxes(1, 2),
        [("r", (2, 3, 4))],
    ),
    (
        "permute",
        lambda x: x.permute(2, 0, 1),
        lambda x: x.transpose(2, 0, 1),
        [("r", (2, 3, 4))],
    ),
    (
        "permute_tuple_neg",
        lambda x: x.permute((-1, 1, 0)),
        lambda x: x.transpose(2, 1, 0),
        [("r", (2, 3, 4))],
    ),
    (
        "expand",
        lambda x: x.expand(3, 4),
        lambda x: np.broadcast_to(x, (3, 4)),
        [("r", (1, 4))],
    ),
    (
        "expand_newdim",
        lambda x: x.expand(2, 3, 4),
        lambda x: np.broadcast_to(x, (2, 3, 4)),
        [("r", (3, 1))],
    ),
    (
        "expand_minus1",
        lambda x: x.expand(-1, 5),
        lambda x: np.broadcast_to(x, (3, 5)),
        [("r", (3, 1))],
    ),
    ("squeeze", lambda x: x.squeeze(), None, [("r", (3, 1, 4, 1))]),
    ("squeeze_dim", lambda x: x.squeeze(1), None, [("r", (3, 1, 4))]),
    ("squeeze_negdim", lambda x: x.squeeze(-1), None, [("r", (3, 4, 1))]),
    ("squeeze_noop", lambda x: x.squeeze(0), lambda x: x, [R34]),
    ("unsqueeze", lambda x: x.unsqueeze(0), lambda x: x[None], [R34]),
    ("unsqueeze_mid", lambda x: x.unsqueeze(1), lambda x: x[:, None], [R34]),
    ("unsqueeze_neg", lambda x: x.unsqueeze(-1), lambda x: x[..., None], [R34]),
    ("flatten", lambda x: x.flatten(), None, [("r", (2, 3, 4))]),
    (
        "flatten_start",
        lambda x: x.flatten(1),
        lambda x: x.reshape(2, 12),
        [("r", (2, 3, 4))],
    ),
    (
        "flatten_range",
        lambda x: x.flatten(0, 1),
        lambda x: x.reshape(6, 4),
        [("r", (2, 3, 4))],
    ),
    (
        "flatten_func",
        lambda x: torch.flatten(x),
        lambda x: x.flatten(),
        [("r", (2, 3, 4))],
    ),
    (
        "view_then_op",
        lambda x: x.t().reshape(12).sin(),
        lambda x: np.sin(x.T.reshape(12)),
        [R34],
    ),
    # ---- indexing
    ("index_int", lambda x: x[1], None, [R34]),
    ("index_negative", lambda x: x[-1], None, [R34]),
    ("index_2int", lambda x: x[1, -2], None, [R34]),
    ("index_slice", lambda x: x[1:3], None, [R34]),
    ("index_slice_step", lambda x: x[::2], None, [R34]),
    ("index_slice_2d_step", lambda x: x[1:, 0:4:3], None, [R34]),
    ("index_slice_negative", lambda x: x[-2:, :-1], None, [R34]),
    ("index_int_list", lambda x: x[[0, 2]], None, [R34]),
    ("index_int_list_dup", lambda x: x[[2, 0, 2]], None, [R34]),
    (
        "index_tensor",
        lambda x: x[T(np.array([2, 0, 2]))],
        lambda x: x[[2, 0, 2]],
        [R34],
    ),
    ("index_int_list_neg", lambda x: x[:, [-1, 0]], None, [R34]),
    ("index_pairwise", lambda x: x[[0, 1, 2], [3, 1, 3]], None, [R34]),
    ("index_bool_mask", lambda x: x[T(MASK34)], lambda x: x[MASK34], [R34]),
    (
        "index_bool_mask_rows",
        lambda x: x[T(np.array([True, False, True]))],
        lambda x: x[[0, 2]],
        [R34],
    ),
    ("index_mixed_tuple", lambda x: x[1, 1:3], None, [R34]),
    ("index_mixed_3d", lambda x: x[:, 1, [0, 3]], None, [("r", (2, 3, 4))]),
    ("index_none", lambda x: x[None], None, [R34]),
    ("index_none_mid", lambda x: x[:, None, 1:3], None, [R34]),
    ("index_ellipsis", lambda x: x[..., 1], None, [("r", (2, 3, 4))]),
    ("index_ellipsis_mixed", lambda x: x[1, ..., None, 2:], None, [("r", (2, 3, 4))]),
    ("index_then_op", lambda x: x[1:, ::2] * x[:2, 1::2], None, [R34]),
    # ---- cat / stack
    (
        "cat_dim0",
        lambda x, y: torch.cat([x, y]),
        lambda x, y: np.concatenate([x, y]),
        [("r", (2, 3)), ("r", (4, 3))],
    ),
    (
        "cat_dim1",
        lambda x, y: torch.cat((x, y), 1),
        lambda x, y: np.concatenate([x, y], 1),
        [("r", (3, 2)), ("r", (3, 4))],
    ),
    (
        "cat_negdim_three",
        lambda x, y, z: torch.cat([x, y, z], dim=-1),
        lambda x, y, z: np.concatenate([x, y, z], -1),
        [("r", (2, 2)), ("r", (2, 1)), ("r", (2, 3))],
    ),
    (
        "cat_same",
        lambda x: torch.cat([x, x * 2], 0),
        lambda x: np.concatenate([x, x * 2]),
        [R34],
    ),
    (
        "stack_dim0",
        lambda x, y: torch.stack([x, y]),
        lambda x, y: np.stack([x, y]),
        [R34, R34],
    ),
    (
        "stack_dim1",
        lambda x, y: torch.stack((x, y), 1),
        lambda x, y: np.stack([x, y], 1),
        [R34, R34],
    ),
    (
        "stack_negdim",
        lambda x, y, z: torch.stack([x, y, z], dim=-1),
        lambda x, y, z: np.stack([x, y, z], -1),
        [R34, R34, R34],
    ),
    # ---- where
    (
        "where",
        lambda a, b: torch.where(T(MASK34), a, b),
        lambda a, b: np.where(MASK34, a, b),
        [R34, R34],
    ),
    (
        "where_bcast",
        lambda a, b: torch.where(T(MASK34), a, b),
        lambda a, b: np.where(MASK34, a, b),
        [("r", (4,)), ("r", (3, 1))],
    ),
    (
        "where_same",
        lambda a: torch.where(T(MASK34), a, a * a),
        lambda a: np.where(MASK34, a, a * a),
        [R34],
    ),
    (
        "where_from_compare",
        lambda a: torch.where(a > 0, a, a.exp() - 1),
        lambda a: np.where(a > 0, a, np.exp(a) - 1),
        [D34],
    ),
    # ---- elementwise maximum / minimum (MaximumBackward0 / MinimumBackward0)
    ("maximum", lambda x, y: torch.maximum(x, y), np.maximum, [D34, D34]),
    ("minimum", lambda x, y: torch.minimum(x, y), np.minimum, [D34, D34]),
    ("maximum_method", lambda x, y: x.maximum(y), np.maximum, [D34, D34]),
    ("minimum_method", lambda x, y: x.minimum(y), np.minimum, [D34, D34]),
    ("max_binary", lambda x, y: torch.max(x, y), np.maximum, [D34, D34]),
    ("min_binary_method", lambda x, y: x.min(y), np.minimum, [D34, D34]),
    ("max_other_kw", lambda x, y: x.max(other=y), np.maximum, [D34, D34]),
    ("maximum_bcast", lambda x, y: torch.maximum(x, y), np.maximum, [("d", (3, 1)), ("d", (1, 4))]),
    ("minimum_bcast_0d", lambda s, x: torch.minimum(s, x), np.minimum, [("d", ()), D34]),
    ("maximum_same", lambda x: torch.maximum(x, x * x), lambda x: np.maximum(x, x * x), [D34]),
    # ---- softmax / log_softmax
    ("softmax_method", lambda x: x.softmax(1), lambda x: softmax_np(x, 1), [R34]),
    (
        "softmax_method_dim0",
        lambda x: x.softmax(dim=0),
        lambda x: softmax_np(x, 0),
        [R34],
    ),
    (
        "softmax_method_neg",
        lambda x: x.softmax(-1),
        lambda x: softmax_np(x, -1),
        [("r", (2, 3, 4))],
    ),
    (
        "softmax_func",
        lambda x: torch.softmax(x, 1),
        lambda x: softmax_np(x, 1),
        [("r", (2, 3, 4))],
    ),
    (
        "softmax_func_kw",
        lambda x: torch.softmax(x, dim=0),
        lambda x: softmax_np(x, 0),
        [R34],
    ),
    (
        "log_softmax_method",
        lambda x: x.log_softmax(1),
        lambda x: log_softmax_np(x, 1),
        [R34],
    ),
    (
        "log_softmax_method_dim0",
        lambda x: x.log_softmax(dim=0),
        lambda x: log_softmax_np(x, 0),
        [R34],
    ),
    (
        "log_softmax_method_neg",
        lambda x: x.log_softmax(-1),
        lambda x: log_softmax_np(x, -1),
        [("r", (2, 3, 4))],
    ),
    (
        "log_softmax_func",
        lambda x: torch.log_softmax(x, 1),
        lambda x: log_softmax_np(x, 1),
        [("r", (2, 3, 4))],
    ),
    (
        "log_softmax_func_kw",
        lambda x: torch.log_softmax(x, dim=-1),
        lambda x: log_softmax_np(x, -1),
        [R34],
    ),
    # ---- clone
    ("clone", lambda x: x.clone(), lambda x: x.copy(), [R34]),
    ("clone_func", lambda x: torch.clone(x) * x, lambda x: x * x, [R34]),
    # ---- in-place ops on non-leaf tensors inside the function
    ("inplace_chain", inplace_chain, inplace_chain_np, [R34]),
    ("inplace_setitem_row", setitem_row, None, [R34]),
    ("inplace_through_view", inplace_through_view, inplace_through_view_np, [R34]),
    ("inplace_augmented", inplace_augmented, None, [P34]),
    ("inplace_misc", inplace_misc, inplace_misc_np, [R34]),
    ("inplace_clamp_tensor", inplace_clamp_tensor, np.clip, [D34, D34, ("d", (4,))]),
    (
        "inplace_transposed_view",
        inplace_transposed_view,
        inplace_transposed_view_np,
        [R34],
    ),
]

IDS = [case[0] for case in CASES]
assert len(set(IDS)) == len(IDS), "duplicate case ids"


@pytest.mark.parametrize("name, fn, ref, kinds", CASES, ids=IDS)
def test_forward(name, fn, ref, kinds):
    arrays, tensors = make_inputs(kinds)
    out = fn(*tensors)
    expected = np.asarray((ref or fn)(*[a.copy() for a in arrays]))
    assert out.dtype == torch.float64
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, fn, ref, kinds", CASES, ids=IDS)
def test_grad(name, fn, ref, kinds):
    _, tensors = make_inputs(kinds)
    check_grad(fn, *tensors)


@pytest.mark.parametrize("name, fn, ref, kinds", CASES, ids=IDS)
def test_gradgrad(name, fn, ref, kinds):
    _, tensors = make_inputs(kinds)
    check_gradgrad(fn, *tensors)


def _squared(fn):
    """fn(x) * fn(x): makes the second derivative non-zero even for linear ops,
    so the backward of every op must itself be differentiable."""

    def wrapped(*xs):
        out = fn(*xs)
        return out * out

    return wrapped


@pytest.mark.parametrize("name, fn, ref, kinds", CASES, ids=IDS)
def test_gradgrad_squared(name, fn, ref, kinds):
    _, tensors = make_inputs(kinds)
    check_gradgrad(_squared(fn), *tensors)


# ---- ops with more than one output / non-float outputs


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim_indices(op, dim, keepdim):
    (a,), (x,) = make_inputs([D34])
    values, indices = getattr(x, op)(dim, keepdim=keepdim)
    res = getattr(x, op)(dim=dim, keepdim=keepdim)
    arg = np.argmax if op == "max" else np.argmin
    exp_idx = arg(a, axis=dim)
    exp_val = getattr(np, op)(a, axis=dim)
    if keepdim:
        exp_idx, exp_val = np.expand_dims(exp_idx, dim), np.expand_dims(exp_val, dim)
    assert indices.dtype == torch.int64
    assert not indices.requires_grad and values.requires_grad
    np.testing.assert_array_equal(indices.numpy(), exp_idx)
    np.testing.assert_array_equal(res.indices.numpy(), exp_idx)
    np.testing.assert_allclose(values.detach().numpy(), exp_val)
    np.testing.assert_allclose(res.values.detach().numpy(), exp_val)
    # only the selected positions receive gradient
    values.sum().backward()
    expected_grad = np.zeros_like(a)
    np.put_along_axis(expected_grad, np.expand_dims(arg(a, axis=dim), dim), 1.0, axis=dim)
    np.testing.assert_array_equal(x.grad.numpy(), expected_grad)


def test_max_full_ties_grad_split_evenly():
    x = torch.tensor([1.0, 3.0, 3.0, 2.0], dtype=torch.float64, requires_grad=True)
    x.max().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.5, 0.5, 0.0])


def test_where_condition_has_no_grad():
    (a, b), (x, y) = make_inputs([R34, R34])
    out = torch.where(x > y, x, y)
    np.testing.assert_allclose(out.detach().numpy(), np.maximum(a, b))
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), (a > b).astype(np.float64))
    np.testing.assert_array_equal(y.grad.numpy(), (a <= b).astype(np.float64))
