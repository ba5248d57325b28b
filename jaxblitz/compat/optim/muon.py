"""Blitz 3/4 (update the weights): ``torch.optim.Muon``, torch's rule.

Muon orthogonalises each 2-D parameter's momentum with a Newton-Schulz
iteration run in bfloat16, as torch's ``_zeropower_via_newtonschulz``. torch's
bfloat16 matmuls accumulate in float32 and round once (``addmm``'s ``beta`` and
``alpha`` terms included), so each product here is a float32 dot of bfloat16
values, rounded to bfloat16 where torch's result is. The step's scalars are
torch's Python floats (float64: compat traces under x64).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxblitz.compat.optim.adam_variants import _f64, lerp
from jaxblitz.compat.optim.optimizer import Optimizer, _check, _check_tensor

# torch's defaults (Keller Jordan's constants)
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


class TorchMuonState(NamedTuple):
    momentum_buffer: jax.Array  # the parameter's shape


def _dot(x: jax.Array, y: jax.Array) -> jax.Array:
    """``x @ y`` of bfloat16 matrices, accumulated in float32 as torch's CPU
    bfloat16 gemm does (not yet rounded)."""
    return jax.lax.dot(x, y, preferred_element_type=jnp.float32)


def zeropower_via_newtonschulz(
    grad: jax.Array, coefficients: tuple[float, float, float], steps: int, eps: float
) -> jax.Array:
    """torch's ``_zeropower_via_newtonschulz``: ``grad`` orthogonalised, in
    bfloat16."""
    a, b, c = (jnp.float32(k) for k in coefficients)
    bf16 = jnp.bfloat16
    x = grad.astype(bf16)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    # torch: x.div_(x.norm().clamp(min=eps)), each result a bfloat16
    wide = x.astype(jnp.float32)
    norm = jnp.sqrt(jnp.sum(wide * wide)).astype(bf16)
    norm = jnp.maximum(norm, jnp.asarray(eps, bf16))
    x = (wide / norm.astype(jnp.float32)).astype(bf16)
    for _ in range(steps):
        gram = _dot(x, x.T).astype(bf16)
        # torch: addmm(gram, gram, gram, beta=b, alpha=c), rounded once
        update = (b * gram.astype(jnp.float32) + c * _dot(gram, gram)).astype(bf16)
        # torch: addmm(x, update, x, beta=a)
        x = (a * x.astype(jnp.float32) + _dot(update, x)).astype(bf16)
    return x.T if tall else x


def adjusted_ratio(adjust_lr_fn: str | None, shape: tuple[int, ...]) -> float:
    """torch's ``_adjust_lr`` factor for a parameter of ``shape``."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return 0.2 * math.sqrt(max(rows, cols))
    return 1.0


def muon(
    learning_rate,
    weight_decay,
    momentum,
    nesterov=True,
    coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C),
    epsilon=EPS,
    ns_steps=DEFAULT_NS_STEPS,
    adjust_lr_fn=None,
) -> optax.GradientTransformation:
    """``torch.optim.Muon``'s step for one parameter, its decoupled weight decay
    and its learning rate included (compat's Optimizer keeps one state per
    parameter)."""

    def init_fn(p):
        return TorchMuonState(jnp.zeros_like(p))

    def update_fn(g, state, p):
        mu = _f64(momentum)
        buf = lerp(state.momentum_buffer, g, 1 - mu)  # torch: buf.lerp_(grad, 1 - m)
        direction = lerp(g, buf, mu) if nesterov else buf
        ortho = zeropower_via_newtonschulz(direction, coefficients, ns_steps, epsilon)
        lr = _f64(learning_rate)
        alpha = (-lr * adjusted_ratio(adjust_lr_fn, p.shape)).astype(p.dtype)
        decay = (1 - lr * _f64(weight_decay)).astype(p.dtype)
        # torch: p.mul_(1 - lr * wd).add_(ortho, alpha=-adjusted_lr). Optax adds
        # the update to p: their difference, exact while the step is smaller
        # than p (Sterbenz), gives torch's new p back.
        new = p * decay + alpha * ortho.astype(p.dtype)
        return new - p, TorchMuonState(buf)

    return optax.GradientTransformation(init_fn, update_fn)


class Muon(Optimizer):
    _factory = staticmethod(muon)
    _static = ("nesterov", "ns_steps", "adjust_lr_fn")
    _derived = {
        "coefficients": lambda group: tuple(map(float, group["ns_coefficients"])),
        "epsilon": lambda group: float(group["eps"]),
    }
    _hyper = {
        "learning_rate": "lr",
        "weight_decay": "weight_decay",
        "momentum": "momentum",
    }

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (
            DEFAULT_A,
            DEFAULT_B,
            DEFAULT_C,
        ),
        eps: float = EPS,
        ns_steps: int = DEFAULT_NS_STEPS,
        adjust_lr_fn: str | None = None,
    ) -> None:
        _check_tensor("lr", lr)
        _check(lr, 0.0, f"Learning rate should be >= 0 but is: {lr}")
        _check(momentum, 0.0, f"momentum should be >= 0 but is: {momentum}")
        _check(weight_decay, 0.0, f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in [
            "original",
            "match_rms_adamw",
        ]:
            raise ValueError(
                f"Adjust learning rate function {adjust_lr_fn} is not supported"
            )
        super().__init__(
            params,
            dict(  # torch's keys, in torch's order
                lr=lr,
                weight_decay=weight_decay,
                momentum=momentum,
                nesterov=nesterov,
                ns_coefficients=ns_coefficients,
                eps=eps,
                ns_steps=ns_steps,
                adjust_lr_fn=adjust_lr_fn,
            ),
        )
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a "
                        f"parameter with size: {p.size()}"
                    )

    def step(self, closure: Any = None) -> Any:
        # torch checks these as each group's update is computed
        for group in self.param_groups:
            live = [p for p in group["params"] if p.grad is not None]
            if any(jnp.iscomplexobj(p._data) for p in live):
                raise RuntimeError("Muon does not support complex parameters")
            for p in live:
                if p.grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                if group["ns_steps"] >= 100:
                    raise ValueError(
                        "Number of steps must be less than 100 for computational "
                        "efficiency"
                    )
                if len(group["ns_coefficients"]) != 3:
                    raise ValueError("Coefficients must be a tuple of exactly 3 values")
        return super().step(closure)

    def _buffers(self, group: dict[str, Any]) -> list[tuple[str, str, str]]:
        # torch keeps no step count for Muon
        return [("momentum_buffer", "TorchMuonState", "momentum_buffer")]
