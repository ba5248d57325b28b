"""Blitz 2, "autograd" (forward mode): ``torch.autograd.forward_ad`` --
``dual_level``, ``make_dual``, ``unpack_dual``.

A dual tensor is a tensor with a tangent attached at the live level. Each op
that reads a dual tensor gives its result the tangent JAX derives by
``jax.jvp`` of the op's own pure function (see :mod:`._dual`), in eager and
lazy mode alike; leaving the level drops every tangent made in it.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from jaxblitz.compat.autograd import _dual
from jaxblitz.compat.tensor._tensor_base import TensorBase

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]


def _current_level() -> int:
    level = _dual.state[0]
    return -1 if level is None else level.index


def enter_dual_level() -> int:
    """Enter a new forward grad level; its index (always 0: they do not nest)."""
    if _dual.state[0] is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _dual.state[0] = _dual.Level(0)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the live level: every tangent made in it is gone."""
    current = _current_level()
    if level is None:
        level = current
    if level != current:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was "
            "created. This is not supported."
        )
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    _dual.state[0] = None


def _check_level(level: int | None) -> None:
    if level is not None and level != _current_level():
        raise RuntimeError(
            "Trying to access a forward AD level with an invalid index. This index "
            "was either not created or is already deleted."
        )


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None) -> Any:
    """``tensor`` (aliased, as a view) with ``tangent`` as its forward gradient:
    ``tangent`` itself where its dtype and strides are ``tensor``'s, else a copy
    with them."""
    if level is None and _dual.state[0] is None or (level is not None and level < 0):
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make "
            "sure to enter_dual_level() first."
        )
    _check_level(level)
    for what, t in (("primal", tensor), ("tangent", tangent)):
        if not (t.is_floating_point() or t.is_complex()):
            raise ValueError(
                f"Expected {what} to be floating point or complex, but got: {t.dtype}"
            )
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that "
            "of the original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}."
        )
    if _dual.tangent(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward "
            "gradient at the same level 0 is not supported."
        )
    with _dual.off():
        dual = tensor.view_as(tensor)
        if tangent.dtype is not tensor.dtype or tangent.stride() != tensor.stride():
            tangent = _laid_out_as(tangent, tensor)
    _dual.set_tangent(dual, tangent)
    return dual


def _laid_out_as(tangent: Any, primal: Any) -> Any:
    """A copy of ``tangent`` with ``primal``'s dtype and strides."""
    from jaxblitz.compat.ops._factories import empty_strided

    out = empty_strided(
        tuple(primal.shape), primal.stride(), dtype=primal.dtype, device=primal.device
    )
    return out.copy_(tangent.detach())


class UnpackedDualTensor(NamedTuple):
    """``torch.autograd.forward_ad.UnpackedDualTensor``: (primal, tangent)."""

    primal: Any
    tangent: Any


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)``: a view of ``tensor`` without its tangent, and the
    tangent itself (None where it has none, or outside a level)."""
    if _dual.state[0] is None and level is None or (level is not None and level < 0):
        return UnpackedDualTensor(tensor, None)
    _check_level(level)
    tangent = _dual.tangent(tensor)
    if tangent is None or not isinstance(tensor, TensorBase):
        return UnpackedDualTensor(tensor, tangent)
    with _dual.off():
        primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)


class dual_level:  # noqa: N801 -- torch's name
    """``with dual_level():`` -- forward AD happens inside; tangents made there
    are dropped on exit. Also a decorator."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()

    def __call__(self, fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with dual_level():
                return fn(*args, **kwargs)

        return wrapper
