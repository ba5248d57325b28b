"""Blitz 4 (saving the model): what a ``torch.save`` pickle may name, as compat data.

PyTorch's ``weights_only=True`` allowlist (torch:
``torch._weights_only_unpickler._get_allowed_globals``), each name mapped to a
stand-in written here: ``torch._utils._rebuild_tensor_v2`` builds a compat tensor
over a compat storage, ``torch.FloatStorage`` is a marker holding ``float32``,
``collections.OrderedDict`` makes an ``OrderedDict`` from data ... The names torch
allows but compat cannot build (complex, quantized, sparse, nested tensors, the
new small dtypes) raise ``NotImplementedError`` naming them; every other name is
refused by :mod:`._unpickler` in torch's words, unless the user trusted it by name
(``torch.serialization.add_safe_globals``, kept in :mod:`._trusted`): then
the object itself is used, as in PyTorch. :func:`check_data` then makes sure the
loaded object holds data only (no stand-in leaks out as a value).
"""

from __future__ import annotations

import math
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.nn.module import Parameter
from jaxblitz.compat.serialization._trusted import user_globals
from jaxblitz.compat.serialization._unpickler import Global, Unpickler, UnpicklingError
from jaxblitz.compat.tensor import Size, Tensor, _dtype, _layout
from jaxblitz.compat.tensor._tensor_base import _Storage

_SCALARS = [
    "Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte",
    "Bool",
]  # fmt: skip
_STORAGE_DTYPES = {d.scalar_type: d for d in _dtype.ALL}
# Names torch allows that compat cannot build, with why.
_TORCH_ONLY = {
    **{
        f"torch.{name}": f"jaxblitz.compat has no torch.{name} dtype"
        for name in [
            "complex32",
            "complex64",
            "complex128",
            "uint16",
            "uint32",
            "uint64",
            "float8_e4m3fn",
            "float8_e4m3fnuz",
            "float8_e5m2",
            "float8_e5m2fnuz",
            "float8_e8m0fnu",
            "float4_e2m1fn_x2",
            "bits16",
            "bits1x8",
            "bits2x4",
            "bits4x2",
            "bits8",
            "qint32",
            "qint8",
            "quint2x4",
            "quint4x2",
            "quint8",
            *(f"int{n}" for n in range(1, 8)),
            *(f"uint{n}" for n in range(1, 8)),
        ]
    },  # fmt: skip
    **{
        f"torch{dev}.{kind}Storage": f"jaxblitz.compat has no {kind} tensors"
        for dev in ("", ".cuda")
        for kind in (
            "ComplexDouble",
            "ComplexFloat",
            "QInt32",
            "QInt8",
            "QUInt2x4",
            "QUInt4x2",
            "QUInt8",
        )
    },  # fmt: skip
    **{
        f"torch{dev}.{kind}Tensor": "legacy tensor types in a pickle are not read"
        for dev in ("", ".cuda", ".sparse", ".cuda.sparse")
        for kind in _SCALARS
    },
    **{
        f"torch._utils._rebuild_{kind}": f"jaxblitz.compat does not rebuild {kind}"
        for kind in (
            "qtensor",
            "sparse_tensor",
            "meta_tensor_no_storage",
            "nested_tensor",
            "wrapper_subclass",
            "device_tensor_from_numpy",
            "device_tensor_from_cpu_tensor",
        )
    },  # fmt: skip
    **{
        f"torch.{scheme}": "jaxblitz.compat has no quantized tensors"
        for scheme in (
            "per_tensor_affine",
            "per_tensor_symmetric",
            "per_channel_affine",
            "per_channel_symmetric",
            "per_channel_affine_float_qparams",
        )
    },  # fmt: skip
    "torch.serialization._get_layout": "jaxblitz.compat has no torch.layout objects",
    "torch.storage.TypedStorage": "bare typed storages are not read",
}


class StorageType:
    """``torch.FloatStorage`` in a persistent id: the storage's dtype."""

    def __init__(self, name: str, dtype: _dtype.dtype):
        self.name, self.dtype = name, dtype

    def __repr__(self) -> str:
        return self.name


class _StorageRef:
    """One storage of the file: a compat storage, its bytes filled in last."""

    __slots__ = ("key", "dtype", "numel", "device", "storage", "shaped")

    def __init__(self, key: str, dt: _dtype.dtype, numel: int, device: Any):
        self.key, self.dtype, self.numel, self.device = key, dt, numel, device
        # Until fill(): a zero-strided stand-in with the right dtype and size.
        self.storage = _Storage(numpy=np.broadcast_to(np.zeros((), dt.np), (numel,)))
        self.shaped = False  # True once a tensor relies on the storage's shape


def frombuffer(raw: bytes, dt: Any, big_endian: bool) -> np.ndarray:
    """``raw`` as an array of the compat dtype ``dt`` (native byte order)."""
    if dt.name == "bool":
        return np.frombuffer(raw, np.uint8) != 0  # any nonzero byte is True
    bits = np.frombuffer(raw, np.dtype(f"u{dt.itemsize}"))
    return (bits.byteswap() if big_endian else bits).view(dt.np)


class Loader:
    """One ``torch.load``: the storages it met, where they go, and the table."""

    def __init__(self, place: Callable[[str], Any], size_limit: int, encoding: str):
        self.place, self.size_limit, self.encoding = place, size_limit, encoding
        self.refs: dict[str, _StorageRef] = {}
        self.big_endian = False
        self.budget = 2 * size_limit + (1 << 16)  # see unpickle
        self.table = _table(self)
        self.trusted = user_globals()  # the user's safe globals

    def lookup(self, full: str) -> Any:
        """torch's allowlist first (as stand-ins), then the user's safe globals."""
        found = self.table.get(full)
        if found is not None:
            return found
        why = _TORCH_ONLY.get(full)
        if why is not None:
            raise NotImplementedError(f"torch.load: the file names {full}: {why}")
        return self.trusted.get(full)

    def unpickle(self, data: bytes | memoryview, name: str) -> Any:
        # Calls that copy their argument may copy at most about the pickle's size.
        self.budget = 2 * len(data) + (1 << 16)
        return Unpickler(
            data,
            self.lookup,
            self.persistent_load,
            encoding=self.encoding,
            trusted=self.trusted.values(),
        ).load()

    def spend(self, n: int) -> None:
        self.budget -= n
        if self.budget < 0:
            raise UnpicklingError("refusing to make more data than the pickle holds")

    def persistent_load(self, pid: tuple) -> _StorageRef:
        if len(pid) == 6:  # legacy: view metadata, None since PyTorch 0.4
            if pid[5] is not None:
                raise NotImplementedError("torch.load: legacy storage views")
            pid = pid[:5]
        if len(pid) != 5:
            raise UnpicklingError(f"a storage's persistent id has {len(pid)} items")
        _, kind, key, location, numel = pid
        location = location.decode("ascii") if type(location) is bytes else location
        if (
            not isinstance(kind, StorageType)
            or type(key) is not str
            or type(location) is not str
            or type(numel) is not int
            or numel < 0
        ):
            raise UnpicklingError(f"a storage's persistent id is malformed: {pid!r}")
        if numel * kind.dtype.itemsize > self.size_limit:
            raise UnpicklingError(
                f"storage {key!r} declares {numel} elements of {kind.dtype.name}, "
                f"more than the file's {self.size_limit} bytes hold"
            )
        ref = self.refs.get(key)
        if ref is None:
            ref = self.refs[key] = _StorageRef(
                key, kind.dtype, numel, self.place(location)
            )
        elif ref.dtype is not kind.dtype or ref.numel != numel:
            raise NotImplementedError(
                f"torch.load: storage {key!r} is read as {ref.dtype} and as "
                f"{kind.dtype}; jaxblitz.compat reads each storage as one dtype"
            )
        return ref

    def itemsizes(self) -> dict[str, int]:
        return {key: ref.dtype.itemsize for key, ref in self.refs.items()}

    def fill(self, read: Callable[[str, int], bytes]) -> None:
        """Give each storage its bytes: ``read(key, nbytes)``."""
        for key, ref in self.refs.items():
            raw = read(key, ref.numel * ref.dtype.itemsize)
            host = frombuffer(raw, ref.dtype, self.big_endian)
            with _dtype.x64(True):
                array = jnp.asarray(host.reshape(ref.storage.shape))
                if ref.device is not None:
                    array = jax.device_put(array, _dtype.jax_device(ref.device))
            ref.storage.array, ref.storage.numpy = array, None


# -- the stand-ins ---------------------------------------------------------------------


def _ints(value: Any, what: str) -> tuple[int, ...]:
    if type(value) is not tuple or not all(type(v) is int for v in value):
        raise UnpicklingError(f"a tensor's {what} is not a tuple of ints: {value!r}")
    return value


def _tensor_on(ref: Any, offset: Any, size: Any, stride: Any) -> Tensor:
    """torch: ``_rebuild_tensor``, a tensor over part of a storage."""
    if not isinstance(ref, _StorageRef):
        raise UnpicklingError(f"a tensor's storage is a {type(ref).__name__}")
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    if type(offset) is not int or len(size) != len(stride):
        raise UnpicklingError(f"a tensor's layout is malformed: {size}, {stride}")
    layout = _layout.Layout(size, stride, offset)
    if not _layout.inside(layout, ref.numel):
        raise UnpicklingError(
            f"a tensor of size {list(size)}, stride {list(stride)} and offset "
            f"{offset} reaches outside its storage {ref.key!r} of {ref.numel} "
            "elements"
        )
    s = ref.storage
    if not ref.shaped:
        ref.shaped = True  # the storage takes the first tensor's shape if it can
        if layout == _layout.identity(size) and math.prod(size) == ref.numel:
            s.numpy = s.numpy.reshape(size)
    t = Tensor._wrap(None)
    t._s = s
    if layout != _layout.identity(s.shape):
        t._view = layout
    return t


def _no_hooks(hooks: Any, metadata: Any = None) -> None:
    if hooks:
        raise NotImplementedError("torch.load: tensors saved with backward hooks")
    if metadata and any(metadata.values()):
        raise NotImplementedError(
            f"torch.load: tensors with the conj/neg bits set ({metadata})"
        )


def _rebuild_tensor_v2(
    storage, offset, size, stride, requires_grad, hooks, metadata=None
) -> Tensor:
    _no_hooks(hooks, metadata)
    t = _tensor_on(storage, offset, size, stride)
    t.requires_grad = requires_grad
    return t


def _rebuild_tensor_v3(
    storage, offset, size, stride, requires_grad, hooks, dtype, metadata=None
) -> Tensor:
    if not isinstance(storage, _StorageRef) or storage.dtype is not dtype:
        raise NotImplementedError(
            f"torch.load: a {dtype} tensor over a storage of another dtype"
        )
    return _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks,
                              metadata)  # fmt: skip


def _set_state(obj: Any, state: Any) -> Any:
    """torch: ``_set_obj_state``, Python attributes of a tensor or Parameter."""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise UnpicklingError(f"Invalid serialized state: {state}")
        items = [*(state[0] or {}).items(), *(state[1] or {}).items()]
    else:
        items = list((state or {}).items())
    for key, value in items:
        if type(key) is not str or key.startswith("_") or hasattr(type(obj), key):
            raise UnpicklingError(f"refusing to set the tensor attribute {key!r}")
        setattr(obj, key, value)
    return obj


def _parameter(data: Any = None, requires_grad: Any = True) -> Parameter:
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise UnpicklingError(f"Parameter({type(data).__name__}, {requires_grad!r})")
    return Parameter(data, requires_grad)


def _rebuild_parameter(data, requires_grad, hooks) -> Parameter:
    _no_hooks(hooks)
    return _parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, hooks, state) -> Parameter:
    return _set_state(_rebuild_parameter(data, requires_grad, hooks), state)


def _refuse_call(name: str) -> Callable:
    def call(*args: Any) -> Any:
        raise NotImplementedError(f"torch.load: calling {name} in a pickle")

    return call


def _table(loader: Loader) -> dict[str, Any]:
    def copying(make: Callable) -> Callable:
        def call(*args: Any) -> Any:
            loader.spend(sum(len(a) for a in args if hasattr(a, "__len__")) + 1)
            return make(*args)

        return call

    def encode(text: Any, encoding: Any = "utf-8") -> bytes:  # bytes, in protocol 2
        if type(text) is not str or encoding not in ("latin1", "latin-1"):
            raise UnpicklingError("refusing _codecs.encode but of latin1 text")
        loader.spend(len(text))
        return text.encode("latin-1")

    def array_bytes(data: Any = b"") -> bytearray:
        if type(data) is not bytes:  # bytearray(10**12) would allocate
            raise UnpicklingError("refusing bytearray but of bytes")
        loader.spend(len(data))
        return bytearray(data)

    def number(*args: Any) -> complex:
        if not all(type(a) in (int, float) for a in args):
            raise UnpicklingError("refusing complex but of numbers")
        return complex(*args)

    def size(dims: Any = ()) -> Size:
        loader.spend(len(dims) if hasattr(dims, "__len__") else 1)
        return Size(_ints(tuple(dims) if type(dims) is list else dims, "size"))

    def from_type(func: Any, new_type: Any, args: Any, state: Any) -> Tensor:
        rebuilds = (table["torch._utils._rebuild_tensor_v2"],
                    table["torch._utils._rebuild_parameter"],
                    table["torch._utils._rebuild_tensor"])  # fmt: skip
        if func not in rebuilds or type(args) is not tuple:
            raise UnpicklingError(f"_rebuild_from_type_v2 of {func!r}")
        t = func.call(*args)
        if new_type is table["torch.nn.parameter.Parameter"]:
            t = t if isinstance(t, Parameter) else Parameter(t, t.requires_grad)
        elif new_type is not table["torch.Tensor"] or isinstance(t, Parameter):
            raise NotImplementedError(f"torch.load: tensor subclass {new_type!r}")
        return _set_state(t, state)

    def g(name: str, call: Callable, new: Callable | None = None) -> Global:
        return Global(name, call, new)

    table: dict[str, Any] = {
        "torch._utils._rebuild_tensor": g("_rebuild_tensor", _tensor_on),
        "torch._utils._rebuild_tensor_v2": g("_rebuild_tensor_v2", _rebuild_tensor_v2),
        "torch._utils._rebuild_tensor_v3": g("_rebuild_tensor_v3", _rebuild_tensor_v3),
        "torch._utils._rebuild_parameter": g("_rebuild_parameter", _rebuild_parameter),
        "torch._utils._rebuild_parameter_with_state": g(
            "_rebuild_parameter_with_state", _rebuild_parameter_with_state
        ),
        "torch._tensor._rebuild_from_type_v2": g("_rebuild_from_type_v2", from_type),
        "torch.nn.parameter.Parameter": g("Parameter", _parameter, _parameter),
        "torch.Tensor": g("torch.Tensor", _refuse_call("torch.Tensor")),
        "torch.Size": g("torch.Size", size, size),
        "torch.device": g("torch.device", _dtype.device),
        "collections.OrderedDict": g(
            "OrderedDict", copying(OrderedDict), lambda *a: OrderedDict()
        ),
        "collections.Counter": g("Counter", copying(Counter), lambda *a: Counter()),
        "builtins.set": g("set", copying(set), lambda *a: set()),
        "builtins.complex": g("complex", number, number),
        "builtins.bytearray": g("bytearray", array_bytes, array_bytes),
        "_codecs.encode": g("_codecs.encode", encode),
        "torch.storage.UntypedStorage": StorageType("UntypedStorage", _dtype.uint8),
    }
    for d in _dtype.ALL:
        table[f"torch.{d.name}"] = d
        for dev in ("", ".cuda"):
            name = f"torch{dev}.{d.scalar_type}Storage"
            table[name] = StorageType(name, d)
    return table


# -- what may come out -----------------------------------------------------------------

_LEAVES = (type(None), bool, int, float, complex, str, bytes, bytearray, Size,
           _dtype.dtype, _dtype.device)  # fmt: skip
_CONTAINERS = (list, tuple, dict, OrderedDict, Counter, set)


def check_data(obj: Any) -> Any:
    """``obj`` if it holds only data (no stand-in, no bare storage), else an error.

    With safe globals added, what they built is the user's to trust, as in
    PyTorch: only compat's own stand-ins are looked for inside it.
    """
    trusted = {id(v) for v in user_globals().values()}
    todo, seen = [obj], set()
    while todo:
        item = todo.pop()
        kind = type(item)
        if kind in _LEAVES or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Tensor):  # Parameter too; its attributes are data
            todo.extend(v for k, v in vars(item).items() if not k.startswith("_"))
        elif kind in _CONTAINERS:
            todo.extend(item.values() if isinstance(item, dict) else item)
            if isinstance(item, dict):
                todo.extend(item.keys())
                todo.extend(getattr(item, "__dict__", {}).values())
        elif isinstance(item, _StorageRef):
            raise NotImplementedError(
                "torch.load: the file holds a bare storage (torch.save of "
                "t.untyped_storage()); jaxblitz.compat loads tensors, save those"
            )
        elif trusted and not isinstance(item, Global | StorageType):
            if id(item) in trusted:  # a safe global itself, as a value
                continue
            if isinstance(item, list | tuple | set | frozenset):
                todo.extend(item)
            elif isinstance(item, dict):
                todo.extend([*item.keys(), *item.values()])
            attributes = getattr(item, "__dict__", None)
            if isinstance(attributes, dict):
                todo.extend(attributes.values())
        else:
            raise UnpicklingError(
                f"the file holds {item!r} itself (a {kind.__name__}), not data"
            )
    return obj
