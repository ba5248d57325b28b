"""Blitz 1, "Tensors": torch's switch for warnings given once per process --
``torch.set_warn_always`` and ``torch.is_warn_always_enabled`` -- and
:func:`warn_once`, compat's ``TORCH_WARN_ONCE``."""

from __future__ import annotations

import warnings
from typing import Any

_always = False
_warned: set[str] = set()


def set_warn_always(b: Any) -> None:
    """``torch.set_warn_always``: warnings torch gives once per process are
    given every time (True) or once (False, the default)."""
    global _always
    if not isinstance(b, bool):
        raise RuntimeError(
            f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}"
        )
    _always = b


def is_warn_always_enabled() -> bool:
    return _always


def warn_once(key: str, message: str, stacklevel: int = 3) -> None:
    """``TORCH_WARN_ONCE``: ``message`` the first time ``key`` is met, and every
    time while :func:`set_warn_always` is on."""
    if key in _warned and not _always:
        return
    _warned.add(key)
    warnings.warn(message, UserWarning, stacklevel=stacklevel)
