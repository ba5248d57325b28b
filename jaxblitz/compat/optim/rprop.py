"""Blitz 3/4 (update the weights): ``torch.optim.Rprop``, resilient backprop.

Optax's ``scale_by_rprop`` is another variant (it keeps the previous update and
undoes it where the gradient's sign flips): the stage is compat's own. torch
grows a per-element step size by ``etas[1]`` where the gradient kept its sign,
shrinks it by ``etas[0]`` (and skips that element's step) where it flipped,
clamps it to ``step_sizes``, and steps by ``-sign(grad) * step_size``. The step
sizes start as the group's ``lr`` when the first step reads it. ``etas`` and
``step_sizes`` are settings of the update program (a change recompiles it).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxblitz.compat.optim.adam_variants import unzip
from jaxblitz.compat.optim.optimizer import (
    Optimizer,
    _check,
    _check_tensor,
    _unsupported,
)


class TorchRpropState(NamedTuple):
    count: jax.Array  # torch's step
    prev: Any
    step_size: Any


def scale_by_torch_rprop(
    learning_rate, etas, step_sizes
) -> optax.GradientTransformation:
    """torch's Rprop step (its updates are the whole change)."""
    etaminus, etaplus = etas
    low, high = step_sizes

    def init_fn(params):
        zeros = optax.tree.zeros_like
        return TorchRpropState(jnp.zeros([], jnp.int32), zeros(params), zeros(params))

    def update_fn(updates, state, params=None):
        del params
        first = state.count == 0  # torch: step_size = full_like(grad, lr)

        def one(g, prev, size):
            size = jnp.where(first, jnp.asarray(learning_rate, g.dtype), size)
            sign = jnp.sign(g * prev)
            factor = jnp.where(sign > 0, etaplus, jnp.where(sign < 0, etaminus, 1))
            factor = factor.astype(g.dtype)
            size = jnp.clip(size * factor, low, high).astype(g.dtype)
            g = jnp.where(factor == jnp.asarray(etaminus, g.dtype), 0, g)
            return -(jnp.sign(g) * size), g, size

        triples = jax.tree.map(one, updates, state.prev, state.step_size)
        out, prevs, sizes = unzip(updates, triples, 3)
        count = optax.safe_increment(state.count)
        return out, TorchRpropState(count, prevs, sizes)

    return optax.GradientTransformation(init_fn, update_fn)


def rprop(learning_rate, etas, step_sizes):
    """``torch.optim.Rprop(lr, etas, step_sizes)``."""
    return scale_by_torch_rprop(learning_rate, etas, step_sizes)


class Rprop(Optimizer):
    _factory = staticmethod(rprop)
    _derived = {
        "etas": lambda group: tuple(float(e) for e in group["etas"]),
        "step_sizes": lambda group: tuple(float(s) for s in group["step_sizes"]),
    }
    _hyper = {"learning_rate": "lr"}

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ):
        _check_tensor("lr", lr)
        _check(lr, 0.0, f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        _unsupported("Rprop", differentiable=differentiable)
        super().__init__(
            params,
            dict(  # torch's keys, in torch's order
                lr=lr,
                etas=etas,
                step_sizes=step_sizes,
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
                capturable=capturable,
            ),
        )

    def _buffers(self, group: dict[str, Any]) -> list[tuple[str, str, str]]:
        return [
            ("step", "", "count"),
            ("prev", "TorchRpropState", "prev"),
            ("step_size", "TorchRpropState", "step_size"),
        ]
