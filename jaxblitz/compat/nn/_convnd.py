"""What ``Conv2d`` and ``ConvTranspose2d`` share, as torch's ``_ConvNd`` does."""

from __future__ import annotations

from typing import Any


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
    return text + ("" if conv.bias is not None else ", bias=False")
