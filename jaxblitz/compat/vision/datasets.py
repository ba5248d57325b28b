"""Blitz 4: ``torchvision.datasets.CIFAR10`` (backed by ``jaxblitz.data``) and
``Digits``, a bundled offline stand-in shaped like CIFAR-10.

Samples are ``(image, label)`` with ``image`` an HWC uint8 NumPy array (what
torchvision's PIL image converts to), so ``transforms.ToTensor()`` applies.
No file is ever downloaded here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxblitz import data
from jaxblitz.compat.utils.data import Dataset


class _ImageDataset(Dataset):
    classes: tuple[str, ...] = ()

    def __init__(
        self,
        images: np.ndarray,
        labels: np.ndarray,
        transform: Any,
        target_transform: Any = None,
    ):
        self.data, self.targets = images, [int(v) for v in labels]  # (N, H, W, C)
        self.transform, self.target_transform = transform, target_transform

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img, target = self.data[index], self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return len(self.data)


def _to_hwc_uint8(images: np.ndarray) -> np.ndarray:
    """The core's NCHW float images in [-1, 1] back to HWC uint8, torchvision's."""
    if images.dtype == np.uint8:
        return images if images.shape[-1] in (1, 3) else images.transpose(0, 2, 3, 1)
    hwc = images.transpose(0, 2, 3, 1)
    return np.clip(np.rint((hwc + 1) * 127.5), 0, 255).astype(np.uint8)


class CIFAR10(_ImageDataset):
    classes = (
        "airplane",
        "automobile",
        "bird",
        "cat",
        "deer",
        "dog",
        "frog",
        "horse",
        "ship",
        "truck",
    )

    def __init__(
        self,
        root: str,
        train: bool = True,
        transform: Any = None,
        target_transform: Any = None,
        download: bool = False,
    ):
        # A local archive under root, tensorflow-datasets, or a download (when
        # online); offline without a copy, the error says how to provide one.
        split = data.load("cifar10", "train" if train else "test", root)
        super().__init__(
            _to_hwc_uint8(split.images),
            split.labels,
            transform,
            target_transform,
        )


class Digits(_ImageDataset):
    """scikit-learn's bundled 8x8 digits, upscaled to 32x32 RGB (1797 images).

    Same shapes as CIFAR-10 (``(32, 32, 3)`` uint8, 10 classes) and the same
    seeded train/test split (1438/359) as ``jaxblitz.data.load("digits")``.
    """

    classes = data.DIGIT_CLASSES

    def __init__(
        self,
        root: str = "",
        train: bool = True,
        transform: Any = None,
        target_transform: Any = None,
        download: bool = False,
    ):
        split = data.load("digits", "train" if train else "test")
        images = _to_hwc_uint8(split.images).repeat(3, axis=-1)  # (N, 32, 32, 3)
        super().__init__(images, split.labels, transform, target_transform)
