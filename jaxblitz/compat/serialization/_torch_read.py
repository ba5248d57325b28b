"""Blitz 4 (saving the model): reading the files ``torch.save`` writes.

Both of PyTorch's formats: the zip archive (``<name>/data.pkl``, one record
``<name>/data/<key>`` per storage, ``byteorder``, ``version``) and the legacy
stream (``_use_new_zipfile_serialization=False``: a magic number, the protocol,
the system info, the data pickle, the storage keys, then each storage as an int64
count and its bytes). The data pickle is read by :mod:`._unpickler` with the
table of :mod:`._torch_globals`: tensors come back as compat tensors over shared
storages, with torch's dtypes, shapes, strides, offsets and ``requires_grad``.
Every size is checked against the bytes the file has before anything is made:
each record's, and the sum of the zip's records before any is decompressed
(``torch.save`` stores its records uncompressed, so a small file that declares
gigabytes is refused at once, never inflated); a record is read no further than
the size it declares.
"""

from __future__ import annotations

import io
import pickletools
import zipfile
from typing import Any

from jaxblitz.compat.serialization._torch_globals import Loader, check_data
from jaxblitz.compat.serialization._unpickler import Unpickler
from jaxblitz.data.limits import mib
from jaxblitz.integrity import CorruptFileError

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C  # torch.serialization's, both directions
PROTOCOL_VERSION = 1001
# How much more than its file a zip's compressed records may expand to, in all.
# torch.save never compresses; a re-zipped checkpoint of trained weights barely
# shrinks, so this leaves room for such a file while a bomb is refused unread.
EXPANSION = 4
_ZIP_ERRORS = (zipfile.BadZipFile, ValueError, OSError, EOFError, RuntimeError)


def _broken(name: str, why: str) -> CorruptFileError:
    return CorruptFileError(
        f"{name} {why}: it is truncated, corrupt or was not written by torch.save. "
        "Write it again (or restore a copy)."
    )


def read_zip(blob: bytes, name: str, loader: Loader) -> Any:
    """The object in a zip archive ``torch.save`` wrote (``blob`` its bytes)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(blob))
        infos = {info.filename: info for info in archive.infolist()}
    except _ZIP_ERRORS as e:
        raise _broken(name, f"is not a readable zip archive ({e})") from e
    check_expanded_size(list(infos.values()), len(blob), name)
    pickles = [n for n in infos if n.count("/") == 1 and n.endswith("/data.pkl")]
    if not pickles:
        if any(n.endswith("constants.pkl") for n in infos):
            raise NotImplementedError(
                f"{name} is a TorchScript archive (torch.jit.save): jaxblitz.compat "
                "loads torch.save files only"
            )
        raise _broken(name, "has no <archive>/data.pkl record")
    prefix = pickles[0][: -len("data.pkl")]

    def record(key: str, limit: int) -> bytes:
        info = infos.get(prefix + key)
        if info is None:
            raise _broken(name, f"has no record {prefix + key}")
        if info.file_size > limit:
            raise _broken(name, f"has a record {key} of {info.file_size} bytes")
        try:
            # ZipFile.read inflates up to 2 GiB per call whatever the record
            # declares; read(n) inflates n bytes and checks the CRC-32 there.
            with archive.open(info) as f:
                return f.read(info.file_size)
        except (*_ZIP_ERRORS, NotImplementedError) as e:
            raise _broken(name, f"has an unreadable record {key} ({e})") from e

    order = "little"
    if prefix + "byteorder" in infos:
        order = record("byteorder", 16).decode("ascii", "replace")
        if order not in ("little", "big"):
            raise _broken(name, f"records the byte order {order!r}")
    loader.big_endian = order == "big"
    data = record("data.pkl", len(blob))
    obj = loader.unpickle(data, name)

    def storage(key: str, nbytes: int) -> bytes:
        raw = record(f"data/{key}", len(blob))
        if len(raw) != nbytes:
            raise _broken(
                name,
                f"has a storage data/{key} of {len(raw)} bytes where its tensors "
                f"need {nbytes}",
            )
        return raw

    loader.fill(storage)
    return check_data(obj)


def check_expanded_size(infos: list[zipfile.ZipInfo], size: int, name: str) -> None:
    """Refuse a zip whose records declare more bytes in all than it can hold.

    Stored records (what ``torch.save`` writes) lie in the file, so together they
    hold less than its ``size`` bytes; compressed ones may expand to
    ``EXPANSION`` times it. Checked from the central directory, before any
    record is read.
    """
    total = sum(info.file_size for info in infos)
    packed = [i for i in infos if i.compress_type != zipfile.ZIP_STORED]
    limit = size * (EXPANSION if packed else 1)
    if total <= limit:
        return
    how = (
        f"{len(packed)} of them compressed, which may expand to at most "
        f"{EXPANSION} times the file's size in all"
        if packed
        else "all stored, which can hold no more than the file itself"
    )
    raise CorruptFileError(
        f"{name} is a zip archive of {mib(size)} whose {len(infos)} records "
        f"declare {mib(total)} once expanded, more than the {mib(limit)} it may "
        f"hold ({how}; torch.save stores records uncompressed): it is corrupt or "
        "a decompression bomb, and nothing was decompressed. If you trust it, "
        "extract it and zip it again without compression (zip -0)."
    )


def read_legacy(blob: bytes, name: str, loader: Loader) -> Any:
    """The object in ``torch.save(..., _use_new_zipfile_serialization=False)``."""

    def header(what: str) -> Any:
        nonlocal pos
        u = Unpickler(blob, loader.lookup, start=pos)  # torch: the same rules
        value = u.load()  # an UnpicklingError names what it refused
        pos = u.pos
        return value

    pos = 0
    if header("magic number") != MAGIC_NUMBER:
        raise _broken(name, "has an invalid magic number (torch: corrupt file?)")
    version = header("protocol version")
    if version != PROTOCOL_VERSION:
        raise _broken(name, f"has an invalid protocol version {version!r}")
    info = header("system info")
    if not isinstance(info, dict) or info.get("little_endian") is not True:
        raise NotImplementedError(
            f"{name} was saved on a big-endian machine in the legacy format: "
            "jaxblitz.compat reads little-endian legacy files only"
        )
    data = memoryview(blob)[pos:]
    stream = io.BytesIO(data)
    try:  # parses only, builds nothing: where the data pickle ends
        for _ in pickletools.genops(stream):
            pass
    except (ValueError, EOFError) as e:
        raise _broken(name, f"has a broken data pickle ({e})") from e
    obj = loader.unpickle(data[: stream.tell()], name)
    pos += stream.tell()
    keys = header("list of storage keys")
    if not isinstance(keys, list) or not all(type(k) is str for k in keys):
        raise _broken(name, "has no list of storage keys after its data")
    offsets: dict[str, tuple[int, int]] = {}  # key -> (start, count)
    itemsizes = loader.itemsizes()
    for key in keys:
        if key not in itemsizes:
            raise _broken(name, f"stores a storage {key!r} that no tensor uses")
        count = int.from_bytes(blob[pos : pos + 8], "little", signed=True)
        nbytes = count * itemsizes[key]
        if pos + 8 > len(blob) or count < 0 or pos + 8 + nbytes > len(blob):
            raise _broken(name, f"ends inside storage {key!r}")
        offsets[key] = (pos + 8, nbytes)
        pos += 8 + nbytes

    def storage(key: str, nbytes: int) -> bytes:
        if key not in offsets:
            raise _broken(name, f"has no bytes for storage {key!r}")
        start, size = offsets[key]
        if size != nbytes:
            raise _broken(
                name, f"has {size} bytes in storage {key!r} where it needs {nbytes}"
            )
        return blob[start : start + size]

    loader.fill(storage)
    return check_data(obj)


def is_legacy(blob: bytes) -> bool:
    """A pickle: torch.load reads one as the legacy stream (its magic number first)."""
    return blob[:1] == b"\x80"


def is_tar(blob: bytes) -> bool:
    return blob[257:262] == b"ustar"
