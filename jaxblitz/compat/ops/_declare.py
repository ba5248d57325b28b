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
    if name in _REGISTRY and _REGISTRY[name].fn is not fn:
        raise ValueError(f"torch.{name} is declared twice, as two functions")
    if augmented is not None and not inplace:
        raise ValueError(f"{augmented} of torch.{name} needs inplace=True")
    _REGISTRY[name] = Declared(fn, method, inplace, augmented)


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
