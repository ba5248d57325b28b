"""Blitz 1, "Tensors": the one declaration of each torch op -- its ``torch.*``
name, whether it is also a ``Tensor`` method and an in-place ``name_`` method
(with its augmented operator, ``x += y``), and what torch saves for its backward.

An op module declares each op beside its definition::

    @declare(method=True, inplace=True)
    def hypot(input, other): ...

    saves("HypotBackward0", (0, 0), (1, 1), ("result", None))
    declare.alias("arctan2", atan2, method=True, inplace=True)

``ops/__init__`` sets the methods onto ``MathMixin`` from :func:`declared`,
``ops/inplace`` the ``name_`` methods and augmented operators, and the facade
exports the ``torch.*`` functions; :func:`saves` adds the rule to autograd's
table (:data:`jaxblitz.compat.autograd.graph._SAVES`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, NamedTuple

from jaxblitz.compat.autograd.graph import register_saves


class Declared(NamedTuple):
    """One op: its function and where it appears besides ``torch.<name>``."""

    fn: Callable[..., Any]
    method: bool  # Tensor.<name>
    inplace: bool  # Tensor.<name>_
    augmented: str | None  # the augmented operator of <name>_: "iadd" for +=


_REGISTRY: dict[str, Declared] = {}


def _register(
    name: str,
    fn: Callable[..., Any],
    method: bool,
    inplace: bool,
    augmented: str | None,
) -> None:
    if name in _REGISTRY and _RAW[name] is not fn:
        raise ValueError(f"torch.{name} is declared twice, as two functions")
    if augmented is not None and not inplace:
        raise ValueError(f"{augmented} of torch.{name} needs inplace=True")
    _RAW[name] = fn
    named = fn if name in PYTHON_LEVEL else numpy_names(fn)
    _REGISTRY[name] = Declared(named, method, inplace, augmented)


_RAW: dict[str, Callable[..., Any]] = {}


# NumPy's names that torch's argument parser takes for its own
_NUMPY_NAMES = (("axis", "dim"), ("keepdims", "keepdim"))
# ops torch writes in Python (torch.functional, torch/_tensor.py): no parser,
# so no NumPy names
PYTHON_LEVEL = frozenset({"norm", "split", "unique", "unique_consecutive", "unflatten"})
_WRAPPED: dict[int, Callable[..., Any]] = {}


def numpy_names(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` taking ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=``,
    as torch's ops do (``x.sum(axis=1, keepdims=True)``); the module keeps the
    plain function for compat's own calls."""
    if id(fn) in _WRAPPED or getattr(fn, "_numpy_names", False):
        return _WRAPPED.get(id(fn), fn)
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = {}
    loose = any(p.kind is p.VAR_KEYWORD for p in params.values())
    pairs = tuple((a, n) for a, n in _NUMPY_NAMES if n in params or loose)
    if not pairs:
        return fn

    @functools.wraps(fn)
    def named(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            for alias, name in pairs:
                if alias in kwargs and name not in kwargs:
                    kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)

    named._numpy_names = True  # type: ignore[attr-defined]
    _WRAPPED[id(fn)] = named
    _KEEP.append(fn)  # ids stay unique while the function lives
    return named


_KEEP: list[Callable[..., Any]] = []


class _Declare:
    """``@declare`` / ``@declare(method=True, inplace=True, augmented="iadd")`` on
    a ``def``: the function, unchanged, registered under its own name."""

    def __call__(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        method: bool = False,
        inplace: bool = False,
        augmented: str | None = None,
    ) -> Any:
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            _register(fn.__name__, fn, method, inplace, augmented)
            return fn

        return register if fn is None else register(fn)

    def alias(
        self,
        name: str,
        fn: Callable[..., Any],
        *,
        method: bool = False,
        inplace: bool = False,
        augmented: str | None = None,
    ) -> Callable[..., Any]:
        """``fn`` (an alias, a partial, a built function) as ``torch.<name>``."""
        _register(name, fn, method, inplace, augmented)
        return fn


declare = _Declare()


def saves(grad_fn: str, *rule: tuple[int | str, int | None]) -> None:
    """What torch's ``grad_fn`` node saves for backward: ``(position, needs)``
    pairs, ``position`` an argument of :func:`graph.apply` or ``"result"``, saved
    only where argument ``needs`` requires grad (``None``: always). An in-place
    change of a saved tensor then makes backward raise, as torch's does."""
    register_saves(grad_fn, rule)


def declared() -> dict[str, Declared]:
    """Every declared op by torch name, in declaration order."""
    return dict(_REGISTRY)
