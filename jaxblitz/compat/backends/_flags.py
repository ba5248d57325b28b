"""The flag switches of torch's CPU kernel libraries (``torch.backends.mkldnn``,
``.nnpack``, ``.opt_einsum``): settable, read back, and ``flags(...)`` as a
context manager, as in torch; compat's kernels are XLA's, which none of them
steers."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any


def switches(module: ModuleType, names: tuple[str, ...]) -> tuple[Any, Any]:
    """``set_flags`` and ``flags`` over ``module``'s attributes ``names``:
    ``set_flags`` sets each argument that is not None and returns the old
    values; ``flags`` sets them for the duration of a ``with``."""

    def set_flags(*values: Any) -> tuple:
        old = tuple(getattr(module, name) for name in names)
        for name, value in zip(names, values, strict=False):
            if value is not None:
                setattr(module, name, value)
        return old

    @contextlib.contextmanager
    def flags(*values: Any) -> Iterator[None]:
        old = set_flags(*values)
        try:
            yield
        finally:
            set_flags(*old)

    return set_flags, flags
