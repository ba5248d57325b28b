"""What the convolutions of every rank share, as torch's ``_ConvNd`` does: their
argument tuples, repr, the one JAX convolution and the non-'zeros' padding modes."""

from __future__ import annotations

from typing import Any

import jax


def _ntuple(n: int):
    """torch's ``_ntuple``: a sequence as a tuple, anything else ``n`` times over."""

    def parse(v: Any) -> tuple:
        return tuple(v) if isinstance(v, tuple | list) else (v,) * n

    return parse


_single, _pair, _triple = _ntuple(1), _ntuple(2), _ntuple(3)


def conv_extra_repr(conv: Any) -> str:
    """torch's ``_ConvNd.extra_repr``: the arguments that differ from defaults."""
    text = (
        f"{conv.in_channels}, {conv.out_channels}, "
        f"kernel_size={conv.kernel_size}, stride={conv.stride}"
    )
    if conv.padding != (0,) * len(conv.padding):
        text += f", padding={conv.padding}"
    if conv.dilation != (1,) * len(conv.dilation):
        text += f", dilation={conv.dilation}"
    op = getattr(conv, "output_padding", ())
    if op != (0,) * len(op):
        text += f", output_padding={conv.output_padding}"
    if conv.groups != 1:
        text += f", groups={conv.groups}"
    text += "" if conv.bias is not None else ", bias=False"
    if getattr(conv, "padding_mode", "zeros") != "zeros":
        text += f", padding_mode={conv.padding_mode}"
    return text


def conv_nd_fn(
    x, weight, bias, *, stride, padding, lhs_dilation, dilation, groups, precision
):
    """(N, C, *spatial) * (O, I/groups, *kernel): ``lax.conv_general_dilated`` of
    any rank (``precision``: torch's float32 flags on this device), bias added."""
    y = jax.lax.conv_general_dilated(
        x,
        weight,
        window_strides=stride,
        padding=padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=dilation,
        feature_group_count=groups,
        precision=precision,
    )
    if bias is None:
        return y
    return y + bias.reshape(-1, *(1,) * (y.ndim - 2))


def mode_pads(padding: Any, kernel_size: tuple, dilation: tuple) -> tuple:
    """((lo, hi), ...) per spatial axis that torch's ``_ConvNd`` gives ``F.pad``
    for a non-'zeros' padding_mode (its ``_reversed_padding_repeated_twice``)."""
    if padding == "valid":
        return ((0, 0),) * len(kernel_size)
    if padding == "same":  # the odd one on the high side, as conv's 'same'
        totals = [d * (k - 1) for d, k in zip(dilation, kernel_size, strict=True)]
        return tuple((t // 2, t - t // 2) for t in totals)
    return tuple((p, p) for p in padding)
