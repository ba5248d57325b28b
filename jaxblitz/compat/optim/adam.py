"""Blitz 3/4 (update the weights): ``torch.optim.Adam`` and ``AdamW``.

Optax's ``scale_by_adam`` is torch's Adam; the L2 term goes before it
(``weight_decay``, torch's Adam) or after it (``decoupled_weight_decay``, AdamW:
``p * (1 - lr * wd)`` is ``p - lr * wd * p``). ``amsgrad`` is compat's own stage:
torch keeps the maximum of the raw second moments and bias-corrects it with the
current step, where ``optax.scale_by_amsgrad`` keeps the maximum of the corrected
ones.
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
)
from jaxblitz.compat.tensor import Tensor


class TorchAmsgradState(NamedTuple):
    count: jax.Array  # torch's step
    mu: Any  # exp_avg
    nu: Any  # exp_avg_sq
    nu_max: Any  # max_exp_avg_sq


def scale_by_torch_amsgrad(b1, b2, eps) -> optax.GradientTransformation:
    """torch's ``Adam(amsgrad=True)`` direction (before ``-lr``)."""

    def init_fn(params):
        zeros = optax.tree.zeros_like
        return TorchAmsgradState(
            jnp.zeros([], jnp.int32), zeros(params), zeros(params), zeros(params)
        )

    def update_fn(updates, state, params=None):
        del params
        mu = optax.tree.update_moment(updates, state.mu, b1, 1)
        nu = optax.tree.update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count = optax.safe_increment(state.count)
        nu_max = jax.tree.map(jnp.maximum, state.nu_max, nu)
        bc1 = 1 - b1**count
        bc2_sqrt = jnp.sqrt(1 - b2**count)
        out = jax.tree.map(
            lambda m, v: (m / bc1) / (jnp.sqrt(v) / bc2_sqrt + eps), mu, nu_max
        )
        return out, TorchAmsgradState(count, mu, nu, nu_max)

    return optax.GradientTransformation(init_fn, update_fn)


def adam(
    learning_rate,
    b1,
    b2,
    eps,
    weight_decay,
    amsgrad=False,
    decoupled_weight_decay=False,
):
    """``torch.optim.Adam`` (and ``AdamW``: ``decoupled_weight_decay=True``)."""
    if not amsgrad and not decoupled_weight_decay:
        return optimizers.adam(learning_rate, b1, b2, eps, weight_decay)
    if amsgrad:
        scale = scale_by_torch_amsgrad(b1, b2, eps)
    else:
        scale = optax.scale_by_adam(b1, b2, eps)
    decay = optax.add_decayed_weights(weight_decay)
    stages = [scale, decay] if decoupled_weight_decay else [decay, scale]
    return optax.chain(*stages, optax.scale_by_learning_rate(learning_rate))


class _BetasGroup(dict):
    """A param group whose ``betas`` are also kept split as ``beta1``/``beta2``
    (Optax hyperparameters are numbers): setting ``group["betas"]`` (OneCycleLR
    does) updates both."""

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, value)
        if key == "betas":
            super().__setitem__("beta1", value[0])
            super().__setitem__("beta2", value[1])


class Adam(Optimizer):
    _factory = staticmethod(adam)
    _static = ("amsgrad", "decoupled_weight_decay")
    _hyper = {
        "learning_rate": "lr",
        "b1": "beta1",
        "b2": "beta2",
        "eps": "eps",
        "weight_decay": "weight_decay",
    }

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ):
        _check_tensor("lr", lr, foreach, capturable)
        _check(lr, 0.0, f"Invalid learning rate: {lr}")
        _check(eps, 0.0, f"Invalid epsilon value: {eps}")
        _check(betas[0], 0.0, f"Invalid beta parameter at index 0: {betas[0]}", 1.0)
        _check(betas[1], 0.0, f"Invalid beta parameter at index 1: {betas[1]}", 1.0)
        _check(weight_decay, 0.0, f"Invalid weight_decay value: {weight_decay}")
        if not (
            all(isinstance(b, float) for b in betas[:2])
            or all(isinstance(b, Tensor) for b in betas[:2])
        ):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            _check_tensor(f"betas[{i}]", betas[i], foreach, capturable)
        _unsupported(type(self).__name__, differentiable=differentiable)
        super().__init__(
            params,
            dict(  # torch's keys, in torch's order
                lr=lr,
                betas=tuple(betas),  # torch: a tuple, whatever was given
                eps=eps,
                weight_decay=weight_decay,
                amsgrad=amsgrad,
                maximize=maximize,
                foreach=foreach,
                capturable=capturable,
                differentiable=differentiable,
                fused=fused,
                decoupled_weight_decay=decoupled_weight_decay,
            ),
        )

    def _adopt(self, group: dict[str, Any]) -> dict[str, Any]:
        group = _BetasGroup(group)
        group["betas"] = group["betas"]  # torch reads the first two
        return group

    def _buffers(self, group: dict[str, Any]) -> list[tuple[str, str, str]]:
        if group["amsgrad"]:
            return [
                ("step", "", "count"),
                ("exp_avg", "TorchAmsgradState", "mu"),
                ("exp_avg_sq", "TorchAmsgradState", "nu"),
                ("max_exp_avg_sq", "TorchAmsgradState", "nu_max"),
            ]
        return [
            ("step", "", "count"),
            ("exp_avg", "ScaleByAdamState", "mu"),
            ("exp_avg_sq", "ScaleByAdamState", "nu"),
        ]


class AdamW(Adam):
    """``torch.optim.AdamW``: Adam with ``decoupled_weight_decay=True``."""

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ):
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )
