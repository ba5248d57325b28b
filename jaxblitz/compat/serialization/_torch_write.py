"""Blitz 4 (saving the model): writing the files ``torch.save`` writes.

A pickle written opcode by opcode (protocol 2, as ``torch.save``), using only what
PyTorch's ``torch.load(weights_only=True)`` accepts: plain containers and scalars,
``collections.OrderedDict`` and ``Counter``, ``torch.Size``, ``torch.device``,
dtypes, and tensors as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, OrderedDict())`` over storages given as persistent ids
``('storage', torch.FloatStorage, key, location, numel)`` (Parameters wrapped in
``_rebuild_parameter``). Tensors sharing a storage share it in the file, as torch
saves them; the same tensor twice is one tensor. Then the zip archive (storages
64-byte aligned, as torch writes them) or the legacy stream around it.
"""

from __future__ import annotations

import struct
import sys
import zipfile
from collections import Counter, OrderedDict
from typing import IO, Any

import numpy as np

from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.tensor import Size, Tensor
from jaxblitz.compat.tensor._dtype import device, dtype

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_ALIGNMENT = 64  # torch: _get_storage_alignment()
_BATCH = 1000  # items per APPENDS/SETITEMS, as pickle


def _where(where: tuple[Any, ...]) -> str:
    return "obj" + "".join(f"[{part!r}]" for part in where)


def _refusal(obj: Any, where: tuple[Any, ...]) -> str:
    kind = type(obj)
    hint = ""
    for base in (float, int, str, tuple, dict):
        if isinstance(obj, base):  # a subclass, such as numpy.float64
            hint = f" (save it as a plain {base.__name__} instead)"
            break
    return (
        f"torch.save cannot store the {kind.__module__}.{kind.__qualname__} at "
        f"{_where(where)}{hint}: jaxblitz.compat.save writes what "
        "torch.load(weights_only=True) reads (no pickle of arbitrary objects): "
        "Tensors, numbers, strings, bytes, None, dtypes, devices, and dicts, lists, "
        "tuples and sets of them"
    )


def _module_refusal(obj: Any, where: tuple[Any, ...]) -> str:
    kind = type(obj)
    return (
        f"torch.save of a whole nn.Module ({kind.__module__}.{kind.__qualname__} "
        f"at {_where(where)}) is not supported by jaxblitz.compat: PyTorch pickles "
        "the module's class, and compat never pickles code. Save its weights "
        "instead: torch.save(model.state_dict(), path), then "
        "model.load_state_dict(torch.load(path, weights_only=True)) into a new model"
    )


class Pickler:
    """``obj`` as a weights-only pickle; its storages' bytes in :attr:`storages`."""

    def __init__(self, legacy: bool = False):
        self.legacy = legacy
        self.out = bytearray(b"\x80\x02")  # PROTO 2
        self.memo: dict[int, int] = {}  # id(obj) -> memo index
        self.keep: list[Any] = []  # keeps ids unique while writing
        self.storages: dict[int, tuple[str, bytes, Tensor]] = {}  # id(_Storage) ->

    def dump(self, obj: Any) -> bytes:
        self.save(obj, ())
        self.out += b"."  # STOP
        return bytes(self.out)

    # -- opcodes --------------------------------------------------------------------
    def _put(self, obj: Any) -> None:
        i = self.memo[id(obj)] = len(self.memo)
        self.keep.append(obj)
        self.out += b"q" + bytes([i]) if i < 256 else b"r" + struct.pack("<I", i)

    def _get(self, obj: Any) -> bool:
        i = self.memo.get(id(obj))
        if i is None:
            return False
        self.out += b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i)
        return True

    def _global(self, module: str, name: str) -> None:
        self.out += b"c" + f"{module}\n{name}\n".encode()

    def _int(self, n: int, where: tuple[Any, ...]) -> None:
        if 0 <= n < 256:
            self.out += b"K" + bytes([n])
        elif 0 <= n < 65536:
            self.out += b"M" + struct.pack("<H", n)
        elif -(2**31) <= n < 2**31:
            self.out += b"J" + struct.pack("<i", n)
        else:
            raw = n.to_bytes((n.bit_length() >> 3) + 1, "little", signed=True)
            if n < 0 and len(raw) > 1 and raw[-1] == 0xFF and raw[-2] & 0x80:
                raw = raw[:-1]
            if len(raw) > 255:  # LONG4, which torch's weights-only reader lacks
                raise ValueError(f"torch.save: the int at {_where(where)} is too big")
            self.out += b"\x8a" + bytes([len(raw)]) + raw

    def _str(self, s: str) -> None:
        raw = s.encode("utf-8", "surrogatepass")
        self.out += b"X" + struct.pack("<I", len(raw)) + raw

    def _tuple(self, items: Any, where: tuple[Any, ...]) -> None:
        if not items:
            self.out += b")"
            return
        if len(items) > 3:
            self.out += b"("
        for i, item in enumerate(items):
            self.save(item, (*where, i))
        self.out += {1: b"\x85", 2: b"\x86", 3: b"\x87"}.get(len(items), b"t")

    def _reduce(self, module: str, name: str, args: tuple, where: tuple) -> None:
        self._global(module, name)
        self._tuple(args, where)
        self.out += b"R"

    # -- objects ----------------------------------------------------------------------
    def save(self, obj: Any, where: tuple[Any, ...]) -> None:
        kind = type(obj)
        if obj is None:
            self.out += b"N"
        elif kind is bool:
            self.out += b"\x88" if obj else b"\x89"
        elif kind is int:
            self._int(obj, where)
        elif kind is float:
            self.out += b"G" + struct.pack(">d", obj)
        elif kind is str:
            self._str(obj)
        elif kind is bytes:  # protocol 2's bytes: _codecs.encode(latin-1 text)
            self._reduce("_codecs", "encode", (obj.decode("latin-1"), "latin1"), where)
        elif isinstance(obj, Tensor):
            self._tensor(obj, where)
        elif kind is dtype:
            self._global("torch", obj.name)
        elif kind is device:
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            self._reduce("torch", "device", args, where)
        elif kind is Size:
            self._reduce("torch", "Size", (tuple(obj),), where)
        elif kind is tuple:
            self._tuple(obj, where)
        elif kind in (list, dict, OrderedDict, set):
            self._container(obj, where)
        elif kind is Counter:  # a MultiStepLR's milestones
            self._counter(obj, where)
        elif isinstance(obj, Module):  # torch pickles the class: code, refused
            raise NotImplementedError(_module_refusal(obj, where))
        else:
            raise TypeError(_refusal(obj, where))

    def _container(self, obj: Any, where: tuple[Any, ...]) -> None:
        if self._get(obj):
            return
        if type(obj) is set:
            for item in obj:
                _check_key(item, where)
            self._global("builtins", "set")
            self.out += b"]"  # EMPTY_LIST
            self._items([(i, [x]) for i, x in enumerate(obj)], where, b"e")
            self.out += b"\x85R"  # TUPLE1 REDUCE
            self._put(obj)
        elif type(obj) is list:
            self.out += b"]"
            self._put(obj)
            self._items([(i, [x]) for i, x in enumerate(obj)], where, b"e", b"a")
        else:
            if type(obj) is OrderedDict:
                self._reduce("collections", "OrderedDict", (), where)
            else:
                self.out += b"}"
            self._put(obj)
            for key in obj:
                _check_key(key, where)
            self._items([(k, [k, v]) for k, v in obj.items()], where, b"u", b"s")
            state = getattr(obj, "__dict__", None)
            if state:  # a state_dict's _metadata
                self.save(dict(state), (*where, "__dict__"))
                self.out += b"b"  # BUILD

    def _counter(self, obj: Counter, where: tuple[Any, ...]) -> None:
        """``Counter(dict)``, as pickle reduces it."""
        if self._get(obj):
            return
        self._reduce("collections", "Counter", (dict(obj),), where)
        self._put(obj)

    def _items(self, rows: list, where: tuple, many: bytes, one: bytes = b"") -> None:
        """``(label, objects)`` rows, one object each (APPEND) or a key and value
        (SETITEM), batched like pickle; ``label`` names the row in errors."""
        for start in range(0, len(rows), _BATCH):
            batch = rows[start : start + _BATCH]
            single = len(batch) == 1 and one
            if not single:
                self.out += b"("  # MARK
            for label, items in batch:
                for item in items:
                    self.save(item, (*where, label))
            self.out += one if single else many

    def _tensor(self, t: Tensor, where: tuple[Any, ...]) -> None:
        if self._get(t):
            return
        if t._as is not None:
            raise NotImplementedError(
                f"torch.save of a view(dtype) tensor ({_where(where)}) is not "
                "supported by jaxblitz.compat; save t.clone() instead"
            )
        if {k for k in vars(t) if not k.startswith("_")}:
            raise NotImplementedError(
                f"torch.save of a tensor with Python attributes ({_where(where)}, "
                f"{sorted(vars(t))}) is not supported by jaxblitz.compat"
            )
        parameter = isinstance(t, Parameter)
        if parameter:
            self._global("torch._utils", "_rebuild_parameter")
            self.out += b"("
        self._global("torch._utils", "_rebuild_tensor_v2")
        self.out += b"("
        self._storage(t)
        place = t._place()
        self._int(place.offset, where)
        self._tuple(tuple(place.shape), where)
        self._tuple(tuple(place.stride), where)
        grad = bool(t.requires_grad) and not parameter
        self.out += b"\x88" if grad else b"\x89"
        self._reduce("collections", "OrderedDict", (), where)  # backward hooks
        self.out += b"tR"
        if parameter:
            self.out += b"\x88" if t.requires_grad else b"\x89"
            self._reduce("collections", "OrderedDict", (), where)
            self.out += b"tR"
        self._put(t)

    def _storage(self, t: Tensor) -> None:
        s = t._s
        entry = self.storages.get(id(s))
        if entry is None:
            base = Tensor._wrap(None)
            base._s = s
            raw = np.ascontiguousarray(np.asarray(base._data)).tobytes()
            entry = self.storages[id(s)] = (str(len(self.storages)), raw, base)
        key, raw, base = entry
        self.out += b"("
        self._str("storage")
        self._global("torch", f"{t.dtype.scalar_type}Storage")
        self._str(key)
        self._str("cuda:0" if t.device.type == "cuda" else "cpu")
        self._int(base.numel(), ())
        if self.legacy:
            self.out += b"N"  # no view metadata
        self.out += b"tQ"  # TUPLE BINPERSID


def _check_key(key: Any, where: tuple[Any, ...]) -> None:
    """A dict key or set item: str, int, float, bool, None, bytes or tuples."""
    if key is None or type(key) in (bool, int, float, str, bytes):
        return
    if type(key) is tuple:
        for k in key:
            _check_key(k, where)
        return
    kind = type(key)
    raise TypeError(
        f"torch.save cannot store a dict key of type {kind.__module__}."
        f"{kind.__qualname__} ({key!r}) in {_where(where)}: keys must be str, int, "
        "float, bool, None, bytes or tuples of them"
    )


def write_zip(obj: Any, f: IO[bytes], name: str) -> None:
    """``torch.save(obj, f)``: the zip archive, records named ``name/...``."""
    pickler = Pickler()
    data = pickler.dump(obj)
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as archive:

        def record(key: str, raw: bytes, align: bool = False) -> None:
            info = zipfile.ZipInfo(f"{name}/{key}", date_time=(1980, 1, 1, 0, 0, 0))
            if align:
                try:
                    start = f.tell() + 30 + len(info.filename.encode()) + 4
                except (OSError, AttributeError):  # a stream: no alignment
                    start = 0
                pad = -start % _ALIGNMENT
                info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
            archive.writestr(info, raw)

        record("data.pkl", data)
        record(".format_version", b"1")
        record(".storage_alignment", str(_ALIGNMENT).encode())
        record("byteorder", sys.byteorder.encode())
        for key, raw, _ in pickler.storages.values():
            record(f"data/{key}", raw, align=True)
        record("version", b"3\n")


def write_legacy(obj: Any, f: IO[bytes]) -> None:
    """``torch.save(obj, f, _use_new_zipfile_serialization=False)``."""
    pickler = Pickler(legacy=True)
    data = pickler.dump(obj)
    info = {
        "protocol_version": PROTOCOL_VERSION,
        "little_endian": sys.byteorder == "little",
        "type_sizes": {"short": 2, "int": 4, "long": 4},
    }
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, info):
        f.write(Pickler().dump(header))
    f.write(data)
    keys = [key for key, _, _ in pickler.storages.values()]
    f.write(Pickler().dump(keys))
    for _, raw, base in pickler.storages.values():
        f.write(struct.pack("<q", base.numel()))
        f.write(raw)
