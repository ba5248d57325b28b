"""Blitz 4 (saving the model): ``torch.save`` / ``torch.load``, pickle-free.

Files are safetensors: a JSON header and raw arrays, so loading never executes
code from the file (torch's pickle can). Writes are atomic (temp file + rename)
and carry a checksum that ``load`` verifies. A ``.pt``/``.pth`` pickle written by
``torch.save`` is refused with how to convert it (torch:
``torch.load(PATH, weights_only=True)``).

``save`` takes what a checkpoint holds: Tensors (and Parameters), Python numbers,
strings, None, and dicts (keys of those scalar types or tuples of them, in their
order; ``OrderedDict`` stays one), lists, tuples and ``torch.Size`` of them,
nested and empty ones included. Each tensor is one safetensors array, named by
its path (``conv1.weight``, ``model/conv1.weight``) so other safetensors readers
see a ``state_dict``; the structure around the arrays is JSON in the header's
metadata, so ``load`` rebuilds the object exactly, dtype (bfloat16 is stored as
its 16 raw bits, which NumPy's safetensors reader can read), ``requires_grad``
and sharing included: the same tensor twice loads as one tensor. Anything else
(a function, a NumPy array, a set, a self-containing list) is refused with a
TypeError or ValueError that says where it is, never saved as something else.

Format 1, written before, is still read: a tensor or nested dicts of tensors
whose keys were joined with ``/``.
"""

from __future__ import annotations

import json
import math
import os
from collections import OrderedDict
from typing import Any

import numpy as np

from jaxblitz.compat import _dtype, _layout
from jaxblitz.compat.creation import tensor
from jaxblitz.compat.nn.module import Parameter
from jaxblitz.compat.tensor import Size, Tensor
from jaxblitz.integrity import (
    CorruptFileError,
    read_safetensors,
    write_safetensors,
)

_FORMAT = "jaxblitz.compat"
_VERSION = "2"  # written when no tensor is a view; "3" (views' layouts) otherwise
_READS = ("2", "3")
_STRUCTURE = "structure"
_SINGLE = "__tensor__"  # format 1's name for a lone tensor
_WHO = "jaxblitz.compat.load"
_BITS = {"bfloat16": np.uint16}  # dtypes stored as raw bits, by torch name

# ---------------------------------------------------------------------------
# save
# ---------------------------------------------------------------------------


class _Writer:
    """Turns an object into a JSON tree plus named arrays (see the module doc)."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.tensors: list[dict[str, Any]] = []
        self._tensor_ids: dict[int, int] = {}  # id(Tensor) -> index in tensors
        self._storage_names: dict[int, str] = {}  # id(storage) -> array name
        self._keep: list[Any] = []  # keeps ids unique while writing
        self._open: set[int] = set()  # containers on the current path

    def value(self, obj: Any, where: tuple[Any, ...]) -> Any:
        """``obj`` as JSON; ``where`` is the path to it (keys, list indices)."""
        if isinstance(obj, Tensor):
            return {"tensor": self._tensor(obj, isinstance(obj, Parameter), where)}
        if obj is None or type(obj) in (bool, int, str):
            return obj
        if type(obj) is float:
            return {"float": obj.hex()}  # exact, nan and inf included
        kind = {
            list: "list",
            tuple: "tuple",
            Size: "size",
            dict: "dict",
            OrderedDict: "odict",
        }.get(type(obj))
        if kind is None:
            raise TypeError(_refusal(obj, where))
        if id(obj) in self._open:
            raise ValueError(
                f"torch.save: {_where(where)} contains itself; a self-referencing "
                "container cannot be saved"
            )
        self._open.add(id(obj))
        if kind in ("dict", "odict"):
            items = [
                [_key(k, where), self.value(v, (*where, k))] for k, v in obj.items()
            ]
        else:
            items = [self.value(v, (*where, i)) for i, v in enumerate(obj)]
        self._open.discard(id(obj))
        return {kind: items}

    def _tensor(self, t: Tensor, parameter: bool, where: tuple[Any, ...]) -> int:
        index = self._tensor_ids.get(id(t))
        if index is not None:
            return index
        if t._as is not None:
            raise NotImplementedError(
                f"torch.save of a view(dtype) tensor ({_where(where)}) is not "
                "supported by jaxblitz.compat; save t.clone() instead"
            )
        name = self._storage_names.get(id(t._s))
        if name is None:
            name = self._name(where)
            # The whole storage, as torch saves it, so views load sharing it.
            base = Tensor._wrap(None)
            base._s = t._s
            array = np.ascontiguousarray(np.asarray(base._data))
            bits = _BITS.get(t.dtype.name)
            self.arrays[name] = array.view(bits) if bits else array
            self._storage_names[id(t._s)] = name
        self._keep.append(t)
        self._tensor_ids[id(t)] = index = len(self.tensors)
        self.tensors.append(
            {
                "array": name,
                "dtype": t.dtype.name,
                "shape": list(t.shape),  # the writer makes a 0-d array 1-d
                "requires_grad": bool(t.requires_grad),
                "parameter": parameter,
            }
        )
        if t._view is not None:
            self.tensors[-1]["layout"] = {
                "storage": list(t._s.shape),
                "stride": list(t._view.stride),
                "offset": t._view.offset,
            }
        return index

    def _name(self, where: tuple[Any, ...]) -> str:
        # A readable, unique array name: the path, "conv1.weight" in a state_dict.
        base = "/".join(str(part) for part in where)
        name, n = base or _SINGLE, 1
        while name in self.arrays or name == "__metadata__":
            name, n = f"{base}#{n}", n + 1
        return name


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
        f"{_where(where)}{hint}: jaxblitz.compat.save writes safetensors (no "
        "pickle), holding Tensors, numbers, strings, None, and dicts, lists and "
        "tuples of them"
    )


def _key(key: Any, where: tuple[Any, ...]) -> Any:
    """A dict key as JSON: str, int, bool, None, a float or a tuple of keys."""
    if key is None or type(key) in (bool, int, str):
        return key
    if type(key) is float:
        return {"float": key.hex()}
    if type(key) is tuple:
        return {"tuple": [_key(k, where) for k in key]}
    kind = type(key)
    raise TypeError(
        f"torch.save cannot store a dict key of type {kind.__module__}."
        f"{kind.__qualname__} ({key!r}) in {_where(where)}: keys must be str, int, "
        "float, bool, None or tuples of them"
    )


def _path(f: Any, who: str) -> str:
    try:
        return os.fspath(f)
    except TypeError:
        raise TypeError(
            f"{who} takes a file path (str or os.PathLike), got a "
            f"{type(f).__name__}: file objects such as io.BytesIO are not supported "
            "(files are written atomically, by path)"
        ) from None


def save(obj: Any, f: str | os.PathLike) -> None:
    """``torch.save(net.state_dict(), PATH)``; see the module doc for what it takes."""
    path = _path(f, "jaxblitz.compat.save")
    writer = _Writer()
    tree = writer.value(obj, ())
    structure = json.dumps({"tree": tree, "tensors": writer.tensors})
    version = "3" if any("layout" in spec for spec in writer.tensors) else _VERSION
    metadata = {"format": _FORMAT, "version": version, _STRUCTURE: structure}
    write_safetensors(writer.arrays, path, metadata)


# ---------------------------------------------------------------------------
# load
# ---------------------------------------------------------------------------


class _Reader:
    def __init__(self, arrays: dict[str, np.ndarray], tensors: list[dict]) -> None:
        self.arrays, self.specs = arrays, tensors
        self.tensors: dict[int, Any] = {}
        self.storages: dict[str, Any] = {}

    def value(self, node: Any) -> Any:
        if node is None or type(node) in (bool, int, str):
            return node
        ((kind, body),) = node.items()
        if kind == "tensor":
            return self._tensor(body)
        if kind == "float":
            return float.fromhex(body)
        if kind in ("dict", "odict"):
            items = [(_unkey(k), self.value(v)) for k, v in body]
            return dict(items) if kind == "dict" else OrderedDict(items)
        values = [self.value(v) for v in body]
        return {"list": list, "tuple": tuple, "size": Size}[kind](values)

    def _tensor(self, index: int) -> Tensor:
        if index in self.tensors:
            return self.tensors[index]
        spec = self.specs[index]
        name, dt = spec["array"], _dtype._by_name(spec["dtype"])
        layout = spec.get("layout")
        shape = tuple(spec["shape"] if layout is None else layout["storage"])
        storage = self.storages.get(name)
        if storage is None:
            array = self.arrays[name]
            array = array.view(dt.np) if spec["dtype"] in _BITS else array
            if array.dtype != dt.np:
                raise ValueError(f"array {name!r} is {array.dtype}, not {dt.name}")
            storage = self.storages[name] = tensor(array.reshape(shape))._s
        elif storage.shape != shape:
            raise ValueError(f"array {name!r} is read with two shapes")
        t = Tensor._wrap(None)
        t._s = storage
        if layout is not None:  # a view: checked to lie inside its storage
            t._view = _layout.Layout(
                tuple(map(int, spec["shape"])),
                tuple(map(int, layout["stride"])),
                int(layout["offset"]),
            )
            if not _layout.inside(t._view, math.prod(shape)):
                raise ValueError(f"tensor {index} reaches outside array {name!r}")
        if spec["parameter"]:
            t = Parameter(t, spec["requires_grad"])
        elif spec["requires_grad"]:
            t.requires_grad_(True)
        self.tensors[index] = t
        return t


def _unkey(node: Any) -> Any:
    if node is None or type(node) in (bool, int, str):
        return node
    ((kind, body),) = node.items()
    if kind == "float":
        return float.fromhex(body)
    if kind == "tuple":
        return tuple(_unkey(k) for k in body)
    raise ValueError(f"unknown key kind {kind!r}")


def _load_format_1(arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> Any:
    order = json.loads(metadata.get("order", "[]")) or sorted(arrays)
    if list(arrays) == [_SINGLE]:
        return tensor(arrays[_SINGLE])
    result: OrderedDict = OrderedDict()
    for key in order:
        node = result
        *parents, leaf = key.split("/")
        for part in parents:
            node = node.setdefault(part, OrderedDict())
        node[leaf] = tensor(arrays[key])
    return result


def load(f: str | os.PathLike, map_location: Any = None, weights_only: bool = True):
    """``torch.load(PATH)``: what ``save`` was given, rebuilt exactly."""
    path = _path(f, _WHO)
    arrays, metadata = read_safetensors(path, _WHO)
    version = metadata.get("version")
    if metadata.get("format") != _FORMAT or version is None:
        return _load_format_1(arrays, metadata)
    if version not in _READS:
        raise CorruptFileError(
            f"{path} was written by a newer jaxblitz (compat save format "
            f"{version}; this one reads formats 1 to {_READS[-1]}). Upgrade jaxblitz "
            "to load it."
        )
    try:
        structure = json.loads(metadata[_STRUCTURE])
        return _Reader(arrays, structure["tensors"]).value(structure["tree"])
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise CorruptFileError(
            f"{path} has a jaxblitz.compat header that does not describe its "
            f"arrays ({type(e).__name__}: {e}): it was not written by torch.save "
            "here, or was edited. Write it again."
        ) from e
