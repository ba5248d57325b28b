"""What a note script saw, as plain values both torch and compat can be compared on.

    notes = Notes()
    with notes.section("view"):
        a = torch.arange(6.0)
        notes.record("a", lambda: a)              # a value...
        notes.record("bad", lambda: a.view(4))    # ...or the error it raises

Tensors become ``("tensor", dtype name, shape, nested list)``, errors
``("error", type name, first line of the message)``. An unexpected error inside a
section is recorded as ``"<section>.!raised"`` and ends that section only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import numpy as np


def plain(value: object) -> object:
    """``value`` as tuples, lists and Python scalars, the same for torch and compat."""
    if isinstance(value, BaseException):
        lines = str(value).strip().splitlines() or [""]
        return ("error", type(value).__name__, lines[0].strip())
    if isinstance(value, np.ndarray):
        return ("ndarray", str(value.dtype), value.shape, value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    kind = type(value).__name__
    if kind in ("dtype", "device"):  # torch.float32 -> "float32", device -> "cpu"
        return (kind, str(value).removeprefix("torch."))
    if all(hasattr(value, a) for a in ("detach", "dtype", "shape", "tolist")):
        dtype = str(value.dtype).removeprefix("torch.")
        return ("tensor", dtype, tuple(value.shape), value.detach().tolist())
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):  # torch.Size and torch.return_types too
        return tuple(plain(v) for v in value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return ("object", kind)


class Notes(dict):
    """Keyed results of one script; keys inside a section are ``"<section>.<key>"``."""

    _prefix = ""

    def __setitem__(self, key: str, value: object) -> None:
        super().__setitem__(self._prefix + key, plain(value))

    def record(self, key: str, thunk: Callable[[], object]) -> object:
        """Record what ``thunk()`` returns, or the error it raises (then None)."""
        try:
            value = thunk()
        except Exception as error:  # noqa: BLE001 -- the error is the result
            self[key] = error
            return None
        self[key] = value
        return value

    @contextlib.contextmanager
    def section(self, name: str) -> Iterator[None]:
        self._prefix = name + "."
        try:
            yield
        except Exception as error:  # noqa: BLE001 -- recorded, the next section runs
            self["!raised"] = error
        finally:
            self._prefix = ""
