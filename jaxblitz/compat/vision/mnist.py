"""Blitz 4, Training a classifier: ``torchvision.datasets.MNIST`` and
``FashionMNIST`` (pytorch/examples ``mnist/main.py`` runs on them unchanged).

torchvision's layout: ``root/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte``
(``root/FashionMNIST/raw/...``), the files torchvision extracts after a download;
the ``.gz`` files it downloads are read as they are, never extracted. The idx
files are parsed by :mod:`jaxblitz.data.idx` (headers and sizes checked). Items
are ``(PIL image of mode 'L', int)``, as torchvision's; ``.data`` is a uint8
tensor ``(N, 28, 28)``, ``.targets`` an int64 tensor. Nothing is downloaded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor.creation import from_numpy
from jaxblitz.compat.vision._base import ImageDataset, not_found
from jaxblitz.data import fetch, idx

_KINDS = ("images-idx3-ubyte", "labels-idx1-ubyte")


def host_index(array: np.ndarray, index: Any) -> Any:
    """``array[index]``, out of range raising torch's IndexError."""
    try:
        return array[index]
    except IndexError:
        raise IndexError(
            f"index {index} is out of bounds for dimension 0 with size {len(array)}"
        ) from None


class MNIST(ImageDataset):
    """``torchvision.datasets.MNIST(root, train, transform, target_transform,
    download)``, read from ``root/MNIST/raw``."""

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/"]
    classes = [
        "0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
        "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine",
    ]  # fmt: skip
    _core_name = "mnist"  # jaxblitz.data's name, for the published checksums

    def __init__(
        self,
        root: str | os.PathLike,
        train: bool = True,
        transform: Any = None,
        target_transform: Any = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        pixels, labels = self._load_data(download)
        self._pixels, self._labels = pixels, labels  # host copies for __getitem__
        self.data: Tensor = from_numpy(pixels)  # (N, 28, 28) uint8, shares memory
        self.targets: Tensor = from_numpy(labels)  # (N,) int64
        self._seen = (self.data, self.targets)  # what the host copies hold

    @property
    def raw_folder(self) -> str:
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def processed_folder(self) -> str:
        return os.path.join(self.root, self.__class__.__name__, "processed")

    @property
    def class_to_idx(self) -> dict[str, int]:
        return {_class: i for i, _class in enumerate(self.classes)}

    def _load_data(self, download: bool) -> tuple[np.ndarray, np.ndarray]:
        stem = "train" if self.train else "t10k"
        folder = Path(self.raw_folder)
        files = []
        for kind in _KINDS:
            base = folder / f"{stem}-{kind}"
            gz = base.with_name(base.name + ".gz")
            found = base if base.is_file() else gz if gz.is_file() else None
            if found is None:
                names = [f"{stem}-{k}" for k in _KINDS]
                raise not_found(
                    self.__class__.__name__,
                    folder,
                    [f"{n} (or {n}.gz)" for n in names],
                    self.mirrors[0],
                    download,
                )
            fetch.verify(self._core_name, found)  # a .gz of the published size
            files.append(found)
        pixels, labels = idx.read_idx_pair(*files)  # (N, 1, 28, 28) uint8, int32
        return np.ascontiguousarray(pixels[:, 0]), labels.astype(np.int64)

    def _sample(self, index: int) -> tuple[Any, Any]:
        # torch: img, target = self.data[index], int(self.targets[index])
        if self._seen[0] is not self.data or self._seen[1] is not self.targets:
            # .data or .targets replaced (a subset, say): read the new ones
            self._pixels, self._labels = np.asarray(self.data), np.asarray(self.targets)
            self._seen = (self.data, self.targets)
        img = Image.fromarray(host_index(self._pixels, index))  # mode 'L'
        return img, int(host_index(self._labels, index))


class FashionMNIST(MNIST):
    """``torchvision.datasets.FashionMNIST``, read from ``root/FashionMNIST/raw``."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    classes = [
        "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
        "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
    ]  # fmt: skip
    _core_name = "fashion_mnist"
