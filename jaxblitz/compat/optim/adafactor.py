"""Blitz 3/4 (update the weights): ``torch.optim.Adafactor``, torch's rule.

Optax's ``adafactor`` is the paper's (momentum, its own decay schedule and
clipping), not torch's: this is compat's own stage. A parameter of two or more
dimensions keeps torch's factored second moment (``row_var``, ``col_var``, over
its last two dimensions), a smaller one a full ``variance``. The step's scalars
(``rho_t``, ``alpha``, the clipping ``denom``) are torch's Python floats
(float64: compat traces under x64); weight decay is decoupled, as torch's
``p.mul_(1 - lr * weight_decay)``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxblitz.compat.optim import _optim_state
from jaxblitz.compat.optim.adam_variants import _f64, lerp
from jaxblitz.compat.optim.optimizer import Optimizer, _check, _check_tensor
from jaxblitz.compat.optim.sgd import _nonzero
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import TensorBase


class TorchAdafactorState(NamedTuple):
    count: jax.Array  # torch's step
    # each parameter's state has every field, the ones torch does not keep for
    # it empty (shape (0,)): the states of a param group share one structure
    row_var: jax.Array  # (..., R, 1) where the parameter has 2+ dimensions
    col_var: jax.Array  # (..., 1, C)
    variance: jax.Array  # the parameter's shape where it has fewer


def _norm(x: jax.Array) -> jax.Array:
    """``x.norm(2).item()``: the norm in ``x``'s dtype, then a Python float."""
    return _f64(jnp.sqrt(jnp.sum(x * x)))


def scale_by_torch_adafactor(
    learning_rate, beta2_decay, eps1, eps2, d, weight_decay, decay_on=None
) -> optax.GradientTransformation:
    """torch's Adafactor step for one parameter (compat's Optimizer keeps one
    state per parameter), its decoupled weight decay included."""

    def init_fn(p):
        zeros, empty = jnp.zeros_like(p), jnp.zeros((0,), p.dtype)
        count = jnp.zeros([], jnp.int32)
        if p.ndim > 1:
            row, col = zeros[..., :1], zeros[..., :1, :]
            return TorchAdafactorState(count, row, col, empty)
        return TorchAdafactorState(count, empty, empty, zeros)

    def update_fn(g, state, p):
        count = optax.safe_increment(state.count)
        step = _f64(count)
        lr = _f64(learning_rate)
        weight = step ** _f64(beta2_decay)  # torch's one_minus_beta2_t
        rho = jnp.minimum(lr, 1 / step**0.5)
        alpha = jnp.maximum(_f64(eps2), _norm(p) / p.size**0.5) * rho
        e1 = jnp.finfo(p.dtype).eps if eps1 is None else eps1
        row, col, var = state.row_var, state.col_var, state.variance
        if g.ndim > 1:
            # torch: norm(grad, dim).square_().div_(size)
            row_mean = jnp.square(jnp.sqrt(jnp.sum(g * g, -1, keepdims=True)))
            row = lerp(state.row_var, row_mean / g.shape[-1], weight)
            col_mean = jnp.square(jnp.sqrt(jnp.sum(g * g, -2, keepdims=True)))
            col = lerp(state.col_var, col_mean / g.shape[-2], weight)
            estimate = row * col  # torch's row_var @ col_var (inner size 1)
            mean = jnp.maximum(
                jnp.mean(row, -2, keepdims=True), jnp.asarray(e1, g.dtype)
            )
            estimate = estimate / mean
        else:
            var = estimate = lerp(state.variance, g * g, weight)
        floor = jnp.asarray(e1 * e1, g.dtype)
        update = jax.lax.rsqrt(jnp.maximum(estimate, floor)) * g
        denom = jnp.maximum(1.0, _norm(update) / (update.size**0.5 * _f64(d)))
        out = update * (-alpha / denom).astype(g.dtype)
        if decay_on is not False:
            out = out - p * (lr * _f64(weight_decay)).astype(p.dtype)
        return out, TorchAdafactorState(count, row, col, var)

    return optax.GradientTransformation(init_fn, update_fn)


def adafactor(learning_rate, beta2_decay, d, weight_decay, eps1, eps2, decay_on=None):
    """``torch.optim.Adafactor``."""
    return scale_by_torch_adafactor(
        learning_rate, beta2_decay, eps1, eps2, d, weight_decay, decay_on
    )


_BUFFERS = ("row_var", "col_var", "variance")


def _kept(p: TensorBase) -> tuple[str, ...]:
    """The buffers torch keeps for ``p`` besides ``step``."""
    return ("row_var", "col_var") if p.dim() > 1 else ("variance",)


def _array(value: Any) -> Any:
    return value._data if isinstance(value, TensorBase) else value


class Adafactor(Optimizer):
    _factory = staticmethod(adafactor)
    _derived = {
        "decay_on": _nonzero("weight_decay"),
        "eps1": lambda group: group["eps"][0],
        "eps2": lambda group: group["eps"][1],
    }
    _hyper = {
        "learning_rate": "lr",
        "beta2_decay": "beta2_decay",
        "d": "d",
        "weight_decay": "weight_decay",
    }

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ):
        _check_tensor("lr", lr)
        _check(lr, 0.0, f"Learning rate should be >= 0 but is: {lr}")
        if not beta2_decay <= 0.0:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None:
            _check(eps[0], 0.0, f"epsilon1 should be >= 0 but is: {eps[0]}")
        _check(eps[1], 0.0, f"epsilon2 should be >= 0 but is: {eps[1]}")
        _check(d, 1.0, f"Clipping threshold d should be >= 1 but is: {d}")
        _check(weight_decay, 0.0, f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(
            params,
            dict(  # torch's keys, in torch's order
                lr=lr,
                beta2_decay=beta2_decay,
                eps=eps,
                d=d,
                weight_decay=weight_decay,
                foreach=foreach,
                maximize=maximize,
            ),
        )

    def step(self, closure: Any = None) -> Any:
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and jnp.iscomplexobj(p._data):
                    raise RuntimeError("Adafactor does not support complex parameters")
        return super().step(closure)

    def _buffers(self, group: dict[str, Any]) -> list[tuple[str, str, str]]:
        return [("step", "", "count")]  # the others are not the parameter's shape

    def _torch_arrays(self, group: dict[str, Any], p: TensorBase, state: Any) -> dict:
        entry = super()._torch_arrays(group, p, state)
        found = _optim_state._find(state)["TorchAdafactorState"]
        for key in _kept(p):
            entry[key] = getattr(found, key)
        return entry

    def _load_entry(self, group: dict[str, Any], p: TensorBase, value: dict) -> Any:
        value = dict(value)
        buffers = {n: value.pop(n) for n in _BUFFERS if n in value}
        state = super()._load_entry(group, p, value)
        wanted = _kept(p)
        missing = [n for n in wanted if n not in buffers]
        if missing:
            raise KeyError(
                f"Adafactor.load_state_dict: the state of a parameter lacks "
                f"{missing} (jaxblitz.compat needs every buffer torch keeps)"
            )
        with x64(True):
            fields = {n: jnp.asarray(_array(buffers[n]), p.dtype.np) for n in wanted}
        fields["count"] = state.count  # the stage's own count
        return _optim_state._replace(state, {"TorchAdafactorState": fields})
