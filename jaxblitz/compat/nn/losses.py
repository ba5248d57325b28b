"""``torch.nn``'s losses -- functional forms and modules -- with torch's reductions,
weights, checks and error words.

Each loss is one recorded op (:func:`~jaxblitz.compat.autograd.graph.apply`) over a
pure JAX function, so its gradient is JAX's derivative of torch's formula; where
torch's backward is not that derivative (``binary_cross_entropy`` clamps its logs
at -100 but not its gradient), the JAX function carries torch's backward as a
``custom_vjp``. Checks on values (targets in range, probabilities in [0, 1]) run
only where the values are concrete: inside ``torch.compile`` they cannot.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.grad_mode import is_grad_enabled
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._checks import check_range, check_values, outside_unit
from jaxblitz.compat.tensor._tensor_base import TensorBase

__all__ = [
    "BCELoss",
    "BCEWithLogitsLoss",
    "CrossEntropyLoss",
    "HuberLoss",
    "L1Loss",
    "MSELoss",
    "NLLLoss",
    "NLLLoss2d",
    "SmoothL1Loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "huber_loss",
    "l1_loss",
    "mse_loss",
    "nll_loss",
    "smooth_l1_loss",
]

# -- reductions (torch.nn._reduction) -------------------------------------------------


def _reduction(reduction: str) -> str:
    """torch's ``_Reduction.get_enum``: the reduction, checked."""
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
            "instead.",
            stacklevel=3,
        )
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _legacy(size_average: Any, reduce: Any, reduction: str) -> str:
    """torch's ``_Reduction.legacy_get_string``: ``size_average``/``reduce`` win."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(
        "size_average and reduce args will be deprecated, please use "
        f"reduction='{ret}' instead.",
        stacklevel=3,
    )
    return ret


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return jnp.mean(loss)
    if reduction == "sum":
        return jnp.sum(loss)
    return loss


# -- shared checks --------------------------------------------------------------------


def _tensor(name: str, position: int, arg: str, value: Any) -> None:
    if not isinstance(value, TensorBase):
        raise TypeError(
            f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
            f"{type(value).__name__}"
        )


def _out_of_bounds(value: int, _: int) -> IndexError:
    return IndexError(f"Target {value} is out of bounds.")


_BETWEEN = {
    what: lambda *_, what=what: RuntimeError(
        f"all elements of {what} should be between 0 and 1"
    )
    for what in ("input", "target")
}


def _concrete(t: TensorBase) -> np.ndarray | None:
    """The values of ``t``, or None where they are not known (compile's tracers)."""
    array = t._data
    if isinstance(array, jax.core.Tracer):
        return None
    return np.asarray(array)


def _size_warning(input: TensorBase, target: TensorBase) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input "
            f"size ({input.size()}). This will likely lead to incorrect results due "
            "to broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def _check_broadcast(a: TensorBase, b: TensorBase) -> tuple[int, ...]:
    """torch.broadcast_tensors' check and words; the broadcast shape."""
    return _broadcast_shapes(tuple(a.shape), tuple(b.shape))


def _broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of ``shapes``, left to right, with torch's words."""
    out = shapes[0]
    for sb in shapes[1:]:
        sa = out
        for i in range(1, min(len(sa), len(sb)) + 1):
            if sa[-i] != sb[-i] and sa[-i] != 1 and sb[-i] != 1:
                dim = max(len(sa), len(sb)) - i
                raise RuntimeError(
                    f"The size of tensor a ({sa[-i]}) must match the size of tensor "
                    f"b ({sb[-i]}) at non-singleton dimension {dim}"
                )
        out = tuple(np.broadcast_shapes(sa, sb))
    return out


def _not_differentiable(fn: str, arg: str, t: TensorBase | None) -> None:
    if t is not None and is_grad_enabled() and t.requires_grad:
        raise RuntimeError(
            f"The function '{fn}' is not differentiable with respect to argument "
            f"'{arg}'. This input cannot have requires_grad True."
        )


def _kernel(name: str, dt: _dtype.dtype) -> NotImplementedError:
    return NotImplementedError(f"\"{name}\" not implemented for '{dt.scalar_type}'")


# -- regression losses: mse, l1, smooth l1, huber -------------------------------------


def _pointwise_fn(x, y, w, *, kind, dt, reduction, param):
    d = x.astype(dt) - y.astype(dt)
    if kind == "mse":
        loss = d * d
    elif kind == "l1":
        loss = d * jnp.sign(d)  # |d|, with torch's gradient 0 where d == 0
    else:  # smooth_l1 (param: beta) and huber (param: delta)
        z = jnp.abs(d)
        if kind == "smooth_l1":
            loss = jnp.where(z < param, 0.5 * z * z / param, z - 0.5 * param)
        else:
            loss = jnp.where(z < param, 0.5 * z * z, param * (z - 0.5 * param))
    if w is None:
        return _reduce(loss, reduction)
    loss = loss * w
    if reduction == "mean" and kind != "huber":  # torch: normalised by the weights
        return jnp.sum(loss) / jnp.sum(w)
    return _reduce(loss, reduction)


_L1_NAMES = {"mean": "MeanBackward0", "sum": "SumBackward0", "none": "AbsBackward0"}
_WEIGHTED_NAMES = {
    "mean": "DivBackward0",
    "sum": "SumBackward0",
    "none": "MulBackward0",
}


def _pointwise(
    kind: str,
    input: TensorBase,
    target: TensorBase,
    reduction: str,
    weight: TensorBase | None = None,
    param: float = 0.0,
) -> TensorBase:
    _check_broadcast(input, target)
    if weight is None:
        reduction = _reduction(reduction)
    elif tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    elif reduction not in ("none", "mean", "sum"):
        raise ValueError(
            f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
            "'sum'."
        )
    if kind == "huber":  # torch's huber kernel computes in the input's dtype
        dt = input.dtype
    else:
        dt = _dtype.promote_types(input.dtype, target.dtype)
    if not dt.is_floating_point:
        if kind != "l1":
            raise _kernel(f"{kind.removesuffix('_loss')}_cpu", dt)
        if reduction == "mean":
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a "
                f"floating point or complex dtype. Got: {dt.scalar_type}"
            )
    if weight is not None:
        name = _WEIGHTED_NAMES[reduction]
        if kind == "huber" and reduction == "mean":
            name = "MeanBackward0"
        dt = _dtype.promote_types(dt, weight.dtype)
    elif kind == "l1":
        name = _L1_NAMES[reduction]
    else:
        name = {"mse": "MseLossBackward0", "smooth_l1": "SmoothL1LossBackward0"}.get(
            kind, "HuberLossBackward0"
        )
    return apply(
        name,
        _pointwise_fn,
        input,
        target,
        weight,
        kind=kind,
        dt=dt.np_name,
        reduction=reduction,
        param=float(param),
    )


def mse_loss(
    input: TensorBase,
    target: TensorBase,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    weight: TensorBase | None = None,
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "mse_loss", mse_loss, input, target, size_average, reduce, reduction, weight
        )
    _tensor("mse_loss", 1, "input", input)
    _tensor("mse_loss", 2, "target", target)
    _size_warning(input, target)
    reduction = _legacy(size_average, reduce, reduction)
    return _pointwise("mse", input, target, reduction, weight)


def l1_loss(
    input: TensorBase,
    target: TensorBase,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    weight: TensorBase | None = None,
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "l1_loss", l1_loss, input, target, size_average, reduce, reduction, weight
        )
    _tensor("l1_loss", 1, "input", input)
    _tensor("l1_loss", 2, "target", target)
    _size_warning(input, target)
    reduction = _legacy(size_average, reduce, reduction)
    return _pointwise("l1", input, target, reduction, weight)


def smooth_l1_loss(
    input: TensorBase,
    target: TensorBase,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "smooth_l1_loss",
            smooth_l1_loss,
            input,
            target,
            size_average,
            reduce,
            reduction,
            beta,
        )
    _tensor("smooth_l1_loss", 1, "input", input)
    _tensor("smooth_l1_loss", 2, "target", target)
    _size_warning(input, target)
    reduction = _legacy(size_average, reduce, reduction)
    if beta == 0.0:  # torch: exactly the L1 loss
        return _pointwise("l1", input, target, reduction)
    if beta < 0:
        _check_broadcast(input, target)
        _reduction(reduction)
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _pointwise("smooth_l1", input, target, reduction, param=beta)


def huber_loss(
    input: TensorBase,
    target: TensorBase,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: TensorBase | None = None,
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "huber_loss", huber_loss, input, target, reduction, delta, weight
        )
    _tensor("huber_loss", 1, "input", input)
    _tensor("huber_loss", 2, "target", target)
    _size_warning(input, target)
    if delta <= 0:
        _check_broadcast(input, target)
        _reduction(reduction)
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    return _pointwise("huber", input, target, reduction, weight, param=delta)


# -- binary cross-entropy -------------------------------------------------------------

_EPSILON = 1e-12  # torch's floor on x (1 - x) in the BCE gradient


@jax.custom_vjp
def _bce_elementwise(x, y):
    """torch's BCE per element: logs clamped at -100 (so 0 and 1 give finite loss)."""
    return (y - 1) * jnp.maximum(jnp.log1p(-x), -100.0) - y * jnp.maximum(
        jnp.log(x), -100.0
    )


def _bce_fwd(x, y):
    return _bce_elementwise(x, y), (x, y)


def _bce_bwd(residual, g):
    # torch's binary_cross_entropy_backward and ..._target_backward: the clamped
    # logs' gradient is not JAX's derivative of the clamp.
    x, y = residual
    grad_x = g * (x - y) / jnp.maximum((1 - x) * x, _EPSILON)
    grad_y = g * (jnp.log1p(-x) - jnp.log(x))
    return grad_x.astype(x.dtype), grad_y.astype(y.dtype)


_bce_elementwise.defvjp(_bce_fwd, _bce_bwd)


def _bce_fn(x, y, w, *, reduction):
    loss = _bce_elementwise(x, y)
    if w is not None:
        loss = loss * w.astype(loss.dtype)
    return _reduce(loss, reduction)


def binary_cross_entropy(
    input: TensorBase,
    target: TensorBase,
    weight: TensorBase | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "binary_cross_entropy",
            binary_cross_entropy,
            input,
            target,
            weight,
            size_average,
            reduce,
            reduction,
        )
    _tensor("binary_cross_entropy", 1, "input", input)
    _tensor("binary_cross_entropy", 2, "target", target)
    reduction = _reduction(_legacy(size_average, reduce, reduction))
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input "
            f"size ({input.size()}) is deprecated. Please ensure they have the same "
            "size."
        )
    if weight is not None:
        _expandable(weight, tuple(target.shape))
    _not_differentiable("binary_cross_entropy", "weight", weight)
    if target.dtype is not input.dtype:
        raise RuntimeError(
            f"Found dtype {target.dtype.scalar_type} but expected "
            f"{input.dtype.scalar_type}"
        )
    if not input.dtype.is_floating_point:
        raise _kernel("binary_cross_entropy", input.dtype)
    check_values([input], outside_unit, _BETWEEN["input"])
    check_values([target], outside_unit, _BETWEEN["target"])
    return apply(
        "BinaryCrossEntropyBackward0",
        _bce_fn,
        input,
        target,
        weight,
        reduction=reduction,
    )


def _expandable(t: TensorBase, shape: tuple[int, ...]) -> None:
    """torch.broadcast_shapes(shape, t.shape) == shape, with torch's words."""
    own = tuple(t.shape)
    if len(own) > len(shape):
        raise RuntimeError(
            f"The expanded size of the tensor ({len(shape)}) must match the existing "
            f"size ({len(own)}) at non-singleton dimension 0"
        )
    for i in range(1, len(own) + 1):
        if own[-i] != 1 and own[-i] != shape[-i]:
            raise RuntimeError(
                f"Attempting to broadcast a dimension of length {own[-i]} at -{i}! "
                f"Mismatching argument at index 1 had torch.Size({list(own)}); but "
                f"expected shape should be broadcastable to {list(shape)}"
            )


def _bce_logits_fn(x, y, w, pw, *, dt, out, reduction):
    x, y = x.astype(dt), y.astype(dt)
    log_sigmoid = jax.nn.log_sigmoid(x)
    if pw is not None:
        log_sigmoid = log_sigmoid * ((pw.astype(dt) - 1) * y + 1)
    loss = (1 - y) * x - log_sigmoid
    if w is not None:
        loss = loss * w.astype(dt)
    return _reduce(loss, reduction).astype(out)


def binary_cross_entropy_with_logits(
    input: TensorBase,
    target: TensorBase,
    weight: TensorBase | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    pos_weight: TensorBase | None = None,
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "binary_cross_entropy_with_logits",
            binary_cross_entropy_with_logits,
            input,
            target,
            weight,
            size_average,
            reduce,
            reduction,
            pos_weight,
        )
    _tensor("binary_cross_entropy_with_logits", 1, "input", input)
    _tensor("binary_cross_entropy_with_logits", 2, "target", target)
    reduction = _reduction(_legacy(size_average, reduce, reduction))
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({target.size()}) must be the same as input size "
            f"({input.size()})"
        )
    fn = "binary_cross_entropy_with_logits"
    _not_differentiable(fn, "weight", weight)
    _not_differentiable(fn, "pos_weight", pos_weight)
    if not input.dtype.is_floating_point:
        raise _kernel("log_sigmoid_cpu", input.dtype)
    if pos_weight is not None:
        _check_broadcast(pos_weight, target)
    dt = _dtype.promote_types(input.dtype, target.dtype)
    if not target.dtype.is_floating_point:  # torch works in place on 1 - target
        raise RuntimeError(
            f"result type {dt.scalar_type} can't be cast to the desired output type "
            f"{target.dtype.scalar_type}"
        )
    if weight is not None:
        _expandable(weight, tuple(target.shape))
    return apply(
        "BinaryCrossEntropyWithLogitsBackward0",
        _bce_logits_fn,
        input,
        target,
        weight,
        pos_weight,
        dt=dt.np_name,
        out=target.dtype.np_name,
        reduction=reduction,
    )


# -- negative log-likelihood and cross-entropy ----------------------------------------


def _class_last(x):
    """(C,) stays; (N, C, d1, ...) -> (N, d1, ..., C)."""
    return x if x.ndim < 2 else jnp.moveaxis(x, 1, -1)


def _nll_fn(x, target, weight, *, reduction, ignore_index, smoothing, log_softmax):
    if log_softmax:
        x = jax.nn.log_softmax(x, axis=0 if x.ndim == 1 else 1)
    lp = _class_last(x)
    t = target.astype(jnp.int64)
    valid = t != ignore_index
    safe = jnp.where(valid, t, 0)
    picked = jnp.take_along_axis(lp, safe[..., None], axis=-1)[..., 0]
    # torch leaves an ignored entry's gradient 0, even where the mean's total
    # weight is 0 (its inf would reach class 0 through ``safe`` as a NaN).
    picked = jnp.where(valid, picked, 0)
    if weight is None:
        w = valid.astype(lp.dtype)
    else:
        w = jnp.where(valid, weight[safe], 0).astype(lp.dtype)
    nll = -picked * w
    total = jnp.sum(w)
    out = jnp.sum(nll) / total if reduction == "mean" else _reduce(nll, reduction)
    if smoothing <= 0:
        return out
    # torch's cross_entropy_loss_label_smoothing: the uniform part, same weights.
    per_class = lp if weight is None else lp * weight.astype(lp.dtype)
    smooth = jnp.where(valid, -jnp.sum(per_class, axis=-1), 0)
    if reduction == "mean":
        smooth = jnp.sum(smooth) / total
    else:
        smooth = _reduce(smooth, reduction)
    return (1 - smoothing) * out + smooth * (smoothing / lp.shape[-1])


def _check_nll(
    input: TensorBase,
    target: TensorBase,
    weight,
    ignore_index: int,
    ishape: tuple[int, ...],
    tshape: tuple[int, ...],
    idt: _dtype.dtype | None,
):
    """torch's nll_loss_nd checks, in torch's order; returns the node's name.
    ``ishape``, ``tshape``: the input's and target's shapes; ``idt`` the input's
    dtype where the caller has read it (each read once: a hot path)."""
    idim, tdim = len(ishape), len(tshape)
    if idim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {idim})")
    batch = tshape[0] if tdim else 0
    if idim != 1 and ishape[0] != batch:
        raise ValueError(
            f"Expected input batch_size ({ishape[0]}) to match target "
            f"batch_size ({batch})."
        )
    n_classes = ishape[0 if idim == 1 else 1]
    wshape = None if weight is None else tuple(weight.shape)
    if idim <= 2:
        if idim == 1 and tdim == 1 and tshape[0] != 1:
            raise ValueError(
                "For 1D input, 1D target must have size 1, but got target size: "
                f"{tshape[0]}"
            )
        if tdim > 1:
            raise RuntimeError(
                "0D or 1D target tensor expected, multi-target not supported"
            )
        if idim == 2 and ishape[0] != tshape[0]:
            raise RuntimeError(
                f"size mismatch (got input: {list(ishape)}, target: {list(tshape)})"
            )
        if wshape is not None and wshape != (n_classes,):
            raise RuntimeError(
                f"weight tensor should be defined either for all {n_classes} classes "
                f"or no classes but got weight tensor of shape: {list(wshape)}"
            )
        name = "NllLossBackward0"
    else:
        if idim != 4 and tshape[1:] != ishape[2:]:
            expected = [ishape[0], *ishape[2:]]
            raise RuntimeError(f"Expected target size {expected}, got {list(tshape)}")
        if idim == 4 and tdim != 3:
            raise RuntimeError(
                "only batches of spatial targets supported (3D tensors) but got "
                f"targets of dimension: {tdim}"
            )
        if wshape is not None and math.prod(wshape) != n_classes:
            raise RuntimeError(
                "weight tensor should be defined either for all or no classes"
            )
        if idim == 4 and tshape != (ishape[0], *ishape[2:]):
            raise RuntimeError(
                f"size mismatch (got input: {list(ishape)} , target: {list(tshape)}"
            )
        name = "NllLoss2DBackward0"
    if idt is None:
        idt = input.dtype
    tdt = target.dtype
    if not idt.is_floating_point:
        raise _kernel("nll_loss_out_frame", idt)
    if tdt is not _dtype.int64 and tdt is not _dtype.uint8:
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {tdt.scalar_type}"
        )
    if weight is not None and weight.dtype is not idt:
        raise RuntimeError(
            f"expected scalar type {idt.scalar_type} but found "
            f"{weight.dtype.scalar_type}"
        )
    check_range(target, 0, n_classes, _out_of_bounds, skip=ignore_index)
    return name


def nll_loss(
    input: TensorBase,
    target: TensorBase,
    weight: TensorBase | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
) -> TensorBase:
    if _autocast.on:
        return _autocast.run(
            "nll_loss",
            nll_loss,
            input,
            target,
            weight,
            size_average,
            ignore_index,
            reduce,
            reduction,
        )
    _tensor("nll_loss", 1, "input", input)
    _tensor("nll_loss", 2, "target", target)
    reduction = _reduction(_legacy(size_average, reduce, reduction))
    return _nll(input, target, weight, reduction, ignore_index, 0.0, False)


def _nll(
    input,
    target,
    weight,
    reduction,
    ignore_index,
    smoothing,
    log_softmax,
    ishape=None,
    tshape=None,
    idt=None,
):
    if ishape is None:
        ishape, tshape = input._shape(), target._shape()
    name = _check_nll(input, target, weight, ignore_index, ishape, tshape, idt)
    idim = len(ishape)
    if idim == 1 and len(tshape) == 1:  # torch: a (1,) target is a class
        target = target.reshape(())
    _not_differentiable("nll_loss_forward", "weight", weight)
    if reduction == "none" and idim >= 3 and idim != 4:
        name = "ViewBackward0"  # torch views the 2d loss back to the target's shape
    if smoothing > 0:
        name = "AddBackward0"
    return apply(
        name,
        _nll_fn,
        input,
        target,
        weight,
        reduction=reduction,
        ignore_index=int(ignore_index),
        smoothing=float(smoothing),
        log_softmax=log_softmax,
    )


def _ce_prob_fn(x, target, weight, *, reduction, smoothing):
    axis = 0 if x.ndim == 1 else 1
    n_classes = x.shape[axis]
    lp = jax.nn.log_softmax(x, axis=axis)
    if smoothing > 0:
        target = target * (1 - smoothing) + smoothing / n_classes
    prod = lp * target
    if weight is not None:
        shape = [1] * x.ndim
        shape[axis] = n_classes
        prod = prod * weight.reshape(shape)
    if reduction == "mean":
        if not x.size:
            return jnp.full((), jnp.nan, prod.dtype)
        return -jnp.sum(prod) / (x.size // n_classes)
    if reduction == "sum":
        return -jnp.sum(prod)
    return -jnp.sum(prod, axis=axis)


def cross_entropy(
    input: TensorBase,
    target: TensorBase,
    weight: TensorBase | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> TensorBase:
    """Class indices (``(N,)``, ``()`` or ``(N, d1, ...)``) or class probabilities
    (the input's shape), as torch's ``cross_entropy_loss``."""
    if _autocast.on:
        return _autocast.run(
            "cross_entropy",
            cross_entropy,
            input,
            target,
            weight,
            size_average,
            ignore_index,
            reduce,
            reduction,
            label_smoothing,
        )
    _tensor("cross_entropy", 1, "input", input)
    _tensor("cross_entropy", 2, "target", target)
    reduction = _reduction(_legacy(size_average, reduce, reduction))
    ishape, tshape = input._shape(), target._shape()  # read once: a hot path
    if ishape == tshape:  # class probabilities
        if not target.dtype.is_floating_point:
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, "
                f"got {target.dtype.scalar_type}"
            )
        if ignore_index >= 0:
            raise RuntimeError(
                "ignore_index is not supported for floating point target"
            )
        if input.dim() == 0:
            raise IndexError(
                "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
            )
        n_classes = input.shape[0 if input.dim() == 1 else 1]
        if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
            raise RuntimeError(
                f"cross_entropy: weight tensor should be defined either for all "
                f"{n_classes} classes or no classes but got weight tensor of shape: "
                f"{list(weight.shape)}"
            )
        if not input.dtype.is_floating_point:
            raise _kernel(_log_softmax_kernel(input), input.dtype)
        if label_smoothing > 1.0:
            raise RuntimeError(
                f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
            )
        name = {"mean": "DivBackward1"}.get(reduction, "NegBackward0")
        return apply(
            name,
            _ce_prob_fn,
            input,
            target,
            weight,
            reduction=reduction,
            smoothing=float(max(label_smoothing, 0.0)),
        )
    idt = input.dtype if ishape else None
    if ishape and not idt.is_floating_point:
        raise _kernel(_log_softmax_kernel(input), idt)
    if label_smoothing > 1.0:
        raise RuntimeError(
            f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
        )
    if not ishape:
        raise IndexError(
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
        )
    return _nll(
        input,
        target,
        weight,
        reduction,
        ignore_index,
        max(float(label_smoothing), 0.0),
        True,
        ishape,
        tshape,
        idt,
    )


def _log_softmax_kernel(input: TensorBase) -> str:
    last = input.dim() <= 2  # the class dim is the last one
    return "log_softmax_lastdim_kernel_impl" if last else "log_softmax_kernel_impl"


# -- modules --------------------------------------------------------------------------


class _Loss(Module):
    reduction: str

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        self.reduction = _legacy(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(
        self,
        weight: TensorBase | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(
        self, size_average=None, reduce=None, reduction: str = "mean", beta=1.0
    ):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_WeightedLoss):
    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return binary_cross_entropy(
            input, target, weight=self.weight, reduction=self.reduction
        )


class BCEWithLogitsLoss(_Loss):
    def __init__(
        self,
        weight: TensorBase | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
        pos_weight: TensorBase | None = None,
    ):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return binary_cross_entropy_with_logits(
            input,
            target,
            self.weight,
            pos_weight=self.pos_weight,
            reduction=self.reduction,
        )


class NLLLoss(_WeightedLoss):
    def __init__(
        self,
        weight: TensorBase | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return nll_loss(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
        )


class CrossEntropyLoss(_WeightedLoss):
    def __init__(
        self,
        weight: TensorBase | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class NLLLoss2d(NLLLoss):
    """torch's deprecated alias of :class:`NLLLoss`, with its ``FutureWarning``."""

    def __init__(
        self,
        weight: TensorBase | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ):
        warnings.warn(
            "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
            "drop-in replacement and see "
            "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(weight, size_average, ignore_index, reduce, reduction)
