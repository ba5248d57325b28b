"""What ``Conv2d`` and ``ConvTranspose2d`` share, as torch's ``_ConvNd`` does."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from jaxblitz.compat.autograd.graph import apply


def _pair(v: Any) -> tuple:
    return tuple(v) if isinstance(v, tuple | list) else (v, v)


def conv_extra_repr(conv: Any) -> str:
    """torch's ``_ConvNd.extra_repr``: the arguments that differ from defaults."""
    text = (
        f"{conv.in_channels}, {conv.out_channels}, "
        f"kernel_size={conv.kernel_size}, stride={conv.stride}"
    )
    if conv.padding != (0, 0):
        text += f", padding={conv.padding}"
    if conv.dilation != (1, 1):
        text += f", dilation={conv.dilation}"
    if getattr(conv, "output_padding", (0, 0)) != (0, 0):
        text += f", output_padding={conv.output_padding}"
    if conv.groups != 1:
        text += f", groups={conv.groups}"
    text += "" if conv.bias is not None else ", bias=False"
    if getattr(conv, "padding_mode", "zeros") != "zeros":
        text += f", padding_mode={conv.padding_mode}"
    return text


# torch's padding_mode -> (jnp.pad's mode, the grad_fn torch's F.pad records)
_MODES = {
    "reflect": ("reflect", "ReflectionPad2DBackward0"),
    "replicate": ("edge", "ReplicationPad2DBackward0"),
    "circular": ("wrap", "CopySlices"),
}


def mode_pads(padding: Any, kernel_size: tuple, dilation: tuple) -> tuple:
    """((top, bottom), (left, right)) that torch's ``_ConvNd`` gives ``F.pad`` for a
    non-'zeros' padding_mode (its ``_reversed_padding_repeated_twice``)."""
    if padding == "valid":
        return ((0, 0), (0, 0))
    if padding == "same":  # the odd one on the bottom/right, as conv2d's 'same'
        totals = [d * (k - 1) for d, k in zip(dilation, kernel_size, strict=True)]
        return tuple((t // 2, t - t // 2) for t in totals)
    return tuple((p, p) for p in padding)


def _mode_pad_fn(x, *, pads, mode):
    return jnp.pad(x, ((0, 0),) * (x.ndim - 2) + pads, mode=mode)


def mode_pad(input: Any, pads: tuple, padding_mode: str) -> Any:
    """torch's ``F.pad(input, ..., mode=padding_mode)`` over the last two axes of a
    (C, H, W) or (N, C, H, W) input, with its checks on the widths."""
    d = input.dim()
    if d < 2:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input "
            f"dimension but got padding length 4 and input of dimension {d}"
        )
    if d not in (3, 4):
        raise NotImplementedError(
            f"Padding size 4 is not supported for {d}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    for axis, argument in ((-1, 4), (-2, 6)):  # F.pad checks the width axis first
        lo, hi = pads[axis]
        n = input.shape[axis]
        if padding_mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(
                f"Argument #{argument}: Padding size should be less than the "
                "corresponding input dimension, but got: padding "
                f"({lo}, {hi}) at dimension {d + axis} of input {list(input.shape)}"
            )
        if padding_mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
    mode, name = _MODES[padding_mode]
    return apply(name, _mode_pad_fn, input, pads=pads, mode=mode)
