"""Blitz 4, Training a classifier: loading and normalising CIFAR-10.

The Blitz's ``torchvision.datasets.CIFAR10(root, train, download=True,
transform=Compose([ToTensor(), Normalize((0.5,) * 3, (0.5,) * 3)]))`` and its
``DataLoader``, the JAX way: ``load`` returns a whole split as NumPy ``float32``
NCHW images in [-1, 1] with ``int32`` labels and the class names; ``batches``
iterates over it in an order drawn from an explicit key.

Datasets: ``cifar10`` (3x32x32), ``mnist`` and ``fashion_mnist`` (1x28x28 padded
to 32x32, the size the Blitz's LeNet expects) and ``digits`` (scikit-learn's
bundled 8x8 digits upscaled to 32x32; works on any machine, offline).

Where ``cifar10``, ``mnist`` and ``fashion_mnist`` come from, in this order:

1. ``data_dir`` (default ``$JAXBLITZ_DATA`` or ``~/.cache/jaxblitz``): for CIFAR-10
   ``cifar-10-python.tar.gz`` (torchvision's) or ``cifar-10-binary.tar.gz``
   (tfds's), decoded once and cached as ``.npy`` in ``data_dir/npy``; for MNIST
   and Fashion-MNIST the four idx files (``.gz`` or not) in ``data_dir/<name>``,
   ``data_dir`` itself or torchvision's ``data_dir/MNIST/raw`` layout.
   A file with the published size is checked against the published checksum.
2. tensorflow-datasets: a copy it already prepared, or with TensorFlow installed
   (the ``tf`` extra) and the network up, ``tfds.load(..., batch_size=-1)``.
3. A direct, checksum-verified download of the original files into ``data_dir``.

Offline with none of these, ``load`` fails in seconds, saying how to provide them.
A local file that is damaged or not what its name says is a ``DataFileError`` (a
``ValueError``) naming it; no file is decompressed beyond what its format holds.

Example::

    train_set = load("cifar10", "train")
    for images, labels in batches(train_set, 4, jax.random.key(0)):
        ...  # images (4, 3, 32, 32) float32, labels (4,) int32
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.data import archives, fetch, idx
from jaxblitz.data.digits import load_digits_split
from jaxblitz.data.limits import DataFileError

__all__ = [
    "DataFileError",
    "Dataset",
    "batches",
    "check_dataset",
    "check_labels",
    "epoch_order",
    "load",
    "normalize",
    "NAMES",
]

CIFAR10_CLASSES = (
    "plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
)  # fmt: skip
FASHION_MNIST_CLASSES = (
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
)  # fmt: skip
DIGIT_CLASSES = tuple(str(d) for d in range(10))
CLASS_NAMES = {
    "cifar10": CIFAR10_CLASSES,
    "mnist": DIGIT_CLASSES,
    "fashion_mnist": FASHION_MNIST_CLASSES,
    "digits": DIGIT_CLASSES,
}
NAMES = tuple(CLASS_NAMES)
SPLITS = ("train", "test")
_IDX_PREFIX = {"train": "train", "test": "t10k"}
_IDX_KINDS = ("images-idx3-ubyte", "labels-idx1-ubyte")
_TORCHVISION_FOLDER = {"mnist": "MNIST", "fashion_mnist": "FashionMNIST"}


class Dataset(NamedTuple):
    """One split of a dataset, whole, in host memory."""

    images: np.ndarray  # (N, C, 32, 32) float32 in [-1, 1], NCHW
    labels: np.ndarray  # (N,) int32
    class_names: tuple[str, ...]


def normalize(pixels: np.ndarray) -> np.ndarray:
    """``uint8`` pixels -> ``float32`` in [-1, 1].

    Bit for bit torchvision's ``ToTensor()`` (``x / 255``) then
    ``Normalize(0.5, 0.5)`` (``(x - 0.5) / 0.5``, and ``/ 0.5`` is an exact ``* 2``).
    """
    out = np.divide(pixels, np.float32(255), dtype=np.float32)
    out -= np.float32(0.5)
    out *= np.float32(2)
    return out


def load(
    name: str, split: str = "train", data_dir: str | os.PathLike | None = None
) -> Dataset:
    """One split (``"train"`` or ``"test"``) of ``cifar10``, ``mnist``,
    ``fashion_mnist`` or ``digits``; see the module docstring for where it looks."""
    if name not in CLASS_NAMES:
        raise ValueError(f"unknown dataset {name!r}; expected one of {NAMES}")
    if split not in SPLITS:
        raise ValueError(
            f"unknown split {split!r} of {name}; expected 'train' or 'test'"
        )
    if name == "digits":
        images, labels = load_digits_split(split)
        return Dataset(images, labels, DIGIT_CLASSES)
    root = fetch.data_root(data_dir)
    if root.exists() and not root.is_dir():  # else "not in <a file>", and a download
        raise NotADirectoryError(
            f"The data directory {root} is a file, not a folder. Give the folder that "
            f"holds {name}'s files (data_dir=..., --data-dir or $JAXBLITZ_DATA)."
        )
    found = _local(name, split, root)
    if found is None:
        found = _from_tfds(name, split, download=False)  # a copy tfds already has
    if found is None:
        first = fetch.PUBLISHED[name, _remote_files(name, split)[0]]
        if not fetch.network_available(first.urls[0]):
            host = urllib.parse.urlsplit(first.urls[0]).hostname
            why = f"{host} cannot be reached: offline?"
            raise FileNotFoundError(_how_to_provide(name, root, why))
        if fetch.have_tensorflow():
            found = _from_tfds(name, split, download=True)
        if found is None:
            folder = root if name == "cifar10" else root / name
            try:
                for filename in _remote_files(name, split):
                    fetch.download(name, filename, folder)
            except ConnectionError as e:
                raise ConnectionError(_how_to_provide(name, root, str(e))) from e
            found = _local(name, split, root)
            if found is None:  # removed between the download and the read
                why = f"the files downloaded into {folder} are gone"
                raise FileNotFoundError(_how_to_provide(name, root, why))
    pixels, labels = found
    return Dataset(normalize(pixels), np.asarray(labels, np.int32), CLASS_NAMES[name])


def _local(name: str, split: str, root: Path) -> tuple | None:
    """``(pixels (N, C, 32, 32) uint8, labels)`` from files in ``root``, or None."""
    if name == "cifar10":
        for filename in (archives.PYTHON_ARCHIVE, archives.BINARY_ARCHIVE):
            archive = root / filename
            if archive.is_file():
                cached = fetch.read_cache(archive, split)
                if cached is not None:
                    return cached
                fetch.verify(name, archive)
                splits = archives.read_cifar(archive)
                fetch.write_cache(archive, splits)
                return splits[split]
        return None
    stem = _IDX_PREFIX[split]
    folders = (root / name, root, root / _TORCHVISION_FOLDER[name] / "raw")
    for folder in folders:
        found = [_idx_file(folder / f"{stem}-{kind}") for kind in _IDX_KINDS]
        files = [f for f in found if f is not None]
        if len(files) == len(found):
            for f in files:
                fetch.verify(name, f)
            pixels, labels = idx.read_idx_pair(*files)
            return _pad_to_32(pixels), labels
    return None


def _idx_file(base: Path) -> Path | None:
    for path in (base.with_name(base.name + ".gz"), base):
        if path.is_file():
            return path
    return None


def _pad_to_32(pixels: np.ndarray) -> np.ndarray:
    """(N, C, 28, 28) -> (N, C, 32, 32) with black borders (torch: ``Pad(2)``)."""
    return np.pad(pixels, ((0, 0), (0, 0), (2, 2), (2, 2)))


def _from_tfds(name: str, split: str, *, download: bool) -> tuple | None:
    arrays = fetch.tfds_arrays(name, split, download=download)
    if arrays is None:
        return None
    images, labels = arrays
    pixels = images.transpose(0, 3, 1, 2)  # (N, H, W, C) -> (N, C, H, W)
    return (pixels if pixels.shape[-1] == 32 else _pad_to_32(pixels)), labels


def _remote_files(name: str, split: str) -> list[str]:
    if name == "cifar10":
        return [archives.BINARY_ARCHIVE]  # plain records, no pickle
    stem = _IDX_PREFIX[split]
    return [f"{stem}-images-idx3-ubyte.gz", f"{stem}-labels-idx1-ubyte.gz"]


def _how_to_provide(name: str, root: Path, why: str) -> str:
    if name == "cifar10":
        files = (
            f"{archives.PYTHON_ARCHIVE} (torchvision's) or {archives.BINARY_ARCHIVE} "
            "(tfds's)"
        )
        where = root
    else:
        files = "the four idx .gz files (train-/t10k-images-idx3-ubyte.gz, ...)"
        where = root / name
    urls = fetch.PUBLISHED[name, _remote_files(name, "train")[0]].urls
    return (
        f"{name} is not in {root} and cannot be fetched ({why}). Provide it one of "
        f"three ways:\n"
        f"  1. a local copy: put {files} in {where} (or pass data_dir=..., or set "
        f"$JAXBLITZ_DATA);\n"
        f"  2. tensorflow-datasets: pip install 'jaxblitz[tf]' and prepare it once "
        f"online (tfds build {name});\n"
        f"  3. a direct download: run again with the network up; it fetches "
        f"{urls[0]} into {where}.\n"
        f"The bundled dataset 'digits' needs none of these."
    )


def check_dataset(dataset) -> int:
    """The number of examples, after checking ``dataset`` can be trained on."""
    images, labels = dataset.images, dataset.labels
    if getattr(images, "ndim", None) != 4 or tuple(images.shape[2:]) != (32, 32):
        raise ValueError(
            "dataset.images must be shaped (N, C, 32, 32); got "
            f"{getattr(images, 'shape', type(images).__name__)}."
        )
    if not np.issubdtype(images.dtype, np.floating):
        raise TypeError(
            f"dataset.images must be floating point (normalised); got {images.dtype}. "
            "jaxblitz.data.normalize turns uint8 pixels into float32 in [-1, 1]."
        )
    if np.shape(labels) != (len(images),):
        raise ValueError(
            f"dataset has {len(images)} images but labels shaped {np.shape(labels)}; "
            f"expected ({len(images)},): one label per image."
        )
    if len(images) == 0:
        raise ValueError("Cannot train on an empty dataset (0 examples).")
    names = getattr(dataset, "class_names", None)
    if isinstance(names, np.ndarray):  # np.unique(...) of names, say
        named = names.ndim == 1 and names.size > 0
    else:
        named = (
            isinstance(names, Sequence)
            and not isinstance(names, str)
            and len(names) > 0
        )
    if not named:
        raise TypeError(
            "dataset.class_names must be a non-empty sequence of class names (its "
            f"length sets the number of classes); got {names!r}."
        )
    return len(images)


def check_labels(labels, num_classes: int) -> None:
    """Integer class indices in ``[0, num_classes)``, or an error saying which not."""
    labels = np.asarray(labels)
    if labels.size == 0:
        return
    if not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"labels must be integer class indices; got {labels.dtype}.")
    low, high = int(labels.min()), int(labels.max())
    if low < 0 or high >= num_classes:
        raise ValueError(
            f"labels must be class indices in [0, {num_classes}); got values from "
            f"{low} to {high}. Check the dataset, or give the model more classes "
            "(dataset.class_names sets how many)."
        )


def epoch_order(
    key: jax.Array | None,
    num_examples: int,
    batch_size: int,
    drop_last: bool = False,
    shards: int = 1,
) -> tuple[jax.Array, jax.Array]:
    """Batch indices ``(S, B)`` and mask ``(S, B)`` of one epoch: the one batching
    path (:func:`batches`, ``train.fit`` and data parallelism all use it).

    The order is ``jax.random.permutation(key, N)`` (``key=None``: 0, 1, 2, ...),
    so the same key gives the same order on any machine. The last partial batch
    is padded with index 0 and masked out (its loss and gradients are the partial
    batch's), or dropped with ``drop_last``. A ``batch_size`` above
    ``num_examples`` gives one batch of every example, as a torch ``DataLoader``
    does. ``shards``: every batch padded (masked) to a multiple of it, so it
    splits evenly over that many devices.
    """
    if num_examples < 1:
        raise ValueError("Cannot train on an empty dataset (0 examples).")
    if key is None:
        perm = jnp.arange(num_examples, dtype=jnp.int32)
    else:
        perm = jax.random.permutation(key, num_examples).astype(jnp.int32)
    if not drop_last:  # torch: a DataLoader batch larger than the data is all of it
        batch_size = min(batch_size, num_examples)
    steps = num_examples // batch_size if drop_last else -(-num_examples // batch_size)
    if steps == 0:
        raise ValueError(
            f"drop_last=True with batch_size {batch_size} > {num_examples} examples "
            "leaves no batch; lower the batch size or keep the last batch."
        )
    total = steps * batch_size
    mask = (jnp.arange(total) < num_examples).astype(jnp.float32)
    perm = jnp.pad(perm, (0, max(total - num_examples, 0)))[:total]
    idx, mask = perm.reshape(steps, batch_size), mask.reshape(steps, batch_size)
    pad = -batch_size % shards
    if pad:  # equal shards: DataParallel's split, the padding masked out
        idx, mask = jnp.pad(idx, ((0, 0), (0, pad))), jnp.pad(mask, ((0, 0), (0, pad)))
    return idx, mask


def batches(
    dataset: Dataset,
    batch_size: int,
    key: jax.Array | None = None,
    *,
    shuffle: bool = True,
    drop_last: bool = False,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(images, labels)`` NumPy batches (torch: ``DataLoader``).

    In :func:`epoch_order`'s order, so the same key gives the same batches as
    ``train.fit``'s epoch. The last, smaller batch is yielded unless ``drop_last``.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer):
        raise TypeError(f"batch_size must be an int, got {type(batch_size).__name__}")
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if shuffle and key is None:
        raise ValueError(
            "batches(shuffle=True) needs a key for the order, e.g. "
            "batches(dataset, batch_size, jax.random.key(0)); or pass shuffle=False"
        )
    images, labels = np.asarray(dataset.images), np.asarray(dataset.labels)
    if len(images) != len(labels):
        raise ValueError(f"dataset has {len(images)} images but {len(labels)} labels")
    if len(labels) == 0 or (drop_last and batch_size > len(labels)):
        return iter(())
    idx, mask = epoch_order(
        key if shuffle else None, len(labels), batch_size, drop_last
    )
    return _iterate(images, labels, np.asarray(idx), np.asarray(mask))


def _iterate(images, labels, idx, mask):
    for row, keep in zip(idx, mask, strict=True):
        take = row[keep > 0]
        yield images[take], labels[take]
