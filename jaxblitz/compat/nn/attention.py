"""Blitz 3, "Neural Networks" (beyond it: the Transformer tutorials): attention,
``torch.nn.functional.scaled_dot_product_attention`` and
``multi_head_attention_forward``.

``scaled_dot_product_attention`` is one recorded op whose JAX function is torch's
math formulation: query and key each scaled by sqrt(scale), a bool mask added as
0 / -inf, a row masked everywhere gives zeros (torch's ``_safe_softmax``), dropout
drawn from compat's generator. ``multi_head_attention_forward`` follows torch's
function step by step with compat's ops, so its checks, masks and gradients are
torch's. ``nn.MultiheadAttention`` is in :mod:`.transformer`.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.nn._linear import linear
from jaxblitz.compat.nn.dropout import dropout
from jaxblitz.compat.ops._arrange import _softmax
from jaxblitz.compat.ops._linalg import _CPP, bmm
from jaxblitz.compat.ops.shape_ops import cat
from jaxblitz.compat.tensor import Tensor, _dtype, creation

# -- pure JAX function ---------------------------------------------------------------


def _attention_fn(q, k, v, mask, keep, *, scale, causal, safe, repeats, precision):
    """softmax(q k^T * scale + mask) v, as torch's math kernel computes it."""
    dtype = q.dtype
    if dtype in (jnp.float16, jnp.bfloat16):  # torch: half attention in float32
        q, k, v = (x.astype(jnp.float32) for x in (q, k, v))
    if repeats != (1, 1):  # enable_gqa: each key/value head serves a query group
        k = jnp.repeat(k, repeats[0], axis=-3)
        v = jnp.repeat(v, repeats[1], axis=-3)
    root = math.sqrt(abs(scale))
    q = q * (-root if scale < 0 else root)
    scores = jnp.matmul(q, jnp.swapaxes(k * root, -1, -2), precision=precision)
    if causal:  # upper-left aligned: query i sees keys 0..i
        mask = jnp.tril(jnp.ones(scores.shape[-2:], bool))
    if mask is not None:
        if mask.dtype == jnp.bool_:
            mask = jnp.where(mask, 0.0, -jnp.inf)
        scores = scores + mask.astype(scores.dtype)
    if safe:  # a row masked everywhere attends to nothing: zeros, not NaN
        dead = jnp.all(scores == -jnp.inf, axis=-1, keepdims=True)
        weights = jnp.where(dead, 0.0, jax.nn.softmax(jnp.where(dead, 0.0, scores)))
    else:
        weights = jax.nn.softmax(scores, axis=-1)
    if keep is not None:
        weights = weights * keep
    return jnp.matmul(weights, v, precision=precision).astype(dtype)


# -- torch.nn.functional -------------------------------------------------------------


def _broadcast(a: tuple, b: tuple) -> tuple:
    """np.broadcast_shapes with torch's words for sizes that do not broadcast."""
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        pass
    for i in range(1, min(len(a), len(b)) + 1):
        if a[-i] != b[-i] and 1 not in (a[-i], b[-i]):
            raise RuntimeError(
                f"The size of tensor a ({a[-i]}) must match the size of tensor b "
                f"({b[-i]}) at non-singleton dimension {max(len(a), len(b)) - i}"
            ) from None
    raise AssertionError("unreachable")  # pragma: no cover


def _product(a: tuple, b: tuple) -> tuple:
    """The shape of a @ b (b given transposed: (..., n, m)), with torch's errors:
    mm's for two matrices, bmm's (batch folded) for batches."""
    if len(a) == len(b) == 2:
        if a[1] != b[1]:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and "
                f"{b[1]}x{b[0]})"
            )
        return (a[0], b[0])
    batch = _broadcast(a[:-2], b[:-2])
    if a[-1] != b[-1]:
        n = math.prod(batch)
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{n}, {a[-1]}] but got: [{n}, {b[-1]}]."
        )
    return (*batch, a[-2], b[-2])


def _sdpa_checks(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa):
    """torch's checks (validate_sdpa_input, then the math kernel's), in its order;
    returns the key and value head repeats (enable_gqa)."""
    args = (("query", query), ("key", key), ("value", value))
    for position, (name, t) in enumerate(args, 1):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"scaled_dot_product_attention(): argument '{name}' (position "
                f"{position}) must be Tensor, not {type(t).__name__}"
            )
    if attn_mask is not None and not isinstance(attn_mask, Tensor):
        raise TypeError(
            "scaled_dot_product_attention(): argument 'attn_mask' must be Tensor, "
            f"not {type(attn_mask).__name__}"
        )
    names = [_CPP[t.dtype.name] for _, t in args]
    if len({t.dtype for _, t in args}) != 1:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got "
            f"query.dtype: {names[0]} key.dtype: {names[1]} and value.dtype: "
            f"{names[2]} instead."
        )
    if min(t.dim() for _, t in args) < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but "
            f"got query.dim: {query.dim()} key.dim: {key.dim()} and value.dim: "
            f"{value.dim()} instead."
        )
    if attn_mask is not None and attn_mask.dtype not in (
        _dtype.bool,
        _dtype.float32,
        query.dtype,
    ):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, "
            f"but got attn_mask.dtype: {_CPP[attn_mask.dtype.name]} and  "
            f"query.dtype: {names[0]} instead."
        )
    if not query.dtype.is_floating_point:
        raise RuntimeError(
            f"expected scalar type Float but found {query.dtype.scalar_type}"
        )
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set "
            "when is_causal=True"
        )
    repeats = (1, 1)
    if enable_gqa and min(t.dim() for _, t in args) >= 3:
        hq, hk, hv = (t.shape[-3] for _, t in args)
        if hq % hk or hq % hv:
            raise RuntimeError(
                "Number of heads in key and value must divide the number of heads in "
            )
        repeats = (hq // hk, hq // hv)
    k_shape, v_shape = list(key.shape), list(value.shape)
    if enable_gqa and len(k_shape) >= 3:
        k_shape[-3] *= repeats[0]
        v_shape[-3] *= repeats[1]
    scores = _product(tuple(query.shape), tuple(k_shape))
    if attn_mask is not None:  # torch adds it in place: it may not grow the scores
        grown = _broadcast(scores, tuple(attn_mask.shape))
        if grown != scores:
            raise RuntimeError(
                f"output with shape {list(scores)} doesn't match the broadcast "
                f"shape {list(grown)}"
            )
    if dropout_p > 1:
        raise RuntimeError(
            f"dropout probability has to be between 0 and 1, but got {dropout_p}"
        )
    v_t = (*v_shape[:-2], v_shape[-1], v_shape[-2])  # weights @ value
    _product(scores, v_t)
    return repeats, scores


def _grad_fn(query, key, value, dropout: bool) -> str:
    """The node torch's CPU kernels record: the flash kernel's for same-sized 4-D
    inputs without dropout, else the math formulation's last op."""
    if query.dim() == 2:
        return "MmBackward0"
    shapes = [tuple(t.shape) for t in (query, key, value)]
    flash = (
        all(len(s) == 4 for s in shapes)
        and len({s[0] for s in shapes}) == 1
        and shapes[0][3] == shapes[2][3]
        and not dropout
    )
    return (
        "ScaledDotProductFlashAttentionForCpuBackward0"
        if flash
        else ("UnsafeViewBackward0")
    )


def _attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    is_causal: bool,
    scale: float | None,
    enable_gqa: bool,
    safe: bool,
) -> Tensor:
    repeats, scores = _sdpa_checks(
        query, key, value, attn_mask, dropout_p, is_causal, enable_gqa
    )
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    keep = None
    if dropout_p > 0:
        u = creation.rand(
            *scores, dtype=query.dtype, device=_dtype.tensor_device(query)
        )
        scale_kept = 0.0 if dropout_p == 1 else 1.0 / (1 - dropout_p)  # as F.dropout
        keep = (u >= dropout_p).to(query.dtype) * scale_kept
    return apply(
        _grad_fn(query, key, value, keep is not None),
        _attention_fn,
        query,
        key,
        value,
        attn_mask,
        keep,
        scale=float(scale),
        causal=bool(is_causal),
        safe=safe,
        repeats=repeats,
        precision=_precision.of("matmul", query, key),
    )


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
    """softmax(query @ key^T * scale + mask) @ value, with dropout on the weights.

    A bool ``attn_mask`` says which keys a query may attend to (True: it may); a
    float one is added to the scores. ``is_causal`` masks the upper triangle
    (upper-left aligned for a non-square L x S).
    """
    if _autocast.on:
        return _autocast.run(
            "scaled_dot_product_attention",
            scaled_dot_product_attention,
            query,
            key,
            value,
            attn_mask,
            dropout_p,
            is_causal,
            scale,
            enable_gqa,
        )
    return _attention(
        query,
        key,
        value,
        attn_mask,
        dropout_p,
        is_causal,
        scale,
        enable_gqa,
        safe=True,
    )


def _canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type: Any,
    other_name: str,
    target_type: Any,
    check_other: bool = True,
) -> Tensor | None:
    """torch's F._canonical_mask: a bool mask as a float one (True -> -inf)."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype is not _dtype.bool and not is_float:
        raise AssertionError(
            f"only bool and floating types of {mask_name} are supported"
        )
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. "
            "Use same type for both instead.",
            stacklevel=2,
        )
    if not is_float:
        zeros = creation.zeros_like(mask, dtype=target_type)
        mask = zeros.masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(input: Tensor | None) -> Any:
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """torch's F._mha_shape_check: is the input batched (3-D) or not (2-D)."""
    if query.dim() not in (2, 3):
        raise AssertionError(
            "query should be unbatched 2D or batched 3D tensor but received "
            f"{query.dim()}-D query tensor"
        )
    batched = query.dim() == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    want = 3 if batched else 2
    if key.dim() != want or value.dim() != want:
        raise AssertionError(
            f"For {kind} `query`, expected `key` and `value` to be {want}-D but found "
            f"{key.dim()}-D and {value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != want - 1:
        raise AssertionError(
            f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
            f"{want - 1}-D but found {key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(
                f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                f"but found {attn_mask.dim()}-D tensor instead"
            )
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.dim() == 3 and attn_mask.shape != expected:
            raise AssertionError(
                f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}"
            )
    return batched


def _in_projection_packed(q, k, v, w, b=None) -> list[Tensor]:
    """q, k, v projected by one packed (3E, E) weight, as torch's (one product
    for self-attention, two for encoder-decoder attention)."""
    e = q.size(-1)
    if k is v:
        if q is k:  # self-attention
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, e)).unsqueeze(0).transpose(0, -2)
            proj = proj.squeeze(-2).contiguous()
            return [proj[0], proj[1], proj[2]]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        kv = linear(k, w_kv, b_kv).unflatten(-1, (2, e)).unsqueeze(0)
        kv = kv.transpose(0, -2).squeeze(-2).contiguous()
        return [linear(q, w_q, b_q), kv[0], kv[1]]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None,) * 3 if b is None else b.chunk(3)
    return [linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)]


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """q, k, v projected by their own weights (kdim, vdim), with torch's checks."""
    eq, ek, ev = q.size(-1), k.size(-1), v.size(-1)
    for what, t, shape in (
        ("query weights", w_q, (eq, eq)),
        ("key weights", w_k, (eq, ek)),
        ("value weights", w_v, (eq, ev)),
        ("query bias", b_q, (eq,)),
        ("key bias", b_k, (eq,)),
        ("value bias", b_v, (eq,)),
    ):
        if t is not None and t.shape != shape:
            raise AssertionError(
                f"expecting {what} shape of {shape}, but got {t.shape}"
            )
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _pad_one(mask: Tensor) -> Tensor:
    """torch's ``F.pad(mask, (0, 1))``: one more key, not masked."""
    zero = creation.zeros(
        *mask.shape[:-1], 1, dtype=mask.dtype, device=_dtype.tensor_device(mask)
    )
    return cat([mask, zero], -1)


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
    _safe: bool = True,
) -> tuple[Tensor, Tensor | None]:
    """torch's ``F.multi_head_attention_forward``, step for step (sequence first:
    ``(L, N, E)``, or ``(L, E)`` unbatched)."""
    batched = _mha_shape_check(
        query, key, value, key_padding_mask, attn_mask, num_heads
    )
    if not batched:  # a batch of one, squeezed again at the end
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(
        key_padding_mask,
        "key_padding_mask",
        _none_or_dtype(attn_mask),
        "attn_mask",
        query.dtype,
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the "
            "Transformer module method `generate_square_subsequent_mask` to create "
            "this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint alone: SDPA masks causally itself
    else:
        attn_mask = _canonical_mask(
            attn_mask, "attn_mask", None, "", query.dtype, False
        )
        if key_padding_mask is not None:
            is_causal = False  # merged with the padding, no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got "
            f"{embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(
            f"embed_dim {embed_dim} not divisible by num_heads {num_heads}"
        )
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                f"{value.shape[:2]}"
            )
    elif key.shape != value.shape:
        raise AssertionError(
            f"key shape {key.shape} does not match value shape {value.shape}"
        )

    # in-projection
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError(
                "use_separate_proj_weight is False but in_proj_weight is None"
            )
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (
            ("q", q_proj_weight),
            ("k", k_proj_weight),
            ("v", v_proj_weight),
        ):
            if w is None:
                raise AssertionError(
                    f"use_separate_proj_weight is True but {name}_proj_weight is None"
                )
        b = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(
            query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, *b
        )

    # the attention mask as (1 or N*heads, L, S)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if attn_mask.shape != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                    f"be {(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                    f"be {(bsz * num_heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(
                f"attn_mask's dimension {attn_mask.dim()} is not supported"
            )

    # bias_k, bias_v: one more key and value, at the end of the sequence
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_one(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_one(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # heads: (N*heads, L or S, head_dim)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _heads(v, static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:  # one more key and value of zeros
        zero = (bsz * num_heads, 1, head_dim)
        k = cat(
            [k, creation.zeros(zero, dtype=k.dtype, device=_dtype.tensor_device(k))], 1
        )
        v = cat(
            [v, creation.zeros(zero, dtype=v.dtype, device=_dtype.tensor_device(v))], 1
        )
        if attn_mask is not None:
            attn_mask = _pad_one(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_one(key_padding_mask)
    src_len = k.size(1)

    # the padding mask merged into the attention mask
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(
                f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                f"{key_padding_mask.shape[0]}"
            )
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                f"{key_padding_mask.shape[1]}"
            )
        key_padding_mask = (
            key_padding_mask.view(bsz, 1, 1, src_len)
            .expand(-1, num_heads, -1, -1)
            .reshape(bsz * num_heads, 1, src_len)
        )
        attn_mask = (
            key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
        )
    if not training:
        dropout_p = 0.0

    if need_weights:  # the weights themselves: plain softmax (NaN where all masked)
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
        weights = bmm(q_scaled, k.transpose(-2, -1))
        if attn_mask is not None:  # torch: baddbmm(attn_mask, q_scaled, k^T)
            weights = attn_mask + weights
        weights = _softmax("softmax", weights, -1, None, log=False)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.size(1))
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:  # (1, 1, L, S) or (N, heads, L, S) for SDPA
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = _attention(q, k, v, attn_mask, dropout_p, is_causal, None, False, _safe)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    return (out if batched else out.squeeze(1)), None


def _heads(x, static, name, rows, head_dim):
    """A projected key or value as (N*heads, S, head_dim), or the static one."""
    if static is None:
        return x.view(x.shape[0], rows, head_dim).transpose(0, 1)
    if static.size(0) != rows:
        raise AssertionError(
            f"expecting {name}.size(0) of {rows}, but got {static.size(0)}"
        )
    if static.size(2) != head_dim:
        raise AssertionError(
            f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}"
        )
    return static


def _requires_grad(t: Tensor | None) -> bool:
    return t is not None and t.requires_grad
