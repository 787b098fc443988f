"""The nn rows' backward formulas longer than a line (PyTorch's FunctionsManual).

Written against the math namespace `m`, so each runs on raw arrays or, recorded, on Tensors.
Convolution's are the adjoint steps of im2col and a batched matmul per group, so convolution
is twice differentiable.
"""

from __future__ import annotations

import math

from ...tensor import Tensor
from ..namespaces import raw
from ..reductions.formulas import unreduce
from . import kernels as K

# -- convolution: im2col, a batched matmul per group; the grads are the adjoint steps ---------


def _conv_parts(g, weight, groups):
    n, o = g.shape[0], weight.shape[0]
    length = math.prod(g.shape[2:])
    g4 = g.reshape((n, groups, o // groups, length))
    w3 = weight.reshape((groups, o // groups, -1))  # (G, O/G, C/G * K)
    return n, length, g4, w3


def conv_input_backward(m, g, input, weight, stride, padding, dilation, groups, columns):
    if not isinstance(g, Tensor) and all(s == 1 for s in stride) and len(stride) <= 2:  # the fast kernel
        return K.conv_input_grad(m.xp, g, weight, input.shape, padding, dilation, groups)
    n, length, g4, w3 = _conv_parts(g, weight, groups)
    cols = m.transpose(w3, 1, 2) @ g4  # (N, G, C/G * K, L)
    return m.fold(
        cols.reshape((n, -1, length)), input.shape, weight.shape[2:], stride, K.symmetric(padding), dilation
    )


def conv_weight_backward(m, g, input, weight, stride, padding, dilation, groups, columns):
    """sum_n g[n] @ cols[n]^T; a raw backward takes the forward's columns (once), a recorded one re-unfolds."""
    n, length, g4, w3 = _conv_parts(g, weight, groups)
    cols = None
    if columns is not None and not isinstance(g, Tensor):
        cols, columns[0] = columns[0], None
    if cols is None:
        cols = m.unfold(input, weight.shape[2:], stride, K.symmetric(padding), dilation)
    cols = cols.reshape((n, groups, -1, length))
    return m.sum(g4 @ m.transpose(cols, 2, 3), (0,), False).reshape(weight.shape)


def channel_dims(x) -> tuple:
    return (0,) + tuple(range(2, x.ndim))


# -- pooling ------------------------------------------------------------------------------------


def scatter_flat(m, g, shape, flat, unique):
    """Zeros of `shape` with g added at flat indices (one op, so it has a backward too)."""
    numel = math.prod(shape)
    return m.index_grad(g.reshape((-1,)), (numel,), flat.reshape(-1), unique).reshape(shape)


def avg_pool_backward(m, g, shape, kernel, stride, pads, divisor):
    """Each output's gradient / divisor, spread over its window (fold); batched or not alike."""
    nd = len(kernel)
    planes, spatial = math.prod(shape[:-nd]), tuple(shape[-nd:])
    length, k = math.prod(g.shape[-nd:]), math.prod(kernel)
    spread = m.expand((g / divisor).reshape((1, planes, 1, length)), (1, planes, k, length))
    cols = spread.reshape((1, planes * k, length))
    return m.fold(cols, (1, planes) + spatial, kernel, stride, pads, (1,) * nd).reshape(shape)


# -- normalization: raw backwards reuse the forward's statistics; recorded ones recompute
# them from the input, so the statistics are differentiated too (double backward) ------------


def batch_norm_backward(m, g, input, weight, training, eps, result1, result2):
    """`result1`, `result2`: the forward's batch mean and inverse standard deviation."""
    dims = channel_dims(input)
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if training and isinstance(input, Tensor):
        mean = m.mean(input, dims, True)
        centred = input - mean
        invstd = (m.mean(centred * centred, dims, True) + eps) ** -0.5
    else:
        mean, invstd = result1.reshape(shape), result2.reshape(shape)
        centred = input - mean
    xhat = centred * invstd
    gw = g if weight is None else g * weight.reshape(shape)
    if training:
        gx = (gw - m.mean(gw, dims, True) - xhat * m.mean(gw * xhat, dims, True)) * invstd
    else:
        gx = gw * invstd
    gweight = None if weight is None else m.sum(g * xhat, dims, False)
    return gx, gweight, m.sum(g, dims, False)


def layer_norm_jvp(m, tangents, inputs, attrs, result):
    """Forward AD: x-hat's tangent rstd (dx - mean(dx) - x-hat mean(x-hat dx)), times weight, plus
    x-hat dweight and dbias; mean and rstd recomputed on Tensors, so the tangent is differentiable."""
    (dinput, dweight, dbias), (input, weight, _), (normalized_shape, eps) = tangents, inputs, attrs[:2]
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    centred = input - m.mean(input, dims, True)
    rstd = (m.mean(centred * centred, dims, True) + eps) ** -0.5
    xhat = centred * rstd
    terms = []
    if dinput is not None:
        dxhat = (dinput - m.mean(dinput, dims, True) - xhat * m.mean(xhat * dinput, dims, True)) * rstd
        terms.append(dxhat if weight is None else dxhat * weight)
    if dweight is not None:
        terms.append(xhat * dweight)
    if dbias is not None:
        terms.append(dbias)
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


def mse_loss_jvp(m, tangents, inputs, attrs, result):
    """Forward AD: 2 (self - target) (dself - dtarget), reduced as the loss is."""
    (dself, dtarget), (self, target), (reduction,) = tangents, inputs, attrs
    if dself is None:
        change = -dtarget
    else:
        change = dself if dtarget is None else dself - dtarget
    loss = (self - target) * change * 2.0
    everything = tuple(range(loss.ndim))
    if reduction == "mean":
        return m.mean(loss, everything, False)
    return m.sum(loss, everything, False) if reduction == "sum" else loss


def layer_norm_backward(m, g, input, weight, normalized_shape, eps, result1, result2, xhat):
    """`result1`, `result2`: the forward's mean and reciprocal standard deviation; `xhat`: the box
    the forward filled with the normalized input (raw arrays; recomputed under create_graph)."""
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    if xhat is not None and xhat[0] is not None and not isinstance(g, Tensor):
        return _layer_norm_backward_arrays(m.xp, g, weight, normalized_shape, result2, xhat[0])
    if isinstance(input, Tensor):
        mean = m.mean(input, dims, True)
        centred = input - mean
        rstd = (m.mean(centred * centred, dims, True) + eps) ** -0.5
    else:
        centred, rstd = input - result1, result2
    xhat = centred * rstd
    gw = g if weight is None else g * weight
    gx = (gw - m.mean(gw, dims, True) - xhat * m.mean(gw * xhat, dims, True)) * rstd
    gweight = None if weight is None else m.sum_to(g * xhat, tuple(weight.shape))
    return gx, gweight, m.sum_to(g, tuple(normalized_shape))


def _layer_norm_backward_arrays(xp, g, weight, normalized_shape, rstd, xhat):
    """The raw backward from the kept x-hat, on rows of the normalized size, in place where it can."""
    rows = (rstd.size, math.prod(normalized_shape))
    flat_g, flat_xhat = g.reshape(rows), xhat.reshape(rows)
    gw = flat_g * weight.reshape(-1) if weight is not None else flat_g
    mean_gw = gw.mean(axis=1, keepdims=True)
    mean_gw_xhat = K.row_dots(xp, gw, flat_xhat)[:, None] / max(rows[1], 1)
    gx = flat_xhat * mean_gw_xhat
    xp.subtract(gw, gx, out=gx)
    gx -= mean_gw
    gx *= rstd.reshape(-1, 1)
    gweight = None if weight is None else (flat_g * flat_xhat).sum(axis=0).reshape(weight.shape)
    return gx.reshape(g.shape), gweight, flat_g.sum(axis=0).reshape(normalized_shape)


# -- losses -------------------------------------------------------------------------------------


def reduced_grad(g, like, reduction):
    """The incoming loss gradient per element: g (none, sum) or g / numel (mean)."""
    return g / math.prod(like.shape) if reduction == "mean" else g


def smooth_l1_backward(m, g, self, target, reduction, beta):
    d = self - target
    return m.where(abs(d) < beta, d / beta, m.sign(d)) * reduced_grad(g, d, reduction)


def smooth_l1_target_backward(m, g, self, target, reduction, beta):
    return -smooth_l1_backward(m, g, self, target, reduction, beta)


def binary_cross_entropy_backward(m, g, self, target, weight, reduction):
    denom = (1 - self) * self
    out = (self - target) / m.where(denom < 1e-12, 1e-12, denom) * reduced_grad(g, self, reduction)
    return out if weight is None else out * weight


def binary_cross_entropy_target_backward(m, g, self, target, weight, reduction):
    out = (m.log(1 - self) - m.log(self)) * reduced_grad(g, self, reduction)
    return out if weight is None else out * weight


def _log_sigmoid(m, x):
    return m.where(x < 0, x, 0.0) - m.log(1 + m.exp(-abs(x)))


def binary_cross_entropy_with_logits_backward(m, g, self, target, weight, pos_weight, reduction):
    s = m.sigmoid(self)
    if pos_weight is None:
        out = s - target
    else:
        pt = target * pos_weight
        out = (pt + 1 - target) * s - pt
    out = out * reduced_grad(g, self, reduction)
    return out if weight is None else out * weight


def binary_cross_entropy_with_logits_target_backward(m, g, self, target, weight, pos_weight, reduction):
    if pos_weight is None:
        out = -self
    else:
        out = _log_sigmoid(m, -self) - _log_sigmoid(m, self) * pos_weight
    out = out * reduced_grad(g, self, reduction)
    return out if weight is None else out * weight


# -- padding ------------------------------------------------------------------------------------


def constant_pad_backward(m, g, pad, value, result_sym_sizes, out_key, in_key, self_sym_sizes):
    piece = g[out_key]
    if tuple(piece.shape) == self_sym_sizes:
        return piece
    return m.index_grad(piece, self_sym_sizes, in_key, True)


# -- activations, distances, losses, norms, pooling, upsampling, attention ---------------------


def softplus(m, x):
    """log(1 + exp(x)) without overflow, smooth everywhere: max(x, 0) + log1p(exp(-|x|))."""
    return m.where(x > 0, x, 0.0) + m.log1p(m.exp(-abs(x)))


def silu_backward(m, g, self):
    s = m.sigmoid(self)
    return g * (s * (1 + self * (1 - s)))


def mish_backward(m, g, self):
    t = m.tanh(softplus(m, self))
    return g * (t + self * m.sigmoid(self) * (1 - t * t))


def elu_backward(m, g, self, alpha, scale, input_scale):
    """PyTorch's elu_backward on the input; exp sees only the non-positive side (no inf * 0)."""
    negative = m.where(self <= 0, self, 0.0)
    return m.where(self <= 0, g * (input_scale * alpha * scale) * m.exp(negative * input_scale), g * scale)


def elu_result_backward(m, g, result, alpha, scale, input_scale):
    """On the output, for the in-place forms (EluBackward1, CeluBackward1)."""
    if alpha * scale < 0:
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is not supported. "
            "This is caused by calling in-place forward function with a negative slope, please call "
            "out-of-place version instead."
        )
    return m.where(result <= 0, g * input_scale * (result + alpha * scale), g * scale)


def glu_backward(m, g, self, dim):
    half = self.shape[dim] // 2
    lead = (slice(None),) * dim
    first, second = lead + (slice(0, half),), lead + (slice(half, 2 * half),)
    a, s = self[first], m.sigmoid(self[second])
    shape = tuple(self.shape)
    return m.index_grad(g * s, shape, first, True) + m.index_grad(g * a * s * (1 - s), shape, second, True)


def _safe(m, x):
    """x with its zeros made ones: a divisor or a base whose zeros a `where` masks out anyway, so that
    the masked side stays finite and a second derivative through the `where` is 0, not nan."""
    return m.where(x == 0, 1.0, x)


def p_norm_backward(m, g, self, result, p, dim, keepdim):
    """torch.norm(self, p, dim)'s gradient as PyTorch's norm_backward writes it, case by case."""
    if p == 0:
        return m.zeros(tuple(self.shape), self)
    gk = unreduce(g, self.shape, dim, keepdim)
    rk = unreduce(result, self.shape, dim, keepdim)
    if p == 1:
        return m.sign(self) * gk
    if math.isinf(p):  # the gradient is shared by the elements at the extreme (and NaNs)
        magnitude = abs(self)
        hit = m.cast((magnitude == rk) | (magnitude != magnitude), raw(self).dtype)
        return m.sign(self) * (gk / m.sum(hit, dim, True)) * hit
    scale = m.where(rk == 0, 0.0, gk / _safe(m, rk) ** (p - 1))
    if p == 2:
        return self * scale
    if p < 1:
        return m.sign(self) * _safe(m, abs(self)) ** (p - 1) * gk * rk ** (1 - p)
    if p < 2:
        return m.sign(self) * _safe(m, abs(self)) ** (p - 1) * scale
    return self * abs(self) ** (p - 2) * scale


def cdist_backward(m, g, x1, x2, result, p):
    """Both inputs' gradients of the p-norm distances (..., R1, R2) between rows, per PyTorch's kernels."""
    if p == 0:
        return m.zeros(tuple(x1.shape), x1), m.zeros(tuple(x2.shape), x2)
    diff = x1.reshape(tuple(x1.shape[:-1]) + (1, x1.shape[-1])) - x2.reshape(
        tuple(x2.shape[:-2]) + (1,) + tuple(x2.shape[-2:])
    )  # (..., R1, R2, M)
    gk = g.reshape(tuple(g.shape) + (1,))
    dist = result.reshape(tuple(result.shape) + (1,))
    if p == 1:
        term = m.sign(diff) * gk
    elif math.isinf(p):
        term = m.sign(diff) * m.where(abs(diff) == dist, gk, 0.0)
    else:
        scale = m.where(dist == 0, 0.0, gk / _safe(m, dist) ** (p - 1))
        term = (diff if p == 2 else m.sign(diff) * _safe(m, abs(diff)) ** (p - 1)) * scale
    return m.sum(term, (-2,), False), -m.sum(term, (-3,), False)


def euclidean_dist_backward(m, g, x1, x2, result):
    """_euclidean_dist (cdist's matrix-product form): a subgradient 0 where a distance is 0."""
    ratio = m.where(result == 0, 0.0, g / _safe(m, result))
    gx1 = x1 * m.sum(ratio, (-1,), True) - ratio @ x2
    gx2 = x2 * m.transpose(m.sum(ratio, (-2,), True), -1, -2) - m.transpose(ratio, -1, -2) @ x1
    return gx1, gx2


def huber_backward(m, g, self, target, reduction, delta):
    d = self - target
    return m.where(d < -delta, -delta, m.where(d > delta, delta, d)) * reduced_grad(g, d, reduction)


def group_norm_backward(m, g, input, weight, N, C, HxW, group, eps, result1, result2):
    """layer_norm's backward within each (sample, group); statistics recomputed when recorded."""
    shape = tuple(input.shape)
    grouped = (N, group, -1)
    x = input.reshape(grouped)
    if isinstance(input, Tensor):
        centred = x - m.mean(x, (2,), True)
        rstd = (m.mean(centred * centred, (2,), True) + eps) ** -0.5
    else:
        centred, rstd = x - result1.reshape((N, group, 1)), result2.reshape((N, group, 1))
    xhat = centred * rstd
    gw = (g if weight is None else g * weight.reshape((1, C) + (1,) * (len(shape) - 2))).reshape(grouped)
    gx = (gw - m.mean(gw, (2,), True) - xhat * m.mean(gw * xhat, (2,), True)) * rstd
    dims = channel_dims(g)
    gweight = None if weight is None else m.sum(g * xhat.reshape(shape), dims, False)
    return gx.reshape(shape), gweight, m.sum(g, dims, False)


def along_trailing_dims_transposed(m, g, matrices):
    """The adjoint of kernels.along_trailing_dims: each (out, in) matrix's transpose applied along its dim."""
    for k, matrix in enumerate(matrices):
        axis = k - len(matrices)
        g = g @ matrix if axis == -1 else m.transpose(m.transpose(g, axis, -1) @ matrix, axis, -1)
    return g


def pixel_shuffle(m, x, r):
    """(*, C r^2, H, W) -> (*, C, H r, W r): channel c r^2 + i r + j lands at row h r + i, column w r + j."""
    lead, (c, h, w) = tuple(x.shape[:-3]), tuple(x.shape[-3:])
    n = len(lead)
    y = m.permute(
        x.reshape(lead + (c // (r * r), r, r, h, w)), tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2)
    )
    return y.reshape(lead + (c // (r * r), h * r, w * r))


def pixel_unshuffle(m, x, r):
    """pixel_shuffle's inverse: (*, C, H r, W r) -> (*, C r^2, H, W)."""
    lead, (c, h, w) = tuple(x.shape[:-3]), tuple(x.shape[-3:])
    n = len(lead)
    y = m.permute(
        x.reshape(lead + (c, h // r, r, w // r, r)), tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3)
    )
    return y.reshape(lead + (c * r * r, h // r, w // r))


def embedding_bag_backward(m, g, weight, per_sample_weights, indices, bags, coef, num_bags, mode, max_indices,
                           grad_scale):  # fmt: skip
    """The weight's gradient: each bag's gradient, scaled as its rows were, added back at their indices
    (max: at each dimension's chosen row); per_sample_weights': each row's dot with its bag's gradient."""
    shape = tuple(weight.shape)
    if mode == "max":  # (rows, columns): each output element's source in weight; valid: 0 for an empty bag
        rows, columns, valid = max_indices
        return m.index_grad(g * valid, shape, (rows, columns), False), None
    per_row = g[bags]  # (n, D): each index's bag gradient
    scale = coef if grad_scale is None else coef * grad_scale
    weighted = per_row * scale.reshape((-1, 1))
    if per_sample_weights is not None:
        weighted = weighted * per_sample_weights.reshape((-1, 1))
    gweight = m.index_grad(weighted, shape, indices, False)
    gpsw = None
    if per_sample_weights is not None:
        gpsw = m.sum(per_row * weight[indices], (1,), False) * coef
    return gweight, gpsw


# -- transposed convolution: the adjoint of a convolution; its input gradient is that convolution ----


def _windows_of(m, g, input_shape, stride, padding, dilation, kernel):
    """g's im2col columns, one window per input position: (N, C_out * K, L_in)."""
    n, spatial = g.shape[0], tuple(input_shape[2:])
    cols = m.unfold(g, kernel, stride, K.symmetric(padding), dilation)
    found = K.out_shape(tuple(g.shape[2:]), kernel, stride, K.symmetric(padding), dilation)
    if found != spatial:  # an output_padding past the stride adds windows no input position had
        cols = cols.reshape((n, -1) + found)[(slice(None), slice(None)) + tuple(slice(0, s) for s in spatial)]
        cols = cols.reshape((n, cols.shape[1], math.prod(spatial)))
    return cols


def conv_transpose_input_backward(m, g, input, weight, stride, padding, dilation, groups, output_padding):
    """The convolution of g by the same weight (weight (C_in, C_out / G, *K) is a C_out -> C_in kernel)."""
    n, c_in = input.shape[:2]
    kernel = tuple(weight.shape[2:])
    cols = _windows_of(m, g, input.shape, stride, padding, dilation, kernel)
    grouped = cols.reshape((n, groups, -1, cols.shape[-1]))
    out = weight.reshape((groups, c_in // groups, -1)) @ grouped  # (N, G, C_in / G, L_in)
    return out.reshape(tuple(input.shape))


def conv_transpose_weight_backward(m, g, input, weight, stride, padding, dilation, groups, output_padding):
    n, c_in = input.shape[:2]
    kernel = tuple(weight.shape[2:])
    cols = _windows_of(m, g, input.shape, stride, padding, dilation, kernel)
    grouped = cols.reshape((n, groups, -1, cols.shape[-1]))  # (N, G, C_out / G * K, L_in)
    x = input.reshape((n, groups, c_in // groups, -1))
    return m.sum(x @ m.transpose(grouped, 2, 3), (0,), False).reshape(tuple(weight.shape))


# -- attention --------------------------------------------------------------------------------


def _shared_heads(m, x, groups):
    """Grouped-query attention: each of x's heads (dim -3) serves `groups` query heads in a row."""
    if groups == 1:
        return x
    lead, (heads, n, e) = tuple(x.shape[:-3]), tuple(x.shape[-3:])
    spread = m.expand(x.reshape(lead + (heads, 1, n, e)), lead + (heads, groups, n, e))
    return spread.reshape(lead + (heads * groups, n, e))


def _summed_heads(m, g, groups):
    """The adjoint of _shared_heads: each group of query heads' gradients summed into its head."""
    if groups == 1:
        return g
    lead, (heads, n, e) = tuple(g.shape[:-3]), tuple(g.shape[-3:])
    return m.sum(g.reshape(lead + (heads // groups, groups, n, e)), (len(lead) + 1,), False)


def attention_backward(m, g, query, key, value, attn_mask, scale, groups, logsumexp):
    """softmax(q k^T * scale + mask) v: the probabilities recomputed, then the chain rule through each step.

    On raw arrays with the forward's `logsumexp` (a box), probabilities are exp(scores - logsumexp) and
    each step runs in place; under create_graph every step is recorded instead.
    """
    k, v = _shared_heads(m, key, groups), _shared_heads(m, value, groups)
    if logsumexp is not None and logsumexp[0] is not None and not isinstance(g, Tensor):
        return _attention_backward_arrays(m, g, query, k, v, attn_mask, scale, groups, logsumexp[0])
    scores = (query @ m.transpose(k, -1, -2)) * scale
    probs = m.softmax(scores if attn_mask is None else scores + attn_mask, -1)
    dprobs = g @ m.transpose(v, -1, -2)
    dscores = probs * (dprobs - m.sum(dprobs * probs, (-1,), True)) * scale
    gq = dscores @ k
    gk = m.transpose(dscores, -1, -2) @ query
    gv = m.transpose(probs, -1, -2) @ g
    return gq, _summed_heads(m, gk, groups), _summed_heads(m, gv, groups)


def _attention_backward_arrays(m, g, query, k, v, attn_mask, scale, groups, logsumexp):
    xp = m.xp
    probs = query @ xp.swapaxes(k, -1, -2)
    probs *= scale
    if attn_mask is not None:
        probs = probs + attn_mask
    probs -= logsumexp
    xp.exp(probs, out=probs)
    dscores = g @ xp.swapaxes(v, -1, -2)  # d probs, then d scores in place
    dscores -= (dscores * probs).sum(axis=-1, keepdims=True)
    dscores *= probs
    dscores *= scale
    gq = dscores @ k
    gk = xp.swapaxes(dscores, -1, -2) @ query
    gv = xp.swapaxes(probs, -1, -2) @ g
    return gq, _summed_heads(m, gk, groups), _summed_heads(m, gv, groups)
