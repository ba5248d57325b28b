"""Blitz 4, "Training a classifier": ``torch.nn.utils.clip_grad`` -- scale or clamp
the ``.grad`` of parameters in place between ``backward()`` and ``step()``.

    loss.backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
    optimizer.step()

``foreach`` is accepted and changes nothing: compat has one implementation.
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable
from typing import Any

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.ops._reduce import norm
from jaxblitz.compat.ops._unary import clamp
from jaxblitz.compat.ops.shape_ops import stack
from jaxblitz.compat.tensor import Tensor, creation
from jaxblitz.compat.tensor._checks import check_values, error
from jaxblitz.compat.tensor._tensor_base import TensorBase

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
]


def _tensors(tensors: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [tensors] if isinstance(tensors, TensorBase) else list(tensors)


def _grads(parameters: list[Tensor]) -> list[Tensor]:
    return [p.grad for p in parameters if p.grad is not None]


@no_grad()
def get_total_norm(
    tensors: Tensor | Iterable[Tensor],
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The ``norm_type`` norm of all ``tensors`` as if concatenated into one vector
    (``'inf'``: the largest magnitude)."""
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return creation.tensor(0.0)
    # torch: each tensor's norm, then the norm of those norms
    total = norm(stack([norm(t, norm_type) for t in tensors]), norm_type)
    if error_if_nonfinite:  # a pending norm is checked at the next sync
        check_values(
            [total],
            _nonfinite,
            error(
                f"The total norm of order {norm_type} for gradients from "
                "`parameters` is non-finite, so it cannot be clipped. To disable "
                "this error and scale the gradients by the non-finite norm anyway, "
                "set `error_if_nonfinite=False`"
            ),
        )
    return total


def _nonfinite(total: Any) -> tuple:
    return ~(abs(total) < float("inf")), total


@no_grad()
def clip_grads_with_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    total_norm: Tensor,
    foreach: bool | None = None,
) -> None:
    """Scale every ``.grad`` by ``min(max_norm / (total_norm + 1e-6), 1)``."""
    grads = _grads(_tensors(parameters))
    if not grads:
        return
    coef = clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the ``.grad`` of ``parameters`` in place so that their total norm is
    at most ``max_norm``; returns the total norm before clipping (a 0-dim tensor).
    """
    max_norm = float(max_norm)  # torch: a max_norm float() refuses, before all
    is_generator = isinstance(parameters, types.GeneratorType)
    parameters = _tensors(parameters)
    if is_generator and not parameters:
        warnings.warn(
            "`parameters` is an empty generator, no gradient clipping will occur.",
            stacklevel=2,
        )
    grads = _grads(parameters)
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


@no_grad()
def clip_grad_value_(
    parameters: Tensor | Iterable[Tensor],
    clip_value: float,
    foreach: bool | None = None,
) -> None:
    """Clamp every ``.grad`` of ``parameters`` in place to ``[-clip_value,
    clip_value]``."""
    clip_value = float(clip_value)
    for g in _grads(_tensors(parameters)):
        g.clamp_(min=-clip_value, max=clip_value)
