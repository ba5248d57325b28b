"""Blitz 3/4 (update the weights): Adam's relatives -- ``torch.optim.NAdam``,
``RAdam`` and ``Adamax``.

Adamax is Optax's ``scale_by_adamax``, torch's rule. NAdam and RAdam are compat's
own stages: Optax's ``nadam`` has no momentum schedule (``momentum_decay``, the
running ``mu_product``), and its ``radam`` bias-corrects and thresholds
differently. As torch does, their scalar coefficients are computed in float64
(torch's Python floats) and NAdam's ``mu_product`` is kept in float32. The L2
term goes before the stage (``weight_decay``) or after it
(``decoupled_weight_decay``: ``p * (1 - lr * wd)`` is ``p - lr * wd * p``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxblitz.compat.optim._scalar_state import ScalarBuffers
from jaxblitz.compat.optim.adam import Adam
from jaxblitz.compat.optim.optimizer import (
    Optimizer,
    _check,
    _check_tensor,
    _unsupported,
)
from jaxblitz.compat.optim.sgd import _nonzero, decayed_weights


def _f64(x: Any) -> jax.Array:
    """A scalar as torch's Python float (float64: compat traces under x64)."""
    return jnp.asarray(x, jax.dtypes.canonicalize_dtype(jnp.float64))


def lerp(start: jax.Array, end: jax.Array, weight: Any) -> jax.Array:
    """``start.lerp_(end, weight)`` as torch's CPU kernel computes it."""
    w = _f64(weight).astype(start.dtype)
    low = start + w * (end - start)
    high = end - (end - start) * (1 - w)
    return jnp.where(jnp.abs(w) < 0.5, low, high)


def second_moment(nu: jax.Array, g: jax.Array, b2: Any) -> jax.Array:
    """``exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)``."""
    b2 = _f64(b2)
    return nu * b2.astype(nu.dtype) + (1 - b2).astype(nu.dtype) * g * g


class TorchNAdamState(NamedTuple):
    count: jax.Array  # torch's step
    mu_product: jax.Array  # float32, as torch keeps it
    mu: Any  # exp_avg
    nu: Any  # exp_avg_sq


def scale_by_torch_nadam(b1, b2, eps, momentum_decay) -> optax.GradientTransformation:
    """torch's NAdam direction (before ``-lr``)."""

    def init_fn(params):
        zeros = optax.tree.zeros_like
        return TorchNAdamState(
            jnp.zeros([], jnp.int32),
            jnp.ones([], jnp.float32),
            zeros(params),
            zeros(params),
        )

    def update_fn(updates, state, params=None):
        del params
        count = optax.safe_increment(state.count)
        step, beta1 = _f64(count), _f64(b1)
        bias_correction2 = 1 - _f64(b2) ** step
        decay = _f64(momentum_decay)
        mu = beta1 * (1 - 0.5 * 0.96 ** (step * decay))
        mu_next = beta1 * (1 - 0.5 * 0.96 ** ((step + 1) * decay))
        mu_product = state.mu_product * mu.astype(jnp.float32)
        product = _f64(mu_product)
        c_grad = (1 - mu) / (1 - product)
        c_avg = mu_next / (1 - product * mu_next)

        def one(g, m, v):
            m = lerp(m, g, 1 - beta1)
            v = second_moment(v, g, b2)
            denom = jnp.sqrt(v / bias_correction2.astype(v.dtype)) + eps
            out = c_grad.astype(g.dtype) * (g / denom)
            return out + c_avg.astype(g.dtype) * (m / denom), m, v

        triples = jax.tree.map(one, updates, state.mu, state.nu)
        out, mus, nus = unzip(updates, triples, 3)
        return out, TorchNAdamState(count, mu_product, mus, nus)

    return optax.GradientTransformation(init_fn, update_fn)


def unzip(like: Any, tuples: Any, n: int) -> tuple:
    """``n`` trees of ``like``'s structure from a tree of ``n``-tuples."""
    treedef = jax.tree.structure(like)
    flat = treedef.flatten_up_to(tuples)
    return tuple(treedef.unflatten([t[i] for t in flat]) for i in range(n))


class TorchRAdamState(NamedTuple):
    count: jax.Array  # torch's step
    mu: Any  # exp_avg
    nu: Any  # exp_avg_sq


def scale_by_torch_radam(b1, b2, eps) -> optax.GradientTransformation:
    """torch's RAdam direction (before ``-lr``): the rectified adaptive step
    where the variance's length ``rho_t`` exceeds 5, else the bias-corrected
    momentum."""

    def init_fn(params):
        zeros = optax.tree.zeros_like
        return TorchRAdamState(jnp.zeros([], jnp.int32), zeros(params), zeros(params))

    def update_fn(updates, state, params=None):
        del params
        count = optax.safe_increment(state.count)
        step, beta1, beta2 = _f64(count), _f64(b1), _f64(b2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * beta2**step / bias_correction2
        rect = jnp.sqrt(
            jnp.maximum(rho_t - 4, 0)
            * (rho_t - 2)
            * rho_inf
            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
        )
        rectified = rho_t > 5.0

        def one(g, m, v):
            m = lerp(m, g, 1 - beta1)
            v = second_moment(v, g, b2)
            corrected = m / bias_correction1.astype(m.dtype)
            adaptive = jnp.sqrt(bias_correction2).astype(v.dtype) / (jnp.sqrt(v) + eps)
            out = jnp.where(
                rectified, corrected * adaptive * rect.astype(v.dtype), corrected
            )
            return out, m, v

        triples = jax.tree.map(one, updates, state.mu, state.nu)
        out, mus, nus = unzip(updates, triples, 3)
        return out, TorchRAdamState(count, mus, nus)

    return optax.GradientTransformation(init_fn, update_fn)


def _with_decay(scale, weight_decay, decoupled, decay_on):
    """``scale`` with torch's L2 term (before it, or decoupled after it) and
    ``-lr``."""
    decay = decayed_weights(weight_decay, decay_on)
    return [scale, decay] if decoupled else [decay, scale]


def nadam(
    learning_rate,
    b1,
    b2,
    eps,
    weight_decay,
    momentum_decay,
    decoupled_weight_decay=False,
    decay_on=None,
):
    """``torch.optim.NAdam``."""
    scale = scale_by_torch_nadam(b1, b2, eps, momentum_decay)
    stages = _with_decay(scale, weight_decay, decoupled_weight_decay, decay_on)
    return optax.chain(*stages, optax.scale_by_learning_rate(learning_rate))


def radam(
    learning_rate,
    b1,
    b2,
    eps,
    weight_decay,
    decoupled_weight_decay=False,
    decay_on=None,
):
    """``torch.optim.RAdam``."""
    scale = scale_by_torch_radam(b1, b2, eps)
    stages = _with_decay(scale, weight_decay, decoupled_weight_decay, decay_on)
    return optax.chain(*stages, optax.scale_by_learning_rate(learning_rate))


def adamax(learning_rate, b1, b2, eps, weight_decay, decay_on=None):
    """``torch.optim.Adamax``: Optax's ``scale_by_adamax``, the same rule."""
    return optax.chain(
        decayed_weights(weight_decay, decay_on),
        optax.scale_by_adamax(b1, b2, eps),
        optax.scale_by_learning_rate(learning_rate),
    )


def _check_adam_like(lr, betas, eps, weight_decay) -> None:
    """torch's checks of Adam's relatives, in torch's order and words."""
    _check_tensor("lr", lr)
    _check(lr, 0.0, f"Invalid learning rate: {lr}")
    _check(eps, 0.0, f"Invalid epsilon value: {eps}")
    _check(betas[0], 0.0, f"Invalid beta parameter at index 0: {betas[0]}", 1.0)
    _check(betas[1], 0.0, f"Invalid beta parameter at index 1: {betas[1]}", 1.0)
    _check(weight_decay, 0.0, f"Invalid weight_decay value: {weight_decay}")


_BETAS_HYPER = {
    "learning_rate": "lr",
    "b1": "beta1",
    "b2": "beta2",
    "eps": "eps",
    "weight_decay": "weight_decay",
}


class NAdam(ScalarBuffers):
    _factory = staticmethod(nadam)
    _static = ("decoupled_weight_decay",)
    _derived = {"decay_on": _nonzero("weight_decay")}
    _hyper = {**_BETAS_HYPER, "momentum_decay": "momentum_decay"}
    _scalars = {"mu_product": ("TorchNAdamState", "mu_product")}
    _adopt = Adam._adopt  # the betas kept split too

    def __init__(
        self,
        params: Any,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ):
        _check_adam_like(lr, betas, eps, weight_decay)
        _check(momentum_decay, 0.0, f"Invalid momentum_decay value: {momentum_decay}")
        _unsupported("NAdam", differentiable=differentiable)
        super().__init__(
            params,
            dict(  # torch's keys, in torch's order
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                momentum_decay=momentum_decay,
                decoupled_weight_decay=decoupled_weight_decay,
                maximize=maximize,
                foreach=foreach,
                capturable=capturable,
                differentiable=differentiable,
            ),
        )

    def _buffers(self, group: dict[str, Any]) -> list[tuple[str, str, str]]:
        return [
            ("step", "", "count"),
            ("mu_product", "TorchNAdamState", "mu_product"),
            ("exp_avg", "TorchNAdamState", "mu"),
            ("exp_avg_sq", "TorchNAdamState", "nu"),
        ]


class RAdam(Optimizer):
    _factory = staticmethod(radam)
    _static = ("decoupled_weight_decay",)
    _derived = {"decay_on": _nonzero("weight_decay")}
    _hyper = _BETAS_HYPER
    _adopt = Adam._adopt

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ):
        _check_adam_like(lr, betas, eps, weight_decay)
        _unsupported("RAdam", differentiable=differentiable)
        super().__init__(
            params,
            dict(  # torch's keys, in torch's order
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                maximize=maximize,
                foreach=foreach,
                capturable=capturable,
                decoupled_weight_decay=decoupled_weight_decay,
                differentiable=differentiable,
            ),
        )

    def _buffers(self, group: dict[str, Any]) -> list[tuple[str, str, str]]:
        return [
            ("step", "", "count"),
            ("exp_avg", "TorchRAdamState", "mu"),
            ("exp_avg_sq", "TorchRAdamState", "nu"),
        ]


class Adamax(Optimizer):
    _factory = staticmethod(adamax)
    _derived = {"decay_on": _nonzero("weight_decay")}
    _hyper = _BETAS_HYPER
    _adopt = Adam._adopt

    def __init__(
        self,
        params: Any,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ):
        _check_adam_like(lr, betas, eps, weight_decay)
        _unsupported("Adamax", differentiable=differentiable)
        super().__init__(
            params,
            dict(  # torch's keys, in torch's order
                lr=lr,
                betas=betas,
                eps=eps,
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
            ("exp_avg", "ScaleByAdamState", "mu"),
            ("exp_inf", "ScaleByAdamState", "nu"),
        ]
