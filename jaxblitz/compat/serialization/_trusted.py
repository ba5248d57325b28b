"""Blitz 4 (saving the model): ``torch.serialization``'s safe globals, what the user
trusts a ``torch.load`` file to name (``add_safe_globals([Config])`` or
``with safe_globals([Config]):``), read by :mod:`._torch_globals`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_safe_globals: set[Callable | tuple[Callable, str]] = set()


def add_safe_globals(safe_globals: list[Callable | tuple[Callable, str]]) -> None:
    """Let ``torch.load`` files name these classes and functions (by their
    ``__module__.__qualname__``, or the name given as ``(obj, "module.Name")``)."""
    global _safe_globals
    _safe_globals = _safe_globals.union(set(safe_globals))


def get_safe_globals() -> list[Callable | tuple[Callable, str]]:
    return list(_safe_globals)


def clear_safe_globals() -> None:
    global _safe_globals
    _safe_globals = set()


def _remove_safe_globals(safe_globals: list[Callable | tuple[Callable, str]]) -> None:
    global _safe_globals
    _safe_globals = _safe_globals - set(safe_globals)


class safe_globals:  # noqa: N801 -- torch's name
    """``with torch.serialization.safe_globals([Config]): torch.load(...)``."""

    def __init__(self, safe_globals: list[Callable | tuple[Callable, str]]):
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        _remove_safe_globals(self.safe_globals)


def user_globals() -> dict[str, Any]:
    """The safe globals by the name a file gives them (torch:
    ``_get_user_allowed_globals``, with its errors)."""
    named: dict[str, Any] = {}
    for f in _safe_globals:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError(
                    "Expected tuple of length 2 (global, str of callable full path), "
                    f"but got tuple of length: {len(f)}"
                )
            if type(f[1]) is not str:
                raise TypeError(
                    "Expected second item in tuple to be str of callable full path, "
                    f"but got: {type(f[1])}"
                )
            f, name = f
            named[name] = f
        else:
            named[f"{f.__module__}.{f.__qualname__}"] = f
    return named
