"""Blitz 4, Training a classifier: ``torchvision.datasets`` -- ``CIFAR10``,
``MNIST``, ``FashionMNIST`` (in :mod:`.mnist`), ``ImageFolder`` and
``DatasetFolder`` (in :mod:`.folder`) and ``Digits``, a bundled offline
stand-in shaped like CIFAR-10.

``CIFAR10(root, train, transform, target_transform, download)`` reads what
torchvision leaves on disk, ``root/cifar-10-batches-py/`` (``data_batch_1..5``,
``test_batch``, ``batches.meta``), or, when only that is there, the
``root/cifar-10-python.tar.gz`` archive itself (read in one pass; nothing is
extracted or cached into ``root``). The pickles are read by
:mod:`jaxblitz.data.archives`' restricted unpickler, which builds only number
arrays and never runs code. Items are ``(PIL RGB image, int)``, ``.data`` is
``(N, 32, 32, 3)`` uint8 NumPy and ``.targets`` a list of ints, as torchvision's.
Nothing is ever downloaded: ``download=True`` uses the files already there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from jaxblitz import data as core_data
from jaxblitz.compat.vision._base import (
    ImageDataset,
    StandardTransform,
    VisionDataset,
    not_found,
)
from jaxblitz.compat.vision.folder import DatasetFolder, ImageFolder
from jaxblitz.compat.vision.mnist import MNIST, FashionMNIST, host_index
from jaxblitz.data import archives, fetch
from jaxblitz.data.limits import broken, decompressed, tar_members

__all__ = [
    "CIFAR10",
    "DatasetFolder",
    "Digits",
    "FakeData",
    "FashionMNIST",
    "ImageFolder",
    "MNIST",
    "StandardTransform",
    "VisionDataset",
]


class _ImageDataset(ImageDataset):
    """``.data`` (N, H, W, C) uint8 NumPy and ``.targets`` ints -> PIL images."""

    def _sample(self, index: int) -> tuple[Any, Any]:
        # torch: Image.fromarray(img), mode 'RGB'
        return Image.fromarray(host_index(self.data, index)), self.targets[index]


class CIFAR10(_ImageDataset):
    """``torchvision.datasets.CIFAR10``, read from ``root/cifar-10-batches-py``."""

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = archives.PYTHON_ARCHIVE
    train_list = [f"data_batch_{i}" for i in range(1, 6)]
    test_list = ["test_batch"]
    meta = {"filename": "batches.meta", "key": "label_names"}

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
        wanted = [*(self.train_list if train else self.test_list), "batches.meta"]
        folder = Path(self.root, self.base_folder)
        archive = Path(self.root, self.filename)
        if all((folder / name).is_file() for name in wanted):
            members = {name: _read_member(folder / name) for name in wanted}
            where = {name: folder / name for name in wanted}
        elif archive.is_file():
            fetch.verify("cifar10", archive)
            members = _archive_members(archive, set(wanted))
            where = dict.fromkeys(wanted, archive)
        else:
            raise not_found(
                "CIFAR10",
                folder,
                wanted,
                self.url,
                download,
                f" (or the archive {archive} they come in)",
            )
        split = [
            archives.python_batch(where[n], n, members[n]) for n in wanted[:-1]
        ]  # [(pixels (n, 3, 32, 32) uint8, labels int32)]
        # torch: np.vstack(self.data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))
        self.data = np.concatenate([p for p, _ in split]).transpose((0, 2, 3, 1))
        self.targets = [int(y) for _, labels in split for y in labels]
        self.classes = _class_names(where["batches.meta"], members["batches.meta"])
        self.class_to_idx = {_class: i for i, _class in enumerate(self.classes)}


def _read_member(path: Path) -> bytes:
    """One pickled batch file, read no further than a batch can hold."""
    with decompressed(
        path, archives.PYTHON_BATCH_BYTES, "a CIFAR-10 batch", "a pickle"
    ) as f:
        return f.read()


def _archive_members(archive: Path, wanted: set[str]) -> dict[str, bytes]:
    """The ``wanted`` members of ``cifar-10-python.tar.gz``, in one pass."""
    members = dict(
        tar_members(
            archive,
            lambda base: archives.PYTHON_BATCH_BYTES if base in wanted else None,
            most=archives.PYTHON_BATCH_BYTES,
            total=6 * archives.PYTHON_BATCH_BYTES + (1 << 20),
            count=archives.MAX_MEMBERS,
            what="a CIFAR-10 python archive",
        )
    )
    missing = sorted(wanted - set(members))
    if missing:
        raise broken(archive, f"is not a CIFAR-10 python archive: it lacks {missing}")
    return members


def _class_names(path: Path, raw: bytes) -> list[str]:
    """``batches.meta``'s ``label_names`` as str (torch: pickle.load latin1)."""
    names = archives.unpickle_batch(path, "batches.meta", raw).get(b"label_names")
    if not isinstance(names, list) or not all(
        isinstance(n, bytes | str) for n in names
    ):
        raise broken(path, "has no list of label_names in batches.meta")
    return [n.decode("latin-1") if isinstance(n, bytes) else n for n in names]


class Digits(_ImageDataset):
    """scikit-learn's bundled 8x8 digits, upscaled to 32x32 RGB (1797 images).

    Same shapes as CIFAR-10 (``(32, 32, 3)`` uint8 PIL RGB images, 10 classes)
    and the same seeded train/test split (1438/359) as
    ``jaxblitz.data.load("digits")``. Not in torchvision: jaxblitz's offline
    stand-in, so the Blitz runs with no dataset on disk.
    """

    classes = list(core_data.DIGIT_CLASSES)

    def __init__(
        self,
        root: str | os.PathLike | None = None,
        train: bool = True,
        transform: Any = None,
        target_transform: Any = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        split = core_data.load("digits", "train" if train else "test")
        # the core's NCHW float images in [-1, 1] back to HWC uint8
        hwc = split.images.transpose(0, 2, 3, 1)
        gray = np.clip(np.rint((hwc + 1) * 127.5), 0, 255).astype(np.uint8)
        self.data = gray.repeat(3, axis=-1)  # (N, 32, 32, 3)
        self.targets = [int(v) for v in split.labels]
        self.class_to_idx = {_class: i for i, _class in enumerate(self.classes)}


class FakeData(VisionDataset):
    """``torchvision.datasets.FakeData``: ``size`` random images, each drawn from a
    generator seeded with ``index + random_offset`` (the same image every time),
    as PIL images, with an int target below ``num_classes``.

    torch: ``torch.randn(*image_size)`` under ``torch.manual_seed(index +
    random_offset)``, then ``ToPILImage()`` (``mul(255).byte()``) -- the same
    recipe on compat's generator (another stream, so other pixels than torch's),
    which leaves the global generator untouched as torchvision does.
    """

    def __init__(
        self,
        size: int = 1000,
        image_size: tuple[int, ...] = (3, 224, 224),
        num_classes: int = 10,
        transform: Any = None,
        target_transform: Any = None,
        random_offset: int = 0,
    ) -> None:
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size, self.num_classes = size, num_classes
        self.image_size, self.random_offset = image_size, random_offset

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        from jaxblitz.compat.tensor.creation import Generator, randint, randn

        gen = Generator().manual_seed(index + self.random_offset)
        img = np.asarray(randn(*self.image_size, generator=gen)._data)
        target = int(randint(0, self.num_classes, (1,), generator=gen).item())
        # torch's ToPILImage: mul(255).byte() (wraps modulo 256), channels last
        pixels = (img * 255).astype(np.int64).astype(np.uint8)
        pixels = pixels.transpose(1, 2, 0) if pixels.ndim == 3 else pixels
        if pixels.ndim == 3 and pixels.shape[2] == 1:
            pixels = pixels[:, :, 0]
        return self._transformed(Image.fromarray(pixels), target)

    def __len__(self) -> int:
        return self.size
