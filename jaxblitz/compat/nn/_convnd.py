"""What the convolutions of every rank share, as torch's ``_ConvNd`` does: their
argument tuples, repr, the one JAX convolution and the non-'zeros' padding modes."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from jaxblitz.compat.autograd.graph import apply


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


# torch's padding_mode -> (jnp.pad's mode, the grad_fn torch's F.pad records)
_MODES = {
    "reflect": ("reflect", "ReflectionPad{}DBackward0"),
    "replicate": ("edge", "ReplicationPad{}DBackward0"),
    "circular": ("wrap", "CopySlices"),
}


def mode_pads(padding: Any, kernel_size: tuple, dilation: tuple) -> tuple:
    """((lo, hi), ...) per spatial axis that torch's ``_ConvNd`` gives ``F.pad``
    for a non-'zeros' padding_mode (its ``_reversed_padding_repeated_twice``)."""
    if padding == "valid":
        return ((0, 0),) * len(kernel_size)
    if padding == "same":  # the odd one on the high side, as conv's 'same'
        totals = [d * (k - 1) for d, k in zip(dilation, kernel_size, strict=True)]
        return tuple((t // 2, t - t // 2) for t in totals)
    return tuple((p, p) for p in padding)


def _mode_pad_fn(x, *, pads, mode):
    return jnp.pad(x, ((0, 0),) * (x.ndim - len(pads)) + pads, mode=mode)


def mode_pad(input: Any, pads: tuple, padding_mode: str) -> Any:
    """torch's ``F.pad(input, ..., mode=padding_mode)`` over the last ``len(pads)``
    axes of an unbatched or batched input, with its checks on the widths."""
    d, n = input.dim(), len(pads)
    if 2 * n > 2 * d:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input "
            f"dimension but got padding length {2 * n} and input of dimension {d}"
        )
    if d not in (n + 1, n + 2):
        raise NotImplementedError(
            f"Padding size {2 * n} is not supported for {d}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    for j in range(n):  # F.pad checks the last axis first
        axis, argument = -1 - j, 4 + 2 * j
        lo, hi = pads[axis]
        size = input.shape[axis]
        if padding_mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(
                f"Argument #{argument}: Padding size should be less than the "
                "corresponding input dimension, but got: padding "
                f"({lo}, {hi}) at dimension {d + axis} of input {list(input.shape)}"
            )
        if padding_mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
    mode, name = _MODES[padding_mode]
    return apply(name.format(n), _mode_pad_fn, input, pads=pads, mode=mode)
