"""Blitz 4, Training a classifier: where the datasets come from.

torchvision's ``CIFAR10(root, download=True)`` in three separate steps: the data
directory, the published archives and their checksums, the ``.npy`` cache of
decoded archives, tensorflow-datasets, and the direct download. Nothing here waits
on the network without first checking, in seconds, that the network is there
(tfds's own offline attempt hangs for minutes).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import socket
import threading
import urllib.parse
import urllib.request
import warnings
import zlib
from functools import partial
from operator import methodcaller
from pathlib import Path
from typing import BinaryIO, NamedTuple

import numpy as np
from tqdm.auto import tqdm

from jaxblitz.files import atomic_write, refuse_links

DEFAULT_DIR = "~/.cache/jaxblitz"
CONNECT_TIMEOUT_S = 3.0  # the "is the network there" probe
DOWNLOAD_TIMEOUT_S = 30.0  # per socket operation once a download has started
# tensorflow-datasets' own data directory; None is tfds's default
# ($TFDS_DATA_DIR or ~/tensorflow_datasets).
TFDS_DATA_DIR: str | None = None
CACHE_VERSION = 1  # bump when the cached arrays change meaning


class Published(NamedTuple):
    """A file as its publisher serves it: mirrors, size in bytes and checksum."""

    urls: tuple[str, ...]
    size: int
    algorithm: str  # a hashlib name
    digest: str


_TORONTO = "https://www.cs.toronto.edu/~kriz/"
_MNIST = (
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
)
_FASHION = (
    "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
    "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/",
)


# Sizes and checksums: torchvision's md5 for the python archive,
# tensorflow-datasets' url_checksums (sha256) for the rest.
PUBLISHED: dict[tuple[str, str], Published] = {
    ("cifar10", "cifar-10-python.tar.gz"): Published(
        (_TORONTO + "cifar-10-python.tar.gz",),
        170498071,
        "md5",
        "c58f30108f718f92721af3b95e74349a",
    ),
    ("cifar10", "cifar-10-binary.tar.gz"): Published(
        (_TORONTO + "cifar-10-binary.tar.gz",),
        170052171,
        "sha256",
        "c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd",
    ),
}
_IDX_SHA256 = {
    "mnist": {
        "train-images-idx3-ubyte.gz": (
            9912422,
            "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
        ),
        "train-labels-idx1-ubyte.gz": (
            28881,
            "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
        ),
        "t10k-images-idx3-ubyte.gz": (
            1648877,
            "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
        ),
        "t10k-labels-idx1-ubyte.gz": (
            4542,
            "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
        ),
    },
    "fashion_mnist": {
        "train-images-idx3-ubyte.gz": (
            26421880,
            "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
        ),
        "train-labels-idx1-ubyte.gz": (
            29515,
            "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
        ),
        "t10k-images-idx3-ubyte.gz": (
            4422102,
            "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
        ),
        "t10k-labels-idx1-ubyte.gz": (
            5148,
            "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
        ),
    },
}
for _name, _mirrors in [("mnist", _MNIST), ("fashion_mnist", _FASHION)]:
    for _file, (_size, _sha) in _IDX_SHA256[_name].items():
        _urls = tuple(m + _file for m in _mirrors)
        PUBLISHED[_name, _file] = Published(_urls, _size, "sha256", _sha)


def data_root(data_dir: str | os.PathLike | None) -> Path:
    """``data_dir``, else ``$JAXBLITZ_DATA``, else ``~/.cache/jaxblitz``."""
    if data_dir is None:
        data_dir = os.environ.get("JAXBLITZ_DATA") or DEFAULT_DIR
    return Path(data_dir).expanduser()


def file_digest(path: Path, algorithm: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, algorithm).hexdigest()


def verify(name: str, path: Path) -> None:
    """Check ``path`` against the published checksum when it has the published size.

    A file of another size in the same format (a test fixture, a subset, a
    re-compressed copy such as Debian's) is not checked.
    """
    size = path.stat().st_size
    published = PUBLISHED.get((name, path.name))
    if published is not None and size == published.size:
        actual = file_digest(path, published.algorithm)
        if actual != published.digest:
            raise ValueError(
                f"{path} has the published size ({size} bytes) but its "
                f"{published.algorithm} is {actual}, expected {published.digest}: the "
                "file is corrupt or altered. Delete it and download it again."
            )
        return
    for (other, filename), theirs in PUBLISHED.items():
        if other != name and filename == path.name and size == theirs.size:
            raise ValueError(
                f"{path} has the size of {other}'s {filename}, not {name}'s; keep "
                f"each dataset's files in its own folder ({path.parent / name})."
            )


# -- the .npy cache of decoded archives (pickle-free) -------------------------------


def _cache_files(archive: Path, split: str) -> tuple[Path, Path, Path]:
    # Keyed by where the archive is, its size and mtime: a test fixture, a subset
    # and the real archive never share a cache entry.
    st = archive.stat()
    ident = f"{archive.resolve()}|{st.st_size}|{st.st_mtime_ns}|{CACHE_VERSION}"
    key = hashlib.sha1(ident.encode()).hexdigest()[:12]
    stem = archive.name.removesuffix(".tar.gz")
    folder = archive.parent / "npy"
    return (
        folder / f"{stem}-{key}-{split}-images.npy",
        folder / f"{stem}-{key}-{split}-labels.npy",
        folder / f"{stem}-{key}-{split}-crc32.json",  # .npy records no checksum
    )


def _crc32(array: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(array).data.cast("B"))


def read_cache(archive: Path, split: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The cached ``(pixels, labels)`` of one split, or None when absent or unusable.

    A cache that fails its CRC-32 (a damaged disk, an edited file) is a miss: the
    archive is decoded again, never served as wrong pixels.
    """
    images_file, labels_file, sums_file = _cache_files(archive, split)
    try:
        # Memory-mapped: the caller's normalisation is then the only pass over the
        # pixels, and a header claiming more than the file holds is a ValueError
        # here rather than an allocation of that size.
        pixels = np.load(images_file, mmap_mode="r", allow_pickle=False)
        labels = np.load(labels_file, mmap_mode="r", allow_pickle=False)
        sums = json.loads(sums_file.read_text())
    except (OSError, ValueError):
        return None
    if (
        pixels.dtype != np.uint8
        or pixels.shape[1:] != (3, 32, 32)
        or labels.dtype != np.int32
        or labels.shape != pixels.shape[:1]
        or (labels.size and not 0 <= labels.min() <= labels.max() <= 9)
    ):
        return None  # not what write_cache writes: decode the archive again
    if sums != {"images": _crc32(pixels), "labels": _crc32(labels)}:
        warnings.warn(
            f"the .npy cache of {archive.name} ({split}) fails its checksum; "
            "decoding the archive again",
            stacklevel=3,
        )
        return None
    return pixels, np.array(labels)


def write_cache(
    archive: Path, splits: dict[str, tuple[np.ndarray, np.ndarray]]
) -> None:
    """Cache each split's ``(pixels, labels)``; a read-only folder, or a link where
    a cache file goes (refused, never written through), only costs speed."""
    try:
        for split, (pixels, labels) in splits.items():
            images_file, labels_file, sums_file = _cache_files(archive, split)
            images_file.parent.mkdir(exist_ok=True)
            # Checksums last: a reader needs all three, so a crash between is a miss.
            atomic_write(labels_file, partial(np.save, arr=labels, allow_pickle=False))
            atomic_write(images_file, partial(np.save, arr=pixels, allow_pickle=False))
            sums = json.dumps({"images": _crc32(pixels), "labels": _crc32(labels)})
            atomic_write(sums_file, methodcaller("write", sums.encode()))
    except OSError as e:
        warnings.warn(f"could not cache {archive.name} as .npy: {e}", stacklevel=3)


# -- the network -------------------------------------------------------------------


def network_available(url: str, timeout: float = CONNECT_TIMEOUT_S) -> bool:
    """Whether ``url``'s host (or the proxy for it) accepts a connection in time.

    Runs in a thread so that a hanging DNS lookup cannot outlast ``timeout``.
    Tests replace this function to stay off the network.
    """
    parts = urllib.parse.urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(parts.hostname or ""):
        parts = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    reached: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection((parts.hostname, port), timeout=timeout):
                reached.append(True)
        except OSError:
            pass

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout)
    return bool(reached)


def download(name: str, filename: str, folder: Path) -> Path:
    """Download a published file into ``folder`` (checksum-verified, atomic)."""
    published = PUBLISHED[name, filename]
    folder.mkdir(parents=True, exist_ok=True)
    path = refuse_links(folder / filename)  # once, not as each mirror's failure
    failures = []
    for url in published.urls:
        try:
            atomic_write(path, partial(_fetch, url, published=published))
            return path
        except (OSError, ValueError) as e:
            failures.append(f"{url}: {e}")
    raise ConnectionError(f"could not download {filename}: " + "; ".join(failures))


def _fetch(url: str, out: BinaryIO, published: Published) -> None:
    digest = hashlib.new(published.algorithm)
    with (
        urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response,
        tqdm(total=published.size, unit="B", unit_scale=True, desc=url) as bar,
    ):
        while chunk := response.read(1 << 20):
            out.write(chunk)
            digest.update(chunk)
            bar.update(len(chunk))
    if digest.hexdigest() != published.digest:
        raise ValueError(
            f"downloaded {published.algorithm} {digest.hexdigest()}, expected "
            f"{published.digest}"
        )


# -- tensorflow-datasets -----------------------------------------------------------


def have_tensorflow() -> bool:
    """tfds needs TensorFlow to prepare a dataset and for ``tfds.load``."""
    return importlib.util.find_spec("tensorflow") is not None


# What each dataset's tfds copy holds: (H, W, C) uint8 images, labels in [0, 10).
TFDS_IMAGE_SHAPES = {
    "cifar10": (32, 32, 3),
    "mnist": (28, 28, 1),
    "fashion_mnist": (28, 28, 1),
}
# tfds.data_source reads these without TensorFlow; `tfds build`'s default,
# tfrecord, needs TensorFlow to read.
_RANDOM_ACCESS_FORMATS = ("array_record", "parquet")


def tfds_arrays(name: str, split: str, *, download: bool) -> tuple | None:
    """``(images (N, H, W, C) uint8, labels)`` from tensorflow-datasets, or None.

    Without TensorFlow only an already prepared array_record or parquet copy can
    be read (``tfds.data_source``); with it (the ``tf`` extra),
    ``tfds.load(..., batch_size=-1)``, which downloads and prepares the dataset
    when ``download`` is true.

    None means "not there": tfds or TensorFlow missing, no prepared copy, a copy
    only TensorFlow can read, or (with ``download``) a failed download. A prepared
    copy that cannot be read or holds the wrong shapes is a ``ValueError``.
    """
    if download and not have_tensorflow():
        return None
    try:
        import tensorflow_datasets as tfds
    except ImportError:
        return None
    try:
        builder = tfds.builder(name, data_dir=TFDS_DATA_DIR)
    except tfds.core.registered.DatasetNotFoundError:
        return None
    except Exception as e:  # it reads a prepared copy's dataset_info.json
        where = TFDS_DATA_DIR or "its data directory ($TFDS_DATA_DIR)"
        raise ValueError(
            f"tensorflow-datasets cannot open its copy of {name} in {where} "
            f"({type(e).__name__}: {e}). Delete {name}'s folder there and prepare "
            f"it again (tfds build {name})."
        ) from e
    folder = builder.data_path  # <data_dir>/<name>/<version>
    if have_tensorflow():
        if download:
            try:
                builder.download_and_prepare()
            except (OSError, tfds.download.DownloadError) as e:  # offline, 404...
                warnings.warn(
                    f"tensorflow-datasets could not download {name}: {e}",
                    stacklevel=3,
                )
                return None
        read = _tfds_batch
    else:
        file_format = builder.info.file_format
        if builder.is_prepared() and (
            file_format is None or file_format.value not in _RANDOM_ACCESS_FORMATS
        ):
            warnings.warn(
                f"tensorflow-datasets' copy of {name} in {folder} is "
                f"{file_format and file_format.value}, which only TensorFlow reads: "
                "pip install 'jaxblitz[tf]', or prepare it again with "
                "`tfds build --file_format=array_record`.",
                stacklevel=3,
            )
            return None
        read = _tfds_source
    try:
        images, labels = read(tfds, builder, split)
    except Exception as e:
        # Decided by what is on disk, not by the error's type: tfds reports a
        # missing copy as NotImplementedError, ValueError or AssertionError
        # depending on the path, and a damaged one can fail in any way.
        if not builder.is_prepared():
            return None  # tfds has no copy of it: not there
        raise _unreadable(name, split, folder, e) from e
    return _checked_tfds(name, split, folder, np.asarray(images), np.asarray(labels))


def _tfds_batch(tfds, builder, split: str) -> tuple:
    """One split, whole, through TensorFlow (``tfds.load(..., batch_size=-1)``)."""
    arrays = tfds.as_numpy(builder.as_dataset(split=split, batch_size=-1))
    return arrays["image"], arrays["label"]


def _tfds_source(tfds, builder, split: str) -> tuple:
    """One split, whole, without TensorFlow (``tfds.data_source``)."""
    source = builder.as_data_source(split=split)
    examples = [source[i] for i in range(len(source))]
    images = np.stack([ex["image"] for ex in examples])  # (N, H, W, C)
    return images, np.array([ex["label"] for ex in examples])


def _unreadable(
    name: str, split: str, folder: os.PathLike, error: Exception
) -> ValueError:
    return ValueError(
        f"tensorflow-datasets has a prepared copy of {name} in {folder} but its "
        f"{split!r} split cannot be read ({type(error).__name__}: {error}). The copy "
        "is damaged or incomplete: delete that folder and prepare it again "
        f"(tfds build {name}), or provide the files in the data directory."
    )


def _checked_tfds(
    name: str, split: str, folder: os.PathLike, images: np.ndarray, labels: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(images, labels)`` as int32 labels, after checking they are ``name``'s."""
    expected = TFDS_IMAGE_SHAPES[name]
    if len(labels) == 0:
        problem = "holds no examples"
    elif images.dtype != np.uint8 or images.shape[1:] != expected:
        problem = f"holds {images.dtype} images shaped {images.shape[1:]}"
    elif labels.shape != images.shape[:1] or not 0 <= labels.min() <= labels.max() <= 9:
        problem = (
            f"holds labels shaped {labels.shape} from {labels.min()} to {labels.max()}"
        )
    else:
        return images, labels.astype(np.int32)
    raise ValueError(
        f"tensorflow-datasets' copy of {name} in {folder} ({split!r} split) "
        f"{problem}; expected uint8 images shaped {expected} and one label in "
        f"[0, 10) per image. Delete that folder and prepare it again "
        f"(tfds build {name})."
    )
