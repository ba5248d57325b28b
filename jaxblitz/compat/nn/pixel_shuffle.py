"""Blitz 3, "Neural Networks" (beyond it: the super-resolution example):
``torch.nn.PixelShuffle`` and ``PixelUnshuffle`` and their ``nn.functional``
twins -- channels moved into space and back, (*, C*r*r, H, W) <-> (*, C, H*r, W*r),
each one recorded op (``PixelShuffleBackward0``, ``PixelUnshuffleBackward0``)."""

from __future__ import annotations

from typing import Any

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.tensor import Tensor

# -- pure JAX functions --------------------------------------------------------------


def _shuffle_fn(x, *, r):
    *batch, c, h, w = x.shape
    n = len(batch)
    x = x.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)  # (*, C, H, r, W, r)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def _unshuffle_fn(x, *, r):
    *batch, c, h, w = x.shape
    n = len(batch)
    x = x.reshape(*batch, c, h // r, r, w // r, r)
    x = x.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)  # (*, C, r, r, H, W)
    return x.reshape(*batch, c * r * r, h // r, w // r)


# -- torch.nn.functional -------------------------------------------------------------


def _check(name: str, input: Tensor, factor: Any, arg: str) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    if isinstance(factor, bool) or not isinstance(factor, int):
        raise TypeError(
            f"{name}(): argument '{arg}' (position 2) must be int, not "
            f"{type(factor).__name__}"
        )
    if input.dim() < 3:
        raise RuntimeError(
            f"{name} expects input to have at least 3 dimensions, but got input "
            f"with {input.dim()} dimension(s)"
        )
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {arg}, but got {factor}")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r), ``r = upscale_factor``."""
    _check("pixel_shuffle", input, upscale_factor, "upscale_factor")
    r, c = upscale_factor, input.shape[-3]
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible "
            f"by the square of upscale_factor, but input.size(-3)={c} is not "
            f"divisible by {r * r}"
        )
    return apply("PixelShuffleBackward0", _shuffle_fn, input, r=r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W), ``r = downscale_factor``."""
    _check("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    r = downscale_factor
    for dim, side in ((-2, "height"), (-1, "width")):
        if input.shape[dim] % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {side} to be divisible by downscale_factor, "
                f"but input.size({dim})={input.shape[dim]} is not divisible by {r}"
            )
    return apply("PixelUnshuffleBackward0", _unshuffle_fn, input, r=r)


# -- torch.nn --------------------------------------------------------------------------


class PixelShuffle(Module):
    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
