"""Blitz 4 (saving the model): the files jaxblitz.compat wrote before it wrote
PyTorch's own format: safetensors with the object's structure as JSON in the
header's metadata (formats 2 and 3, views' layouts included) or a tensor or
nested dicts of tensors whose keys were joined with ``/`` (format 1). Still read
by ``torch.load``; checksums verified (:mod:`jaxblitz.integrity`).
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from typing import Any

import numpy as np

from jaxblitz.compat.nn.module import Parameter
from jaxblitz.compat.tensor import Size, Tensor, _dtype, _layout
from jaxblitz.compat.tensor.creation import tensor
from jaxblitz.integrity import CorruptFileError, read_safetensors

_FORMAT = "jaxblitz.compat"
_READS = ("2", "3")
_STRUCTURE = "structure"
_SINGLE = "__tensor__"  # format 1's name for a lone tensor
_BITS = {"bfloat16": np.uint16}  # dtypes stored as raw bits, by torch name


def looks_like_safetensors(blob: bytes) -> bool:
    """A little-endian header length, then the JSON header."""
    n = int.from_bytes(blob[:8], "little")
    return len(blob) >= 10 and blob[8:9] == b"{" and 8 + n <= len(blob)


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


def read(path: str, who: str) -> Any:
    """What a jaxblitz safetensors ``torch.save`` file at ``path`` holds."""
    arrays, metadata = read_safetensors(path, who)
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
