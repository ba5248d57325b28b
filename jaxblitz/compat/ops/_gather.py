"""Blitz 1, "Tensors": picking and placing elements by index or mask -- ``gather``,
``scatter``, ``scatter_add``, ``scatter_reduce``, ``index_select``,
``masked_fill``, ``masked_select``, ``take``, ``nonzero``, ``argwhere`` and
one-argument ``where``.

Index values are read before the op (torch checks their bounds on CPU), so inside
``torch.compile`` an index tensor is a value the step needs. Ops whose result's
size depends on values (``masked_select``, ``nonzero``) count first, then run the
jitted op for that size. Gradients are JAX's of the same forward, which are
torch's: gather's is a scatter-add, index_select's an index_add, scatter's to its
``src`` a gather (given to every duplicate, as torch's, by a custom VJP).
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply, run
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._funnel import (
    _no_grad,
    _not_implemented,
    _require_tensors,
    _value,
)
from jaxblitz.compat.ops._unary import where as _where3
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._argparse import must_be
from jaxblitz.compat.tensor._checks import check_range
from jaxblitz.compat.tensor._dtype import _CPP
from jaxblitz.compat.tensor._tensor_base import TensorBase, wrap_dim

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

# ---------------------------------------------------------------------------
# Pure JAX functions
# ---------------------------------------------------------------------------


def _coords(index, axis):
    """Every element of ``index`` as a full coordinate into the target: its own
    position, with ``axis`` replaced by its value (torch's scatter/gather rule)."""
    grid = list(jnp.indices(index.shape, sparse=True))
    grid[axis] = index
    return tuple(grid)


def _gather_fn(x, index, *, axis):
    if not index.size:  # torch checks nothing about an empty index
        return jnp.zeros(index.shape, x.dtype)
    if x.ndim == 0:  # torch: a 0-d tensor gathers as one of size 1
        return jnp.broadcast_to(x, index.shape)
    return x[_coords(index, axis)]


def _scatter_set(x, index, src, axis):
    if x.ndim == 0:
        return jnp.broadcast_to(src, ()) if index.size else x
    return x.at[_coords(index, axis)].set(src)


@partial(jax.custom_vjp, nondiff_argnums=(3,))
def _scatter_src(x, index, src, axis):
    return _scatter_set(x, index, src, axis)


def _scatter_src_fwd(x, index, src, axis):
    return _scatter_set(x, index, src, axis), index


def _scatter_src_bwd(axis, index, g):
    # torch: self gets grad.scatter(dim, index, 0), src gets grad.gather(dim, index)
    zero = jnp.zeros(index.shape, g.dtype)
    return _scatter_set(g, index, zero, axis), None, _gather_fn(g, index, axis=axis)


_scatter_src.defvjp(_scatter_src_fwd, _scatter_src_bwd)


def _trim(src, shape):
    """``src`` cut down to ``shape`` (torch reads only index's extent of src)."""
    src = jnp.asarray(src)
    if src.ndim == 0:
        return jnp.broadcast_to(src, shape)
    return src[tuple(slice(0, n) for n in shape)]


def _scatter_fn(x, index, src, *, axis, reduce):
    if x.ndim == 0:
        x, index = x.reshape(1), index.reshape(-1)
        src = jnp.reshape(src, (-1,)) if jnp.ndim(src) else src
        return _scatter_fn(x, index, src, axis=0, reduce=reduce).reshape(())
    index = index.reshape(-1) if index.ndim == 0 else index  # torch: as size 1
    src = _trim(src, index.shape).astype(x.dtype)
    if reduce is None:
        return _scatter_src(x, index, src, axis)
    if x.dtype == jnp.bool_:  # bools add as or, multiply as and
        out = _scatter_fn(x.astype(jnp.int8), index, src, axis=axis, reduce=reduce)
        return out != 0
    at = x.at[_coords(index, axis)]
    return at.add(src) if reduce == "add" else at.multiply(src)


_IDENTITY = {"sum": 0, "prod": 1, "mean": 0}


def _scatter_reduce_fn(x, index, src, *, axis, reduce, include_self):
    if x.ndim == 0:
        x, index, src = x.reshape(1), index.reshape(-1), src.reshape(-1)
        out = _scatter_reduce_fn(
            x, index, src, axis=0, reduce=reduce, include_self=include_self
        )
        return out.reshape(())
    src = _trim(src, index.shape)
    if x.dtype == jnp.bool_:  # as ints, then back: sum is or, prod is and
        out = _scatter_reduce_fn(
            x.astype(jnp.int8),
            index,
            src.astype(jnp.int8),
            axis=axis,
            reduce=reduce,
            include_self=include_self,
        )
        return out != 0
    where = _coords(index, axis)
    hit = jnp.zeros(x.shape, bool).at[where].set(True)
    if reduce in ("amax", "amin"):
        big = jnp.finfo if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo
        start = big(x.dtype).min if reduce == "amax" else big(x.dtype).max
    else:
        start = _IDENTITY[reduce]
    base = x if include_self else jnp.where(hit, jnp.asarray(start, x.dtype), x)
    at = base.at[where]
    if reduce in ("sum", "mean"):
        out = at.add(src)
    elif reduce == "prod":
        out = at.multiply(src)
    else:
        out = at.max(src) if reduce == "amax" else at.min(src)
    if reduce == "mean":
        count = jnp.zeros(x.shape, x.dtype).at[where].add(1)
        count = count + (1 if include_self else 0)
        count = jnp.where(count == 0, 1, count)
        if jnp.issubdtype(x.dtype, jnp.floating):
            out = jnp.where(hit, out / count, out)
        else:
            out = jnp.where(hit, jnp.floor_divide(out, count), out)
    return out


def _index_select_fn(x, index, *, axis):
    if x.ndim == 0:  # torch: a 0-d tensor gives a 0-d tensor
        return x + jnp.zeros((), x.dtype)
    return jnp.take(x, index.reshape(-1), axis=axis)


def _masked_fill_fn(x, mask, value, *, shape):
    value = jnp.asarray(value).astype(x.dtype)
    return jnp.where(jnp.broadcast_to(mask, shape), value, jnp.broadcast_to(x, shape))


def _masked_select_fn(x, mask, *, shape, n):
    shape = shape or (1,)  # a 0-d pair selects from one element
    mask = jnp.broadcast_to(mask, shape)
    return jnp.broadcast_to(x, shape)[jnp.nonzero(mask, size=n)]


def _count_fn(x):
    return jnp.count_nonzero(x)


def _nonzero_fn(x, *, n, column):
    if x.ndim == 0:  # torch: a 0-d tensor answers as one of size 1
        return jnp.zeros((n,) if column is not None else (n, 0), jnp.int64)
    found = jnp.nonzero(x, size=n)
    if column is not None:
        return found[column].astype(jnp.int64)
    return jnp.stack(found, axis=1).astype(jnp.int64)


def _take_fn(x, index):
    return jnp.take(x.reshape(-1), index, mode="wrap")


# ---------------------------------------------------------------------------
# Checks (torch's wording)
# ---------------------------------------------------------------------------


def _check_index(
    index: Tensor, what: str, low: int, high: int, error: Callable
) -> None:
    """torch's bounds check of ``index`` (:func:`check_range`)."""
    traced = f"{what} (torch checks the index's bounds)"
    check_range(index, low, high, error, traced=traced)


def _check_in_bounds(index: Tensor, what: str, size: int, dim: int) -> None:
    _check_index(
        index,
        what,
        0,
        size,
        lambda value, _: RuntimeError(
            f"index {value} is out of bounds for dimension {dim} with size {size}"
        ),
    )


def _check_gather(name: str, input: Tensor, dim: int, index: Tensor, src=None):
    _require_tensors(name, input, index)
    if not index.numel():  # torch checks nothing about an empty index
        return
    if index.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    in_dims, idx_dims = builtins.max(input.dim(), 1), builtins.max(index.dim(), 1)
    if idx_dims != in_dims:
        raise RuntimeError(
            "Index tensor must have the same number of dimensions as "
            f"{'input' if name == 'gather' else 'self'} tensor"
        )
    shape_in = list(input.shape) or [1]
    shape_idx = list(index.shape) or [1]
    if name == "gather":
        for d in range(in_dims):
            if d != dim and shape_idx[d] > shape_in[d]:
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index "
                    f"{list(index.shape)} to be no larger than self "
                    f"{list(input.shape)} apart from dimension {dim}"
                )
    if isinstance(src, TensorBase):
        shape_src = list(src.shape) or [1]
        if len(shape_src) != in_dims:
            raise RuntimeError(
                "Index tensor must have the same number of dimensions as src tensor"
            )
        for d in range(in_dims):
            if (d != dim and shape_idx[d] > shape_in[d]) or shape_idx[d] > shape_src[d]:
                raise RuntimeError(
                    f"Expected index {list(index.shape)} to be no larger than self "
                    f"{list(input.shape)} apart from dimension {dim} and to be no "
                    f"larger size than src {list(src.shape)}"
                )
    _check_in_bounds(index, name, shape_in[dim], dim)


# ---------------------------------------------------------------------------
# torch.gather / scatter / scatter_add / scatter_reduce
# ---------------------------------------------------------------------------


@declare(method=True)
def gather(
    input: Tensor,
    dim: int,
    index: Tensor,
    *,
    sparse_grad: bool = False,
) -> Tensor:
    """``torch.gather``: ``out[i][j] = input[i][index[i][j]]`` (dim=1)."""
    _require_tensors("gather", input)
    if not isinstance(index, TensorBase):  # (torch.gather(x, 1, i) says position 3)
        raise must_be("gather", "index", "Tensor", index, 2)
    dim = wrap_dim(dim, input.dim())
    _check_gather("gather", input, dim, index)
    return apply("GatherBackward0", _gather_fn, input, index, axis=dim)


saves("GatherBackward0", (0, None), (1, None))


def _scatter_args(name: str, input: Tensor, dim: int, index: Tensor, src: Any):
    _require_tensors(name, input, index)
    dim = wrap_dim(dim, input.dim())
    # torch: the whole family's dtype checks are scatter's, in its words
    if index.numel() and index.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if isinstance(src, TensorBase) and src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _check_gather(name, input, dim, index, src)
    return dim


def _require_src(name: str, src: Any) -> None:
    if not isinstance(src, TensorBase):
        raise TypeError(
            f"{name}(): argument 'src' (position 4) must be Tensor, not "
            f"{type(src).__name__}"
        )


@declare(method=True, inplace=True)
def scatter(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Any = None,
    *,
    value: Any = None,
    reduce: str | None = None,
) -> Tensor:
    """``torch.scatter``: ``out[i][index[i][j]] = src[i][j]`` (dim=1), or ``value``."""
    src = value if src is None else src
    if src is None:
        raise TypeError("scatter() missing required argument 'src' (or 'value')")
    dim = _scatter_args("scatter", input, dim, index, src)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if isinstance(src, TensorBase):
            warnings.warn(
                "The reduce argument of torch.scatter with Tensor src is deprecated "
                "and will be removed in a future PyTorch release. Use "
                "torch.scatter_reduce instead for more reduction options.",
                UserWarning,
                stacklevel=2,
            )
        if input.requires_grad or (isinstance(src, TensorBase) and src.requires_grad):
            raise NotImplementedError(
                "scatter(reduce=...) with autograd is not supported by "
                "jaxblitz.compat (torch has no derivative for it); use scatter_reduce"
            )
    name = "ScatterBackward0" if isinstance(src, TensorBase) else "ScatterBackward1"
    return apply(name, _scatter_fn, input, index, _value(src), axis=dim, reduce=reduce)


saves("ScatterBackward0", (1, None))
saves("ScatterBackward1", (1, None))


@declare(method=True, inplace=True)
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    if _autocast.on:
        return _autocast.run("scatter_add", scatter_add, input, dim, index, src)
    _require_src("scatter_add", src)
    dim = _scatter_args("scatter_add", input, dim, index, src)
    return apply(
        "ScatterAddBackward0", _scatter_fn, input, index, src, axis=dim, reduce="add"
    )


saves("ScatterAddBackward0", (1, None))


@declare(method=True, inplace=True)
def scatter_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
) -> Tensor:
    """``torch.scatter_reduce``: sum, prod, mean, amax or amin of what lands where."""
    _require_src("scatter_reduce", src)
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # torch's aliases
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(
            "reduce argument must be either sum, prod, mean, amax or amin, got "
            f"{reduce}"
        )
    if reduce == "mean" and input.dtype is _dtype.bool:
        raise _not_implemented("scatter_gather_tensor_cpu_reduce_mean", input.dtype)
    dim = _scatter_args("scatter_reduce", input, dim, index, src)
    if reduce in ("prod", "amax", "amin") and (
        input.requires_grad or src.requires_grad
    ):
        raise NotImplementedError(
            f"scatter_reduce(reduce={reduce!r}) with autograd is not supported by "
            "jaxblitz.compat (torch's gradient splits ties and zeros its own way)"
        )
    return apply(
        "ScatterReduceBackward0",
        _scatter_reduce_fn,
        input,
        index,
        src,
        axis=dim,
        reduce=reduce,
        include_self=bool(include_self),
    )


saves("ScatterReduceBackward0", (0, None), (1, None), (2, None), ("result", None))


# ---------------------------------------------------------------------------
# index_select, take, masked_fill, masked_select
# ---------------------------------------------------------------------------


@declare(method=True)
def index_select(input: Tensor, dim: int, index: Tensor):
    _require_tensors("index_select", input)
    if not isinstance(index, TensorBase):  # (as a method; torch.index_select: 3)
        raise must_be("index_select", "index", "Tensor", index, 2)
    dim = wrap_dim(dim, input.dim())
    if not isinstance(index, TensorBase) or index.dtype not in (
        _dtype.int64,
        _dtype.int32,
    ):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    size = input.shape[dim] if input.dim() else 1
    _check_index(
        index,
        "index_select",
        0,
        size,
        lambda *_: IndexError("index out of range in self"),
    )
    return apply("IndexSelectBackward0", _index_select_fn, input, index, axis=dim)


saves("IndexSelectBackward0", (1, None))


@declare(method=True)
def take(input: Tensor, index: Tensor) -> Tensor:
    _require_tensors("take", input)
    if index.dtype is not _dtype.int64:
        raise RuntimeError(
            "take(): Expected a long tensor for index, but got "
            f"{index.dtype.scalar_type}"
        )
    _check_flat(index, "take", input.numel())
    return apply("TakeBackward0", _take_fn, input, index)


saves("TakeBackward0", (0, None), (1, None))


def _check_flat(index: Tensor, what: str, n: int) -> None:
    """torch's bounds check of flat indices into ``n`` elements (take, put)."""
    _check_index(
        index,
        what,
        -n,
        n,
        lambda value, _: IndexError(
            f"out of range: tried to access index {value} on a tensor of {n} elements."
        ),
    )


def _is_bool_mask(mask: Any) -> bool:
    return isinstance(mask, TensorBase) and mask.dtype is _dtype.bool


@declare(method=True, inplace=True)
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``torch.masked_fill``: ``value`` where ``mask`` (broadcast) is True."""
    _require_tensors("masked_fill", input)
    _require_tensors("masked_fill", input, mask)
    if not _is_bool_mask(mask):
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{_CPP[mask.dtype.np_name]}"
        )
    if isinstance(value, TensorBase) and value.dim():
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
            f"with {value.dim()} dimension(s)."
        )
    shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(mask.shape)))
    name = (
        "MaskedFillBackward1"
        if isinstance(value, TensorBase)
        else ("MaskedFillBackward0")
    )
    return apply(name, _masked_fill_fn, input, mask, _value(value), shape=shape)


saves("MaskedFillBackward0", (1, None))
saves("MaskedFillBackward1", (1, None))


@declare(method=True)
def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    _require_tensors("masked_select", input)
    _require_tensors("masked_select", input, mask)
    if not _is_bool_mask(mask):
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(mask.shape)))
    mask._needs_value("masked_select (its size depends on the mask)")
    full = np.broadcast_to(np.asarray(mask._data), shape)
    n = builtins.int(full.sum())
    return apply(
        "MaskedSelectBackward0", _masked_select_fn, input, mask, shape=shape, n=n
    )


saves("MaskedSelectBackward0", (0, None), (1, None))


# ---------------------------------------------------------------------------
# nonzero, argwhere, where(condition)
# ---------------------------------------------------------------------------


@declare(method=True)
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """Indices of the nonzero elements: ``(n, ndim)``, or one vector per dim."""
    _require_tensors("nonzero", input)
    input._needs_value("nonzero (its size depends on the values)")
    n = builtins.int(run(_count_fn, input._data))
    if not as_tuple:
        return _no_grad(_nonzero_fn, input, n=n, column=None)
    columns = range(builtins.max(input.dim(), 1))
    return tuple(_no_grad(_nonzero_fn, input, n=n, column=d) for d in columns)


def _nonzero_static_fn(x, *, size, fill):
    if x.ndim == 0:  # torch: a 0-d tensor's rows have no columns
        return jnp.zeros((size, 0), jnp.int64)
    if not x.size:  # (jnp.nonzero pads an empty input with zeros, not fill)
        return jnp.full((size, x.ndim), fill, jnp.int64)
    found = jnp.nonzero(x, size=size, fill_value=fill)
    return jnp.stack(found, axis=1).astype(jnp.int64)


@declare(method=True)
def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero`` with a fixed number of rows: the first ``size`` nonzero
    elements' indices, rows of ``fill_value`` after them. Its shape does not
    depend on the values, so, lazily, it runs no work early."""
    _require_tensors("nonzero_static", input)
    if not isinstance(size, builtins.int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    return _no_grad(_nonzero_static_fn, input, size=size, fill=builtins.int(fill_value))


@declare(method=True)
def argwhere(input: Tensor) -> Tensor:
    return nonzero(input)


@declare
def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """``torch.where(condition, input, other)``, or ``where(condition)``:
    ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    return _where3(condition, input, other)
