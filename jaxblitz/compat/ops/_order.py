"""Blitz 1, "Tensors": order statistics and counting -- ``topk``, ``kthvalue``,
``median``, ``mode``, ``count_nonzero``, ``unique``, ``bincount``, ``histc``.

Values-and-indices ops return torch's named tuples (``torch.return_types.topk``:
``.values``, ``.indices``, unpacking). Their values are picked out of the input
by the indices inside the recorded function, so the gradient goes to the picked
elements, as torch's ``value_selecting_reduction_backward``. Which of several
equal elements is picked is unspecified in torch; here it is the first in the
stable order (NaN counts as the largest value, as in torch's sort).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._funnel import (
    _keepdim,
    _no_grad,
    _not_implemented,
    _require_tensors,
)
from jaxblitz.compat.ops._histogram import histc_counts
from jaxblitz.compat.ops._reduce import _dim, _order_fn, _ReturnType
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._tensor_base import TensorBase, wrap_dim
from jaxblitz.compat.tensor.creation import tensor

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


def _return_type(name: str) -> type:
    return type(
        name, (_ReturnType,), {"name": name, "__module__": "torch.return_types"}
    )


_TopkType, _KthType = _return_type("topk"), _return_type("kthvalue")
_MedianType, _ModeType = _return_type("median"), _return_type("mode")

# ---------------------------------------------------------------------------
# Pure JAX functions (index functions give int64; value functions pick by them)
# ---------------------------------------------------------------------------


def _topk_index_fn(x, *, axis, k, largest):
    if x.ndim == 0:
        return jnp.zeros((), jnp.int64)
    order = _order_fn(x, axis=axis, descending=largest)
    return jnp.take(order, jnp.arange(k), axis=axis).astype(jnp.int64)


def _kth_index_fn(x, *, axis, k, keepdims):
    if x.ndim == 0:
        return jnp.zeros((), jnp.int64)
    order = _order_fn(x, axis=axis, descending=False)
    index = jnp.take(order, jnp.asarray([k]), axis=axis).astype(jnp.int64)
    return index if keepdims else jnp.squeeze(index, axis)


def _median_index_fn(x, *, axis, keepdims):
    # torch: the lower median; a NaN in the slice is the median (its first one)
    if x.ndim == 0:
        return jnp.zeros((), jnp.int64)
    n = x.shape[axis]
    kth = _kth_index_fn(x, axis=axis, k=(n - 1) // 2, keepdims=True)
    nan = jnp.isnan(x) if jnp.issubdtype(x.dtype, jnp.floating) else x != x
    first_nan = jnp.argmax(nan, axis=axis, keepdims=True).astype(jnp.int64)
    index = jnp.where(jnp.any(nan, axis=axis, keepdims=True), first_nan, kth)
    return index if keepdims else jnp.squeeze(index, axis)


def _mode_index_fn(x, *, axis, keepdims):
    # torch: the most frequent value (the smallest among equally frequent ones),
    # and the index of its last occurrence
    if x.ndim == 0:
        return jnp.zeros((), jnp.int64)
    m = jnp.moveaxis(x, axis, -1)
    counts = jnp.sum(m[..., :, None] == m[..., None, :], axis=-1)
    best = counts == jnp.max(counts, axis=-1, keepdims=True)
    top = jnp.where(best, m, jnp.max(m, axis=-1, keepdims=True))
    value = jnp.min(top, axis=-1, keepdims=True)
    n = m.shape[-1]
    last = n - 1 - jnp.argmax((m == value)[..., ::-1], axis=-1, keepdims=True)
    index = jnp.moveaxis(last.astype(jnp.int64), -1, axis)
    return index if keepdims else jnp.squeeze(index, axis)


def _pick_fn(x, index, *, axis, keepdims):
    if x.ndim == 0:
        return x + jnp.zeros((), x.dtype)
    if not keepdims:
        index = jnp.expand_dims(index, axis)
    out = jnp.take_along_axis(x, index, axis=axis)
    return out if keepdims else jnp.squeeze(out, axis)


def _median_all_fn(x, index):
    # torch's gradient of median() is split evenly over the elements equal to it
    m = x.reshape(-1)[index]
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return m
    hit = (x == m) | (jnp.isnan(x) & jnp.isnan(m))
    hit = hit.astype(x.dtype)
    share = jnp.sum(x * hit) / jnp.sum(hit)
    return lax.stop_gradient(m) + share - lax.stop_gradient(share)


def _count_fn(x, *, axis):
    return jnp.count_nonzero(x, axis=axis).astype(jnp.int64)


# ---------------------------------------------------------------------------
# topk, kthvalue, median, mode
# ---------------------------------------------------------------------------


def _selection_axis(input: Tensor, dim: Any) -> int:
    return wrap_dim(dim, input.dim()) if input.dim() else 0


def _int_argument(op: str, name: str, value: Any) -> None:
    """torch's refusal of a non-integer count (``k=2.0``)."""
    integral = isinstance(value, int | np.integer) or (
        isinstance(value, TensorBase) and not value.dtype.is_floating_point
    )
    if isinstance(value, bool) or not integral:
        raise TypeError(
            f"{op}(): argument '{name}' (position 1) must be int, not "
            f"{type(value).__name__}"
        )


@declare(method=True)
def topk(
    input: Tensor,
    k: int,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,
):
    """``torch.topk``: the ``k`` largest (or smallest) along ``dim``, sorted."""
    _require_tensors("topk", input)
    _int_argument("topk", "k", k)
    k = int(k)
    if input.dtype is _dtype.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    axis = _selection_axis(input, dim)
    size = input.shape[axis] if input.dim() else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    static = dict(axis=axis, k=k, largest=bool(largest))
    index = _no_grad(_topk_index_fn, input, **static)
    values = apply("TopkBackward0", _pick_fn, input, index, axis=axis, keepdims=True)
    return _TopkType(values, index)


@declare(method=True)
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """``torch.kthvalue``: the ``k``-th smallest along ``dim`` (k counts from 1)."""
    _require_tensors("kthvalue", input)
    _int_argument("kthvalue", "k", k)
    k = int(k)
    axis = _selection_axis(input, dim)
    size = input.shape[axis] if input.dim() else 1
    if not 1 <= k <= size:
        raise RuntimeError(
            f"kthvalue(): selected number k out of range for dimension {axis}"
        )
    index = _no_grad(
        _kth_index_fn, input, axis=axis, k=k - 1, keepdims=_keepdim(keepdim)
    )
    values = apply(
        "KthvalueBackward0",
        _pick_fn,
        input,
        index,
        axis=axis,
        keepdims=_keepdim(keepdim),
    )
    return _KthType(values, index)


def _by_index(name: str, grad_fn: str, index_fn, result: type):
    def fn(input: Tensor, dim: Any = None, keepdim: bool = False):
        _require_tensors(name, input)
        if input.dtype is _dtype.bool and name == "median":
            raise _not_implemented("median_cpu", input.dtype)
        if dim is None and name == "median":
            flat = input.reshape(-1)
            if not flat.numel():
                return tensor(float("nan"), dtype=input.dtype)
            index = _no_grad(index_fn, flat, axis=0, keepdims=False)
            return apply("MedianBackward0", _median_all_fn, input, index)
        axis = _selection_axis(input, -1 if dim is None else dim)
        if input.dim() and not input.shape[axis]:
            raise IndexError(
                f"{name}(): Expected reduction dim {axis} to have non-zero size."
            )
        index = _no_grad(index_fn, input, axis=axis, keepdims=_keepdim(keepdim))
        values = apply(
            grad_fn, _pick_fn, input, index, axis=axis, keepdims=_keepdim(keepdim)
        )
        return result(values, index)

    fn.__name__ = name
    return fn


saves("MedianBackward0", (0, None), ("result", None))


median = _by_index("median", "MedianBackward1", _median_index_fn, _MedianType)
declare.alias("median", median, method=True)
mode = _by_index("mode", "ModeBackward0", _mode_index_fn, _ModeType)
declare.alias("mode", mode, method=True)

# ---------------------------------------------------------------------------
# Counting: count_nonzero, unique, bincount, histc (values read: sizes vary)
# ---------------------------------------------------------------------------


@declare(method=True)
def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    _require_tensors("count_nonzero", input)
    return _no_grad(_count_fn, input, axis=_dim(dim, input.dim()))


def _numpy(input: Tensor, what: str) -> np.ndarray:
    input._needs_value(f"{what} (its size depends on the values)")
    return np.asarray(input._data)


@declare(method=True)
def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """``torch.unique``: the distinct values, sorted (as torch's CPU kernel)."""
    _require_tensors("unique", input)
    a = _numpy(input, "unique")
    axis = None if dim is None else wrap_dim(dim, input.dim())
    values, inverse, counts = np.unique(
        a, return_inverse=True, return_counts=True, axis=axis, equal_nan=False
    )
    out = [tensor(values, dtype=input.dtype)]
    if return_inverse:
        shape = a.shape if axis is None else (a.shape[axis],)
        out.append(tensor(inverse.reshape(shape), dtype=_dtype.int64))
    if return_counts:
        out.append(tensor(counts, dtype=_dtype.int64))
    return out[0] if len(out) == 1 else tuple(out)


@declare(method=True)
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0):
    """``torch.bincount``: how often each non-negative integer occurs (weighted)."""
    _require_tensors("bincount", input)
    if input.dtype.is_floating_point or input.dtype is _dtype.bool:
        raise _not_implemented("bincount_cpu", input.dtype)
    a = _numpy(input, "bincount")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return tensor(np.bincount(a, minlength=minlength), dtype=_dtype.int64)
    if tuple(weights.shape) != tuple(input.shape):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    dt = weights.dtype if weights.dtype is _dtype.float32 else _dtype.float64
    w = np.asarray(weights._data).astype(dt.np)
    return tensor(np.bincount(a, w, minlength=minlength).astype(dt.np), dtype=dt)


@declare(method=True)
def histc(input: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:  # noqa: A002
    """``torch.histc``: equal-width bins over ``[min, max]`` (the data's own range
    when the two are equal); values outside are left out."""
    _require_tensors("histc", input)
    if bins <= 0:
        raise RuntimeError(
            f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0"
        )
    if not input.dtype.is_floating_point:
        raise _not_implemented("histogram_cpu", input.dtype)
    return histc_counts(input, bins, min, max)
