"""Blitz 4 (show some images): ``torchvision.utils.make_grid`` and ``save_image``
(pytorch/examples vae and dcgan write their samples with it)."""

from __future__ import annotations

import math
import os
from typing import IO, Any

import numpy as np

from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor.creation import tensor as _tensor


def _norm(x: np.ndarray, value_range: tuple[float, float] | None) -> np.ndarray:
    # torch: img.clamp_(min=low, max=high); img.sub_(low).div_(max(high - low, 1e-5))
    low, high = value_range if value_range is not None else (x.min(), x.max())
    x = np.clip(x, low, high)
    return ((x - low) / max(float(high - low), 1e-5)).astype(x.dtype)


def _array(tensor: Any) -> np.ndarray:
    if isinstance(tensor, Tensor):
        return np.asarray(tensor.detach()._data)
    if isinstance(tensor, list | tuple) and all(isinstance(t, Tensor) for t in tensor):
        return np.stack([np.asarray(t.detach()._data) for t in tensor])
    raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")


def _grid(
    tensor: Any,
    nrow: int = 8,
    padding: int = 2,
    normalize: bool = False,
    value_range: tuple[float, float] | None = None,
    scale_each: bool = False,
    pad_value: float = 0.0,
) -> np.ndarray:
    x = _array(tensor)
    if x.ndim == 2:  # a single image H x W
        x = x[None]
    if x.ndim == 3:  # a single image
        x = np.concatenate([x, x, x]) if x.shape[0] == 1 else x
        x = x[None]
    if x.ndim == 4 and x.shape[1] == 1:  # single-channel images
        x = np.concatenate([x, x, x], axis=1)
    if normalize:
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. "
                            "min and max are numbers")  # fmt: skip
        if scale_each:
            x = np.stack([_norm(img, value_range) for img in x])
        else:
            x = _norm(x, value_range)
    if x.shape[0] == 1:
        return x[0]
    b, c, h, w = x.shape
    cols = min(nrow, b)
    rows = math.ceil(b / cols)
    hp, wp = h + padding, w + padding
    grid = np.full((c, rows * hp + padding, cols * wp + padding), pad_value, x.dtype)
    for k in range(b):
        r, col = divmod(k, cols)
        top, left = r * hp + padding, col * wp + padding
        grid[:, top : top + h, left : left + w] = x[k]
    return grid


def make_grid(
    tensor: Any,
    nrow: int = 8,
    padding: int = 2,
    normalize: bool = False,
    value_range: tuple[float, float] | None = None,
    scale_each: bool = False,
    pad_value: float = 0.0,
) -> Tensor:
    """Images ``(B, C, H, W)`` tiled ``nrow`` per row -> ``(3, H', W')``."""
    return _tensor(
        _grid(tensor, nrow, padding, normalize, value_range, scale_each, pad_value)
    )


def save_image(
    tensor: Any, fp: str | os.PathLike | IO[bytes], format: str | None = None, **kwargs
) -> None:
    """``make_grid(tensor, **kwargs)`` written as an 8-bit image by PIL."""
    from PIL import Image

    grid = _grid(tensor, **kwargs)
    # torch: grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to(torch.uint8)
    pixels = np.clip(grid * 255 + 0.5, 0, 255).transpose(1, 2, 0).astype(np.uint8)
    Image.fromarray(pixels).save(fp, format=format)
