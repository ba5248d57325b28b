"""Blitz 4, Training a classifier: reading dataset files within what they can hold.

torchvision trusts its archives; a file in ``data_dir`` may be anything. Every
dataset file is read here as a stream (gunzipped on the fly when it ends in
``.gz``) that gives at most the bytes its format allows, so a small file that
expands to gigabytes fails after that many bytes, never after decompressing it
all. A file that is truncated, not gzip, too large or not in its format is a
:class:`DataFileError` (a ``ValueError``) naming the file and what to do.
"""

from __future__ import annotations

import contextlib
import gzip
import posixpath
import tarfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import numpy as np

__all__ = [
    "DataFileError",
    "broken",
    "check_labels",
    "decompressed",
    "mib",
    "tar_members",
]

CLASSES = 10  # every dataset here: CIFAR-10, MNIST, Fashion-MNIST


class DataFileError(ValueError):
    """A dataset file that cannot be read as what its name says."""


def broken(path: Path, what: str) -> DataFileError:
    return DataFileError(
        f"{path} {what}. Delete it and download it again (or let jaxblitz.data.load "
        "download it)."
    )


def mib(n: int) -> str:
    """``n`` bytes for a message: ``"185404928 bytes (176.8 MiB)"``."""
    return f"{n} bytes ({n / 2**20:.1f} MiB)"


class _Reader(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class Bounded:
    """A read-only stream that refuses to give more than ``limit`` bytes in all."""

    def __init__(self, raw: _Reader, path: Path, limit: int, what: str):
        self.raw, self.path, self.limit, self.what = raw, path, limit, what
        self.count = 0

    def read(self, size: int | None = -1) -> bytes:
        # One byte past the limit is enough to tell "more" from "exactly the limit".
        room = self.limit - self.count + 1
        chunk = self.raw.read(room if size is None or size < 0 else min(size, room))
        self.count += len(chunk)
        if self.count > self.limit:
            raise broken(
                self.path,
                f"expands to more than {mib(self.limit)}, the most {self.what} "
                "can hold; it is corrupt or not what its name says (a "
                "decompression bomb stops here)",
            )
        return chunk


@contextlib.contextmanager
def decompressed(path: Path, limit: int, what: str, kind: str) -> Iterator[Bounded]:
    """``path``'s bytes (gunzipped when it ends in ``.gz``), at most ``limit``.

    Any failure to decompress or to parse (``kind`` says what it should have
    been) inside the ``with`` block becomes a :class:`DataFileError` naming it.
    """
    with open(path, "rb") as f:  # a missing or unreadable file is not "corrupt"
        try:
            with (
                gzip.GzipFile(fileobj=f) if path.suffix == ".gz" else f
            ) as raw:  # gzip.GzipFile checks the CRC-32 when it reaches the end
                yield Bounded(raw, path, limit, what)
        except (EOFError, zlib.error, tarfile.TarError, OSError) as e:
            # gzip.BadGzipFile is an OSError; so are tarfile's stream errors.
            raise broken(path, f"is truncated or not {kind} ({e})") from e


def check_labels(path: Path, labels: np.ndarray, where: str = "") -> np.ndarray:
    """``labels`` as ``int32`` if they are integers in 0..9, else a DataFileError.

    Checked before the cast, so 2**32 + 3 is refused rather than wrapped to 3.
    """
    if labels.ndim != 1 or labels.dtype.kind not in "iu":
        raise broken(
            path,
            f"has labels of {labels.dtype}{labels.shape}{where}, expected a list "
            f"of integers 0..{CLASSES - 1}",
        )
    bad = np.flatnonzero((labels < 0) | (labels >= CLASSES))
    if bad.size:
        raise broken(
            path,
            f"has labels outside 0..{CLASSES - 1}{where}: {labels[bad[0]]} at "
            f"index {bad[0]}" + (f" and {bad.size - 1} more" if bad.size > 1 else ""),
        )
    return labels.astype(np.int32)


# Headers that extend the next member's (long names, pax): read whole by tarfile.
_EXTENSIONS = (
    tarfile.GNUTYPE_LONGNAME,
    tarfile.GNUTYPE_LONGLINK,
    tarfile.XHDTYPE,
    tarfile.XGLTYPE,
    tarfile.SOLARIS_XHDTYPE,
)
EXTENSION_BYTES = 1 << 16


class _BadHeader(Exception):
    """A tar header that would make tarfile read too much, or recurse too deep."""


class _CheckedTarInfo(tarfile.TarInfo):
    """A tar header checked as soon as it is parsed, before tarfile acts on it.

    tarfile reads a GNU long name or a pax header whole into memory, and follows
    a chain of them by recursion; a sparse file's map grows with the stream.
    A subclass per archive sets the limits and counts the extension headers.
    """

    most = 0  # bytes any member may declare
    extensions = 0  # extension headers left

    @classmethod
    def frombuf(cls, buf, encoding, errors):
        info = super().frombuf(buf, encoding, errors)
        if info.type == tarfile.GNUTYPE_SPARSE:
            raise _BadHeader(f"has a sparse member {info.name!r}")
        if info.type in _EXTENSIONS:
            cls.extensions -= 1
            if cls.extensions < 0:
                raise _BadHeader("has too many long-name or pax headers")
        most = EXTENSION_BYTES if info.type in _EXTENSIONS else cls.most
        if info.size > most:
            raise _BadHeader(
                f"has a member {info.name!r} whose header declares {mib(info.size)}, "
                f"more than any of its members can hold ({mib(most)})"
            )
        return info


def tar_members(
    path: Path,
    limit: Callable[[str], int | None],
    *,
    most: int,
    total: int,
    count: int,
    what: str,
) -> Iterator[tuple[str, bytes]]:
    """``(base name, bytes)`` of each file in a ``.tar.gz`` that ``limit`` names.

    ``limit(base)`` is the most bytes that member may hold (None: skip it); every
    member's size is checked from its header, before it is read. At most ``most``
    bytes in any member, ``count`` members and ``total`` bytes in all. One pass
    through the gzip stream: tarfile's ``"r|"`` mode reads nothing twice, and
    ``gzip.GzipFile`` checks the CRC-32 at the end.
    """
    headers = type("Headers", (_CheckedTarInfo,), {"most": most, "extensions": count})
    seen = set()
    with decompressed(path, total, what, "a .tar.gz archive") as stream:
        try:
            # typeshed asks any fileobj for write, seek and tell; the "r|" stream
            # mode only reads.
            with tarfile.open(  # type: ignore[call-overload]
                fileobj=stream, mode="r|", bufsize=1 << 20, tarinfo=headers
            ) as tar:
                for n, member in enumerate(tar, 1):
                    if n > count:
                        raise broken(path, f"holds more than {count} members")
                    base = posixpath.basename(member.name)
                    room = limit(base) if member.isfile() else None
                    if room is None:
                        continue
                    if member.size > room:  # a pax header may have set the size
                        raise broken(
                            path,
                            f"has a {base} of {mib(member.size)}; the most {what} "
                            f"holds there is {mib(room)}",
                        )
                    if base in seen:
                        raise broken(path, f"holds {base} twice")
                    seen.add(base)
                    yield base, tar.extractfile(member).read()
        except _BadHeader as e:
            raise broken(path, str(e)) from None
        while stream.read(1 << 20):  # past the tar's end: the gzip trailer
            pass
