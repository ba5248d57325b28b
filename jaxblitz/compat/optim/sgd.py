"""Blitz 3/4 (update the weights): ``torch.optim.SGD``, the Blitz's optimizer.

Optax supplies the L2 term (``add_decayed_weights``) and the ``-lr`` scale; the
momentum stage is compat's own, because ``optax.trace`` is torch's rule only when
``dampening == 0`` and the momentum never changes: torch's buffer starts as a copy
of the first gradient it sees with ``momentum != 0`` and is then
``momentum * buf + (1 - dampening) * grad``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxblitz.compat.optim.optimizer import (
    Optimizer,
    _check,
    _check_tensor,
    _unsupported,
)


class TorchMomentumState(NamedTuple):
    """SGD's ``momentum_buffer``, and whether torch would have one yet."""

    momentum_buffer: Any
    started: jax.Array  # bool, ()


def torch_momentum(
    momentum: float, dampening: float, nesterov: bool = False
) -> optax.GradientTransformation:
    """torch's SGD momentum stage (``momentum == 0`` passes the gradient through)."""

    def init_fn(params):
        return TorchMomentumState(
            optax.tree.zeros_like(params), jnp.zeros((), jnp.bool_)
        )

    def update_fn(updates, state, params=None):
        del params
        on = jnp.asarray(momentum) != 0  # torch: `if momentum != 0:`

        def one(g, buf):
            new = jnp.where(state.started, momentum * buf + (1 - dampening) * g, g)
            buf = jnp.where(on, new.astype(buf.dtype), buf)
            step = g + momentum * buf if nesterov else buf
            return jnp.where(on, step.astype(g.dtype), g), buf

        pairs = jax.tree.map(one, updates, state.momentum_buffer)
        is_pair = lambda x: isinstance(x, tuple)  # noqa: E731
        steps = jax.tree.map(lambda x: x[0], pairs, is_leaf=is_pair)
        bufs = jax.tree.map(lambda x: x[1], pairs, is_leaf=is_pair)
        return steps, TorchMomentumState(bufs, state.started | on)

    return optax.GradientTransformation(init_fn, update_fn)


def sgd(learning_rate, momentum, dampening, weight_decay, nesterov=False):
    """``torch.optim.SGD(lr, momentum, dampening, weight_decay, nesterov)``."""
    return optax.chain(
        optax.add_decayed_weights(weight_decay),  # torch: grad + weight_decay * p
        torch_momentum(momentum, dampening, nesterov),
        optax.scale_by_learning_rate(learning_rate),
    )


class SGD(Optimizer):
    _factory = staticmethod(sgd)
    _static = ("nesterov",)
    _hyper = {
        "learning_rate": "lr",
        "momentum": "momentum",
        "dampening": "dampening",
        "weight_decay": "weight_decay",
    }

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ):
        _check_tensor("lr", lr)
        _check(lr, 0.0, f"Invalid learning rate: {lr}")
        _check(momentum, 0.0, f"Invalid momentum value: {momentum}")
        _check(weight_decay, 0.0, f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _unsupported("SGD", differentiable=differentiable)
        super().__init__(
            params,
            dict(  # torch's keys, in torch's order
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                maximize=maximize,
                foreach=foreach,
                differentiable=differentiable,
                fused=fused,
            ),
        )

    def _buffers(self, group: dict[str, Any]) -> list[tuple[str, str, str]]:
        # torch keeps no state until a step ran with momentum != 0
        return [("momentum_buffer", "TorchMomentumState", "momentum_buffer")]

    _started = ("TorchMomentumState", "started")
