"""The ``torch.linalg`` functions that ops modules under it call (a norm, a
solve, ``eigvalsh``), handed down by :mod:`jaxblitz.compat.linalg` when it
loads: the ops never import the facade that imports them (no import circle)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_FUNCTIONS: dict[str, Callable[..., Any]] = {}


def register(**functions: Callable[..., Any]) -> None:
    _FUNCTIONS.update(functions)


def linalg(name: str) -> Callable[..., Any]:
    """``torch.linalg.<name>``, as compat's linalg registered it."""
    return _FUNCTIONS[name]
