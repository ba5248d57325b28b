"""Blitz 4, Training a classifier: decoding the CIFAR-10 archives.

Bytes to ``uint8`` pixels ``(N, 3, 32, 32)`` and ``int32`` labels, for torchvision's
pickled ``cifar-10-python.tar.gz`` and tfds's ``cifar-10-binary.tar.gz`` of
3073-byte records, in one streaming pass through the gzip. Nothing is read beyond
what CIFAR-10 can hold: six batches of at most 10000 images, each member's size
checked from its tar header before it is read, the pickles unpickled by a reader
that builds only NumPy number arrays and never runs code. Anything else is a
:class:`~jaxblitz.data.limits.DataFileError` naming the archive.
"""

from __future__ import annotations

import io
import math
import pickle
import pickletools
import re
from pathlib import Path

import numpy as np

from jaxblitz.data.limits import broken, check_labels, tar_members

PYTHON_ARCHIVE = "cifar-10-python.tar.gz"
BINARY_ARCHIVE = "cifar-10-binary.tar.gz"
RECORD = 1 + 3 * 32 * 32  # one label byte, then R, G, B planes of 32x32
PIXELS = RECORD - 1
BATCH_RECORDS = 10_000  # images in each of CIFAR-10's five train and one test batch
BINARY_BATCH_BYTES = BATCH_RECORDS * RECORD
# A pickled batch: its pixels as one string (up to twice as long when a Python 3
# protocol-2 pickle UTF-8-encodes them), labels and file names. The original:
# 31035704 bytes.
PYTHON_BATCH_BYTES = 2 * BATCH_RECORDS * PIXELS + (1 << 20)
META_BYTES = 1 << 16  # the class names; the originals are 158 and 61 bytes
MAX_MEMBERS = 64  # the originals hold a folder and 8 files
# Pickle opcodes in one member: the originals have about 20000 (a Python 3
# protocol-2 repickle about 90000); every opcode can make an object.
MAX_PICKLE_OPS = 1 << 18

Split = tuple[np.ndarray, np.ndarray]  # (pixels (N, C, H, W) uint8, labels int32)


def read_cifar(path: Path) -> dict[str, Split]:
    """Both splits of a CIFAR-10 archive, told apart by its file name."""
    binary = path.name == BINARY_ARCHIVE
    batch = re.compile(
        r"(data_batch_([1-5])|test_batch)" + (r"\.bin" if binary else "")
    )
    meta = "batches.meta.txt" if binary else "batches.meta"
    batch_bytes = BINARY_BATCH_BYTES if binary else PYTHON_BATCH_BYTES
    decode = _binary_batch if binary else python_batch

    def limit(base: str) -> int | None:  # None: not a member CIFAR-10 reads
        if base == meta:
            return META_BYTES
        return batch_bytes if batch.fullmatch(base) else None

    found: dict[str, Split] = {}  # the batches
    read = set()  # every member read, the class names' included
    members = tar_members(
        path,
        limit,
        most=PYTHON_BATCH_BYTES,  # the largest member of either format
        total=6 * batch_bytes + (1 << 20),  # six batches, class names, tar headers
        count=MAX_MEMBERS,
        what=f"a CIFAR-10 {'binary' if binary else 'python'} archive",
    )
    for base, raw in members:
        read.add(base)
        if base == meta:
            _check_meta(path, raw, binary)
        else:
            found[base] = decode(path, base, raw)
    train = sorted((int(m[2]), b) for b in found if (m := batch.fullmatch(b)) and m[2])
    test = "test_batch.bin" if binary else "test_batch"
    if not train or test not in found or meta not in read:
        raise broken(
            path,
            f"is not a CIFAR-10 {'binary' if binary else 'python'} archive: it should "
            f"hold data_batch_1..5, test_batch and {meta}, and holds "
            f"{sorted(read) or 'none of them'}",
        )
    parts = [found[b] for _, b in train]
    return {
        "train": (
            np.concatenate([p for p, _ in parts]),
            np.concatenate([y for _, y in parts]),
        ),
        "test": found[test],
    }


def _binary_batch(path: Path, base: str, raw: bytes) -> Split:
    if not raw or len(raw) % RECORD:
        raise broken(
            path, f"has {base} of {len(raw)} bytes, not whole {RECORD}-byte records"
        )
    records = np.frombuffer(raw, np.uint8).reshape(-1, RECORD)
    labels = check_labels(path, records[:, 0], f" in {base}")
    return records[:, 1:].reshape(-1, 3, 32, 32), labels


# -- the pickled batches of cifar-10-python.tar.gz ---------------------------------


class _PickledDtype:
    """A pickled ``numpy.dtype``: plain numbers only, no objects, fields or subarrays.

    Standing in for the real class, it keeps NumPy's own ``__setstate__`` (and its
    crashes on states no NumPy ever wrote) out of reach of the file.
    """

    def __init__(self, spec, align=False, copy=True):
        if isinstance(spec, bytes):  # Python 2's str
            spec = spec.decode("ascii")
        dtype = np.dtype(spec) if isinstance(spec, str) else None
        if dtype is None or dtype.kind not in "biuf" or dtype.fields or dtype.subdtype:
            raise pickle.UnpicklingError(f"refusing to unpickle the dtype {spec!r}")
        self.dtype = dtype

    def __setstate__(self, state):
        # (version, byte order, subarray, names, fields, size, alignment, flags...)
        if not isinstance(state, tuple) or len(state) not in (8, 9):
            raise pickle.UnpicklingError("refusing to unpickle an unknown dtype state")
        if any(x is not None for x in state[2:5]):
            raise pickle.UnpicklingError("refusing to unpickle a dtype with fields")
        order = state[1].decode() if isinstance(state[1], bytes) else state[1]
        if order in ("<", ">"):
            self.dtype = self.dtype.newbyteorder("<" if order == "<" else ">")


# The pickle names numpy.ndarray only to hand it to _reconstruct; the class itself
# would let it allocate an array of any shape.
_NDARRAY = object()


class _PickledArray(np.ndarray):
    """What ``_reconstruct`` makes: an empty array whose state is checked first."""

    makers: _Makers  # set by _Makers.reconstruct, deleted once the state is read

    def __setstate__(self, state):
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise pickle.UnpicklingError("refusing to unpickle an unknown array state")
        shape, dtype, fortran, raw = state[-4:]
        dtype = self.makers.array_dtype(shape, dtype, raw)
        del self.makers
        # numpy's stub asks a numpy.bool for the order flag; its parser takes a
        # Python int (a bool) and refuses a numpy.bool.
        super().__setstate__(
            (1, tuple(shape), dtype, bool(fortran), raw)  # type: ignore[arg-type]
        )


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickles builtins and NumPy number arrays only: all the original batches hold.

    Every callable it hands the pickle is a :class:`_Makers` method: they refuse
    anything but plain arrays, and together make no more bytes than the pickle
    holds (a few opcodes repeating one call must not copy a big string
    thousands of times).
    """

    def __init__(self, raw: bytes):
        # The original batches were pickled by Python 2: bytes keys and strings.
        super().__init__(io.BytesIO(raw), encoding="bytes")
        # Each string of the pickle may be encoded once, then made an array once.
        # (Held apart from the unpickler: its memo holds these methods, and a
        # cycle through it would keep the whole memo alive until a GC pass.)
        makers = _Makers(2 * len(raw))
        self.safe = {
            "_reconstruct": makers.reconstruct,
            "_frombuffer": makers.frombuffer,
            "ndarray": _NDARRAY,
            "dtype": _PickledDtype,
        }
        self.encode = makers.encode

    def find_class(self, module: str, name: str):
        if module.split(".")[0] == "numpy" and name in self.safe:
            return self.safe[name]
        if (module, name) == ("_codecs", "encode"):  # bytes in a Python 3 protocol 2
            return self.encode
        raise pickle.UnpicklingError(f"refusing to unpickle {module}.{name}")


class _Makers:
    """What a pickle may call, making at most ``budget`` bytes in all."""

    def __init__(self, budget: int):
        self.budget = budget

    def spend(self, nbytes: int) -> None:
        self.budget -= nbytes
        if self.budget < 0:
            raise pickle.UnpicklingError("refusing to make more bytes than it holds")

    def encode(self, text, encoding="utf-8"):
        if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
            raise pickle.UnpicklingError("refusing _codecs.encode but of latin1 text")
        self.spend(len(text))
        return text.encode("latin-1")

    def reconstruct(self, subtype, shape, dtype):
        if subtype is not _NDARRAY:
            raise pickle.UnpicklingError("refusing to reconstruct a non-ndarray")
        array = _PickledArray(0, np.uint8)  # shaped by __setstate__, once checked
        array.makers = self
        return array

    def frombuffer(self, raw, dtype, shape, order):  # protocol 5's arrays
        dtype = self.array_dtype(shape, dtype, raw)
        return np.frombuffer(raw, dtype).reshape(shape, order=order)

    def array_dtype(self, shape, dtype, raw) -> np.dtype:
        """The dtype of a plain array of ``shape`` made from the string ``raw``."""
        if not isinstance(dtype, _PickledDtype) or not isinstance(
            raw, bytes | bytearray
        ):
            raise pickle.UnpicklingError("refusing an array but of numbers from bytes")
        if not isinstance(shape, tuple) or not all(
            isinstance(d, int) and d >= 0 for d in shape
        ):
            raise pickle.UnpicklingError(f"refusing an array of shape {shape!r}")
        need = math.prod(shape) * dtype.dtype.itemsize
        if need != len(raw):
            raise pickle.UnpicklingError(
                f"an array of shape {shape} {dtype.dtype} needs {need} bytes, the "
                f"pickle gives {len(raw)}"
            )
        self.spend(len(raw))
        return dtype.dtype


def unpickle_batch(path: Path, base: str, raw: bytes) -> dict:
    """One pickled member of the python archive (a batch or ``batches.meta``), read
    by the restricted unpickler: NumPy arrays, builtins, nothing else."""
    try:
        _check_opcodes(raw)
        batch = _ArrayUnpickler(raw).load()
    except Exception as e:  # any failure to unpickle means a broken member
        raise broken(path, f"has a {base} that does not unpickle ({e})") from e
    if not isinstance(batch, dict):
        raise broken(path, f"has a {base} that is not a CIFAR-10 batch dict")
    return batch


def _check_opcodes(raw: bytes) -> None:
    """Refuse, before unpickling, what would make memory out of nothing.

    pickle's C reader sizes its memo by the largest index stored, so one ``PUT``
    of index 2**31 makes it allocate and zero 32 GiB; and each one-byte opcode
    can make an object.
    A real pickle stores memo entries in order and has a bounded number of
    opcodes. (``pickletools.genops`` only parses; it builds nothing.)
    """
    for count, (op, arg, _) in enumerate(pickletools.genops(raw)):
        if count >= MAX_PICKLE_OPS:
            raise pickle.UnpicklingError(
                f"more than {MAX_PICKLE_OPS} pickle opcodes, more than a batch has"
            )
        memo_put = op.name in ("PUT", "BINPUT", "LONG_BINPUT")  # arg: the index
        if memo_put and isinstance(arg, int) and arg > count:
            raise pickle.UnpicklingError(
                f"memo index {arg} at opcode {count}: a real pickle numbers its "
                "memo in order"
            )


def python_batch(path: Path, base: str, raw: bytes) -> Split:
    """A pickled batch as ``(images (N, 3, 32, 32) uint8, labels)``, checked."""
    batch = unpickle_batch(path, base, raw)
    if b"data" not in batch or b"labels" not in batch:
        raise broken(path, f"has a {base} without b'data' and b'labels'")
    data = batch[b"data"]
    if (
        not isinstance(data, np.ndarray)
        or data.dtype != np.uint8
        or data.ndim != 2
        or data.shape[1] != PIXELS
        or not 0 < len(data) <= BATCH_RECORDS
    ):
        if isinstance(data, np.ndarray):
            got = f"{data.dtype}{data.shape}"
        else:
            got = f"a {type(data).__name__}"
        raise broken(
            path,
            f"has {base} data of {got}, expected a uint8 array (N, {PIXELS}) with N "
            f"from 1 to {BATCH_RECORDS}",
        )
    try:
        labels = np.asarray(batch[b"labels"])
    except (TypeError, ValueError, OverflowError) as e:
        raise broken(path, f"has {base} labels that are not a list of integers") from e
    labels = check_labels(path, labels, f" in {base}")
    if len(labels) != len(data):
        raise broken(path, f"has {len(data)} images but {len(labels)} labels in {base}")
    return np.asarray(data).reshape(-1, 3, 32, 32), labels


def _check_meta(path: Path, raw: bytes, binary: bool) -> None:
    names: object
    if binary:
        names = raw.decode("latin-1").split()
    else:
        names = unpickle_batch(path, "batches.meta", raw).get(b"label_names")
    if not isinstance(names, list | tuple) or len(names) != 10:
        count = len(names) if isinstance(names, list | tuple) else "no list of"
        raise broken(path, f"lists {count} class names, CIFAR-10 has 10")
