"""Blitz 4: ``torchvision.transforms`` -- ``Compose``, ``ToTensor``, ``Normalize``.

Per-sample transforms run in NumPy on the host (as torchvision's run on the CPU);
the DataLoader moves whole batches to JAX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxblitz.compat.creation import from_numpy
from jaxblitz.compat.tensor import Tensor


def _host(t: Tensor) -> np.ndarray:
    return t._host()


class Compose:
    def __init__(self, transforms: Sequence[Any]):
        self.transforms = list(transforms)

    def __call__(self, img: Any) -> Any:
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"Compose({body}\n)"


class ToTensor:
    """HWC uint8 image (NumPy array or PIL image) -> CHW float32 in [0, 1]."""

    def __call__(self, pic: Any) -> Tensor:
        array = np.asarray(pic)
        if array.ndim == 2:
            array = array[:, :, None]
        chw = np.ascontiguousarray(array.transpose(2, 0, 1))
        if chw.dtype == np.uint8:
            chw = chw.astype(np.float32) / 255.0
        return from_numpy(chw.astype(np.float32, copy=False))

    def __repr__(self) -> str:
        return "ToTensor()"


class Normalize:
    """``(x - mean) / std`` per channel."""

    def __init__(
        self, mean: Sequence[float], std: Sequence[float], inplace: bool = False
    ):
        self.mean, self.std = tuple(mean), tuple(std)

    def __call__(self, tensor: Tensor) -> Tensor:
        x = _host(tensor)
        mean = np.asarray(self.mean, x.dtype).reshape(-1, 1, 1)
        std = np.asarray(self.std, x.dtype).reshape(-1, 1, 1)
        return from_numpy(((x - mean) / std).astype(x.dtype))

    def __repr__(self) -> str:
        return f"Normalize(mean={self.mean}, std={self.std})"
