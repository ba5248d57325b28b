"""``torch.nn``'s divergence and likelihood losses -- ``kl_div``,
``poisson_nll_loss``, ``gaussian_nll_loss`` and their modules -- with torch's
reductions, checks and error words.

Each loss is one recorded op over a pure JAX function (see :mod:`.losses`).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import jax.numpy as jnp
from jax.scipy.special import xlogy

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn.distance import clamp_min_no_grad
from jaxblitz.compat.nn.losses import (
    _broadcast_shapes,
    _legacy,
    _Loss,
    _reduce,
    _reduction,
)
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._checks import check_values, error
from jaxblitz.compat.tensor._tensor_base import TensorBase


def _negative(var):
    """The negative variances, for :func:`check_values`."""
    return var < 0, var


__all__ = [
    "GaussianNLLLoss",
    "KLDivLoss",
    "PoissonNLLLoss",
    "gaussian_nll_loss",
    "kl_div",
    "poisson_nll_loss",
]

_REDUCED = {"mean": "MeanBackward0", "sum": "SumBackward0"}


# -- Kullback-Leibler divergence ------------------------------------------------------


def _kl_div_fn(x, y, *, log_target, reduction, batch, dt):
    x, y = x.astype(dt), y.astype(dt)
    out = jnp.exp(y) * (y - x) if log_target else xlogy(y, y) - y * x
    out = _reduce(out, reduction)
    return out if batch is None else out / batch


def kl_div(
    input: TensorBase,
    target: TensorBase,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "kl_div", kl_div, input, target, size_average, reduce, reduction, log_target
        )
    if size_average is not None or reduce is not None:
        enum = _reduction(_legacy(size_average, reduce, reduction))
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and "
                "the support size.'batchmean' divides only by the batch size, and "
                "aligns with the KL div math definition.'mean' will be changed to "
                "behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        enum = _reduction("sum" if reduction == "batchmean" else reduction)
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    _broadcast_shapes(tuple(input.shape), tuple(target.shape))
    batched = reduction == "batchmean" and input.dim() > 0  # torch: sum / size(0)
    return apply(
        "DivBackward0" if batched else _REDUCED.get(enum, "SubBackward0"),
        _kl_div_fn,
        input,
        target,
        log_target=bool(log_target),
        reduction=enum,
        batch=input.shape[0] if batched else None,
        dt=_dtype.promote_types(input.dtype, target.dtype).np_name,
    )


# -- Poisson negative log-likelihood --------------------------------------------------


def _poisson_fn(x, y, *, log_input, full, eps, reduction, dt):
    x, y = x.astype(dt), y.astype(dt)
    loss = jnp.exp(x) - y * x if log_input else x - y * jnp.log(x + eps)
    if full:  # Stirling's approximation of log(y!), for y > 1
        stirling = y * jnp.log(y) - y + 0.5 * jnp.log(2 * math.pi * y)
        loss = loss + jnp.where(y <= 1, 0, stirling)
    return _reduce(loss, reduction)


def poisson_nll_loss(
    input: TensorBase,
    target: TensorBase,
    log_input: bool = True,
    full: bool = False,
    size_average: Any = None,
    eps: float = 1e-8,
    reduce: Any = None,
    reduction: str = "mean",
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "poisson_nll_loss",
            poisson_nll_loss,
            input,
            target,
            log_input,
            full,
            size_average,
            eps,
            reduce,
            reduction,
        )
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    _broadcast_shapes(tuple(input.shape), tuple(target.shape))
    dt = _dtype.promote_types(input.dtype, target.dtype)
    if not dt.is_floating_point:  # torch: exp / log make it the default float
        dt = _dtype.get_default_dtype()
    none = "AddBackward0" if full else "SubBackward0"
    return apply(
        _REDUCED.get(reduction, none),
        _poisson_fn,
        input,
        target,
        log_input=bool(log_input),
        full=bool(full),
        eps=float(eps),
        reduction=reduction,
        dt=dt.np_name,
    )


# -- Gaussian negative log-likelihood -------------------------------------------------


def _gaussian_fn(x, y, var, *, full, eps, reduction):
    var = clamp_min_no_grad(var, eps)  # torch clamps a clone under no_grad
    loss = 0.5 * (jnp.log(var) + (x - y) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def gaussian_nll_loss(
    input: TensorBase,
    target: TensorBase,
    var: TensorBase | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> TensorBase:
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = input.new_ones(input.shape) * var
    elif not isinstance(var, TensorBase):
        raise TypeError(
            f"any(): argument 'input' (position 1) must be Tensor, not "
            f"{type(var < 0).__name__}"
        )
    else:
        check_values(
            [var], _negative, error("var has negative entry/entries", ValueError)
        )
    if not var.dtype.is_floating_point:  # torch clamps var in place to eps
        raise RuntimeError(
            "result type Float can't be cast to the desired output type "
            f"{_dtype._CPP[var.dtype.np_name]}"
        )
    ishape, vshape = tuple(input.shape), tuple(var.shape)
    if vshape != ishape:
        if ishape[:-1] == vshape:  # homoscedastic: one variance per sample
            var = var.unsqueeze(-1)
        elif not (
            len(ishape) == len(vshape)
            and sum(v for i, v in zip(ishape, vshape, strict=True) if i != v) == 1
        ):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    _broadcast_shapes(tuple(input.shape), tuple(target.shape), tuple(var.shape))
    return apply(
        _REDUCED.get(reduction, "AddBackward0" if full else "MulBackward0"),
        _gaussian_fn,
        input,
        target,
        var,
        full=bool(full),
        eps=float(eps),
        reduction=reduction,
    )


# -- modules --------------------------------------------------------------------------


class KLDivLoss(_Loss):
    def __init__(
        self,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
        log_target: bool = False,
    ):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return kl_div(
            input, target, reduction=self.reduction, log_target=self.log_target
        )


class PoissonNLLLoss(_Loss):
    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average=None,
        eps: float = 1e-8,
        reduce=None,
        reduction: str = "mean",
    ):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: TensorBase, target: TensorBase) -> TensorBase:
        return poisson_nll_loss(
            log_input,
            target,
            log_input=self.log_input,
            full=self.full,
            eps=self.eps,
            reduction=self.reduction,
        )


class GaussianNLLLoss(_Loss):
    def __init__(
        self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"
    ):
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(
        self, input: TensorBase, target: TensorBase, var: TensorBase | float
    ) -> TensorBase:
        return gaussian_nll_loss(
            input, target, var, full=self.full, eps=self.eps, reduction=self.reduction
        )
