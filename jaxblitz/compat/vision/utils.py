"""Blitz 4 (show some images): ``torchvision.utils.make_grid``."""

from __future__ import annotations

import math

import numpy as np

from jaxblitz.compat.creation import tensor as _tensor
from jaxblitz.compat.tensor import Tensor


def make_grid(
    tensor: Tensor,
    nrow: int = 8,
    padding: int = 2,
    normalize: bool = False,
    pad_value: float = 0.0,
    **_,
) -> Tensor:
    """Images ``(B, C, H, W)`` tiled ``nrow`` per row -> ``(3, H', W')``."""
    x = (
        np.asarray(tensor._data)
        if isinstance(tensor, Tensor)
        else np.stack([np.asarray(t._data) for t in tensor])
    )
    if x.ndim == 2:
        x = x[None]
    if x.ndim == 3:
        x = x[None]
    if x.shape[1] == 1:
        x = np.concatenate([x, x, x], axis=1)
    if normalize:
        x = (x - x.min()) / max(float(x.max() - x.min()), 1e-5)
    if x.shape[0] == 1:
        return _tensor(x[0])
    b, c, h, w = x.shape
    cols = min(nrow, b)
    rows = math.ceil(b / cols)
    hp, wp = h + padding, w + padding
    grid = np.full((c, rows * hp + padding, cols * wp + padding), pad_value, x.dtype)
    for k in range(b):
        r, col = divmod(k, cols)
        top, left = r * hp + padding, col * wp + padding
        grid[:, top : top + h, left : left + w] = x[k]
    return _tensor(grid)
