"""``torch.distributions.utils``: broadcasting parameters, probabilities <-> logits,
and the lazily computed parameter property."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import update_wrapper
from typing import Any, NamedTuple

import jax.numpy as jnp

from jaxblitz.compat.autograd.grad_mode import enable_grad
from jaxblitz.compat.nn.functional import softmax
from jaxblitz.compat.ops._unary import log, log1p, sigmoid
from jaxblitz.compat.ops.shape_ops import broadcast_shapes
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._dtype import get_default_dtype
from jaxblitz.compat.tensor.creation import empty, tensor

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
]

euler_constant = 0.57721566490153286060  # Euler Mascheroni Constant

# torch.types._Number: the Python numbers a parameter may be given as
_Number = (int, float, bool)


class _FInfo(NamedTuple):
    eps: float
    tiny: float
    min: float
    max: float


def _finfo(dtype: Any) -> _FInfo:
    """``torch.finfo(dtype)``'s eps, tiny, min and max, as Python floats."""
    info = jnp.finfo(dtype.np)
    return _FInfo(*(float(getattr(info, k)) for k in _FInfo._fields))


def _format(value: Any) -> str:
    """torch's ``f"{value}"``: a 0-d tensor formats as its number."""
    if isinstance(value, Tensor) and value.dim() == 0:
        return format(value.item(), "")
    return format(value, "")


def broadcast_all(*values: Tensor | float) -> tuple[Tensor, ...]:
    """The values as tensors of one broadcast shape; numbers take the first
    tensor's dtype and device (the default dtype where none is a tensor)."""
    if not all(isinstance(v, (Tensor, *_Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, torch.Tensor or "
            "objects implementing __torch_function__."
        )
    if not all(isinstance(v, Tensor) for v in values):
        options: dict[str, Any] = dict(dtype=get_default_dtype())
        for value in values:
            if isinstance(value, Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        values = tuple(
            v if isinstance(v, Tensor) else tensor(v, **options) for v in values
        )
    # torch: a tensor already of the broadcast shape comes back itself
    shape = broadcast_shapes(*(v.shape for v in values))
    return tuple(v if v.shape == shape else v.expand(shape) for v in values)


def _standard_normal(shape: Sequence[int], dtype: Any, device: Any) -> Tensor:
    # torch: torch.empty(shape).normal_()
    return empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its rightmost ``dim`` dimensions."""
    if dim == 0:
        return value
    required_shape = value.shape[:-dim] + (-1,)
    return value.reshape(required_shape).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    if is_binary:
        return sigmoid(logits)
    return softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped into [eps, 1 - eps] of their dtype."""
    eps = float(_finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return log(ps_clamped) - log1p(-ps_clamped)
    return log(ps_clamped)


class lazy_property:
    """A parameter computed from another on first read (with grad enabled), then
    kept as an instance attribute: ``Categorical.logits`` from ``probs``."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """A lazy property read on the class: a ``property`` to documentation tools."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        property.__init__(self, wrapped)
