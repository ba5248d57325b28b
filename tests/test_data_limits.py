"""Hostile dataset files: a clear DataFileError naming the file, read within bounds.

Bombs are built as concatenated gzip members of zeros (1 MiB in about 1 KB), so a
file of a few hundred KB expands to hundreds of MiB without the test spending
time compressing them; the tests show the loaders stop early by counting the
bytes gzip hands out and by tracemalloc's peak.
"""

import gzip
import pickle
import tarfile
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from jaxblitz.data import DataFileError, archives, idx, limits, load, normalize
from tests.test_data import (  # noqa: F401 (offline: autouse, keeps tests offline)
    add_member,
    cifar_arrays,
    offline,
    write_binary_archive,
    write_idx,
    write_idx_split,
    write_python_archive,
)

MIB = 1 << 20
ZEROS = gzip.compress(bytes(MIB), 9)  # one gzip member: 1 MiB of zeros


def gzip_parts(*parts) -> bytes:
    """A multi-member gzip of ``parts``: bytes as they are, ints as MiB of zeros."""
    return b"".join(
        ZEROS * p if isinstance(p, int) else gzip.compress(p) for p in parts
    )


def tar_header(name: str, size: int, kind: bytes = tarfile.REGTYPE) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.type = size, kind
    return info.tobuf(tarfile.GNU_FORMAT)


class Measured:
    """Peak Python memory (tracemalloc) and bytes gunzipped while loading."""

    def __init__(self, monkeypatch):
        self.gunzipped = 0
        real_read = gzip.GzipFile.read

        def counting_read(gz, size=-1):
            chunk = real_read(gz, size)
            self.gunzipped += len(chunk)
            return chunk

        monkeypatch.setattr(gzip.GzipFile, "read", counting_read)

    def __enter__(self):
        tracemalloc.start()
        return self

    def __exit__(self, *exc):
        self.peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


def refused(name, split, folder, monkeypatch) -> tuple[str, Measured]:
    """Load, expecting a DataFileError; its message and what the attempt cost."""
    with Measured(monkeypatch) as cost, pytest.raises(DataFileError) as info:
        load(name, split, folder)
    return str(info.value), cost


def idx_bytes(magic: int, dims, data: bytes = b"") -> bytes:
    """An idx file's bytes with any header: magic, dimensions, then ``data``."""
    return (
        magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in dims) + data
    )


def python_archive_with(folder, **members) -> None:
    """torchvision's archive of ``cifar_arrays()`` with some members replaced."""
    path = write_python_archive(folder, cifar_arrays())
    with tarfile.open(path) as tar:
        payloads = {
            m.name.split("/")[-1]: tar.extractfile(m).read() for m in tar if m.isfile()
        }
    payloads.update(members)
    with tarfile.open(path, "w:gz") as tar:
        for base, payload in payloads.items():
            add_member(tar, f"cifar-10-batches-py/{base}", payload)


def pickled_batch(labels, data=None, protocol=2) -> bytes:
    data = np.zeros((len(labels), 3072), np.uint8) if data is None else data
    return pickle.dumps({b"data": data, b"labels": labels}, protocol=protocol)


# -- finding 1: decompression bombs -----------------------------------------------


@pytest.mark.parametrize(
    ("archive", "member", "kind"),
    [
        (archives.PYTHON_ARCHIVE, "cifar-10-batches-py/data_batch_1", tarfile.REGTYPE),
        (
            archives.BINARY_ARCHIVE,
            "cifar-10-batches-bin/data_batch_1.bin",
            tarfile.REGTYPE,
        ),
        (archives.BINARY_ARCHIVE, "././@LongLink", tarfile.GNUTYPE_LONGNAME),
    ],
)
def test_cifar_gzip_bomb_is_refused_before_it_expands(
    tmp_path, monkeypatch, archive, member, kind
):
    # 600 KB on disk, 600 MiB of zeros once gunzipped, all in one member.
    path = tmp_path / archive
    path.write_bytes(gzip_parts(tar_header(member, 600 * MIB, kind), 600))
    message, cost = refused("cifar10", "train", tmp_path, monkeypatch)
    assert message.startswith(f"{path} has a member {member!r} whose header declares")
    assert "629145600 bytes (600.0 MiB), more than any of its members" in message
    assert "Delete it" in message
    assert cost.gunzipped <= 2 * MIB  # the header, and tarfile's read-ahead
    assert cost.peak < 16 * MIB


def test_cifar_batch_of_more_than_10000_records_is_refused_from_its_header(
    tmp_path, monkeypatch
):
    path = tmp_path / archives.BINARY_ARCHIVE
    records = 10_001 * archives.RECORD  # under the cap for any member, over a batch's
    member = "cifar-10-batches-bin/data_batch_1.bin"
    path.write_bytes(gzip_parts(tar_header(member, records), records // MIB + 1))
    message, cost = refused("cifar10", "train", tmp_path, monkeypatch)
    assert message.startswith(f"{path} has a data_batch_1.bin of 30733073 bytes")
    assert "the most a CIFAR-10 binary archive holds there is 30730000 bytes" in message
    assert cost.gunzipped <= 2 * MIB and cost.peak < 16 * MIB


def test_cifar_archive_that_expands_past_six_batches_stops_at_the_limit(
    tmp_path, monkeypatch
):
    # Ten members CIFAR-10 does not read, 30 MiB each: every header is fine, the
    # stream as a whole is too long. Only 185 MiB or so are gunzipped, in 1 MiB
    # chunks, none of them kept.
    path = tmp_path / archives.BINARY_ARCHIVE
    parts = []
    for i in range(10):
        parts += [tar_header(f"junk/{i}", 30 * MIB), 30]
    path.write_bytes(gzip_parts(*parts))
    message, cost = refused("cifar10", "train", tmp_path, monkeypatch)
    limit = 6 * archives.BINARY_BATCH_BYTES + MIB
    assert message.startswith(f"{path} expands to more than {limits.mib(limit)}")
    assert "the most a CIFAR-10 binary archive can hold" in message
    assert limit < cost.gunzipped <= limit + 2 * MIB < 300 * MIB
    assert cost.peak < 16 * MIB


def test_cifar_archive_with_too_many_members_is_refused(tmp_path, monkeypatch):
    path = tmp_path / archives.BINARY_ARCHIVE
    path.write_bytes(
        gzip_parts(b"".join(tar_header(f"f{i}", 0) for i in range(1000)) + bytes(1024))
    )
    message, _ = refused("cifar10", "train", tmp_path, monkeypatch)
    assert message.startswith(f"{path} holds more than 64 members")


def test_a_chain_of_tar_extension_headers_is_refused_not_a_recursion_error(
    tmp_path, monkeypatch
):
    # tarfile follows long-name and pax headers by recursion: 3000 of them would
    # be a RecursionError traceback.
    path = tmp_path / archives.BINARY_ARCHIVE
    chain = b"".join(tar_header("x", 0, tarfile.XHDTYPE) for _ in range(3000))
    path.write_bytes(gzip_parts(chain + bytes(1024)))
    message, _ = refused("cifar10", "train", tmp_path, monkeypatch)
    assert message.startswith(f"{path} has too many long-name or pax headers")


def test_idx_gzip_bomb_stops_at_what_its_header_announces(tmp_path, monkeypatch):
    folder = tmp_path / "mnist"
    write_idx_split(folder, "test")
    images = folder / "t10k-images-idx3-ubyte.gz"
    header = idx_bytes(0x803, (7, 28, 28))
    images.write_bytes(gzip_parts(header, 600))  # 7 images, then 600 MiB more
    message, cost = refused("mnist", "test", tmp_path, monkeypatch)
    assert message.startswith(f"{images} holds more than its header's (7, 28, 28)")
    assert cost.gunzipped <= 2 * MIB and cost.peak < 16 * MIB


# -- finding 2: CIFAR labels ------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ([3, 2**40], "outside 0..9 in data_batch_1: 1099511627776 at index 1"),
        ([2**32 + 3], "outside 0..9 in data_batch_1: 4294967299 at index 0"),
        ([-1, 10, 4], "outside 0..9 in data_batch_1: -1 at index 0 and 1 more"),
        ([2**70], "labels of object(1,) in data_batch_1, expected a list of integ"),
        ([1.0, 2.5], "labels of float64(2,) in data_batch_1, expected a list of in"),
        ([True], "labels of bool(1,) in data_batch_1, expected a list of integers"),
        ([[1, 2]], "labels of int64(1, 2) in data_batch_1, expected a list of in"),
    ],
)
def test_cifar_labels_outside_0_to_9_or_not_integers_are_refused(
    tmp_path, monkeypatch, labels, expected
):
    data = np.zeros((len(labels), 3072), np.uint8)
    python_archive_with(tmp_path, data_batch_1=pickled_batch(labels, data))
    message, _ = refused("cifar10", "train", tmp_path, monkeypatch)
    assert message.startswith(f"{tmp_path / archives.PYTHON_ARCHIVE} has ")
    assert expected in message


def test_cifar_binary_label_byte_outside_0_to_9_is_refused(tmp_path, monkeypatch):
    arrays = cifar_arrays()
    arrays["test"][1][2] = 200
    path = write_binary_archive(tmp_path, arrays)
    message, _ = refused("cifar10", "test", tmp_path, monkeypatch)
    assert message.startswith(
        f"{path} has labels outside 0..9 in test_batch.bin: 200 at index 2"
    )


# -- finding 3: idx dims -----------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "dims"),
    [
        ("images", (2**31, 2**31, 28)),
        ("images", (2**32 - 1, 28, 28)),
        ("labels", (2**32 - 1,)),
    ],
)
def test_idx_dims_that_overflow_are_refused_before_allocating(
    tmp_path, monkeypatch, kind, dims
):
    folder = tmp_path / "mnist"
    write_idx_split(folder, "test")
    path = folder / f"t10k-{kind}-idx{len(dims)}-ubyte.gz"
    path.write_bytes(gzip_parts(idx_bytes(0x800 + len(dims), dims), 4))
    message, cost = refused("mnist", "test", tmp_path, monkeypatch)
    assert message.startswith(f"{path} has header dimensions {dims}")
    assert f"more than the limit of {limits.mib(idx.MAX_BYTES)}" in message
    assert cost.gunzipped <= MIB and cost.peak < 4 * MIB


# -- finding 4: everything else of the kind ----------------------------------------


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (b"", "magic number is missing, expected 0x803"),
        (idx_bytes(0x803, (1, 28)), "is truncated: its header ends after 12 of 16"),
        (idx_bytes(0x803, (2, 28, 28), bytes(28 * 28)), "is truncated: its header"),
        (idx_bytes(0xD03, (1, 28, 28)), "0xd03, expected 0x803; it holds 32-bit float"),
        (idx_bytes(0x703, (1, 28, 28)), "; it holds unknown type 0x07, and MNIST's"),
        (
            idx_bytes(0x804, (1, 1, 28, 28)),
            "0x804, expected 0x803; it has 4 dimensions",
        ),
        (
            idx_bytes(0x803, (0, 28, 28)),
            "has header dimensions (0, 28, 28): it holds n",
        ),
        (idx_bytes(0x803, (1, 32, 32)), "(1, 32, 32), expected (N, 28, 28) for images"),
        (b"\x1f\x8b" + bytes(30), "it is gzip-compressed, so name it t10k-images-"),
        (b"x" * 4, "magic number is 0x78787878, expected 0x803"),
    ],
    ids=[
        "empty",
        "short header",
        "short data",
        "floats",
        "unknown type",
        "4 dims",
        "0 images",
        "32x32",
        "gzip",
        "text",
    ],
)
def test_idx_header_that_is_not_mnist_is_a_clear_error(tmp_path, payload, expected):
    folder = tmp_path / "mnist"
    write_idx_split(folder, "test", compress=False)
    path = folder / "t10k-images-idx3-ubyte"
    path.write_bytes(payload)
    with pytest.raises(DataFileError) as info:
        load("mnist", "test", tmp_path)
    assert str(info.value).startswith(f"{path} ")
    assert expected in str(info.value)


def test_idx_labels_whose_count_disagrees_with_the_images_are_refused(tmp_path):
    folder = tmp_path / "mnist"
    write_idx_split(folder, "test")  # 7 images
    labels = write_idx(
        folder / "t10k-labels-idx1-ubyte.gz", np.zeros(5, np.uint8), 0x801
    )
    with pytest.raises(DataFileError) as info:
        load("mnist", "test", tmp_path)
    assert str(info.value).startswith(
        f"{folder / 't10k-images-idx3-ubyte.gz'} holds 7 images but {labels} 5 labels"
    )


def test_idx_label_outside_0_to_9_is_refused(tmp_path):
    folder = tmp_path / "mnist"
    write_idx_split(folder, "test")
    labels = np.full(7, 3, np.uint8)
    labels[4] = 77
    path = write_idx(folder / "t10k-labels-idx1-ubyte.gz", labels, 0x801)
    with pytest.raises(DataFileError, match="outside 0..9: 77 at index 4") as info:
        load("mnist", "test", tmp_path)
    assert str(info.value).startswith(str(path))


def test_a_pickle_memo_index_bomb_is_refused_before_unpickling(tmp_path, monkeypatch):
    # Nine bytes: None, stored in the memo at index 2**31 - 1. pickle's C reader
    # would size (and zero) its memo for twice that index: 32 GiB.
    bomb = b"\x80\x02N" + b"r" + (2**31 - 1).to_bytes(4, "little") + b"."
    python_archive_with(tmp_path, data_batch_1=bomb)
    message, cost = refused("cifar10", "train", tmp_path, monkeypatch)
    assert "data_batch_1 that does not unpickle (memo index 2147483647" in message
    assert cost.peak < 16 * MIB


def test_a_pickle_of_many_tiny_objects_is_refused_before_unpickling(tmp_path):
    # 4 MiB of EMPTY_LIST opcodes would be 4 million lists (about 250 MB).
    bomb = b"\x80\x02" + b"]" * (4 * MIB) + b"."
    python_archive_with(tmp_path, data_batch_1=bomb)
    with pytest.raises(DataFileError, match="more than 262144 pickle opcodes"):
        load("cifar10", "train", tmp_path)


class _Reduces:
    """Pickles as ``func(*args)``, optionally with a BUILD ``state``."""

    def __init__(self, func, args, state=None):
        self.value = (func, args) if state is None else (func, args, state)

    def __reduce__(self):
        return self.value


RECONSTRUCT = np.ndarray(0).__reduce__()[0]


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        # NumPy itself segfaults on this state (an object array over bytes data).
        (
            _Reduces(
                RECONSTRUCT, (np.ndarray, (0,), b"b"), (1, (3,), np.dtype("O"), 0, [1])
            ),
            "refusing to unpickle the dtype 'O8'",
        ),
        # np.ndarray(shape) would allocate whatever shape the file asks for.
        (_Reduces(np.ndarray, ((2**40,), np.dtype("u1"))), "object is not callable"),
        (
            _Reduces(
                RECONSTRUCT,
                (np.ndarray, (0,), b"b"),
                (1, (2**40,), np.dtype("u1"), 0, b"\0"),
            ),
            "(1099511627776,) uint8 needs 1099511627776 bytes, the pickle gives 1",
        ),
        (_Reduces(np.dtype, ("u1,i4",)), "refusing to unpickle the dtype 'u1,i4'"),
    ],
    ids=["object array", "ndarray call", "shape over data", "structured dtype"],
)
def test_pickled_arrays_other_than_plain_numbers_are_refused(
    tmp_path, payload, expected
):
    python_archive_with(tmp_path, data_batch_1=pickle.dumps(payload, protocol=2))
    with pytest.raises(DataFileError) as info:
        load("cifar10", "train", tmp_path)
    assert "has a data_batch_1 that does not unpickle (" in str(info.value)
    assert expected in str(info.value)


def test_a_pickle_cannot_copy_its_strings_more_than_once(tmp_path):
    # A 1 MiB string, then _codecs.encode(text, "latin1") of it a thousand times,
    # 10 bytes each: 1 GiB of copies from a member of 1 MiB.
    text = b"X" + MIB.to_bytes(4, "little") + b"a" * MIB + b"q\x02"
    body = b"c_codecs\nencode\nq\x01" + text + b"X\x06\x00\x00\x00latin1q\x03"
    repeat = b"h\x01h\x02h\x03\x86R0" * 1000  # encode(text, "latin1"), then POP
    python_archive_with(tmp_path, data_batch_1=b"\x80\x02" + body + repeat + b"N.")
    with pytest.raises(DataFileError, match="refusing to make more bytes than it"):
        load("cifar10", "train", tmp_path)


BATCHES = {  # made when the test runs: 10001 images are 31 MB
    "empty": (
        lambda: pickled_batch([], protocol=4),
        "data of uint8(0, 3072), expected a uint8 array (N, 3072) with N from 1 to "
        "10000",
    ),
    "10001 images": (
        lambda: pickled_batch([0] * 10_001, np.zeros((10_001, 3072), np.uint8), 4),
        "data of uint8(10001, 3072), expected",
    ),
    "a list": (
        lambda: pickle.dumps({b"data": [[0] * 3072], b"labels": [0]}, protocol=2),
        "data of a list, expected a uint8 array",
    ),
    "more labels": (
        lambda: pickled_batch([1, 2], np.zeros((1, 3072), np.uint8)),
        "1 images but 2 labels",
    ),
}


@pytest.mark.parametrize("case", BATCHES)
def test_a_cifar_batch_empty_over_10000_images_or_mismatched_is_refused(tmp_path, case):
    payload, expected = BATCHES[case]
    python_archive_with(tmp_path, data_batch_1=payload())
    with pytest.raises(DataFileError) as info:
        load("cifar10", "train", tmp_path)
    assert str(info.value).startswith(f"{tmp_path / archives.PYTHON_ARCHIVE} has ")
    assert expected in str(info.value)


def test_a_cifar_batch_listed_twice_is_refused(tmp_path):
    path = tmp_path / archives.PYTHON_ARCHIVE
    with tarfile.open(path, "w:gz") as tar:
        for _ in range(2):  # tar would let the second silently replace the first
            add_member(tar, "cifar-10-batches-py/data_batch_1", pickled_batch([1]))
    with pytest.raises(DataFileError) as info:
        load("cifar10", "train", tmp_path)
    assert str(info.value).startswith(f"{path} holds data_batch_1 twice")


def test_cifar_class_names_that_are_not_a_list_are_refused(tmp_path):
    meta = pickle.dumps({b"label_names": 10}, protocol=2)
    python_archive_with(tmp_path, **{"batches.meta": meta})
    with pytest.raises(DataFileError, match="lists no list of class names"):
        load("cifar10", "train", tmp_path)


def test_a_cache_whose_header_claims_terabytes_is_a_miss_not_a_memory_error(
    tmp_path,
):
    from numpy.lib import format as npy

    arrays = cifar_arrays()
    write_binary_archive(tmp_path, arrays)
    good = load("cifar10", "test", tmp_path)
    labels = next((tmp_path / "npy").glob("*-test-labels.npy"))
    with open(labels, "wb") as f:
        npy.write_array_header_1_0(
            f, {"descr": "<i4", "fortran_order": False, "shape": (2**40,)}
        )
        f.write(bytes(64))
    again = load("cifar10", "test", tmp_path)  # decoded again, cache rewritten
    np.testing.assert_array_equal(again.labels, good.labels)


def test_every_refusal_is_a_value_error_the_cli_reports():
    # jaxblitz-train reports ValueError (among others) as one clean line.
    assert issubclass(DataFileError, ValueError)
    error = limits.broken(Path("/data/x.gz"), "is bad")
    assert str(error) == (
        "/data/x.gz is bad. Delete it and download it again (or let "
        "jaxblitz.data.load download it)."
    )


def python2_batch(pixels: np.ndarray, labels) -> bytes:
    """A batch as Python 2's cPickle wrote torchvision's (protocol 2, str = bytes)."""
    memo = iter(range(1, 256))

    def s(b: bytes) -> bytes:  # a Python 2 str, memoised as cPickle does
        put = b"q" + bytes([next(memo)])
        if len(b) < 256:
            return b"U" + bytes([len(b)]) + b + put
        return b"T" + len(b).to_bytes(4, "little") + b + put

    n = len(pixels)
    dtype_state = b"(K\x03" + s(b"|") + b"NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb"
    return (
        b"\x80\x02}q\x00(" + s(b"data")
        + b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85"
        + s(b"b") + b"\x87R(K\x01M" + n.to_bytes(2, "little") + b"M\x00\x0c\x86"
        + b"cnumpy\ndtype\n" + s(b"u1") + b"K\x00K\x01\x87R" + dtype_state
        + b"\x89" + s(pixels.tobytes()) + b"tb"
        + s(b"labels") + b"](" + b"".join(b"K" + bytes([y]) for y in labels) + b"e"
        + b"u."
    )  # fmt: skip


def test_a_python_2_pickle_like_torchvisions_still_decodes(tmp_path):
    """The restricted reader still reads the format the real archive is in."""
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (300, 3072), np.uint8)
    labels = rng.integers(0, 10, 300).tolist()
    python_archive_with(tmp_path, data_batch_1=python2_batch(pixels, labels))
    train = load("cifar10", "train", tmp_path)
    np.testing.assert_array_equal(
        train.images[:300], normalize(pixels.reshape(-1, 3, 32, 32))
    )
    np.testing.assert_array_equal(train.labels[:300], labels)
