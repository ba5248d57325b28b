"""Blitz 3/4 (update the weights): torch's per-coordinate step sizes --
``torch.optim.RMSprop``, ``Adagrad`` and ``Adadelta``.

RMSprop is the core's map (:func:`jaxblitz.optimizers.rmsprop`) and Adadelta is
``optax.adadelta``: both are torch's rules. Adagrad is compat's own stage: Optax's
``scale_by_rss`` puts ``eps`` inside the square root, torch adds it outside, and
torch decays the step size as ``lr / (1 + (step - 1) * lr_decay)``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxblitz import optimizers
from jaxblitz.compat.optim.optimizer import (
    Optimizer,
    _check,
    _check_tensor,
    _unsupported,
    init_states,
)


class RMSprop(Optimizer):
    _factory = staticmethod(optimizers.rmsprop)
    _static = ("centered",)
    _hyper = {
        "learning_rate": "lr",
        "alpha": "alpha",
        "eps": "eps",
        "weight_decay": "weight_decay",
        "momentum": "momentum",
    }

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ):
        _check_tensor("lr", lr)
        _check(lr, 0.0, f"Invalid learning rate: {lr}")
        _check(eps, 0.0, f"Invalid epsilon value: {eps}")
        _check(momentum, 0.0, f"Invalid momentum value: {momentum}")
        _check(weight_decay, 0.0, f"Invalid weight_decay value: {weight_decay}")
        _check(alpha, 0.0, f"Invalid alpha value: {alpha}")
        _unsupported("RMSprop", differentiable=differentiable)
        super().__init__(
            params,
            dict(  # torch's keys, in torch's order
                lr=lr,
                momentum=momentum,
                alpha=alpha,
                eps=eps,
                centered=centered,
                weight_decay=weight_decay,
                capturable=capturable,
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
            ),
        )

    def _buffers(self, group: dict[str, Any]) -> list[tuple[str, str, str]]:
        rms = "ScaleByRStdDevState" if group["centered"] else "ScaleByRmsState"
        out = [("step", "", "count"), ("square_avg", rms, "nu")]
        if group["momentum"] > 0:
            out.append(("momentum_buffer", "TraceState", "trace"))
        if group["centered"]:
            out.append(("grad_avg", rms, "mu"))
        return out


class TorchAdagradState(NamedTuple):
    count: jax.Array  # torch's step
    sum: Any


def scale_by_torch_adagrad(
    lr_decay, eps, initial_accumulator_value=0.0
) -> optax.GradientTransformation:
    """torch's Adagrad direction, its ``lr_decay`` included (before ``-lr``)."""

    def init_fn(params):
        total = jax.tree.map(
            lambda p: jnp.full_like(p, initial_accumulator_value), params
        )
        return TorchAdagradState(jnp.zeros([], jnp.int32), total)

    def update_fn(updates, state, params=None):
        del params
        count = optax.safe_increment(state.count)
        total = jax.tree.map(lambda s, g: s + g * g, state.sum, updates)
        decay = 1 / (1 + (count - 1) * lr_decay)  # torch's clr = lr * decay
        out = jax.tree.map(lambda g, s: g / (jnp.sqrt(s) + eps) * decay, updates, total)
        return out, TorchAdagradState(count, total)

    return optax.GradientTransformation(init_fn, update_fn)


def adagrad(learning_rate, lr_decay, eps, weight_decay, initial_accumulator_value):
    """``torch.optim.Adagrad(lr, lr_decay, weight_decay, initial_accumulator_value,
    eps)``."""
    return optax.chain(
        optax.add_decayed_weights(weight_decay),
        scale_by_torch_adagrad(lr_decay, eps, initial_accumulator_value),
        optax.scale_by_learning_rate(learning_rate),
    )


class Adagrad(Optimizer):
    _factory = staticmethod(adagrad)
    _hyper = {
        "learning_rate": "lr",
        "lr_decay": "lr_decay",
        "eps": "eps",
        "weight_decay": "weight_decay",
    }

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ):
        _check_tensor("lr", lr)
        _check(lr, 0.0, f"Invalid learning rate: {lr}")
        _check(lr_decay, 0.0, f"Invalid lr_decay value: {lr_decay}")
        _check(weight_decay, 0.0, f"Invalid weight_decay value: {weight_decay}")
        _check(
            initial_accumulator_value,
            0.0,
            f"Invalid initial_accumulator_value value: {initial_accumulator_value}",
        )
        _check(eps, 0.0, f"Invalid epsilon value: {eps}")
        _unsupported("Adagrad", differentiable=differentiable)
        super().__init__(
            params,
            dict(  # torch's keys, in torch's order
                lr=lr,
                lr_decay=lr_decay,
                eps=eps,
                weight_decay=weight_decay,
                initial_accumulator_value=initial_accumulator_value,
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
                fused=fused,
            ),
        )
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        # torch makes Adagrad's state (step 0, sum) here, not at the first step
        for group in self.param_groups:
            states = init_states(self._tx(group), [p._data for p in group["params"]])
            self._optax_states.update(zip(group["params"], states, strict=True))

    _state_at_init = True

    def derived(self, group: dict[str, Any]) -> dict[str, Any]:
        # read once, by init: torch fills every sum from the constructor's value
        # (``defaults``), a group's own ignored, even one added later
        return {"initial_accumulator_value": self.defaults["initial_accumulator_value"]}

    def _buffers(self, group: dict[str, Any]) -> list[tuple[str, str, str]]:
        return [("step", "", "count"), ("sum", "TorchAdagradState", "sum")]


def adadelta(learning_rate, rho, eps, weight_decay):
    """``torch.optim.Adadelta(lr, rho, eps, weight_decay)``: Optax's, the same rule."""
    return optax.adadelta(learning_rate, rho, eps, weight_decay)


class Adadelta(Optimizer):
    _factory = staticmethod(adadelta)
    _hyper = {
        "learning_rate": "lr",
        "rho": "rho",
        "eps": "eps",
        "weight_decay": "weight_decay",
    }

    def __init__(
        self,
        params: Any,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ):
        _check_tensor("lr", lr)
        _check(lr, 0.0, f"Invalid learning rate: {lr}")
        _check(rho, 0.0, f"Invalid rho value: {rho}", 1.0, closed=True)
        _check(eps, 0.0, f"Invalid epsilon value: {eps}")
        _check(weight_decay, 0.0, f"Invalid weight_decay value: {weight_decay}")
        _unsupported("Adadelta", differentiable=differentiable)
        super().__init__(
            params,
            dict(  # torch's keys, in torch's order
                lr=lr,
                rho=rho,
                eps=eps,
                weight_decay=weight_decay,
                maximize=maximize,
                capturable=capturable,
                foreach=foreach,
                differentiable=differentiable,
            ),
        )

    def _buffers(self, group: dict[str, Any]) -> list[tuple[str, str, str]]:
        return [
            ("step", "", "count"),
            ("square_avg", "ScaleByAdaDeltaState", "e_g"),
            ("acc_delta", "ScaleByAdaDeltaState", "e_x"),
        ]
