"""Blitz 4, Training a classifier: decoding MNIST's idx files.

MNIST and Fashion-MNIST come as four idx files (``.gz`` or not): a header of
magic number and dimensions, then unsigned bytes. The header is read and checked
first (magic, dimensions, size against a limit), then exactly the bytes it
announces: a file that holds more, or a gzip that would expand to more, stops
there. Anything else is a :class:`~jaxblitz.data.limits.DataFileError` naming the
file.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np

from jaxblitz.data.limits import broken, check_labels, decompressed, mib

IMAGES_MAGIC, LABELS_MAGIC = 0x803, 0x801  # idx: ubyte data, 3 or 1 dimensions
UBYTE = 0x08
_TYPES = {
    0x08: "unsigned bytes",
    0x09: "signed bytes",
    0x0B: "16-bit integers",
    0x0C: "32-bit integers",
    0x0D: "32-bit floats",
    0x0E: "64-bit floats",
}
SIDE = 28  # MNIST's and Fashion-MNIST's images are 28x28
# Data bytes in one idx file: over five times MNIST's largest (train images,
# 47040000).
MAX_BYTES = 1 << 28

Split = tuple[np.ndarray, np.ndarray]  # (pixels (N, 1, 28, 28) uint8, labels int32)


def read_idx(path: Path, magic: int, item_shape: tuple[int, ...] = ()) -> np.ndarray:
    """The array in an idx file whose header must carry ``magic``.

    ``item_shape`` is what every dimension after the first must be; it is
    checked, like the size, before any data is read.
    """
    kind = "images" if magic == IMAGES_MAGIC else "labels"
    ndim = magic & 0xFF
    header = 4 + 4 * ndim
    what = f"an idx file of {kind}"
    with decompressed(path, header + MAX_BYTES, what, "gzip") as f:
        _check_magic(path, f.read(4), magic, kind)
        packed = f.read(4 * ndim)
        if len(packed) < 4 * ndim:
            got = 4 + len(packed)
            raise broken(
                path, f"is truncated: its header ends after {got} of {header} bytes"
            )
        dims = struct.unpack(f">{ndim}I", packed)
        size = math.prod(dims)  # a Python int: no overflow, whatever the header says
        if 0 in dims:
            raise broken(path, f"has header dimensions {dims}: it holds no {kind}")
        if size > MAX_BYTES:
            raise broken(
                path,
                f"has header dimensions {dims}, {mib(size)} of data, more than the "
                f"limit of {mib(MAX_BYTES)} for {what}",
            )
        if dims[1:] != item_shape:
            expected = str(("N", *item_shape)).replace("'", "")
            raise broken(
                path, f"has header dimensions {dims}, expected {expected} for {kind}"
            )
        data = f.read(size)
        if len(data) < size:
            raise broken(
                path,
                f"is truncated: its header says {dims} ({size} bytes of data), and it "
                f"holds {len(data)}",
            )
        if f.read(1):  # also takes gzip to its end, where it checks the CRC-32
            raise broken(
                path,
                f"holds more than its header's {dims} ({size} bytes of data): it is "
                "damaged or not an idx file",
            )
    return np.frombuffer(data, np.uint8).reshape(dims)


def _check_magic(path: Path, head: bytes, magic: int, kind: str) -> None:
    found = int.from_bytes(head, "big") if len(head) == 4 else None
    if found == magic:
        return
    why = ""
    if head[:2] == b"\x1f\x8b":
        why = f"; it is gzip-compressed, so name it {path.name}.gz"
    elif found is not None and found >> 16 == 0 and head[2] != UBYTE:
        held = _TYPES.get(head[2], f"unknown type {head[2]:#04x}")
        why = f"; it holds {held}, and MNIST's idx files hold unsigned bytes"
    elif found is not None and found >> 8 == UBYTE:
        why = f"; it has {head[3]} dimensions, {kind} have {magic & 0xFF}"
    raise broken(
        path,
        f"is not an idx file of {kind}: its magic number is "
        f"{'missing' if found is None else hex(found)}, expected {magic:#x}{why}",
    )


def read_idx_pair(images_path: Path, labels_path: Path) -> Split:
    """``(pixels (N, 1, 28, 28), labels)`` from a pair of MNIST-format idx files."""
    pixels = read_idx(images_path, IMAGES_MAGIC, (SIDE, SIDE))
    labels = read_idx(labels_path, LABELS_MAGIC)
    if len(pixels) != len(labels):
        raise broken(
            images_path,
            f"holds {len(pixels)} images but {labels_path} {len(labels)} labels; "
            "the two files are from different sets",
        )
    return pixels[:, None], check_labels(labels_path, labels)
