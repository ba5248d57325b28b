"""Blitz 3/4 (update the weights): ``torch.optim.ASGD``, averaged SGD.

Optax has no averaged SGD: the stage is compat's own. torch decays the parameter
by ``1 - lambd * eta``, steps by ``-eta * grad``, and keeps the running average
``ax`` of the parameters from step ``t0`` on; ``eta`` starts as the group's
``lr`` at the first step and then follows ``lr / (1 + lambd * lr * step) **
alpha``. ``eta`` and the averaging weight ``mu`` are float32 scalars, as torch
keeps them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxblitz.compat.optim._scalar_state import ScalarBuffers
from jaxblitz.compat.optim.adam_variants import _f64, unzip
from jaxblitz.compat.optim.optimizer import _check, _check_tensor, _unsupported
from jaxblitz.compat.optim.sgd import _nonzero, decayed_weights


class TorchASGDState(NamedTuple):
    count: jax.Array  # torch's step
    eta: jax.Array  # float32; the group's lr once the first step reads it
    mu: jax.Array  # float32
    ax: Any


def scale_by_torch_asgd(
    learning_rate, lambd, alpha, t0
) -> optax.GradientTransformation:
    """torch's ASGD step, ``-lr`` included (its updates are the whole change)."""

    def init_fn(params):
        return TorchASGDState(
            jnp.zeros([], jnp.int32),
            jnp.zeros([], jnp.float32),
            jnp.ones([], jnp.float32),
            optax.tree.zeros_like(params),
        )

    def update_fn(updates, state, params=None):
        if params is None:
            raise ValueError(optax.NO_PARAMS_MSG)
        # torch: state["eta"] = group["lr"] when the state is made
        eta = jnp.where(state.count == 0, _f64(learning_rate), _f64(state.eta))
        eta = eta.astype(jnp.float32)
        count = optax.safe_increment(state.count)
        decay = 1 - _f64(lambd) * _f64(eta)
        averaging = state.mu != 1

        def one(g, p, ax):
            new = p * decay.astype(p.dtype) - _f64(eta).astype(p.dtype) * g
            ax = jnp.where(averaging, ax + (new - ax) * state.mu.astype(p.dtype), new)
            return new - p, ax

        pairs = jax.tree.map(one, updates, params, state.ax)
        out, axs = unzip(updates, pairs, 2)
        step, lr = _f64(count), _f64(learning_rate)
        new_eta = lr / (1 + _f64(lambd) * lr * step) ** _f64(alpha)
        new_mu = 1 / jnp.maximum(1.0, step - _f64(t0))
        return out, TorchASGDState(
            count, new_eta.astype(jnp.float32), new_mu.astype(jnp.float32), axs
        )

    return optax.GradientTransformation(init_fn, update_fn)


def asgd(learning_rate, lambd, alpha, t0, weight_decay, decay_on=None):
    """``torch.optim.ASGD(lr, lambd, alpha, t0, weight_decay)``."""
    return optax.chain(
        decayed_weights(weight_decay, decay_on),
        scale_by_torch_asgd(learning_rate, lambd, alpha, t0),
    )


class ASGD(ScalarBuffers):
    _factory = staticmethod(asgd)
    _derived = {"decay_on": _nonzero("weight_decay")}
    _hyper = {
        "learning_rate": "lr",
        "lambd": "lambd",
        "alpha": "alpha",
        "t0": "t0",
        "weight_decay": "weight_decay",
    }
    _scalars = {"eta": ("TorchASGDState", "eta"), "mu": ("TorchASGDState", "mu")}

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ):
        _check_tensor("lr", lr)
        _check(lr, 0.0, f"Invalid learning rate: {lr}")
        _check(weight_decay, 0.0, f"Invalid weight_decay value: {weight_decay}")
        _unsupported("ASGD", differentiable=differentiable)
        super().__init__(
            params,
            dict(  # torch's keys, in torch's order
                lr=lr,
                lambd=lambd,
                alpha=alpha,
                t0=t0,
                weight_decay=weight_decay,
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
                capturable=capturable,
            ),
        )

    def _buffers(self, group: dict[str, Any]) -> list[tuple[str, str, str]]:
        return [
            ("step", "", "count"),
            ("eta", "TorchASGDState", "eta"),
            ("mu", "TorchASGDState", "mu"),
            ("ax", "TorchASGDState", "ax"),
        ]
