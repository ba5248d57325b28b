"""Blitz 1, "Tensors": torch's Scalar arguments (``value=`` of addcmul,
``alpha=`` of add, ``beta=`` of addmm, a threshold) given as tensors.

torch's argument parser reads a 0-d tensor outside autograd as the number it
holds (a bool tensor as a bool, an integer one as an int) and refuses any other
tensor. compat keeps such a tensor an operand of the op where the kernel can
take one, so that a pending value (a step size computed in the same step) stays
in lazy mode's program; elsewhere it is read as torch reads it.
"""

from __future__ import annotations

from typing import Any

from jaxblitz.compat.tensor._tensor_base import TensorBase


def scalar_arg(value: Any, what: str, arg: str, position: int | None = None) -> Any:
    """``value`` as torch's parser accepts it for a Scalar: a number, or a 0-d
    tensor that does not require grad (returned as it is)."""
    if isinstance(value, TensorBase) and (value.dim() or value.requires_grad):
        where = f" (position {position})" if position is not None else ""
        raise TypeError(f"{what}(): argument '{arg}'{where} must be Number, not Tensor")
    return value


def kind(value: Any) -> Any:
    """A number of ``value``'s kind (bool, int or float), for torch's checks
    that look at a Scalar's type and not its value."""
    if not isinstance(value, TensorBase):
        return value
    if value.dtype.is_floating_point:
        return 1.0
    return True if value.dtype.scalar_type == "Bool" else 1


def number(value: Any, what: str, arg: str, position: int | None = None) -> Any:
    """A Scalar read as a Python number, as torch's parser reads it (for a
    pending tensor, a sync point: the kernel needs the number itself)."""
    value = scalar_arg(value, what, arg, position)
    return value.item() if isinstance(value, TensorBase) else value
