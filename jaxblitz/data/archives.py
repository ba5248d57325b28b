"""Blitz 4, Training a classifier: decoding the original dataset files.

Bytes to ``uint8`` pixels ``(N, C, H, W)`` and ``int32`` labels, for the two
CIFAR-10 archives (torchvision's pickled ``cifar-10-python.tar.gz`` and tfds's
``cifar-10-binary.tar.gz`` of 3073-byte records) and the MNIST idx files. A file
that is truncated or in the wrong format is a ``ValueError`` naming the file.
"""

from __future__ import annotations

import codecs
import gzip
import io
import pickle
import posixpath
import re
import struct
import tarfile
import zlib
from pathlib import Path

import numpy as np

PYTHON_ARCHIVE = "cifar-10-python.tar.gz"
BINARY_ARCHIVE = "cifar-10-binary.tar.gz"
RECORD = 1 + 3 * 32 * 32  # one label byte, then R, G, B planes of 32x32
IMAGES_MAGIC, LABELS_MAGIC = 0x803, 0x801  # idx: ubyte data, 3 or 1 dimensions

Split = tuple[np.ndarray, np.ndarray]  # (pixels (N, C, H, W) uint8, labels int32)


def _broken(path: Path, what: str) -> ValueError:
    return ValueError(
        f"{path} {what}. Delete it and download it again (or let jaxblitz.data.load "
        "download it)."
    )


def read_cifar(path: Path) -> dict[str, Split]:
    """Both splits of a CIFAR-10 archive, told apart by its file name."""
    binary = path.name == BINARY_ARCHIVE
    batch = re.compile(r"(data_batch_(\d+)|test_batch)" + (r"\.bin" if binary else ""))
    meta = "batches.meta.txt" if binary else "batches.meta"
    members = _tar_members(
        path, lambda base: bool(batch.fullmatch(base)) or base == meta
    )
    train = sorted(
        (int(m[2]), base) for base in members if (m := batch.fullmatch(base)) and m[2]
    )
    test = "test_batch.bin" if binary else "test_batch"
    if not train or test not in members or meta not in members:
        raise _broken(
            path,
            f"is not a CIFAR-10 {'binary' if binary else 'python'} archive: it should "
            f"hold data_batch_1..5, test_batch and {meta}, and holds "
            f"{sorted(members) or 'none of them'}",
        )
    decode = _binary_batch if binary else _python_batch
    _check_meta(path, members[meta], binary)
    parts = [decode(path, base, members[base]) for _, base in train]
    splits = {
        "train": (
            np.concatenate([p for p, _ in parts]),
            np.concatenate([y for _, y in parts]),
        ),
        "test": decode(path, test, members[test]),
    }
    for _, labels in splits.values():
        _check_labels(path, labels, 10)
    return splits


def _tar_members(path: Path, wanted) -> dict[str, bytes]:
    out = {}
    with open(path, "rb") as f:  # a missing or unreadable file is not "corrupt"
        try:
            # Stream mode: one pass through the gzip stream, members in order.
            # gzip.GzipFile (not tarfile's own "r|gz") checks the CRC-32 at the end.
            with (
                gzip.GzipFile(fileobj=f) as gz,
                tarfile.open(fileobj=gz, mode="r|", bufsize=1 << 20) as tar,
            ):
                for member in tar:
                    base = posixpath.basename(member.name)
                    if member.isfile() and wanted(base):
                        out[base] = tar.extractfile(member).read()
                while gz.read(1 << 20):  # past the tar's end: the gzip trailer
                    pass
        except (tarfile.TarError, EOFError, zlib.error, OSError) as e:
            raise _broken(path, f"is truncated or not a .tar.gz archive ({e})") from e
    return out


def _binary_batch(path: Path, base: str, raw: bytes) -> Split:
    if len(raw) % RECORD:
        raise _broken(
            path, f"has {base} of {len(raw)} bytes, not whole {RECORD}-byte records"
        )
    records = np.frombuffer(raw, np.uint8).reshape(-1, RECORD)
    return records[:, 1:].reshape(-1, 3, 32, 32), records[:, 0].astype(np.int32)


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickles builtins and NumPy arrays only: all the original batches hold."""

    _SAFE = {
        "_reconstruct": np.ndarray(0).__reduce__()[0],
        "_frombuffer": np.arange(1).__reduce_ex__(5)[0],
        "ndarray": np.ndarray,
        "dtype": np.dtype,
    }

    def find_class(self, module: str, name: str):
        if module.split(".")[0] == "numpy" and name in self._SAFE:
            return self._SAFE[name]
        if (module, name) == ("_codecs", "encode"):  # bytes in a Python 3 protocol 2
            return codecs.encode
        raise pickle.UnpicklingError(f"refusing to unpickle {module}.{name}")


def _unpickle(path: Path, base: str, raw: bytes) -> dict:
    try:
        # The original batches were pickled by Python 2: bytes keys and strings.
        batch = _ArrayUnpickler(io.BytesIO(raw), encoding="bytes").load()
    except Exception as e:  # any failure to unpickle means a broken member
        raise _broken(path, f"has a {base} that does not unpickle ({e})") from e
    if not isinstance(batch, dict):
        raise _broken(path, f"has a {base} that is not a CIFAR-10 batch dict")
    return batch


def _python_batch(path: Path, base: str, raw: bytes) -> Split:
    batch = _unpickle(path, base, raw)
    try:
        data = np.asarray(batch[b"data"])
        labels = np.asarray(batch[b"labels"], np.int32)
    except (KeyError, TypeError, ValueError) as e:
        raise _broken(path, f"has a {base} without b'data' and b'labels' ({e})") from e
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != RECORD - 1:
        raise _broken(
            path, f"has {base} data {data.dtype}{data.shape}, not uint8 (N, 3072)"
        )
    if labels.shape != (len(data),):
        raise _broken(
            path, f"has {len(data)} images but {labels.size} labels in {base}"
        )
    return data.reshape(-1, 3, 32, 32), labels


def _check_meta(path: Path, raw: bytes, binary: bool) -> None:
    if binary:
        names = raw.decode("latin-1").split()
    else:
        names = _unpickle(path, "batches.meta", raw).get(b"label_names", [])
    if len(names) != 10:
        raise _broken(path, f"lists {len(names)} class names, CIFAR-10 has 10")


def _check_labels(path: Path, labels: np.ndarray, classes: int) -> None:
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        raise _broken(path, f"has labels outside 0..{classes - 1}")


# -- MNIST idx files ---------------------------------------------------------------


def read_idx(path: Path, magic: int) -> np.ndarray:
    """The array in an idx file (``.gz`` or not) whose header must carry ``magic``."""
    with open(path, "rb") as f:
        try:
            raw = gzip.decompress(f.read()) if path.suffix == ".gz" else f.read()
        except (EOFError, zlib.error, OSError) as e:
            raise _broken(path, f"is truncated or not gzip ({e})") from e
    found = int.from_bytes(raw[:4], "big") if len(raw) >= 4 else None
    if found != magic:
        kind = "images" if magic == IMAGES_MAGIC else "labels"
        raise _broken(
            path,
            f"is not an idx file of {kind}: its magic number is "
            f"{'missing' if found is None else hex(found)}, expected {magic:#x}",
        )
    ndim = raw[3]
    header = 4 + 4 * ndim
    dims = struct.unpack(f">{ndim}I", raw[4:header]) if len(raw) >= header else ()
    if len(raw) - header != int(np.prod(dims)) or len(dims) != ndim:
        raise _broken(path, f"is truncated: header says {dims}, data is shorter")
    return np.frombuffer(raw, np.uint8, offset=header).reshape(dims)


def read_idx_pair(images_path: Path, labels_path: Path) -> Split:
    """``(pixels (N, 1, 28, 28), labels)`` from a pair of MNIST-format idx files."""
    pixels = read_idx(images_path, IMAGES_MAGIC)
    labels = read_idx(labels_path, LABELS_MAGIC).astype(np.int32)
    if len(pixels) != len(labels):
        raise _broken(
            images_path,
            f"holds {len(pixels)} images but {labels_path.name} {len(labels)} labels",
        )
    _check_labels(labels_path, labels, 10)
    return pixels[:, None], labels
