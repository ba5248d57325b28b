"""``torch.nn.CTCLoss`` and ``F.ctc_loss``: the connectionist temporal
classification loss, torch's forward (alpha) recursion in log space as one
``lax.scan`` over time, batched over the samples.

torch's gradient is not the derivative of the loss with respect to
``log_probs``: it is that derivative plus ``exp(log_probs)`` (times the incoming
gradient) on every frame within the input length -- the gradient with respect to
the logits of a ``log_softmax``. The loss carries torch's backward (its beta
recursion and formula, in the input's dtype, so float32 rounds as torch's does) as
a ``custom_vjp``.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn.losses import _concrete, _Loss, _reduction
from jaxblitz.compat.tensor._tensor_base import TensorBase

__all__ = ["CTCLoss", "ctc_loss"]


def _logsumexp(x, axis=0):
    """log(sum(exp(x))) with a zero gradient, not nan, where every term is -inf."""
    m = jnp.max(x, axis=axis)
    m = jnp.where(jnp.isfinite(m), m, 0)
    total = jnp.sum(jnp.exp(x - jnp.expand_dims(m, axis)), axis=axis)
    some = total > 0
    return jnp.where(some, jnp.log(jnp.where(some, total, 1)) + m, -jnp.inf)


def _extended(labels, blank):
    """The targets with a blank around each label (N, 2S + 1), and where a state
    may also be reached from two states back (a label unlike the one before)."""
    n, s = labels.shape
    ext = jnp.full((n, 2 * s + 1), blank, labels.dtype).at[:, 1::2].set(labels)
    prev2 = jnp.pad(ext, ((0, 0), (2, 0)), constant_values=blank)[:, :-2]
    return ext, (ext != blank) & (ext != prev2)


def _shift(
    x, k, fill
):  # x[..., s - k], ``fill`` where s < k (k < 0: s - k past the end)
    pad = ((0, 0), (k, 0)) if k > 0 else ((0, 0), (0, -k))
    padded = jnp.pad(x, pad, constant_values=fill)
    return padded[:, :-k] if k > 0 else padded[:, -k:]


def _forward(lp, labels, in_len, tg_len, blank):
    """(nll (N,), alphas (T, N, L)): torch's forward recursion per sample;
    ``lp`` (T, N, C), ``labels`` (N, S) padded, lengths (N,)."""
    ext, skip = _extended(labels, blank)
    emit = jnp.take_along_axis(lp, jnp.broadcast_to(ext, (lp.shape[0], *ext.shape)), 2)
    neg = jnp.asarray(-jnp.inf, lp.dtype)
    first = jnp.arange(ext.shape[1]) < jnp.where(tg_len > 0, 2, 1)[:, None]
    alpha0 = jnp.where(first, emit[0], neg)

    def step(alpha, xs):
        e, t = xs
        two_back = jnp.where(skip, _shift(alpha, 2, -jnp.inf), neg)
        new = _logsumexp(jnp.stack([alpha, _shift(alpha, 1, -jnp.inf), two_back]))
        new = jnp.where((t < in_len)[:, None], new + e, alpha)
        return new, new

    steps = (emit[1:], jnp.arange(1, lp.shape[0]))
    last_alpha, rest = jax.lax.scan(step, alpha0, steps)
    alphas = jnp.concatenate([alpha0[None], rest])
    last = jnp.take_along_axis(last_alpha, (2 * tg_len)[:, None], axis=1)[:, 0]
    before = jnp.take_along_axis(
        last_alpha, jnp.maximum(2 * tg_len - 1, 0)[:, None], 1
    )[:, 0]
    total = _logsumexp(jnp.stack([last, jnp.where(tg_len > 0, before, neg)]))
    nll = -jnp.where(in_len > 0, total, jnp.where(tg_len == 0, 0.0, neg))
    return nll, alphas, emit, ext, skip


def _backward_grad(lp, labels, in_len, tg_len, blank, nll, alphas, emit, ext, skip):
    """torch's ctc_loss_backward: the beta recursion, then per frame and class
    ``exp(lp) - exp(log(sum of alpha beta over the class's states) + nll - lp)``."""
    t_max = lp.shape[0]
    neg = jnp.asarray(-jnp.inf, lp.dtype)
    states = jnp.arange(ext.shape[1])
    end = ((states == 2 * tg_len[:, None]) | (states == 2 * tg_len[:, None] - 1)) & (
        states >= 0
    )
    skip_next = _shift(skip, -2, False)  # state s + 2 may come from s

    def step(beta, xs):
        e, t = xs
        two_on = jnp.where(skip_next, _shift(beta, -2, -jnp.inf), neg)
        rec = _logsumexp(jnp.stack([beta, _shift(beta, -1, -jnp.inf), two_on])) + e
        last = (t == in_len - 1)[:, None]
        new = jnp.where(last, jnp.where(end, e, neg), rec)
        new = jnp.where((t < in_len - 1)[:, None] | last, new, neg)
        return new, new

    start = jnp.full(ext.shape, -jnp.inf, lp.dtype)
    _, betas = jax.lax.scan(step, start, (emit, jnp.arange(t_max)), reverse=True)
    ab = alphas + betas  # (T, N, L)
    hit = ext[:, :, None] == jnp.arange(lp.shape[2])  # (N, L, C)
    lcab = _logsumexp(jnp.where(hit[None], ab[..., None], neg), axis=2)  # (T, N, C)
    grad = jnp.exp(lp) - jnp.exp(lcab + nll[None, :, None] - lp)
    inside = (jnp.arange(t_max)[:, None] < in_len)[:, :, None]
    return jnp.where(inside, grad, 0)


@functools.partial(jax.custom_vjp, nondiff_argnums=(4, 5))
def _ctc_nll(lp, labels, in_len, tg_len, blank, zero_infinity):
    return _ctc_fwd(lp, labels, in_len, tg_len, blank, zero_infinity)[0]


def _ctc_fwd(lp, labels, in_len, tg_len, blank, zero_infinity):
    nll, alphas, emit, ext, skip = _forward(lp, labels, in_len, tg_len, blank)
    infinite = jnp.isinf(nll)  # no alignment: torch gives 0 with zero_infinity
    out = jnp.where(infinite & zero_infinity, 0, nll)
    return out, (lp, labels, in_len, tg_len, nll, alphas, emit, ext, skip)


def _ctc_bwd(blank, zero_infinity, residual, g):
    lp, labels, in_len, tg_len, nll = residual[:5]
    grad = _backward_grad(lp, labels, in_len, tg_len, blank, nll, *residual[5:])
    grad = grad * g[None, :, None]
    if zero_infinity:
        grad = jnp.where(jnp.isinf(nll)[None, :, None], 0, grad)
    return grad, None, None, None


_ctc_nll.defvjp(_ctc_fwd, _ctc_bwd)


def _ctc_fn(lp, labels, in_len, tg_len, *, blank, reduction, zero_infinity, batched):
    if not batched:
        lp = lp[:, None]
    nll = _ctc_nll(lp, labels, in_len, tg_len, blank, zero_infinity)
    if reduction == "mean":
        return jnp.mean(nll / jnp.maximum(tg_len, 1).astype(nll.dtype))
    if reduction == "sum":
        return jnp.sum(nll)
    return nll if batched else nll[0]


def _lengths(name: str, value: Any, batched: bool) -> np.ndarray:
    """Lengths as a host array of int64 (a tuple, a list or an integral tensor)."""
    if isinstance(value, TensorBase):
        if value.dtype.is_floating_point or value.dtype.name == "bool":
            raise RuntimeError(f"{name} must be integral")
        values = _concrete(value)
        if values is None:
            raise NotImplementedError(
                f"ctc_loss: {name} as a traced tensor is not supported by "
                "jaxblitz.compat (it decides the program's shape)"
            )
        values = np.asarray(values, np.int64)
    else:
        values = np.asarray(value, np.int64)
    return values.reshape(-1) if batched or values.ndim else values.reshape(1)


def ctc_loss(
    log_probs: TensorBase,
    targets: TensorBase,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "ctc_loss",
            ctc_loss,
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            blank,
            reduction,
            zero_infinity,
        )
    reduction = _reduction(reduction)
    batched = log_probs.dim() == 3
    in_len = _lengths("input_lengths", input_lengths, batched)
    tg_len = _lengths("target_lengths", target_lengths, batched)
    if log_probs.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected {3}-dimensional tensor, but got {log_probs.dim()}-dimensional "
            "tensor for argument #1 'log_probs' (while checking arguments for "
            "ctc_loss_cpu)"
        )
    t_max, classes = log_probs.shape[0], log_probs.shape[-1]
    n = log_probs.shape[1] if batched else 1
    if not (blank < classes and classes > 0):
        raise RuntimeError("blank must be in label range")
    if in_len.size != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tg_len.size != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    if (in_len < 0).any() or (tg_len < 0).any():
        raise RuntimeError("ctc_loss: input and target lengths must be non-negative")
    if in_len.size and in_len.max() > t_max:
        raise RuntimeError(
            f"Expected input_lengths to have value at most {t_max}, but got value "
            f"{in_len.max()} (while checking arguments for ctc_loss_cpu)"
        )
    if not log_probs.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"ctc_loss_cpu\" not implemented for '{log_probs.dtype.scalar_type}'"
        )
    labels = _labels(targets, tg_len, n, batched)
    return apply(
        {"mean": "MeanBackward0", "sum": "SumBackward0"}.get(
            reduction, "CtcLossBackward0"
        ),
        _ctc_fn,
        log_probs,
        labels,
        in_len,
        tg_len,
        blank=int(blank),
        reduction=reduction,
        zero_infinity=bool(zero_infinity),
        batched=batched,
    )


def _labels(targets: TensorBase, tg_len: np.ndarray, n: int, batched: bool):
    """The targets as a padded (N, S) host array: a 2-d targets' rows, or the
    concatenated 1-d targets cut by ``target_lengths``."""
    values = _concrete(targets)
    if values is None:
        raise NotImplementedError(
            "ctc_loss: traced targets are not supported by jaxblitz.compat"
        )
    values = np.asarray(values, np.int64)
    longest = int(tg_len.max()) if tg_len.size else 0
    if not batched and values.ndim == 1:
        values = values[None]
    if values.ndim == 2:
        if values.shape[0] != n:
            raise RuntimeError(
                f"Expected tensor to have size {n} at dimension 0, but got size "
                f"{values.shape[0]} for argument #2 'targets' (while checking "
                "arguments for ctc_loss_cpu)"
            )
        if values.shape[1] < longest:
            raise RuntimeError(
                f"Expected tensor to have size at least {longest} at dimension 1, "
                f"but got size {values.shape[1]} for argument #2 'targets' (while "
                "checking arguments for ctc_loss_cpu)"
            )
        padded = values[:, :longest]
    else:
        if values.size != tg_len.sum():
            raise RuntimeError(
                f"Expected tensor to have size {tg_len.sum()} at dimension 0, but "
                f"got size {values.size} for argument #2 'targets' (while checking "
                "arguments for ctc_loss_cpu)"
            )
        padded = np.zeros((n, longest), np.int64)
        ends = np.cumsum(tg_len)
        for b, (end, size) in enumerate(zip(ends, tg_len, strict=True)):
            padded[b, :size] = values[end - size : end]
    rows = np.arange(padded.shape[1])[None, :] < tg_len[:, None]
    return np.where(rows, padded, 0)  # padding is never read; keep it in range


class CTCLoss(_Loss):
    def __init__(
        self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False
    ):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(
        self,
        log_probs: TensorBase,
        targets: TensorBase,
        input_lengths: Any,
        target_lengths: Any,
    ) -> TensorBase:
        return ctc_loss(
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            self.blank,
            self.reduction,
            self.zero_infinity,
        )
