"""Blitz 1, "Tensors": ``torch.histogram`` and ``torch.histogramdd`` -- counts
(or summed weights) of values in bins, with the bins' edges, as torch's
``torch.return_types.histogram(hist, bin_edges)``.

The bins are counted as torch's CPU kernel counts them: with a number of bins,
the edges are ``linspace`` over the range (the data's own when ``range`` is not
given: found with the counts, in the same program, so that lazily no pending
work runs at the op) and each value's bin is found by division, then
checked against its neighbouring edges; with edge tensors, by binary search.
Values outside the edges and NaN are left out; the last bin holds its right
edge. Both outputs require grad where an input does, and their backward raises
torch's "derivative ... is not implemented", as torch's ``NotImplemented`` node.
"""

from __future__ import annotations

import builtins
import math
import numbers
from functools import partial
from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import apply, run
from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.ops._funnel import (
    _not_implemented,
    _true_divide,
    _without_derivative,
)
from jaxblitz.compat.ops._search import bisect
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._checks import check_values
from jaxblitz.compat.tensor._dtype import _CPP
from jaxblitz.compat.tensor._tensor_base import TensorBase, _type_name
from jaxblitz.compat.tensor.creation import _TORCH_POINTS, linspace, torch_linspace

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


class _HistogramType(tuple):
    """``torch.return_types.histogram(hist=..., bin_edges=...)``."""

    name = "histogram"

    def __new__(cls, hist: Any, bin_edges: Any) -> Any:
        return super().__new__(cls, (hist, bin_edges))

    hist = property(lambda self: self[0])
    bin_edges = property(lambda self: self[1])

    def __repr__(self) -> str:
        return (
            f"torch.return_types.{self.name}(\nhist={self[0]!r},\n"
            f"bin_edges={self[1]!r})"
        )


# The dtypes torch's histogram kernels count in.
_COUNTED = (_dtype.float32, _dtype.float64)

_HistogramType.__module__ = "torch.return_types"
_HistogramType.__name__ = _HistogramType.__qualname__ = "histogram"
_HistogramddType = type(
    "histogramdd",
    (_HistogramType,),
    {"name": "histogramdd", "__module__": "torch.return_types"},
)

# ---------------------------------------------------------------------------
# Pure JAX functions
# ---------------------------------------------------------------------------


def _bin_of(v, edges, *, linear: bool, local: bool = True):
    """Each value's bin along one dimension (``edges``: its bin edges)."""
    n = edges.shape[0]
    left, right = edges[0], edges[-1]
    if linear:  # torch: LINEAR_INTERPOLATION(_WITH_LOCAL_SEARCH with ``local``)
        pos = _true_divide((v - left) * (n - 1), right - left).astype(jnp.int64)
        pos = jnp.clip(pos, 0, n - 1)  # (values left out land anywhere)
        if not local:  # histc's: the division's bin, the last holding its edge
            return jnp.minimum(pos, n - 2)
        start, end = jnp.maximum(pos - 1, 0), jnp.minimum(pos + 2, n)
        steps = 2
    else:  # BINARY_SEARCH over all the edges
        start, end = jnp.zeros(v.shape, jnp.int64), jnp.full(v.shape, n, jnp.int64)
        steps = n.bit_length()
    pos = bisect(lambda i: edges[i], start, end, v, right=True, steps=steps) - 1
    return jnp.clip(jnp.where(pos == n - 1, pos - 1, pos), 0, n - 2)


def _count(x, *rest, weighted, density, linear, local=True):
    # x: (M, N) values; rest: the (M,) weights if weighted, then N edge vectors
    weight, edges = (rest[0], rest[1:]) if weighted else (None, rest)
    shape = tuple(e.shape[0] - 1 for e in edges)
    size = math.prod(shape)
    index = jnp.zeros(x.shape[0], jnp.int64)
    keep = jnp.ones(x.shape[0], bool)
    for d, e in enumerate(edges):
        v = x[:, d]
        keep &= (v >= e[0]) & (v <= e[-1])  # NaN is left out too
        index = index * shape[d] + _bin_of(v, e, linear=linear, local=local)
    add = jnp.ones(x.shape[0], x.dtype) if weight is None else weight
    hist = (
        jnp.zeros(size, x.dtype).at[jnp.where(keep, index, size)].add(add, mode="drop")
    )
    hist = hist.reshape(shape)
    if density:  # torch: hist / hist.sum(), then / each dimension's bin widths
        hist = _true_divide(hist, jnp.sum(hist))
        for d, e in enumerate(edges):
            widths = (e[1:] - e[:-1]).reshape(
                [-1 if i == d else 1 for i in range(len(edges))]
            )
            hist = _true_divide(hist, widths)
    return hist


def _hist_fn(x, *rest, weighted, density, linear, op):
    count = partial(_count, weighted=weighted, density=density, linear=linear)
    return _without_derivative(op, count, x, *rest)


def _histc_fn(x, edges):
    return _count(x, edges, weighted=False, density=False, linear=True, local=False)


def _edges_fn(edges, *inputs, op):
    return _without_derivative(
        op, lambda e, *_: e + jnp.zeros((), e.dtype), edges, *inputs
    )


def _extent_fn(x):
    return jnp.stack([jnp.min(x, axis=0), jnp.max(x, axis=0)])  # NaN if any


def _value_edges_fn(extent, *, dim, steps, dt, widen):
    """torch's edges over a dimension's values (``extent``: their minima and
    maxima): the extremes in double, an empty range widened by ``widen`` each
    way, then ``linspace`` in the input's dtype."""
    low, high = extent[0, dim].astype(jnp.float64), extent[1, dim].astype(jnp.float64)
    same = low == high
    low, high = jnp.where(same, low - widen, low), jnp.where(same, high + widen, high)
    dt = np.dtype(dt)
    if dt in _TORCH_POINTS:
        return torch_linspace(low, high, steps, dt, jnp)
    return jnp.linspace(low, high, steps, dtype=dt)


def _not_finite_columns(x, *, n):
    finite = ((x - x) == 0).reshape(-1, n).all(axis=0)  # (N,): no NaN, no infinity
    return ~finite, finite


# ---------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------


def _invalid(name: str, *args: Any, **kwargs: Any) -> TypeError:
    got = ", ".join(
        [_type_name(a) for a in args]
        + [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
    )
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({got}), but "
        f"expected one of:\n * (Tensor input, Tensor bins, ...)\n * (Tensor input, "
        "int bins, ...)\n"
    )


def _g(v: float) -> str:
    return f"{v:g}"  # C++'s ostream << double


def _outer_edges(n: int, range: Any) -> list[tuple]:
    """torch's select_outer_bin_edges: each dimension's (leftmost, rightmost)
    edge, from ``range`` (or [0, 1] for no values)."""
    low, high = [0.0] * n, [1.0] * n
    if range is not None:
        range = list(range)
        if len(range) != 2 * n:
            raise RuntimeError(
                f"torch.histogramdd: for a {n}-dimensional histogram range should "
                f"have {2 * n} elements, but got {len(range)}"
            )
        low = [builtins.float(v) for v in range[0::2]]
        high = [builtins.float(v) for v in range[1::2]]
    out = []
    for d in builtins.range(n):
        lo, hi = low[d], high[d]
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(
                f"torch.histogramdd: dimension {d}'s range [{_g(lo)}, {_g(hi)}] is "
                "not finite"
            )
        if lo > hi:
            raise RuntimeError(
                f"torch.histogramdd: min should not exceed max, but got min {_g(lo)} "
                f"max {_g(hi)} for dimension {d}"
            )
        out.append((lo - 0.5, hi + 0.5) if lo == hi else (lo, hi))
    return out


def _nan_name(v: float) -> str:
    return "-nan" if math.copysign(1.0, v) < 0 else "nan"  # C++'s ostream


def check_finite(what: str, x: Tensor, n: int, error: Any) -> None:
    """torch's error for ``x``'s values (points of ``n`` coordinates, the last
    dimension) whose range is not finite -- ``error(column, d)`` of the values
    on the host, made only then -- at the op, or lazily, for pending values, at
    the sync point. ``x`` is the user's tensor: known values, known at once."""
    values = x._value()  # this call's, whatever becomes of the tensor later

    def not_finite(_: Any, d: int) -> Exception:
        return error(np.asarray(values).reshape(-1, n)[:, d], d)

    check_values(
        [x],
        _not_finite_columns,
        not_finite,
        traced=f"{what} without a range (torch checks the values' range)",
        n=n,
    )


def value_edges(x: Tensor, counts: list[int], widen: float) -> list[Tensor]:
    """Each of the (M, N) ``x``'s dimensions' edges over its values' range,
    computed where the values are (pending work stays pending)."""
    extent = run(_extent_fn, x._value())
    dt = x.dtype.np_name
    return [
        TensorBase._wrap(
            run(_value_edges_fn, extent, dim=d, steps=b + 1, dt=dt, widen=widen)
        )
        for d, b in enumerate(counts)
    ]


def _histogramdd_range_error(column: np.ndarray, d: int) -> RuntimeError:
    """torch's histogramdd names the first NaN's sign, else the extremes."""
    nan = np.isnan(column)
    if nan.any():
        low = high = _nan_name(builtins.float(column[nan.argmax()]))
    else:
        low, high = _g(builtins.float(column.min())), _g(builtins.float(column.max()))
    return RuntimeError(
        f"torch.histogramdd: dimension {d}'s range [{low}, {high}] is not finite"
    )


def _check_counts(counts: list[int]) -> None:
    for d, b in enumerate(counts):
        if b <= 0:
            raise RuntimeError(
                f"torch.histogram(): bins must be > 0, but got {b} for dimension {d}"
            )


def _check_edges(x: Tensor, edges: list[Tensor]) -> None:
    for d, e in enumerate(edges):
        if e.dtype is not x.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same "
                f"dtype, but got input with dtype {_CPP[x.dtype.np_name]} and bins for "
                f"dimension {d} with dtype {_CPP[e.dtype.np_name]}"
            )
        if e.dim() != 1:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have one dimension, but got "
                f"{e.dim()} dimensions in the bins tensor for dimension {d}"
            )
        if not e.numel():
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have at least 1 element, but "
                f"got 0 elements in the bins tensor for dimension {d}"
            )


def _check_weight(x: Tensor, weight: Tensor | None) -> None:
    if weight is None:
        return
    if weight.dtype is not x.dtype:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided, input tensor and weight "
            f"tensor should have the same dtype, but got input({_CPP[x.dtype.np_name]})"
            f", and weight({_CPP[weight.dtype.np_name]})"
        )
    if tuple(weight.shape or (1,)) != tuple(x.shape[:-1]):
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same "
            "shape as the input tensor excluding its innermost dimension, but got "
            f"input with shape {list(x.shape)} and weight with shape "
            f"{list(weight.shape)}"
        )


def _histogramdd(
    x: Tensor,
    bins: Any,
    range: Any,
    weight: Tensor | None,
    density: bool,
    op: str,
    given: Tensor,
) -> tuple[Tensor, list[Tensor]]:
    """The (M, N) ``x``'s histogram over ``bins`` (N counts or N edge tensors);
    ``given``: the user's tensor of its values."""
    n = x.shape[-1]
    flat = x.reshape(-1, n)  # (M, N)
    linear = not isinstance(bins[0], TensorBase)
    if linear:
        _check_counts(bins)
        from_values = range is None and flat.numel() > 0
        if from_values and x.dtype not in _COUNTED:  # the extremes in float only
            raise _not_implemented("histogramdd", x.dtype)
        if from_values:
            check_finite(op, given, n, _histogramdd_range_error)
        outer = _outer_edges(n, range)
        if len(bins) != n:
            raise RuntimeError(
                "histogramdd: The size of bins must be equal to the innermost "
                "dimension of the input."
            )
        if from_values:
            edges = value_edges(flat, bins, 0.5)
        else:
            edges = [
                linspace(lo, hi, b + 1, dtype=x.dtype)
                for (lo, hi), b in zip(outer, bins, strict=True)
            ]
    else:
        if len(bins) != n:
            raise RuntimeError(
                f"torch.histogramdd: expected {n} sequences of bin edges for a {n}-"
                f"dimensional histogram but got {len(bins)}"
            )
        _check_edges(x, bins)
        _check_counts([e.numel() - 1 for e in bins])
        edges = list(bins)
    _check_weight(x, weight)
    if x.dtype not in _COUNTED:
        raise _not_implemented("histogram_cpu", x.dtype)
    inputs = [flat] if weight is None else [flat, weight.reshape(-1)]
    static = dict(weighted=weight is not None, density=bool(density), linear=linear)
    hist = apply("NotImplemented", _hist_fn, *inputs, *edges, op=op, **static)
    if hist.requires_grad:  # the edges too: torch's one node makes both
        return hist, [
            apply("NotImplemented", _edges_fn, e, *inputs, op=op) for e in edges
        ]
    return hist, edges if linear else [e.clone() for e in edges]


# ---------------------------------------------------------------------------
# histogram, histogramdd
# ---------------------------------------------------------------------------


def _float_input(name: str, input: Any) -> None:
    if not isinstance(input, TensorBase):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not "
            f"{_type_name(input)}"
        )


def _is_count(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


@declare(method=True)
def histogram(
    input: Tensor,
    bins: Any = 100,
    *,
    range: Any = None,
    weight: Tensor | None = None,
    density: bool = False,
) -> Any:
    """``torch.histogram``: the histogram of all of ``input``'s values, over
    ``bins`` equal bins (within ``range``, else the values' own) or between the
    edges of a 1-D ``bins`` tensor; ``(hist, bin_edges)``."""
    _float_input("histogram", input)
    kwargs = {} if range is None else {"range": range}
    if not (_is_count(bins) or (isinstance(bins, TensorBase) and range is None)):
        raise _invalid("histogram", input, bins, **kwargs)
    if range is not None and not builtins.all(
        isinstance(v, numbers.Real) for v in range
    ):
        raise _invalid("histogram", input, bins, **kwargs)
    flat = input.reshape(input.numel(), 1)
    w = None if weight is None else weight.reshape(weight.numel())
    bins = [builtins.int(bins)] if _is_count(bins) else [bins]
    hist, edges = _histogramdd(flat, bins, range, w, density, "histogram", input)
    return _HistogramType(hist, edges[0])


@declare
def histogramdd(
    input: Tensor,
    bins: Any,
    *,
    range: Any = None,
    weight: Tensor | None = None,
    density: bool = False,
) -> Any:
    """``torch.histogramdd``: the histogram of ``input``'s rows as points in its
    last dimension's N coordinates; ``bins`` an int, N ints or N edge tensors."""
    _float_input("histogramdd", input)
    if input.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if input.dim() < 2:
        raise RuntimeError(
            "torch.histogramdd: input tensor should have at least 2 dimensions"
        )
    n = input.shape[-1]
    if _is_count(bins):
        bins = [builtins.int(bins)] * n
    elif not isinstance(bins, list | tuple) or not (
        builtins.all(_is_count(b) for b in bins)
        or builtins.all(isinstance(b, TensorBase) for b in bins)
    ):
        raise _invalid("histogramdd", input, bins)
    bins = list(bins)
    if not n or not bins:
        raise NotImplementedError(
            "histogramdd of points with 0 coordinates is not supported by "
            "jaxblitz.compat"
        )
    op = "_histogramdd_from_bin_" + ("cts" if _is_count(bins[0]) else "tensors")
    hist, edges = _histogramdd(input, bins, range, weight, density, op, input)
    return _HistogramddType(hist, tuple(edges))


def _histc_range_error(values: np.ndarray, _: int) -> RuntimeError:
    """torch's histc names the extremes as its kernel's min/max make them: a NaN
    the element's own with one element, else -nan (nan for bfloat16)."""
    nan = np.isnan(values)
    if nan.any():
        if values.size == 1:
            low = high = _nan_name(builtins.float(values[0]))
        else:
            low = high = "nan" if values.dtype == _dtype.bfloat16.np else "-nan"
    else:  # its min and max start from the largest finite values, not infinities
        top = builtins.float(jnp.finfo(values.dtype).max)
        low = _g(builtins.min(builtins.float(values.min()), top))
        high = _g(builtins.max(builtins.float(values.max()), -top))
    return RuntimeError(f"torch.histc: range of [{low}, {high}] is not finite")


def histc_counts(input: Tensor, bins: int, min: Any, max: Any) -> Tensor:  # noqa: A002
    """``torch.histc``'s counts, as torch's CPU kernel makes them: edges over
    ``[min, max]`` (the values' own range when the two are equal), each value's
    bin by division alone."""
    flat = input.reshape(input.numel(), 1)
    low, high = builtins.float(min), builtins.float(max)
    if low == high and flat.numel():
        check_finite("histc", input, 1, _histc_range_error)
        edges = value_edges(flat, [bins], 1.0)[0]
    else:
        if low == high:
            low, high = low - 1, high + 1
        if not (math.isfinite(low) and math.isfinite(high)):
            raise RuntimeError(
                f"torch.histc: range of [{_g(low)}, {_g(high)}] is not finite"
            )
        if not low < high:
            raise RuntimeError("torch.histc: max must be larger than min")
        edges = linspace(low, high, bins + 1, dtype=input.dtype)
    return TensorBase._wrap(run(_histc_fn, flat._value(), edges._value()))
