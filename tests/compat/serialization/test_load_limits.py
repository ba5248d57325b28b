"""compat ``torch.load`` within what a file can hold: a zip whose records declare
more than the file in all is refused before anything is decompressed, and a
record is never inflated past the size it declares.
"""

import io
import struct
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat.serialization import _torch_read
from jaxblitz.integrity import CorruptFileError
from tests.compat.serialization.test_serialization_hostile import g, i, pkl, s, t


def _storage(key: str, numel: int) -> bytes:
    """A 1-d float tensor over the whole of storage ``key`` (pickle opcodes)."""
    pid = t(s("storage"), g("torch", "FloatStorage"), s(key), s("cpu"), i(numel))
    hooks = g("collections", "OrderedDict") + b")R"
    args = t(pid + b"Q", i(0), t(i(numel)), t(i(1)), b"\x89", hooks)
    return g("torch._utils", "_rebuild_tensor_v2") + args + b"R"


def _dict_of_storages(count: int, numel: int) -> bytes:
    items = b"".join(s(f"w{k}") + _storage(str(k), numel) for k in range(count))
    return pkl(b"}(" + items + b"u")


def _archive(records: dict[str, tuple[bytes, int]]) -> bytes:
    """A zip of ``name -> (bytes, compress_type)``, laid out as torch.save's."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, (raw, kind) in records.items():
            z.writestr(f"archive/{name}", raw, compress_type=kind)
        z.writestr("archive/version", b"3\n")  # torch's reader needs it
    return out.getvalue()


def _bomb(count: int = 64, numel: int = 1 << 16) -> bytes:
    """``count`` deflated storages of zeros, each no larger than the file (padded
    by an unused stored record), together many times its size."""
    records = {
        "data.pkl": (_dict_of_storages(count, numel), zipfile.ZIP_STORED),
        "byteorder": (b"little", zipfile.ZIP_STORED),
        "pad": (np.random.default_rng(0).bytes(4 * numel), zipfile.ZIP_STORED),
    }
    for k in range(count):
        records[f"data/{k}"] = (bytes(4 * numel), zipfile.ZIP_DEFLATED)
    return _archive(records)


def test_a_zip_whose_records_expand_far_past_the_file_is_refused_unread(
    monkeypatch,
):
    blob = _bomb()
    opened = []
    real_open = zipfile.ZipFile.open
    monkeypatch.setattr(
        zipfile.ZipFile,
        "open",
        lambda self, info, *a, **k: (
            opened.append(info) or real_open(self, info, *a, **k)
        ),
    )
    with pytest.raises(CorruptFileError) as e:
        torch.load(io.BytesIO(blob))
    declared = sum(
        info.file_size for info in zipfile.ZipFile(io.BytesIO(blob)).infolist()
    )
    assert declared > 64 * 4 * (1 << 16)  # the storages alone
    message = str(e.value)
    assert message.startswith(f"the file object is a zip archive of {len(blob)} bytes")
    assert f"whose 68 records declare {declared} bytes" in message
    assert f"{_torch_read.EXPANSION * len(blob)} bytes" in message
    assert "nothing was decompressed" in message
    assert opened == []


def test_the_refusal_names_the_path_it_was_given(tmp_path):
    path = tmp_path / "bomb.pth"
    path.write_bytes(_bomb())
    with pytest.raises(CorruptFileError, match=f"^{path} is a zip archive of"):
        torch.load(path)


def test_real_torch_reads_the_bomb_that_compat_refuses():
    # The file is valid: only its size makes it a bomb, not its format.
    pt = pytest.importorskip("torch")
    loaded = pt.load(io.BytesIO(_bomb(count=4)), weights_only=True)
    assert sorted(loaded) == ["w0", "w1", "w2", "w3"]
    assert loaded["w3"].shape == (1 << 16,) and float(loaded["w3"].abs().sum()) == 0
    with pytest.raises(CorruptFileError, match="4 of them compressed"):
        torch.load(io.BytesIO(_bomb(count=4)))


def _central(blob: bytearray):
    """``(position, name)`` of each central directory entry of a zip."""
    pos = blob.index(b"PK\x01\x02")
    while blob[pos : pos + 4] == b"PK\x01\x02":
        name_len, extra_len, comment_len = struct.unpack_from("<3H", blob, pos + 28)
        yield pos, bytes(blob[pos + 46 : pos + 46 + name_len]).decode()
        pos += 46 + name_len + extra_len + comment_len


def test_stored_records_may_not_declare_more_than_the_file():
    records = {
        "data.pkl": (_dict_of_storages(1, 3), zipfile.ZIP_STORED),
        "data/0": (struct.pack("<3f", 1, 2, 3), zipfile.ZIP_STORED),
    }
    blob = bytearray(_archive(records))
    for pos, name in _central(blob):
        if name == "archive/data/0":  # its uncompressed size, raised past the file
            struct.pack_into("<L", blob, pos + 24, len(blob))
    with pytest.raises(CorruptFileError, match="all stored, which can hold no more"):
        torch.load(io.BytesIO(bytes(blob)))


def test_a_deflated_archive_within_the_limit_loads_as_in_torch():
    weights = np.random.default_rng(1).standard_normal(256).astype(np.float32)
    records = {
        "data.pkl": (_dict_of_storages(1, 256), zipfile.ZIP_DEFLATED),
        "byteorder": (b"little", zipfile.ZIP_DEFLATED),
        "data/0": (weights.tobytes(), zipfile.ZIP_DEFLATED),
    }
    blob = _archive(records)
    loaded = torch.load(io.BytesIO(blob))
    np.testing.assert_array_equal(loaded["w0"].numpy(), weights)
    pt = pytest.importorskip("torch")
    theirs = pt.load(io.BytesIO(blob), weights_only=True)["w0"].numpy()
    np.testing.assert_array_equal(theirs, weights)


def _lying_record(inflates_to: int) -> bytes:
    """A zip whose storage record declares 12 bytes but inflates much further."""
    first = struct.pack("<3f", 1, 2, 3)
    records = {
        "data.pkl": (_dict_of_storages(1, 3), zipfile.ZIP_STORED),
        "data/0": (first, zipfile.ZIP_DEFLATED),
        "pad": (bytes(64 << 10), zipfile.ZIP_STORED),
    }
    blob = _archive(records)
    info = zipfile.ZipFile(io.BytesIO(blob)).getinfo("archive/data/0")
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = deflate.compress(first + bytes(inflates_to)) + deflate.flush()
    # The long stream in place of the short one; what follows moves by `shift`.
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    shift = len(stream) - info.compress_size
    out = bytearray(blob[:start] + stream + blob[start + info.compress_size :])
    struct.pack_into("<L", out, info.header_offset + 18, len(stream))
    for pos, name in _central(out):
        if name == "archive/data/0":
            struct.pack_into("<L", out, pos + 20, len(stream))
        offset = struct.unpack_from("<L", out, pos + 42)[0]
        if offset > info.header_offset:
            struct.pack_into("<L", out, pos + 42, offset + shift)
    end = out.index(b"PK\x05\x06")
    struct.pack_into(
        "<L", out, end + 16, struct.unpack_from("<L", out, end + 16)[0] + shift
    )
    return bytes(out)


def test_a_record_is_inflated_no_further_than_it_declares():
    blob = _lying_record(64 << 20)
    assert len(blob) < 1 << 20
    tracemalloc.start()
    try:
        loaded = torch.load(io.BytesIO(blob))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert loaded["w0"].tolist() == [1.0, 2.0, 3.0]
    assert peak < 16 << 20  # ZipFile.read would have inflated all 64 MiB
