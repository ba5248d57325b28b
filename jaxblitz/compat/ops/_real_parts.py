"""Blitz 1, "Tensors": ``torch.angle`` and ``torch.conj_physical`` on compat's
real tensors (compat has no complex dtypes): a real number's angle is 0, or pi
below zero (NaN stays NaN), with a zero gradient; a real tensor is its own
physical conjugate, the same object, as torch returns it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax.numpy as jnp

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._funnel import _tensor
from jaxblitz.compat.tensor import _dtype

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


def _angle_fn(x, *, dt):
    # NaN where x is NaN (a constant there: the gradient is zero everywhere)
    out = jnp.where(x < 0, jnp.pi, 0.0)
    return jnp.where(jnp.isnan(x), jnp.nan, out).astype(dt)


@declare(method=True)
def angle(input: Tensor) -> Tensor:
    """``torch.angle`` of a real tensor: pi where negative, else 0 (NaN stays);
    integers and bools give the default float dtype."""
    _tensor("angle", input)
    dt = input.dtype
    if not dt.is_floating_point:
        dt = _dtype.get_default_dtype()
    return apply("AngleBackward0", _angle_fn, input, dt=dt.np_name)


saves("AngleBackward0", (0, None))


@declare(method=True, inplace=True)
def conj_physical(input: Tensor) -> Tensor:
    """``torch.conj_physical`` of a real tensor: the tensor itself."""
    _tensor("conj_physical", input)
    return input
