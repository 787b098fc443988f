"""scaled_dot_product_attention and multi_head_attention_forward.

Like PyTorch on the CPU, attention runs as one fused node (ScaledDotProductFlashAttentionForCpuBackward0)
when the inputs allow it (4-D, no dropout, equal head sizes, a mask of a supported shape that needs no
gradient), and otherwise as ATen's math composition (scaled matmuls, a safe softmax, dropout, a matmul).
"""

from __future__ import annotations

import math
import warnings

from ... import backend
from ...ops import derivatives as D
from ...ops.linalg import functions as linalg_functions
from ...ops.nn import functions as nn_functions
from ...ops.op import apply_op, kept_box
from ...ops.pointwise import core as pointwise_core
from ...ops.reductions import core as reductions_core
from ...ops.shaping import core as shaping_core
from ...tensor import Tensor, wrap
from .activation import softmax
from .dropout import dropout as _dropout
from .linear import linear
from .padding import pad


def _check_inputs(query: Tensor, key: Tensor, value: Tensor, attn_mask) -> None:
    if not (query.dtype is key.dtype and query.dtype is value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype.cpp_name} key.dtype: {key.dtype.cpp_name} and value.dtype: {value.dtype.cpp_name} instead."
        )
    pointwise_core.check_same_device(query, key, value)
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead."
        )
    if attn_mask is not None:
        dtype = attn_mask.dtype
        if not (dtype is backend.bool_ or dtype is backend.float32 or dtype is query.dtype):
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
                f"{dtype.cpp_name} and  query.dtype: {query.dtype.cpp_name} instead."
            )
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Float but found {query.dtype.scalar_type}")


def _fused(query: Tensor, key: Tensor, value: Tensor, attn_mask, dropout_p: float, enable_gqa: bool) -> bool:
    """PyTorch's CPU choice of its fused kernel (sdp_utils_cpp: use_flash_attention_cpp)."""
    if dropout_p > 0 or not (query.dim() == key.dim() == value.dim() == 4):
        return False
    (b, h, length, e), (bk, hk, s, ek), (bv, hv, _, ev) = query.shape, key.shape, value.shape
    if not (b == bk == bv) or not (e == ek == ev) or length == 0 or s == 0:
        return False
    if not (h == hk == hv or (enable_gqa and hk == hv and h % hk == 0)):
        return False
    if any(
        t._data.ndim and t.shape[-1] > 1 and t._data.strides[-1] != t._data.itemsize
        for t in (query, key, value)
    ):
        return False
    if attn_mask is None:
        return True
    if attn_mask.requires_grad or attn_mask.shape[-2] not in (length, 1) or attn_mask.shape[-1] not in (s, 1):
        return False
    return attn_mask.dim() == 2 or (
        attn_mask.dim() == 4 and attn_mask.shape[0] in (1, b) and attn_mask.shape[1] in (1, h)
    )


def _float_mask(mask: Tensor, dtype) -> Tensor:
    """A bool mask as an additive one: 0 where attending, -inf where not (convert_boolean_attn_mask)."""
    if mask.dtype is not backend.bool_:
        return mask
    return wrap(backend.xp_of(mask._data).where(mask._data, 0, -math.inf).astype(dtype.np))


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    _check_inputs(query, key, value, attn_mask)
    fused = _fused(query, key, value, attn_mask, dropout_p, enable_gqa)
    mask = None if attn_mask is None else _float_mask(attn_mask, query.dtype)
    if fused:
        return _flash(query, key, value, mask, is_causal, scale, enable_gqa)
    return _math(query, key, value, mask, dropout_p, is_causal, scale, enable_gqa)


def _causal_mask(length: int, source: int, dtype, xp):
    """0 on and below the diagonal (top left aligned), -inf above: the mask is_causal stands for."""
    allowed = xp.tril(xp.ones((length, source), dtype=bool))
    return xp.where(allowed, 0, -math.inf).astype(dtype.np)


def _flash(query, key, value, mask, is_causal, scale, enable_gqa) -> Tensor:
    xp = backend.xp_of(query._data)
    additive = None if mask is None else mask._data.astype(query._data.dtype, copy=False)
    if is_causal:
        causal = _causal_mask(query.shape[-2], key.shape[-2], query.dtype, xp)
        additive = causal if additive is None else additive + causal
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    groups = query.shape[-3] // key.shape[-3]
    # Each row's log-sum-exp, kept from the forward for the backward when there will be one.
    return apply_op(
        D.SDPA_FLASH_CPU, (query, key, value), (additive, scale, groups, kept_box(query, key, value))
    )


def _math(query, key, value, mask, dropout_p, is_causal, scale, enable_gqa) -> Tensor:
    """ATen's _scaled_dot_product_attention_math: q and k^T each scaled by sqrt(scale), then softmax(q k^T)."""
    negative = scale is not None and scale < 0
    factor = math.sqrt(abs(scale) if scale is not None else 1.0 / math.sqrt(query.shape[-1]))
    q = apply_op(D.MUL_SCALAR, (query,), (0.0 - factor if negative else factor,))
    if is_causal:
        if mask is not None:
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"
            )
        xp = backend.xp_of(query._data)
        mask = wrap(_causal_mask(query.shape[-2], key.shape[-2], query.dtype, xp))
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:  # each k, v head serves a group
        shared = backend.xp_of(key._data).arange(key.shape[-3]).repeat(query.shape[-3] // key.shape[-3])
        key, value = (
            shaping_core.getitem(t, (Ellipsis, shared, slice(None), slice(None))) for t in (key, value)
        )
    attn = linalg_functions.matmul(
        q, apply_op(D.MUL_SCALAR, (shaping_core.transpose(key, -2, -1),), (factor,))
    )
    if mask is not None:
        attn = attn + mask
    attn = nn_functions.safe_softmax(attn, -1)
    if dropout_p > 0.0:
        attn = _dropout(attn, dropout_p, True)
    return linalg_functions.matmul(attn, value)


# ------------------------------------------------------------------------ multi-head attention


def canonical_mask(mask, mask_name: str, other_type, other_name: str, target_type, check_other: bool = True):
    """A bool mask as an additive float one, -inf where True (masked out: MultiheadAttention's sense, the
    opposite of scaled_dot_product_attention's); float masks pass (torch's _canonical_mask)."""
    if mask is None:
        return None
    if mask.dtype is not backend.bool_ and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both instead.",
            stacklevel=3,
        )
    if mask.dtype is not backend.bool_:
        return mask
    return wrap(
        backend.xp_of(mask._data).where(mask._data, -math.inf, 0).astype(target_type.np)
    )  # True: masked


def canonical_masks(
    padding_mask, attn_mask, dtype, padding_name: str = "key_padding_mask", attn_name: str = "attn_mask"
):
    """A call's padding and attention masks, both made additive floats (torch's warning when their types differ)."""
    attn_type = None if attn_mask is None else attn_mask.dtype
    padding_mask = canonical_mask(padding_mask, padding_name, attn_type, attn_name, dtype)
    return padding_mask, canonical_mask(attn_mask, attn_name, None, "", dtype, check_other=False)


def _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """Whether the call is batched (3-D query), with torch's refusals of mismatched dims (_mha_shape_check)."""
    if query.dim() not in (2, 3):
        raise AssertionError(
            f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query tensor"
        )
    batched = query.dim() == 3
    dims, kind = (3, "batched (3-D)") if batched else (2, "unbatched (2-D)")
    if not (key.dim() == dims and value.dim() == dims):
        raise AssertionError(
            f"For {kind} `query`, expected `key` and `value` to be {dims}-D but found {key.dim()}-D and "
            f"{value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != dims - 1:
        raise AssertionError(
            f"For {kind} `query`, expected `key_padding_mask` to be `None` or {dims - 1}-D but found "
            f"{key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None and attn_mask.dim() not in (2, 3):
        raise AssertionError(
            f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found {attn_mask.dim()}-D "
            "tensor instead"
        )
    expected = (num_heads, query.shape[0], key.shape[0])
    if not batched and attn_mask is not None and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
        raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return batched


def _rows(t: Tensor, start: int, stop: int) -> Tensor:
    return None if t is None else shaping_core._slice(t, 0, start, stop, 1)


def _in_projection(query, key, value, weights, biases):
    """q, k, v projected: one linear per input, each with its third of the packed (or its own) weight."""
    return tuple(linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))


def _repeat_rows(t: Tensor, times: int) -> Tensor:
    """t (1, 1, E) repeated over the batch: t.repeat(1, times, 1) (RepeatBackward0)."""
    return apply_op(D.REPEAT, (t,), (tuple(t.shape), (1, times, 1)))


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
):
    """(sequence, batch, embed) query/key/value -> (output, averaged or per-head weights, or None)."""
    batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = (shaping_core.unsqueeze(t, 1) for t in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = shaping_core.unsqueeze(key_padding_mask, 0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = canonical_mask(
        key_padding_mask,
        "key_padding_mask",
        None if attn_mask is None else attn_mask.dtype,
        "attn_mask",
        query.dtype,
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
            "`generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the mask is taken to be causal; sdpa applies it
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}"
            )
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        e = embed_dim
        weights = tuple(_rows(in_proj_weight, i * e, (i + 1) * e) for i in range(3))
    e = embed_dim
    biases = tuple(_rows(in_proj_bias, i * e, (i + 1) * e) for i in range(3))
    q, k, v = _in_projection(query, key, value, weights, biases)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {(tgt_len, src_len)}."
                )
            attn_mask = shaping_core.unsqueeze(attn_mask, 0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                    f"{(bsz * num_heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        k = shaping_core.cat([k, _repeat_rows(bias_k, bsz)])
        v = shaping_core.cat([v, _repeat_rows(bias_v, bsz)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    elif bias_k is not None or bias_v is not None:
        raise AssertionError(
            "bias_k is set but bias_v is None" if bias_k is not None else "bias_v is set but bias_k is None"
        )
    q = shaping_core.transpose(shaping_core.view(q, tgt_len, bsz * num_heads, head_dim), 0, 1)
    k = (
        shaping_core.transpose(shaping_core.view(k, k.shape[0], bsz * num_heads, head_dim), 0, 1)
        if static_k is None
        else static_k
    )
    v = (
        shaping_core.transpose(shaping_core.view(v, v.shape[0], bsz * num_heads, head_dim), 0, 1)
        if static_v is None
        else static_v
    )
    if add_zero_attn:
        zeros = (bsz * num_heads, 1, head_dim)
        k = shaping_core.cat([k, k.new_zeros(zeros)], dim=1)
        v = shaping_core.cat([v, v.new_zeros(zeros)], dim=1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(
                f"expecting key_padding_mask shape of {(bsz, src_len)}, but got {key_padding_mask.shape}"
            )
        padding = shaping_core.reshape(key_padding_mask, bsz, 1, 1, src_len)  # a view where torch can view it
        padding = shaping_core.reshape(
            shaping_core.expand(padding, -1, num_heads, -1, -1), bsz * num_heads, 1, src_len
        )
        attn_mask = padding if attn_mask is None else attn_mask + padding
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        scores = linalg_functions.matmul(q_scaled, shaping_core.transpose(k, -2, -1))
        weights_ = softmax(scores if attn_mask is None else attn_mask + scores, dim=-1)
        if dropout_p > 0.0:
            weights_ = _dropout(weights_, p=dropout_p)
        out = shaping_core.reshape(
            shaping_core.transpose(linalg_functions.matmul(weights_, v), 0, 1), tgt_len * bsz, embed_dim
        )
        out = shaping_core.view(linear(out, out_proj_weight, out_proj_bias), tgt_len, bsz, -1)
        weights_ = shaping_core.view(weights_, bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights_ = reductions_core.mean(weights_, dim=1)
        if not batched:
            out, weights_ = shaping_core.squeeze(out, 1), shaping_core.squeeze(weights_, 0)
        return out, weights_
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = shaping_core.unsqueeze(attn_mask, 0)
        else:
            attn_mask = shaping_core.view(attn_mask, bsz, num_heads, -1, src_len)
    # reshape, not view: a view of these transposed tensors is refused on CuPy arrays (engine._can_view)
    q, k, v = (shaping_core.reshape(t, bsz, num_heads, t.shape[1], head_dim) for t in (q, k, v))
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = shaping_core.reshape(shaping_core.permute(out, 2, 0, 1, 3), bsz * tgt_len, embed_dim)
    out = shaping_core.view(linear(out, out_proj_weight, out_proj_bias), tgt_len, bsz, -1)
    if not batched:
        out = shaping_core.squeeze(out, 1)
    return out, None
