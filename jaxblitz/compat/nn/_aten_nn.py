"""Blitz 3, "Neural Networks": the ``torch.*`` spellings of the layers' ATen ops
-- ``torch.dropout(input, p, train)`` and its kin, ``torch.native_dropout``,
``torch.embedding(weight, indices)``, ``torch.embedding_bag`` (ATen's four
results), ``torch.constant_pad_nd``, ``torch.convolution`` -- with ATen's
positional signatures, over compat's ``nn.functional`` (the normalisations are
in :mod:`._aten_norms`).

They differ from ``nn.functional`` as ATen does: ``p`` outside [0, 1] is a
RuntimeError, ``embedding``'s ``padding_idx=-1`` is none, the argument lists of
``convolution`` are sequences. This module loads after the Tensor class (it needs
``compat.nn``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from jaxblitz.compat.autograd.grad_mode import is_grad_enabled
from jaxblitz.compat.autograd.graph import apply, run
from jaxblitz.compat.nn import functional as F
from jaxblitz.compat.nn.dropout import _dropout
from jaxblitz.compat.nn.sparse import max_positions
from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.ops._funnel import _require_tensors
from jaxblitz.compat.tensor import Tensor, _dtype
from jaxblitz.compat.tensor.creation import ones_like, rand

# -- dropout -------------------------------------------------------------------------


def _check_p(p: float) -> None:
    if p < 0 or p > 1:  # ATen's wording, a RuntimeError (F's is a ValueError)
        raise RuntimeError(
            f"dropout probability has to be between 0 and 1, but got {p}"
        )


def _aten_dropout(name: str, feature: bool, alpha: bool, inplace: bool) -> Any:
    def dropout(input: Tensor, p: float, train: bool) -> Tensor:
        _require_tensors(name, input)
        _check_p(p)
        return _dropout(input, p, train, inplace, feature=feature, alpha=alpha)

    dropout.__name__ = dropout.__qualname__ = name
    kind = "per (N, C) channel" if feature else "per element"
    dropout.__doc__ = (
        f"``torch.{name}(input, p, train)``: {'alpha ' if alpha else ''}dropout "
        f"{kind}{', in place' if inplace else ''}; not training, the input itself."
    )
    return dropout


for _feature in (False, True):
    for _alpha in (False, True):
        for _inplace in (False, True):
            _name = (
                ("feature_" if _feature else "")
                + ("alpha_" if _alpha else "")
                + "dropout"
                + ("_" if _inplace else "")
            )
            declare.alias(_name, _aten_dropout(_name, _feature, _alpha, _inplace))


def _native_dropout_fn(x, keep, *, scale):
    return x * keep.astype(x.dtype) * scale


@declare
def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple:
    """``torch.native_dropout``: ``(output, mask)``, the mask bool (True kept);
    ``train=None`` trains. Not training: a copy and an all-True mask."""
    _require_tensors("native_dropout", input)
    if train is not None and not train:
        return input.clone(), ones_like(input, dtype=_dtype.bool)
    if p < 0 or p > 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p}")
    where = _dtype.tensor_device(input)
    keep = rand(*input.shape, dtype=input.dtype, device=where) >= p
    scale = 0.0 if p == 1 else 1.0 / (1 - p)
    out = apply("NativeDropoutBackward0", _native_dropout_fn, input, keep, scale=scale)
    return out, keep


# -- embedding -----------------------------------------------------------------------


@declare
def embedding(
    weight: Tensor,
    indices: Tensor,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """``torch.embedding(weight, indices, padding_idx=-1, ...)``: weight first;
    a negative ``padding_idx`` is none (``F.embedding`` counts it from the end)."""
    _require_tensors("embedding", weight)
    return F.embedding(
        indices,
        weight,
        padding_idx=None if padding_idx < 0 else padding_idx,
        scale_grad_by_freq=scale_grad_by_freq,
        sparse=sparse,
    )


_BAG_MODES = {0: "sum", 1: "mean", 2: "max"}


def _bag_extras_fn(
    indices, offsets, weight, *, mode, include_last_offset, padding_idx, forward_only
):
    """ATen's other three results: ``offset2bag`` (each index's bag; empty for a
    sum without padding), ``bag_size`` (indices counted per bag; for a sum,
    zeros: one per offset where nothing requires grad, ATen's forward-only
    kernel, else one per bag) and ``max_indices`` (the rows a max took; else
    ``bag_size`` again)."""
    starts = offsets[:-1] if include_last_offset else offsets
    bags, n = starts.shape[0], indices.shape[0]
    owner = jnp.searchsorted(starts, jnp.arange(n, dtype=starts.dtype), side="right")
    owner = owner.astype(jnp.int64) - 1
    counted = jnp.ones(n, bool) if padding_idx is None else indices != padding_idx
    size = jax.ops.segment_sum(counted.astype(jnp.int64), owner, num_segments=bags)
    if mode == 0:
        zeros = jnp.zeros(offsets.shape[0] if forward_only else bags, jnp.int64)
        return owner[: 0 if padding_idx is None else n], zeros, zeros
    if mode == 1:
        return owner, size, size
    if not n:
        return owner, size, jnp.zeros((bags, weight.shape[1]), jnp.int64)
    chosen = max_positions(weight[indices], counted, owner, bags)  # (bags, D)
    rows = jnp.where(chosen < n, indices[jnp.minimum(chosen, n - 1)], 0)
    return owner, size, rows.astype(jnp.int64)


@declare
def embedding_bag(
    weight: Tensor,
    indices: Tensor,
    offsets: Tensor,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> tuple:
    """``torch.embedding_bag(weight, indices, offsets, ...)``: ATen's four
    results -- the bags, ``offset2bag``, ``bag_size``, ``max_indices`` -- with
    ``mode`` an int (0 sum, 1 mean, 2 max) and 1-D indices."""
    _require_tensors("embedding_bag", weight)
    if not isinstance(offsets, Tensor):
        raise TypeError(
            "embedding_bag(): argument 'offsets' (position 3) must be Tensor, not "
            f"{type(offsets).__name__}"
        )
    if indices.dim() != 1 or mode not in _BAG_MODES:
        raise NotImplementedError(
            "torch.embedding_bag is supported by jaxblitz.compat for 1-D indices and "
            "mode 0, 1 or 2: use nn.functional.embedding_bag"
        )
    if padding_idx is not None:
        padding_idx %= weight.shape[0]  # ATen's, as F.embedding_bag's
    out = F.embedding_bag(
        indices,
        weight,
        offsets,
        scale_grad_by_freq=scale_grad_by_freq,
        mode=_BAG_MODES[mode],
        sparse=sparse,
        per_sample_weights=per_sample_weights,
        include_last_offset=include_last_offset,
        padding_idx=padding_idx,
    )
    extras = run(
        _bag_extras_fn,
        indices._value(),
        offsets._value(),
        weight._value(),
        mode=mode,
        include_last_offset=include_last_offset,
        padding_idx=padding_idx,
        forward_only=not (
            weight.requires_grad
            or (per_sample_weights is not None and per_sample_weights.requires_grad)
        ),
    )
    return (out, *(Tensor._wrap(e) for e in extras))


# -- padding and convolution ---------------------------------------------------------


@declare
def constant_pad_nd(input: Tensor, pad: Any, value: Any = 0) -> Tensor:
    """``torch.constant_pad_nd``: ``F.pad(input, pad, value=value)``; a value
    of another kind is cast to the input's dtype."""
    _require_tensors("constant_pad_nd", input)
    widths = list(pad)
    if len(widths) % 2:
        raise RuntimeError(
            f"Length of pad must be even but instead it equals {len(widths)}"
        )
    if len(widths) > 2 * input.dim():
        raise RuntimeError(
            "Length of pad should be no more than twice the number of dimensions of "
            f"the input. Pad length is {len(widths)}while the input has "
            f"{input.dim()}dimensions."
        )
    if not input.dtype.is_floating_point and not isinstance(value, bool | int):
        value = int(value)  # torch: the Scalar converted to the tensor's dtype
    return F.pad(input, widths, "constant", value)


def _int_list(what: str, position: int, value: Any) -> list[int]:
    if isinstance(value, int) or not isinstance(value, list | tuple):
        raise TypeError(
            f"convolution(): argument '{what}' (position {position}) must be tuple "
            f"of ints, not {type(value).__name__}"
        )
    return [int(v) for v in value]


@declare
def convolution(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    transposed: bool,
    output_padding: Any,
    groups: int,
) -> Tensor:
    """``torch.convolution``: ATen's one convolution, ``conv{1,2,3}d`` or (with
    ``transposed``) ``conv_transpose{1,2,3}d`` by the weight's dims; the input
    batched (no unbatched form), the argument lists sequences."""
    _require_tensors("convolution", input, weight)
    args = {
        "stride": _int_list("stride", 4, stride),
        "padding": _int_list("padding", 5, padding),
        "dilation": _int_list("dilation", 6, dilation),
        "output_padding": _int_list("output_padding", 8, output_padding),
    }
    n = weight.dim() - 2
    if input.dim() != weight.dim():
        raise RuntimeError(
            f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional "
            f"weight {list(weight.shape)}, but got {input.dim()}-dimensional input "
            f"of size {list(input.shape)} instead"
        )
    if n not in (1, 2, 3):
        raise NotImplementedError(
            f"torch.convolution with a {weight.dim()}-dimensional weight is not "
            "supported by jaxblitz.compat (1, 2 or 3 spatial dims)"
        )
    for name, values in args.items():
        if len(values) not in (1, n):
            raise RuntimeError(
                f"expected {name} to be a single integer value or a list of {n} "
                f"values to match the convolution dimensions, but got {name}="
                f"{values}"
            )
    if transposed:
        fn = getattr(F, f"conv_transpose{n}d")
        return fn(
            input,
            weight,
            bias,
            args["stride"],
            args["padding"],
            args["output_padding"],
            groups,
            args["dilation"],
        )
    recorded = is_grad_enabled() and any(
        t is not None and t.requires_grad for t in (input, weight, bias)
    )
    if recorded and any(args["output_padding"]):
        raise NotImplementedError(
            "torch.convolution with output_padding and transposed=False, of tensors "
            "that require grad, is not supported by jaxblitz.compat: torch's "
            "backward raises for it (output_padding is for transposed convolutions)"
        )
    fn = getattr(F, f"conv{n}d")
    return fn(
        input, weight, bias, args["stride"], args["padding"], args["dilation"], groups
    )


# torch: Tensor.hardshrink and Tensor.prelu. Set here: this module needs the Tensor
# class, so it loads after ops sets the declared methods onto MathMixin.
Tensor.hardshrink = F.hardshrink
Tensor.prelu = F.prelu
