"""``torch.nn``'s margin and embedding losses -- functional forms and modules --
with torch's reductions, checks and error words.

Each loss is one recorded op over a pure JAX function (see :mod:`.losses`).
Hinges are ``jnp.where(z > 0, z, 0)``: torch passes no gradient where a hinge
is exactly at its margin. A target torch only compares (``target == 1``) enters
detached, so its gradient stays None as torch's does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn.distance import (
    distance_dtype,
    pairwise_distance,
    pairwise_distance_fn,
)
from jaxblitz.compat.nn.losses import (
    _broadcast_shapes,
    _kernel,
    _legacy,
    _Loss,
    _not_differentiable,
    _reduce,
    _reduction,
    _tensor,
    _WeightedLoss,
)
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._checks import check_range, error
from jaxblitz.compat.tensor._tensor_base import TensorBase

__all__ = [
    "CosineEmbeddingLoss",
    "HingeEmbeddingLoss",
    "MarginRankingLoss",
    "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "SoftMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    "cosine_embedding_loss",
    "hinge_embedding_loss",
    "margin_ranking_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]

_REDUCED = {"mean": "MeanBackward0", "sum": "SumBackward0"}


def _named(reduction: str, none: str) -> str:
    """The node torch's composite ends in: its reduction's, else ``none``."""
    return _REDUCED.get(reduction, none)


def _clamp_min(x, m):
    """torch's ``clamp_min``: nan stays nan, the gradient passes where x >= m."""
    return jnp.where(x < m, m, x)


def _hinge(z):
    return jnp.where(z > 0, z, 0)


def _enum(size_average: Any, reduce: Any, reduction: str) -> str:
    """torch's ``_Reduction.legacy_get_enum`` / ``get_enum``: checked."""
    return _reduction(_legacy(size_average, reduce, reduction))


def _mean_dtype(dt: _dtype.dtype, reduction: str) -> None:
    if reduction == "mean" and not dt.is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a "
            f"floating point or complex dtype. Got: {dt.scalar_type}"
        )


# -- pairwise margins: margin ranking, hinge embedding, soft margin -------------------


def _ranking_fn(x1, x2, y, *, margin, dt, reduction):
    x1, x2, y = x1.astype(dt), x2.astype(dt), y.astype(dt)
    return _reduce(_clamp_min(-y * (x1 - x2) + margin, 0), reduction)


def margin_ranking_loss(
    input1: TensorBase,
    input2: TensorBase,
    target: TensorBase,
    margin: float = 0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "margin_ranking_loss",
            margin_ranking_loss,
            input1,
            input2,
            target,
            margin,
            size_average,
            reduce,
            reduction,
        )
    reduction = _enum(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but "
            f"got sizes: input1: {input1.size()}, input2: {input2.size()}, target: "
            f"{target.size()} "
        )
    return aten_margin_ranking_loss(input1, input2, target, margin, reduction)


def aten_margin_ranking_loss(
    input1: TensorBase,
    input2: TensorBase,
    target: TensorBase,
    margin: float,
    reduction: str,
) -> TensorBase:
    """ATen's ``margin_ranking_loss`` (``torch.margin_ranking_loss``): the
    functional form without its Python check that the dims agree (ATen
    broadcasts)."""
    _broadcast_shapes(tuple(input1.shape), tuple(input2.shape), tuple(target.shape))
    dt = _dtype.promote_types(
        _dtype.promote_types(input1.dtype, input2.dtype), target.dtype
    )
    if not dt.is_floating_point:  # torch: the float margin makes it the default float
        dt = _dtype.get_default_dtype()
    return apply(
        _named(reduction, "ClampMinBackward0"),
        _ranking_fn,
        input1,
        input2,
        target,
        margin=float(margin),
        dt=dt.np_name,
        reduction=reduction,
    )


def _hinge_embedding_fn(x, y, *, margin, reduction):
    zeros = jnp.zeros_like(x)
    out = jnp.where(y != 1, _clamp_min(margin - x, 0), zeros)
    return _reduce(out + jnp.where(y != -1, x, zeros), reduction)


def hinge_embedding_loss(
    input: TensorBase,
    target: TensorBase,
    margin: float = 1.0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "hinge_embedding_loss",
            hinge_embedding_loss,
            input,
            target,
            margin,
            size_average,
            reduce,
            reduction,
        )
    reduction = _enum(size_average, reduce, reduction)
    _broadcast_shapes(tuple(input.shape), tuple(target.shape))
    _mean_dtype(input.dtype, reduction)
    return apply(
        _named(reduction, "AddBackward0"),
        _hinge_embedding_fn,
        input,
        target.detach(),
        margin=float(margin),
        reduction=reduction,
    )


def _soft_margin_fn(x, y, *, reduction):
    # torch's order: -input * target written into the input's dtype (the
    # product itself in both's type), then exp and log1p there
    return _reduce(jnp.log1p(jnp.exp((-x * y).astype(x.dtype))), reduction)


def soft_margin_loss(
    input: TensorBase,
    target: TensorBase,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "soft_margin_loss",
            soft_margin_loss,
            input,
            target,
            size_average,
            reduce,
            reduction,
        )
    _tensor("soft_margin_loss", 1, "input", input)
    _tensor("soft_margin_loss", 2, "target", target)
    reduction = _enum(size_average, reduce, reduction)
    _not_differentiable("soft_margin_loss", "target", target)
    shape = _broadcast_shapes(tuple(input.shape), tuple(target.shape))
    if shape != tuple(input.shape):  # torch writes into the input's shape
        raise RuntimeError(
            f"output with shape {list(input.shape)} doesn't match the broadcast "
            f"shape {list(shape)}"
        )
    if input.dtype is _dtype.bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you "
            "are trying to invert a mask, use the `~` or `logical_not()` operator "
            "instead."
        )
    if not input.dtype.is_floating_point:  # the loss is written in input's type
        dt = _dtype.promote_types(input.dtype, target.dtype)
        dt = dt if dt.is_floating_point else _dtype.get_default_dtype()
        raise RuntimeError(
            f"result type {dt.scalar_type} can't be cast to the desired output type "
            f"{input.dtype.scalar_type}"
        )
    return apply(
        "SoftMarginLossBackward0", _soft_margin_fn, input, target, reduction=reduction
    )


def _multilabel_soft_fn(x, y, w, *, reduction):
    # torch's composite: -(y logsigmoid(x) + (1 - y) logsigmoid(-x)), per class
    loss = -(y * _log_sigmoid(x) + (1 - y) * _log_sigmoid(-x))
    if w is not None:
        loss = loss * w
    class_dim = x.ndim - 1
    loss = jnp.sum(loss, axis=class_dim) / x.shape[class_dim]
    return _reduce(loss, reduction)


def _log_sigmoid(x):
    return -jnp.logaddexp(0, -x)


def multilabel_soft_margin_loss(
    input: TensorBase,
    target: TensorBase,
    weight: TensorBase | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> TensorBase:
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if input.dim() == 0:
        raise IndexError(
            "Dimension out of range (expected to be in range of [-1, 0], but got -1)"
        )
    shapes = [tuple(input.shape), tuple(target.shape)]
    if weight is not None:
        shapes.append(tuple(weight.shape))
    _broadcast_shapes(*shapes)
    return apply(
        _named(reduction, "DivBackward0"),
        _multilabel_soft_fn,
        input,
        target,
        weight,
        reduction=reduction,
    )


# -- cosine embedding ------------------------------------------------------------------

_EPSILON = 1e-12  # torch's cosine_embedding_loss: added to each squared magnitude


def _cosine_embedding_fn(x1, x2, y, *, axis, margin, reduction, dt):
    x1, x2 = x1.astype(dt), x2.astype(dt)
    prod = jnp.sum(x1 * x2, axis=axis)
    mag1 = jnp.sum(x1 * x1, axis=axis) + _EPSILON
    mag2 = jnp.sum(x2 * x2, axis=axis) + _EPSILON
    cos = prod / jnp.sqrt(mag1 * mag2)
    zeros = jnp.zeros_like(cos)
    out = jnp.where(y == 1, 1 - cos, zeros) + jnp.where(
        y == -1, _clamp_min(cos - margin, 0), zeros
    )
    return _reduce(out, reduction)


def cosine_embedding_loss(
    input1: TensorBase,
    input2: TensorBase,
    target: TensorBase,
    margin: float = 0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "cosine_embedding_loss",
            cosine_embedding_loss,
            input1,
            input2,
            target,
            margin,
            size_average,
            reduce,
            reduction,
        )
    reduction = _enum(size_average, reduce, reduction)
    tdim = target.dim()
    if tdim not in (0, 1):
        raise RuntimeError(
            "0D or 1D target tensor expected, multi-target not supported"
        )
    want = 2 if tdim == 1 else 1
    if input1.dim() != want or input2.dim() != want:
        raise RuntimeError(
            f"{tdim}D target tensor expects {want}D input tensors, but found inputs "
            f"with sizes {list(input1.shape)} and {list(input2.shape)}."
        )
    shape = _broadcast_shapes(tuple(input1.shape), tuple(input2.shape))
    _broadcast_shapes(shape[:tdim], tuple(target.shape))
    dt = _dtype.promote_types(input1.dtype, input2.dtype)
    if not dt.is_floating_point:  # torch: + EPSILON makes the sums the default float
        dt = _dtype.get_default_dtype()
    return apply(
        _named(reduction, "AddBackward0"),
        _cosine_embedding_fn,
        input1,
        input2,
        target.detach(),
        axis=tdim,
        dt=dt.np_name,
        margin=float(margin),
        reduction=reduction,
    )


# -- multi-class margins: multi margin, multilabel margin ------------------------------


def _frames(input: TensorBase) -> tuple[int, int]:
    """(frames, classes) of a multi-class margin loss's input, torch's check."""
    shape = tuple(input.shape)
    ndims = len(shape)
    if not (ndims == 0 or (ndims <= 2 and shape[-1] != 0)):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but "
            f"got: {list(shape)}"
        )
    if ndims <= 1:
        return 1, shape[0] if ndims else 1
    return shape


def _long_target(target: TensorBase) -> None:
    if target.dtype is not _dtype.int64:
        raise RuntimeError(
            f"expected scalar type Long but found {target.dtype.scalar_type}"
        )


def _multi_margin_fn(x, t, w, *, p, margin, reduction, keep):
    x2 = x.reshape(-1, x.shape[-1] if x.ndim else 1)  # (N, C)
    t = t.reshape(-1).astype(jnp.int64)
    picked = jnp.take_along_axis(x2, t[:, None], axis=1)  # (N, 1)
    z = _hinge(margin - picked + x2)
    h = z if p == 1 else z * z
    if w is not None:
        h = h * w.reshape(-1)[t][:, None].astype(h.dtype)
    other = jnp.arange(x2.shape[1])[None, :] != t[:, None]
    loss = jnp.sum(jnp.where(other, h, 0), axis=1) / x2.shape[1]  # (N,)
    if reduction == "none":
        return loss if keep else loss.reshape(())
    return _reduce(loss, reduction)


def multi_margin_loss(
    input: TensorBase,
    target: TensorBase,
    p: int = 1,
    margin: float = 1.0,
    weight: TensorBase | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "multi_margin_loss",
            multi_margin_loss,
            input,
            target,
            p,
            margin,
            weight,
            size_average,
            reduce,
            reduction,
        )
    reduction = _enum(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    shape = tuple(input.shape)
    frames, classes = _frames(input)
    if target.dim() > 1 or target.numel() != frames:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the "
            f"number of input samples (batch size). Expected target size [{frames}], "
            f"but got {list(target.shape)}. Input has shape {list(shape)}."
        )
    if weight is not None and (weight.dim() > 1 or weight.numel() != classes):
        raise RuntimeError(
            f"inconsistent weight size, expected {classes} but got {list(weight.shape)}"
        )
    _not_differentiable("multi_margin_loss", "weight", weight)
    if not input.dtype.is_floating_point:
        raise _kernel("multi_margin_loss_cpu_kernel", input.dtype)
    _long_target(target)
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(
            f"expected scalar type {input.dtype.scalar_type} but found "
            f"{weight.dtype.scalar_type}"
        )
    check_range(target, 0, classes, error("target out of range"))
    return apply(
        "MultiMarginLossBackward0",
        _multi_margin_fn,
        input,
        target,
        weight,
        p=int(p),
        margin=float(margin),
        reduction=reduction,
        keep=target.dim() > 0,
    )


def _multilabel_margin_fn(x, t, *, reduction, keep):
    classes = x.shape[-1] if x.ndim else 1
    x2, t2 = x.reshape(-1, classes), t.reshape(-1, classes).astype(jnp.int64)
    # the targets are those before the first -1 of each row
    valid = jnp.cumsum(t2 < 0, axis=1) == 0  # (N, C)
    safe = jnp.where(valid, t2, 0)
    hit = (safe[:, :, None] == jnp.arange(classes)) & valid[:, :, None]  # (N, C, C)
    is_target = jnp.any(hit, axis=1)  # (N, C)
    picked = jnp.take_along_axis(x2, safe, axis=1)  # (N, C): x[target j]
    z = _hinge(1 - picked[:, :, None] + x2[:, None, :])  # (N, j, d)
    keep_mask = valid[:, :, None] & ~is_target[:, None, :]
    loss = jnp.sum(jnp.where(keep_mask, z, 0), axis=(1, 2)) / classes  # (N,)
    if reduction == "none":
        return loss if keep else loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_margin_loss(
    input: TensorBase,
    target: TensorBase,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "multilabel_margin_loss",
            multilabel_margin_loss,
            input,
            target,
            size_average,
            reduce,
            reduction,
        )
    reduction = _enum(size_average, reduce, reduction)
    shape = tuple(input.shape)
    ndims = len(shape)
    _, classes = _frames(input)
    if ndims <= 1:
        ok = target.dim() <= 1 and target.numel() == classes
    else:
        ok = tuple(target.shape) == shape
    if not ok:
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: "
            f"{list(shape)}"
        )
    if not input.dtype.is_floating_point:
        raise _kernel("multilabel_margin_loss_forward_out_frame", input.dtype)
    _long_target(target)
    check_range(target, -1, classes, error("argument #2 'target' is out of range"))
    return apply(
        "MultilabelMarginLossBackward0",
        _multilabel_margin_fn,
        input,
        target,
        reduction=reduction,
        keep=ndims == 2,
    )


# -- triplets ------------------------------------------------------------------------


def _triplet_fn(a, pos, neg, *, margin, p, eps, swap, reduction, dt):
    def dist(x1, x2):
        return pairwise_distance_fn(x1, x2, p=p, eps=eps, keepdim=False, dt=dt)

    d_pos, d_neg = dist(a, pos), dist(a, neg)
    if swap:
        d_neg = jnp.minimum(d_neg, dist(pos, neg))
    return _reduce(_clamp_min(margin + d_pos - d_neg, 0), reduction)


def _same_ndim(anchor, positive, negative) -> None:
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same "
            f"number of dimensions, but got: anchor {a}D, positive {p}D, and negative "
            f"{n}D inputs"
        )


def triplet_margin_loss(
    anchor: TensorBase,
    positive: TensorBase,
    negative: TensorBase,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "triplet_margin_loss",
            triplet_margin_loss,
            anchor,
            positive,
            negative,
            margin,
            p,
            eps,
            swap,
            size_average,
            reduce,
            reduction,
        )
    reduction = _enum(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_ndim(anchor, positive, negative)
    shape = _broadcast_shapes(tuple(anchor.shape), tuple(positive.shape))
    _broadcast_shapes(shape, tuple(negative.shape))
    dt = _dtype.promote_types(distance_dtype(anchor, positive), negative.dtype)
    return apply(
        _named(reduction, "ClampMinBackward0"),
        _triplet_fn,
        anchor,
        positive,
        negative,
        margin=float(margin),
        p=float(p),
        eps=float(eps),
        swap=bool(swap),
        reduction=reduction,
        dt=dt.np_name,
    )


def triplet_margin_with_distance_loss(
    anchor: TensorBase,
    positive: TensorBase,
    negative: TensorBase,
    *,
    distance_function: Callable[[TensorBase, TensorBase], TensorBase] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> TensorBase:
    """torch's composite, step for step: ``distance_function`` gets compat tensors."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_ndim(anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = dist_neg.minimum(distance(positive, negative))
    loss = (margin + dist_pos - dist_neg).clamp_min(0)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss


# -- modules --------------------------------------------------------------------------


class _MarginLoss(_Loss):
    def __init__(
        self, margin: float = 0.0, size_average=None, reduce=None, reduction="mean"
    ):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    def forward(self, input1, input2, target) -> TensorBase:
        return margin_ranking_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class HingeEmbeddingLoss(_MarginLoss):
    def __init__(
        self, margin: float = 1.0, size_average=None, reduce=None, reduction="mean"
    ):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input, target) -> TensorBase:
        return hinge_embedding_loss(
            input, target, margin=self.margin, reduction=self.reduction
        )


class CosineEmbeddingLoss(_MarginLoss):
    def forward(self, input1, input2, target) -> TensorBase:
        return cosine_embedding_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class SoftMarginLoss(_Loss):
    def forward(self, input, target) -> TensorBase:
        return soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    def forward(self, input, target) -> TensorBase:
        return multilabel_soft_margin_loss(
            input, target, weight=self.weight, reduction=self.reduction
        )


class MultiLabelMarginLoss(_Loss):
    def forward(self, input, target) -> TensorBase:
        return multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: TensorBase | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(
                f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                f"{weight.dim()}D instead"
            )
        self.p, self.margin = p, margin

    def forward(self, input, target) -> TensorBase:
        return multi_margin_loss(
            input,
            target,
            p=self.p,
            margin=self.margin,
            weight=self.weight,
            reduction=self.reduction,
        )


class TripletMarginLoss(_Loss):
    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginLoss: expected margin to be greater than 0, got "
                f"{margin} instead"
            )
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative) -> TensorBase:
        return triplet_margin_loss(
            anchor,
            positive,
            negative,
            margin=self.margin,
            p=self.p,
            eps=self.eps,
            swap=self.swap,
            reduction=self.reduction,
        )


class TripletMarginWithDistanceLoss(_Loss):
    def __init__(
        self,
        *,
        distance_function: Callable | None = None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginWithDistanceLoss: expected margin to be greater than "
                f"0, got {margin} instead"
            )
        self.distance_function = (
            distance_function if distance_function is not None else pairwise_distance
        )
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative) -> TensorBase:
        return triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance_function=self.distance_function,
            margin=self.margin,
            swap=self.swap,
            reduction=self.reduction,
        )
