"""torch.nn.functional's argument parsing, in torch's words: ints or tuples of ints
(stride, padding ...) and their errors, shared by the functional ops."""

from __future__ import annotations

from typing import Any

from jaxblitz.compat.tensor._tensor_base import _as_int


def _ints(name: str, arg: str, position: int, value: Any) -> tuple[int, ...]:
    """An int or a sequence of ints (stride, padding ...), as torch parses it."""
    if not isinstance(value, tuple | list):
        if _as_int(value) is None:
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be tuple of "
                f"ints, not {type(value).__name__}"
            )
        return (int(value),)
    for i, v in enumerate(value):
        if _as_int(v) is None:
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be tuple of "
                f"ints, but found element of type {type(v).__name__} at pos {i}"
            )
    return tuple(int(v) for v in value)


def _two(values: tuple[int, ...]) -> tuple[int, ...]:
    return values * 2 if len(values) == 1 else values


def _square(name: str, values: tuple) -> int:
    if len(set(values)) != 1:
        raise NotImplementedError(
            f"{name}: only square kernels/strides/padding are supported by "
            f"jaxblitz.compat, got {values}"
        )
    return values[0]


def _spread(values: tuple[int, ...], n: int) -> tuple[int, ...]:
    """One value for each of ``n`` axes, as torch expands a single int."""
    return values * n if len(values) == 1 else values


def _by(sizes: Any) -> str:
    return " x ".join(str(n) for n in sizes)


def _static(value: Any) -> bool:
    """Whether ``value`` is an int, a str or a tuple of ints, by exact type: such
    an argument keys a cached plan (a bool, float or tensor is never one, so it
    cannot hit a plan made for an equal int)."""
    kind = type(value)
    if kind is tuple:
        return _INT.issuperset(map(type, value))
    return kind is int or kind is str


_INT = frozenset((int,))
PLANS_MAX = 1024  # an op's checked argument plans kept, then all forgotten


def _keep(plans: dict, key: Any, plan: Any) -> Any:
    """``plan`` stored under ``key`` in ``plans`` (an op's checked argument
    plans; None: a call whose arguments key none), which is emptied first once
    it holds :data:`PLANS_MAX`."""
    if key is not None:
        if len(plans) >= PLANS_MAX:
            plans.clear()
        plans[key] = plan
    return plan


def _bool(fn: str, arg: str, value: Any, position: int | None = None) -> bool:
    """A bool argument of torch's ``fn`` (``ceil_mode``, ``count_include_pad``),
    refused unless a bool, in its binding's words: torch takes no int for one."""
    if type(value) is not bool:
        at = f" (position {position})" if position is not None else ""
        raise TypeError(
            f"{fn}(): argument '{arg}'{at} must be bool, not {type(value).__name__}"
        )
    return value
