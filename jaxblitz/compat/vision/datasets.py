"""Blitz 4: ``torchvision.datasets.CIFAR10`` (backed by ``jaxblitz.data``) and
``Digits``, a bundled offline stand-in shaped like CIFAR-10.

Samples are ``(image, label)`` with ``image`` an HWC uint8 NumPy array (what
torchvision's PIL image converts to), so ``transforms.ToTensor()`` applies.
No file is ever downloaded here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
        try:
            from jaxblitz import data
        except ImportError as err:
            raise RuntimeError(
                "CIFAR10 is loaded through jaxblitz.data, which is not available in "
                "this installation; use vision.datasets.Digits offline"
            ) from err
        split = "train" if train else "test"
        try:
            images, labels = data.load("cifar10", split, root=root)[:2]
        except Exception as err:  # no network, no prepared files
            raise RuntimeError(
                f"CIFAR-10 ({split}) is not available under {root!r} and jaxblitz "
                f"does not download here ({type(err).__name__}: {err}). Prepare it "
                "with tensorflow-datasets, or use vision.datasets.Digits, the bundled "
                "offline stand-in."
            ) from err
        super().__init__(
            _to_hwc_uint8(np.asarray(images)),
            np.asarray(labels),
            transform,
            target_transform,
        )


class Digits(_ImageDataset):
    """scikit-learn's bundled 8x8 digits, upscaled to 32x32 RGB (1797 images).

    Same shapes as CIFAR-10 (``(32, 32, 3)`` uint8, 10 classes); the first 80% is
    the train split.
    """

    classes = tuple(str(i) for i in range(10))

    def __init__(
        self,
        root: str = "",
        train: bool = True,
        transform: Any = None,
        target_transform: Any = None,
        download: bool = False,
    ):
        from sklearn.datasets import load_digits

        bunch = load_digits()
        images = (bunch.images / 16.0 * 255).astype(np.uint8)  # (N, 8, 8)
        images = images.repeat(4, axis=1).repeat(4, axis=2)[..., None].repeat(3, -1)
        cut = int(len(images) * 0.8)
        part = slice(0, cut) if train else slice(cut, None)
        super().__init__(images[part], bunch.target[part], transform, target_transform)
