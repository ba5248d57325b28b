"""Blitz 4 (training on GPU): ``nn.utils.convert_conv2d_weight_memory_format``
and its 3d twin -- each convolution's weight laid out in the given memory format
(``torch.channels_last``); the values stay, the strides change."""

from __future__ import annotations

from typing import Any

from jaxblitz.compat.nn.conv_transpose import ConvTranspose2d, ConvTranspose3d
from jaxblitz.compat.nn.layers import Conv2d, Conv3d
from jaxblitz.compat.nn.module import Module


def _convert(module: Module, kinds: tuple[type, ...], memory_format: Any) -> Module:
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, kinds, memory_format)
    return module


def convert_conv2d_weight_memory_format(module: Module, memory_format: Any) -> Module:
    """``module``, its Conv2d and ConvTranspose2d weights in ``memory_format``."""
    return _convert(module, (Conv2d, ConvTranspose2d), memory_format)


def convert_conv3d_weight_memory_format(module: Module, memory_format: Any) -> Module:
    """``module``, its Conv3d and ConvTranspose3d weights in ``memory_format``."""
    return _convert(module, (Conv3d, ConvTranspose3d), memory_format)
