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

from jaxblitz.compat.optim import _optim_state
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
    momentum: float, dampening: float, nesterov: bool = False, on: bool | None = None
) -> optax.GradientTransformation:
    """torch's SGD momentum stage (``momentum == 0`` passes the gradient through).

    ``on``: whether ``momentum != 0``, where known when the program is built (a
    static argument: the program then computes one case, not both and a select;
    its compile time and run time are about halved); None: decided as it runs.
    """

    def init_fn(params):
        return TorchMomentumState(
            optax.tree.zeros_like(params), jnp.zeros((), jnp.bool_)
        )

    def update_fn(updates, state, params=None):
        del params
        # torch: `if momentum != 0:`
        running = jnp.asarray(momentum) != 0 if on is None else jnp.asarray(on)

        def one(g, buf):
            if on is False:
                return g, buf
            new = jnp.where(state.started, momentum * buf + (1 - dampening) * g, g)
            buf = new.astype(buf.dtype) if on else jnp.where(running, new, buf)
            step = (g + momentum * buf if nesterov else buf).astype(g.dtype)
            return (step if on else jnp.where(running, step, g)), buf

        pairs = jax.tree.map(one, updates, state.momentum_buffer)
        is_pair = lambda x: isinstance(x, tuple)  # noqa: E731
        steps = jax.tree.map(lambda x: x[0], pairs, is_leaf=is_pair)
        bufs = jax.tree.map(lambda x: x[1], pairs, is_leaf=is_pair)
        return steps, TorchMomentumState(bufs, state.started | running)

    return optax.GradientTransformation(init_fn, update_fn)


def decayed_weights(
    weight_decay: float, on: bool | None = None
) -> optax.GradientTransformation:
    """``optax.add_decayed_weights``, skipped where ``on`` (``weight_decay != 0``,
    known when the program is built) is False, as torch's ``if weight_decay !=
    0:`` skips it (``0 * inf`` would make the gradient NaN); the same state."""
    decay = optax.add_decayed_weights(weight_decay)
    if on is not False:
        return decay
    return optax.GradientTransformation(decay.init, lambda u, state, p=None: (u, state))


def sgd(
    learning_rate,
    momentum,
    dampening,
    weight_decay,
    nesterov=False,
    momentum_on=None,
    decay_on=None,
):
    """``torch.optim.SGD(lr, momentum, dampening, weight_decay, nesterov)``;
    ``momentum_on``, ``decay_on``: whether those are nonzero, where known when
    the program is built (None: decided as it runs, inside ``torch.compile``)."""
    return optax.chain(
        decayed_weights(weight_decay, decay_on),  # torch: grad + weight_decay * p
        torch_momentum(momentum, dampening, nesterov, momentum_on),
        optax.scale_by_learning_rate(learning_rate),
    )


def _nonzero(key: str):
    """``group[key] != 0`` where it is a number (a static of the update
    program); None where ``torch.compile`` traces it."""
    return lambda group: (
        None if isinstance(group[key], jax.core.Tracer) else bool(group[key] != 0)
    )


class SGD(Optimizer):
    _factory = staticmethod(sgd)
    _static = ("nesterov",)
    _derived = {
        "momentum_on": _nonzero("momentum"),
        "decay_on": _nonzero("weight_decay"),
    }
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

    def _settle(self, group: dict[str, Any], new: Any, old: Any) -> Any:
        # Whether torch keeps a buffer yet is the program's `started` flag, a
        # value lazily pending until the step's program runs; the host knows it
        # now (the update was built for momentum != 0 or not), so `state` and
        # `state_dict()` read it without running the step.
        traced = self.__dict__.get("_traced_derived", {}).get(id(group))
        on = (traced or self.derived(group))["momentum_on"]
        if on is None:  # decided as the program runs: its flag
            return new
        cls, field = self._started
        flag = (
            _optim_state.started()
            if on
            else getattr(_optim_state._find(old)[cls], field)
        )
        return _optim_state._replace(new, {cls: {field: flag}})
