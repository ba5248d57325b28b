"""Blitz 1, "Tensors": more reductions and scans -- ``aminmax``, ``nanmean``,
``nanmedian``, ``quantile``, ``nanquantile``, ``logcumsumexp``, ``cummax``,
``cummin``, ``msort``, ``cov``, ``corrcoef``."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
from jax import lax

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._arith import div
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._funnel import (
    _keepdim,
    _no_grad,
    _not_implemented,
    _require_tensors,
)
from jaxblitz.compat.ops._order import _median_all_fn, _pick_fn, _return_type
from jaxblitz.compat.ops._reduce import _dim, _order_fn, nansum, sort
from jaxblitz.compat.ops._unary import clamp
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._checks import check_values, error, outside_unit
from jaxblitz.compat.tensor._tensor_base import TensorBase, wrap_dim
from jaxblitz.compat.tensor.creation import tensor

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

_CummaxType, _CumminType = _return_type("cummax"), _return_type("cummin")
_NanmedianType = _return_type("nanmedian")


class _Aminmax(tuple):
    """``torch.return_types.aminmax(min=..., max=...)``."""

    def __new__(cls, lo, hi):
        return super().__new__(cls, (lo, hi))

    min = property(lambda self: self[0])
    max = property(lambda self: self[1])

    def __repr__(self) -> str:
        return f"torch.return_types.aminmax(\nmin={self[0]!r},\nmax={self[1]!r})"


_Aminmax.__name__ = _Aminmax.__qualname__ = "aminmax"
_Aminmax.__module__ = "torch.return_types"

# ---------------------------------------------------------------------------
# Pure JAX functions
# ---------------------------------------------------------------------------


def _extreme_fn(x, *, op, axis, keepdims):
    return op(x, axis=axis, keepdims=keepdims)


def _count_fn(x, *, axis, keepdims):
    return jnp.sum(~jnp.isnan(x), axis=axis, keepdims=keepdims).astype(x.dtype)


def _logcumsumexp_fn(x, *, axis):
    if not x.ndim:
        return x + jnp.zeros((), x.dtype)
    return _logcumsumexp(x, axis)


def _cumulative_logsumexp(x, axis, reverse=False):
    """torch's CPU scan, accumulated in double as its kernel does for float."""
    wide = x.astype(jnp.float64) if x.dtype == jnp.float32 else x
    return lax.cumlogsumexp(wide, axis=axis, reverse=reverse).astype(x.dtype)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def _logcumsumexp(x, axis):
    if not x.shape[axis]:
        return x
    return _cumulative_logsumexp(x, axis)


def _logcumsumexp_fwd(x, axis):
    out = _logcumsumexp(x, axis)
    return out, (x, out)


def _logcumsumexp_bwd(axis, saved, g):
    # torch's formula (logcumsumexp_backward): the positive and negative parts of
    # the cotangent each summed in log space, from the end
    x, out = saved
    if not x.shape[axis]:
        return (g,)
    lowest = jnp.finfo(g.dtype).min
    log_abs = jnp.log(jnp.abs(g))

    def part(log_g):
        rev = _cumulative_logsumexp(log_g - out, axis, reverse=True)
        return jnp.exp(rev + x)

    pos = part(jnp.where(g > 0, log_abs, lowest))
    neg = part(jnp.where(g < 0, log_abs, lowest))
    return (pos - neg,)


_logcumsumexp.defvjp(_logcumsumexp_fwd, _logcumsumexp_bwd)


def _cum_index_fn(x, *, axis, largest):
    # torch: a later element equal to the running extreme takes over, and a NaN
    # takes over and stays (each later NaN taking over again)
    if not x.ndim:
        return jnp.zeros((), jnp.int64)
    floating = jnp.issubdtype(x.dtype, jnp.floating)
    index = lax.broadcasted_iota(jnp.int64, x.shape, axis)

    def combine(a, b):
        (va, ia), (vb, ib) = a, b
        wins = vb >= va if largest else vb <= va
        if floating:
            wins = jnp.isnan(vb) | (~jnp.isnan(va) & wins)
        return jnp.where(wins, vb, va), jnp.where(wins, ib, ia)

    return lax.associative_scan(combine, (x, index), axis=axis)[1]


def _cum_pick_fn(x, index, *, axis):
    if not x.ndim:
        return x + jnp.zeros((), x.dtype)
    return jnp.take_along_axis(x, index, axis=axis)


def _nanmedian_index_fn(x, *, axis, keepdims):
    # the lower median of the non-NaN values; a slice of NaN only: its first
    if not x.ndim:
        return jnp.zeros((), jnp.int64)
    order = _order_fn(x, axis=axis, descending=False)
    count = jnp.sum(~jnp.isnan(x), axis=axis, keepdims=True)
    k = jnp.maximum(count - 1, 0) // 2
    index = jnp.take_along_axis(order, k, axis=axis).astype(jnp.int64)
    return index if keepdims else jnp.squeeze(index, axis)


def _quantile_fn(x, q, *, axis, keepdims, interpolation, ignore_nan, scalar):
    # torch: sort, rank q * (n - 1) among the n (non-NaN) values, interpolate
    ndim = x.ndim
    if axis is None:
        x = x.reshape(-1)
    x = jnp.moveaxis(x, 0 if axis is None else axis, -1)
    s = jnp.sort(x, axis=-1)
    n = x.shape[-1]
    nan = jnp.isnan(s)
    count = jnp.sum(~nan, axis=-1, keepdims=True) if ignore_nan else n
    last = jnp.asarray(count - 1, x.dtype)
    rank = q.astype(x.dtype).reshape(-1, *([1] * x.ndim)) * last
    if interpolation == "lower":
        rank = jnp.floor(rank)
    elif interpolation == "higher":
        rank = jnp.ceil(rank)
    elif interpolation == "nearest":
        rank = jnp.round(rank)
    below = jnp.floor(rank).astype(jnp.int64)
    above = jnp.minimum(jnp.ceil(rank).astype(jnp.int64), n - 1)
    below = jnp.clip(below, 0, n - 1)
    lo = jnp.take_along_axis(s[None], jnp.broadcast_to(below, rank.shape), axis=-1)
    hi = jnp.take_along_axis(s[None], jnp.broadcast_to(above, rank.shape), axis=-1)
    w = 0.5 if interpolation == "midpoint" else rank - below
    # torch.lerp's two formulas, on either side of a weight of 0.5
    out = jnp.where(w < 0.5, lo + w * (hi - lo), hi - (hi - lo) * (1 - w))
    out = out[..., 0]
    if ignore_nan:
        out = jnp.where(count[..., 0] == 0, jnp.nan, out)
    else:
        out = jnp.where(jnp.any(nan, axis=-1), jnp.nan, out)
    if keepdims and axis is None:
        out = out.reshape(out.shape[:1] + (1,) * ndim)
    elif keepdims:
        out = jnp.expand_dims(out, axis + 1)
    return out[0] if scalar else out


def _negative(w):
    return w < 0, w


def _cov_fn(x, fw, aw, *, correction):
    x = x if x.ndim == 2 else x.reshape(1, -1)
    n = x.shape[1]
    w = None
    if fw is not None:
        w = fw.astype(x.dtype)
    if aw is not None:
        w = aw.astype(x.dtype) if w is None else w * aw
    # torch's composite (aten cov), step for step
    if w is None:
        total = jnp.asarray(n, x.dtype)
        avg = jnp.sum(x, axis=1) / total
    else:
        total = jnp.sum(w)
        avg = jnp.sum(x * w, axis=1) / total
    if w is not None and aw is not None and correction != 0:
        norm = total - correction * jnp.sum(w * aw) / total
    else:
        norm = total - correction
    norm = jnp.maximum(norm, 0)
    xm = x - avg[:, None]
    xw = xm if w is None else xm * w
    c = (xm @ xw.T.conj()) / norm
    return jnp.squeeze(c)


# ---------------------------------------------------------------------------
# torch.* functions
# ---------------------------------------------------------------------------


@declare(method=True)
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False):
    _require_tensors("aminmax", input)
    if dim is not None and input.dim() and not input.shape[wrap_dim(dim, input.dim())]:
        raise IndexError(
            f"aminmax: Expected reduction dim {wrap_dim(dim, input.dim())} to have "
            "non-zero size."
        )
    if dim is None and not input.numel():
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the "
            "operation has no identity."
        )
    axis = None if dim is None else _dim(dim, input.dim())
    keep = _keepdim(keepdim) and input.dim() > 0
    if dim is None and keepdim:  # torch keeps every dimension, as size 1
        axis = tuple(range(input.dim()))
    static = dict(axis=axis, keepdims=keep)
    lo = apply("AminmaxBackward0", _extreme_fn, input, op=jnp.min, **static)
    hi = apply("AminmaxBackward0", _extreme_fn, input, op=jnp.max, **static)
    return _Aminmax(lo, hi)


@declare(method=True)
def nanmean(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype=None
) -> Tensor:
    _require_tensors("nanmean", input)
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but "
            f"got {input.dtype.scalar_type}"
        )
    # torch's: nansum over the count of values that are not NaN
    axis = _dim(dim, input.dim())
    count = _no_grad(_count_fn, input, axis=axis, keepdims=_keepdim(keepdim))
    return div(nansum(input, dim, keepdim), count)


@declare(method=True)
def nanmedian(input: Tensor, dim: Any = None, keepdim: bool = False):
    """``torch.nanmedian``: the lower median of the values that are not NaN."""
    _require_tensors("nanmedian", input)
    if input.dtype is _dtype.bool:
        raise _not_implemented("nanmedian_cpu", input.dtype)
    if dim is None:
        flat = input.reshape(-1)
        if not flat.numel():
            return tensor(float("nan"), dtype=input.dtype)
        index = _no_grad(_nanmedian_index_fn, flat, axis=0, keepdims=False)
        return apply("NanmedianBackward0", _median_all_fn, input, index)
    axis = wrap_dim(dim, input.dim()) if input.dim() else 0
    if input.dim() and not input.shape[axis]:
        raise IndexError(
            f"nanmedian(): Expected reduction dim {axis} to have non-zero size."
        )
    index = _no_grad(_nanmedian_index_fn, input, axis=axis, keepdims=_keepdim(keepdim))
    values = apply(
        "NanmedianBackward1",
        _pick_fn,
        input,
        index,
        axis=axis,
        keepdims=_keepdim(keepdim),
    )
    return _NanmedianType(values, index)


saves("NanmedianBackward0", (0, None), ("result", None))


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name: str, ignore_nan: bool):
    def fn(
        input: Tensor,
        q: Any,
        dim: int | None = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
        out: Any = None,
    ) -> Tensor:
        if _autocast.on:
            return _autocast.run(
                name, fn, input, q, dim, keepdim, interpolation=interpolation, out=out
            )
        _require_tensors(name, input)
        scalar = not isinstance(q, TensorBase)
        if scalar:  # ATen's Scalar overload checks q before all else
            q = float(q)
            if not 0 <= q <= 1:
                raise RuntimeError(
                    f"quantile() q must be in the range [0, 1] but got {q:g}"
                )
        # ATen's words are quantile()'s for nanquantile too
        if interpolation not in _INTERPOLATIONS:
            raise RuntimeError(
                "quantile() interpolation must be one of linear, lower, higher, "
                f"midpoint or nearest, but got {interpolation}"
            )
        if not input.numel():
            raise RuntimeError("quantile() input tensor must be non-empty")
        if not scalar and q.dim() > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if input.dtype not in (_dtype.float32, _dtype.float64):
            raise RuntimeError(
                "quantile() input tensor must be either float or double dtype"
            )
        if not scalar and q.dtype is not input.dtype:
            raise RuntimeError(
                "quantile() q tensor must be same dtype as the input tensor"
            )
        axis = (
            None if dim is None else (wrap_dim(dim, input.dim()) if input.dim() else 0)
        )
        if axis is not None and not input.dim():
            axis = None
        if scalar:
            qs = tensor([q], dtype=input.dtype)
        else:  # checked where the values are: lazily, at the next sync point
            scalar = not q.dim()
            qs = q.reshape(-1)
            check_values(
                [qs],
                outside_unit,
                error("quantile() q values must be in the range [0, 1]"),
            )
        return apply(
            "SqueezeBackward4",
            _quantile_fn,
            input,
            qs if interpolation == "linear" else qs.detach(),  # torch's q path
            axis=axis,
            keepdims=_keepdim(keepdim),
            interpolation=interpolation,
            ignore_nan=ignore_nan,
            scalar=scalar,
        )

    fn.__name__ = name
    return fn


quantile = _quantile("quantile", False)
declare.alias("quantile", quantile, method=True)
nanquantile = _quantile("nanquantile", True)
declare.alias("nanquantile", nanquantile, method=True)


@declare(method=True)
def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    _require_tensors("logcumsumexp", input)
    if not input.dtype.is_floating_point:
        raise _not_implemented("logcumsumexp_out_cpu", input.dtype)
    axis = wrap_dim(dim, input.dim()) if input.dim() else 0
    return apply("LogcumsumexpBackward0", _logcumsumexp_fn, input, axis=axis)


saves("LogcumsumexpBackward0", (0, None), ("result", None))


def _cumulative(name: str, grad_fn: str, largest: bool, result: type):
    def fn(input: Tensor, dim: int):
        _require_tensors(name, input)
        axis = wrap_dim(dim, input.dim()) if input.dim() else 0
        index = _no_grad(_cum_index_fn, input, axis=axis, largest=largest)
        values = apply(grad_fn, _cum_pick_fn, input, index, axis=axis)
        return result(values, index)

    fn.__name__ = name
    return fn


cummax = _cumulative("cummax", "CummaxBackward0", True, _CummaxType)
declare.alias("cummax", cummax, method=True)
saves("CummaxBackward0", (0, None), (1, None))
cummin = _cumulative("cummin", "CumminBackward0", False, _CumminType)
declare.alias("cummin", cummin, method=True)
saves("CumminBackward0", (0, None), (1, None))


@declare(method=True)
def msort(input: Tensor) -> Tensor:
    return sort(input, 0)[0]


@declare(method=True)
def cov(
    input: Tensor,
    *,
    correction: int = 1,
    fweights: Tensor | None = None,
    aweights: Tensor | None = None,
) -> Tensor:
    _require_tensors("cov", input)
    if input.dim() > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an "
            f"input with {input.dim()} dimensions"
        )
    if fweights is not None and fweights.dtype.is_floating_point:
        raise RuntimeError(
            "cov(): expected fweights to have integral dtype but got fweights with "
            f"{fweights.dtype.scalar_type} dtype"
        )
    if aweights is not None and not aweights.dtype.is_floating_point:
        raise RuntimeError(
            "cov(): expected aweights to have floating point dtype but got "
            f"aweights with {aweights.dtype.scalar_type} dtype"
        )
    observations = input.shape[-1] if input.dim() else 1
    for name, w in (("fweights", fweights), ("aweights", aweights)):
        if w is None:
            continue
        if w.dim() > 1:
            raise RuntimeError(
                f"cov(): expected {name} to have one or fewer dimensions but got "
                f"{name} with {w.dim()} dimensions"
            )
        if w.numel() != observations:
            raise RuntimeError(
                f"cov(): expected {name} to have the same numel as there are "
                f"observations in the input but got {w.numel()} != {observations}"
            )
        # lazily: at the next sync point; inside a trace, left out
        check_values([w], _negative, error(f"cov(): {name} cannot be negative"))
    if not input.dtype.is_floating_point:
        input = input.to(_dtype.get_default_dtype())
    return apply(
        "SqueezeBackward0", _cov_fn, input, fweights, aweights, correction=correction
    )


@declare(method=True)
def corrcoef(input: Tensor) -> Tensor:
    _require_tensors("corrcoef", input)
    if input.dim() > 2:
        raise RuntimeError(
            f"corrcoef(): expected input to have two or fewer dimensions but got an "
            f"input with {input.dim()} dimensions"
        )
    if not input.dtype.is_floating_point:
        input = input.to(_dtype.get_default_dtype())
    # torch's steps, each its own node (so its clamp saves the correlations, not
    # the input): cov, divided by the deviations by rows then by columns, clamped
    c = cov(input)
    if c.dim() == 0:
        return c / c
    deviations = c.diagonal().sqrt()
    c = c / deviations[:, None]
    return clamp(c / deviations[None, :], -1, 1)
