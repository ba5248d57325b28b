"""Blitz 3, "Neural Networks" (beyond it: the Transformer tutorials):
``torch.nn.MultiheadAttention``, ``TransformerEncoderLayer``,
``TransformerDecoderLayer``, ``TransformerEncoder``, ``TransformerDecoder`` and
``Transformer``.

``MultiheadAttention`` has torch's parameters (``in_proj_weight`` or
``q/k/v_proj_weight``, ``in_proj_bias``, ``bias_k``, ``bias_v``, ``out_proj``) and
initialisation (Xavier-uniform projections, zero biases). Each layer is torch's
module written over compat's layers (``MultiheadAttention``, ``Linear``,
``LayerNorm``, ``Dropout``), with torch's submodule names, so a torch
``state_dict`` loads as it is. Where torch would run its fused inference kernels
(eval mode, no gradient, batch-first ...), the values they give are reproduced:
a query whose keys are all masked gives NaN, and ``TransformerEncoder``'s nested
tensor path gives zeros at the padded positions.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

from jaxblitz.compat import ops
from jaxblitz.compat.autograd.grad_mode import is_grad_enabled
from jaxblitz.compat.backends import mha
from jaxblitz.compat.nn import functional as F
from jaxblitz.compat.nn import init
from jaxblitz.compat.nn.activation import GELU
from jaxblitz.compat.nn.attention import (
    _canonical_mask,
    _none_or_dtype,
    _requires_grad,
    multi_head_attention_forward,
)
from jaxblitz.compat.nn.container import ModuleList
from jaxblitz.compat.nn.dropout import Dropout
from jaxblitz.compat.nn.layers import Linear, ReLU
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.nn.normalization import LayerNorm
from jaxblitz.compat.tensor import Tensor, creation


class NonDynamicallyQuantizableLinear(Linear):
    """torch's ``Linear`` subclass for ``MultiheadAttention.out_proj`` (its name
    shows in the repr)."""


class MultiheadAttention(Module):
    """``nn.MultiheadAttention``: torch's parameters, initialisation and forward."""

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                "embed_dim and num_heads must be greater than 0, got "
                f"embed_dim={embed_dim} and num_heads={num_heads} instead"
            )
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        def empty(*shape: int) -> Parameter:
            return Parameter(creation.empty(*shape, device=device, dtype=dtype))

        if not self._qkv_same_embed_dim:
            self.q_proj_weight = empty(embed_dim, embed_dim)
            self.k_proj_weight = empty(embed_dim, self.kdim)
            self.v_proj_weight = empty(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = empty(3 * embed_dim, embed_dim)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        if bias:
            self.in_proj_bias = empty(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(
            embed_dim, embed_dim, bias=bias, device=device, dtype=dtype
        )
        if add_bias_kv:
            self.bias_k = empty(1, 1, embed_dim)
            self.bias_v = empty(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """torch's: Xavier-uniform projections, zero biases, Xavier-normal
        ``bias_k``/``bias_v`` (``out_proj.weight`` keeps Linear's draw)."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _fast_path(self, query: Tensor, key: Tensor, value: Tensor) -> bool:
        """Would torch run its fused kernel here (eval, no gradient, batch-first
        self-attention ...)? Its one visible difference: a query masked
        everywhere gives NaN there, not zeros."""
        weights = (self.in_proj_weight, self.in_proj_bias)
        tensors = (query, *weights, self.out_proj.weight, self.out_proj.bias)
        return (
            mha.get_fastpath_enabled()
            and query.dim() == 3
            and query is key is value
            and all(w is not None and w.dtype is query.dtype for w in weights)
            and not self.training
            and self.num_heads % 2 == 0
            and self.batch_first
            and self.bias_k is None
            and self.bias_v is None
            and not self.add_zero_attn
            and self._qkv_same_embed_dim
            and not (is_grad_enabled() and any(_requires_grad(t) for t in tensors))
        )

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        return self._attend(
            query,
            key,
            value,
            key_padding_mask,
            need_weights,
            attn_mask,
            average_attn_weights,
            is_causal,
        )

    def _attend(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None,
        need_weights: bool,
        attn_mask: Tensor | None,
        average_attn_weights: bool,
        is_causal: bool,
        fused: bool | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """``forward``; ``fused``: whether torch's fused kernel would run (None:
        decide as ``MultiheadAttention.forward`` does; a Transformer layer
        decides for its own fused kernel)."""
        float_masks = any(
            m is not None and m.dtype.is_floating_point
            for m in (attn_mask, key_padding_mask)
        )
        batched = query.dim() == 3
        key_padding_mask = _canonical_mask(
            key_padding_mask,
            "key_padding_mask",
            _none_or_dtype(attn_mask),
            "attn_mask",
            query.dtype,
        )
        attn_mask = _canonical_mask(
            attn_mask, "attn_mask", None, "", query.dtype, False
        )
        if fused is None:
            fused = not float_masks and self._fast_path(query, key, value)
        if fused:
            is_causal = False  # torch's fused kernels take the mask, not the hint
        if self.batch_first and batched:  # keep which of q, k, v are one tensor
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
            _safe=not fused,
        )
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        return out, weights

    def merge_masks(
        self, attn_mask: Tensor | None, key_padding_mask: Tensor | None, query: Tensor
    ) -> tuple[Tensor | None, int | None]:
        """torch's: one mask of (N, heads, L, L) and its type (0, 1 or 2)."""
        mask_type, merged = None, None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                merged = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1
                )
            if key_padding_mask is not None:
                padding = key_padding_mask.view(batch_size, 1, 1, seq_len)
                merged = merged + padding.expand(-1, self.num_heads, -1, -1)
        return merged, mask_type


def _generate_square_subsequent_mask(
    sz: int, device: Any = None, dtype: Any = None
) -> Tensor:
    """(sz, sz): -inf above the diagonal, 0 elsewhere."""
    full = creation.full((sz, sz), float("-inf"), dtype=dtype, device=device)
    return ops.triu(full, diagonal=1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    if src.dim() == 2:  # unbatched: (S, E)
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(
    mask: Tensor | None, is_causal: bool | None = None, size: int | None = None
) -> bool:
    """torch's: the hint as given, or (None) whether ``mask`` is the causal one."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = _generate_square_subsequent_mask(
            sz, device=mask.device, dtype=mask.dtype
        )
        make_causal = mask.size() == causal.size() and bool((mask == causal).all())
    return make_causal


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _hooked(module: Module) -> bool:
    return any(
        getattr(m, "_forward_hooks", None) or getattr(m, "_forward_pre_hooks", None)
        for m in module.modules()
    )


def _needs_grad(src: Tensor, layer: TransformerEncoderLayer) -> bool:
    """torch's bar to its fused kernels: grad mode on and the input or one of
    the layer's weights requiring grad."""
    attn = layer.self_attn
    tensors = (
        src,
        attn.in_proj_weight,
        attn.in_proj_bias,
        attn.out_proj.weight,
        attn.out_proj.bias,
        *(p for m in (layer.norm1, layer.norm2) for p in (m.weight, m.bias)),
        *(p for m in (layer.linear1, layer.linear2) for p in (m.weight, m.bias)),
    )
    return is_grad_enabled() and any(_requires_grad(t) for t in tensors)


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual and a
    LayerNorm (after, or before with ``norm_first``)."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model,
            nhead,
            dropout=dropout,
            bias=bias,
            batch_first=batch_first,
            **factory,
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def _fast_path(self, src: Tensor) -> bool:
        """Would torch run its fused encoder-layer kernel here?"""
        attn = self.self_attn
        return (
            mha.get_fastpath_enabled()
            and src.dim() == 3
            and not self.training
            and attn.batch_first
            and attn.in_proj_bias is not None
            and attn._qkv_same_embed_dim
            and bool(self.activation_relu_or_gelu)
            and self.norm1.eps == self.norm2.eps
            and attn.num_heads % 2 == 0
            and not _hooked(self)
            and not _needs_grad(src, self)
        )

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            _none_or_dtype(src_mask),
            "src_mask",
            src.dtype,
        )
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, False)
        fused = self._fast_path(src)
        x = src
        if self.norm_first:
            x = x + self._sa_block(
                self.norm1(x), src_mask, src_key_padding_mask, is_causal, fused
            )
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(
                x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal, fused)
            )
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(
        self,
        x: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
        fused: bool = False,
    ) -> Tensor:
        if fused:  # torch's fused layer: no hooks run, so none are skipped here
            x = self.self_attn._attend(
                x, x, x, key_padding_mask, False, attn_mask, True, is_causal, True
            )[0]
        else:
            x = self.self_attn(
                x,
                x,
                x,
                attn_mask=attn_mask,
                key_padding_mask=key_padding_mask,
                need_weights=False,
                is_causal=is_causal,
            )[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's memory, then a feed-forward
    block, each with a residual and a LayerNorm."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model,
            nhead,
            dropout=dropout,
            batch_first=batch_first,
            bias=bias,
            **factory,
        )
        self.multihead_attn = MultiheadAttention(
            d_model,
            nhead,
            dropout=dropout,
            batch_first=batch_first,
            bias=bias,
            **factory,
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(
                self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal
            )
            x = x + self._mha_block(
                self.norm2(x),
                memory,
                memory_mask,
                memory_key_padding_mask,
                memory_is_causal,
            )
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(
                x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            )
            x = self.norm2(
                x
                + self._mha_block(
                    x, memory, memory_mask, memory_key_padding_mask, memory_is_causal
                )
            )
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _why_not_nested(layer: Any) -> str:
    """torch's reason an encoder cannot use nested tensors, or ''."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    checks = (
        (layer.norm_first, f"{name}.norm_first was True"),
        (
            not attn.batch_first,
            f"{name}.self_attn.batch_first was not True(use batch_first for better "
            "inference performance)",
        ),
        (
            not attn._qkv_same_embed_dim,
            f"{name}.self_attn._qkv_same_embed_dim was not True",
        ),
        (attn.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
        (
            not layer.activation_relu_or_gelu,
            f"{name}.activation_relu_or_gelu was not True",
        ),
        (
            layer.norm1.eps != layer.norm2.eps,
            f"{name}.norm1.eps was not equal to {name}.norm2.eps",
        ),
        (attn.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd"),
    )
    return next((why for failed, why in checks if failed), "")


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer``, then ``norm`` if given."""

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_not_nested(encoder_layer)
        if enable_nested_tensor and why:
            warnings.warn(
                "enable_nested_tensor is True, but self.use_nested_tensor is False "
                f"because {why}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def _nested(self, src: Tensor, padding: Tensor | None, mask: Any) -> bool:
        """Would torch run the layers on a nested tensor (padding dropped, zeros
        put back at the end)?"""
        first = self.layers[0]
        if not (self.use_nested_tensor and mha.get_fastpath_enabled()):
            return False
        if first.training or src.dim() != 3:
            return False
        if padding is None or mask is not None:
            return False
        if self.mask_check:  # left aligned: each row's valid keys come first
            valid = padding == 0  # torch: the (float) mask's logical_not()
            counts = valid.sum(-1, keepdim=True)
            steps = creation.arange(valid.shape[-1])
            if not bool(((steps < counts) == valid).all()):
                return False
        return not _needs_grad(src, first)

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            _none_or_dtype(mask),
            "mask",
            src.dtype,
        )
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, False)
        nested = self._nested(src, src_key_padding_mask, mask)
        batch_first = self.layers[0].self_attn.batch_first
        seq_len = _get_seq_len(src, batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for mod in self.layers:
            output = mod(
                output,
                src_mask=mask,
                is_causal=is_causal,
                src_key_padding_mask=src_key_padding_mask,
            )
        if nested:  # torch's to_padded_tensor(0.0): padded positions are zeros
            output = output.masked_fill((src_key_padding_mask != 0).unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer``, then ``norm`` if given."""

    def __init__(
        self,
        decoder_layer: TransformerDecoderLayer,
        num_layers: int,
        norm: Module | None = None,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """``nn.Transformer``: an encoder and a decoder stack, each with a final
    LayerNorm, every matrix Xavier-uniform."""

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        custom_encoder: Any | None = None,
        custom_decoder: Any | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        layer_args = (
            d_model,
            nhead,
            dim_feedforward,
            dropout,
            activation,
            layer_norm_eps,
            batch_first,
            norm_first,
            bias,
        )
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, **factory),
                num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory),
            )
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, **factory),
                num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory),
            )
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        batch = 0 if self.batch_first else 1
        if src.dim() == 3 and src.size(batch) != tgt.size(batch):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError(
                "the feature number of src and tgt must be equal to d_model"
            )
        memory = self.encoder(
            src,
            mask=src_mask,
            src_key_padding_mask=src_key_padding_mask,
            is_causal=src_is_causal,
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(
        sz: int, device: Any = None, dtype: Any = None
    ) -> Tensor:
        """(sz, sz): -inf above the diagonal (future positions), 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
