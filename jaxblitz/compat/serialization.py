"""Blitz 4 (saving the model): ``torch.save`` / ``torch.load``, pickle-free.

Files are safetensors: a JSON header and raw arrays, so loading never executes
code from the file (torch's pickle can). ``save`` takes a tensor or a (nested)
dict of tensors -- a ``state_dict``; nested keys are joined with ``/`` and the
structure is restored by ``load``. Writes are atomic (temp file + rename) and
carry a checksum that ``load`` verifies. A ``.pt``/``.pth`` pickle written by
``torch.save`` is refused with how to convert it (torch:
``torch.load(PATH, weights_only=True)``).
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from typing import Any

import numpy as np

from jaxblitz.integrity import read_safetensors, write_safetensors

_SINGLE = "__tensor__"


def _flatten(obj: Any, prefix: str, out: dict[str, np.ndarray]) -> None:
    from jaxblitz.compat.tensor import Tensor

    if isinstance(obj, Tensor):
        out[prefix or _SINGLE] = np.ascontiguousarray(np.asarray(obj._data))
    elif isinstance(obj, dict):
        for key, value in obj.items():
            if "/" in str(key):
                raise ValueError(f"torch.save: key {key!r} may not contain '/'")
            _flatten(value, f"{prefix}/{key}" if prefix else str(key), out)
    else:
        raise TypeError(
            "jaxblitz.compat.save stores a Tensor or a (nested) dict of Tensors "
            f"such as a state_dict (safetensors, no pickle); got {type(obj).__name__}"
            f"{' at ' + repr(prefix) if prefix else ''}"
        )


def save(obj: Any, f: str | os.PathLike) -> None:
    """``torch.save(net.state_dict(), PATH)``."""
    arrays: dict[str, np.ndarray] = {}
    _flatten(obj, "", arrays)
    order = json.dumps(list(arrays))
    metadata = {"format": "jaxblitz.compat", "order": order}
    write_safetensors(arrays, os.fspath(f), metadata)


def load(f: str | os.PathLike, map_location: Any = None, weights_only: bool = True):
    """``torch.load(PATH)``: a Tensor or an ``OrderedDict`` of Tensors."""
    from jaxblitz.compat.creation import tensor

    arrays, metadata = read_safetensors(os.fspath(f), "jaxblitz.compat.load")
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
