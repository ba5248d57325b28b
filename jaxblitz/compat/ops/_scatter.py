"""Blitz 1, "Tensors": writing into a copy by index or mask -- ``index_copy``,
``index_fill``, ``index_put``, ``index_reduce``, ``masked_scatter``, ``put``,
``take_along_dim`` and the ``*_scatter`` ops that embed a tensor where a view
(``select``, ``slice``, ``diagonal``, ``as_strided``) would read it -- and their
in-place forms through :class:`ScatterMixin`.

Each is a pure JAX function through :func:`graph.apply` under torch's grad_fn
name; gradients are JAX's of the same forward. Index values are read before the
op, as torch checks their bounds on CPU.
"""

from __future__ import annotations

import builtins
import math
from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.grad_mode import is_grad_enabled, no_grad
from jaxblitz.compat.autograd.graph import AutogradMixin, apply
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._funnel import _require_tensors, _value
from jaxblitz.compat.ops._gather import (
    _check_flat,
    _check_index,
    _is_bool_mask,
    _scatter_reduce_fn,
    gather,
    where,
)
from jaxblitz.compat.ops._order import _numpy
from jaxblitz.compat.ops.inplace import _in_place
from jaxblitz.compat.ops.shape_ops import (
    _build,
    _fit_value,
    _parts,
    _set_fn,
    _spec,
    as_strided,
    broadcast_shapes,
    diagonal,
    mask_fill,
    mask_where_value,
    select,
)
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._checks import check_values, error
from jaxblitz.compat.tensor._tensor_base import TensorBase, wrap_dim
from jaxblitz.compat.tensor.creation import arange, full, tensor

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

# ---------------------------------------------------------------------------
# Pure JAX functions
# ---------------------------------------------------------------------------


def _along(x, dim, index):
    """``x``'s coordinates ``index`` along ``dim`` (a 0-d ``x`` as size 1)."""
    return (slice(None),) * dim + (index.reshape(-1),)


def _index_copy_fn(x, index, source, *, dim):
    shape = x.shape
    if not x.ndim:
        x, source = x.reshape(1), jnp.reshape(source, (-1,))
    source = jnp.reshape(source, x[_along(x, dim, index)].shape)
    return x.at[_along(x, dim, index)].set(source.astype(x.dtype)).reshape(shape)


def _index_fill_fn(x, index, value, *, dim):
    shape = x.shape
    x = x.reshape(1) if not x.ndim else x
    value = jnp.asarray(value).astype(x.dtype)
    return x.at[_along(x, dim, index)].set(value).reshape(shape)


def _index_put_fn(x, value, *arrays, spec, accumulate):
    if not accumulate:
        return _set_fn(x, value, *arrays, spec=spec)
    value = jnp.asarray(value)
    if x.dtype == jnp.bool_:  # bools add as or
        out = x.astype(jnp.int8).at[_build(spec, arrays)].add(value.astype(jnp.int8))
        return out != 0
    return x.at[_build(spec, arrays)].add(value.astype(x.dtype))


def _masked_scatter_fn(x, mask, source, *, shape):
    x, mask = jnp.broadcast_to(x, shape), jnp.broadcast_to(mask, shape)
    flat = source.reshape(-1)
    if not flat.size:
        return x
    position = jnp.clip(jnp.cumsum(mask.reshape(-1)) - 1, 0, flat.size - 1)
    return jnp.where(mask, flat[position].reshape(shape).astype(x.dtype), x)


def _put_fn(x, index, source, *, accumulate):
    flat, index = x.reshape(-1), index.reshape(-1) % builtins.max(x.size, 1)
    work = jnp.int8 if x.dtype == jnp.bool_ else x.dtype  # bools add as or
    flat, source = flat.astype(work), source.reshape(-1).astype(work)
    out = flat.at[index].add(source) if accumulate else flat.at[index].set(source)
    return (out != 0 if x.dtype == jnp.bool_ else out).reshape(x.shape)


def _index_reduce_fn(x, index, source, *, dim, reduce, include_self):
    """torch's index_reduce as a scatter_reduce over ``index`` broadcast along
    the other dimensions."""
    shape = x.shape
    if not x.ndim:
        x, source = x.reshape(1), jnp.reshape(source, (-1,))
    view = [1] * x.ndim
    view[dim] = -1
    full = jnp.broadcast_to(index.reshape(view), source.shape)
    out = _scatter_reduce_fn(
        x, full, source, axis=dim, reduce=reduce, include_self=include_self
    )
    return out.reshape(shape)


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------


def _index_vector(name: str, index: Any, size: int, dim: int, wording: str) -> None:
    """torch's checks on the index of index_copy/index_fill/index_reduce."""
    if not isinstance(index, TensorBase):
        raise TypeError(f"{name}(): argument 'index' must be Tensor")
    if wording == "reduce" and index.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(
            f"{name}_(): Expected dtype int32/int64 for index but got: "
            f"{index.dtype.scalar_type}"
        )
    if wording != "reduce" and index.dtype is not _dtype.int64:
        raise (IndexError if wording == "fill" else RuntimeError)(
            f"{name}_(): Expected dtype int64 for index."
            if wording == "fill"
            else f"{name}_(): Expected a long tensor for index, but got "
            f"{index.dtype.scalar_type}"
        )
    if index.dim() > 1:
        raise (RuntimeError if wording == "fill" else IndexError)(
            "Index has to be a vector/scalar"
            if wording == "fill"
            else f"{name}_(): Index should have dimension 1 or 0 (got {index.dim()})"
        )
    low = -size if wording == "fill" else 0
    prefix = "" if wording == "fill" else f"{name}_(): "
    _check_index(
        index,
        name,
        low,
        size,
        (lambda *_: IndexError("index out of range in self"))
        if wording == "reduce"
        else lambda value, _: IndexError(
            f"{prefix}index {value} is out of bounds for dimension {dim} "
            f"with size {size}"
        ),
    )


def _same_slices(name: str, input: Tensor, dim: int, index: Tensor, source: Tensor):
    shape_in, shape_src = list(input.shape) or [1], list(source.shape) or [1]
    if (
        input.dim()
        and source.dim()
        and (
            len(shape_in) != len(shape_src)
            or any(
                a != b
                for d, (a, b) in enumerate(zip(shape_in, shape_src, strict=False))
                if d != dim
            )
        )
    ):
        for d, (a, b) in enumerate(zip(shape_in, shape_src, strict=False)):
            if d != dim and a != b:
                d = d if d < dim else d - 1  # torch counts the slice's dimensions
                raise RuntimeError(
                    f"{name}_(): Source/destination tensor must have same slice "
                    f"shapes. Destination slice shape: {a} at dimension {d} and "
                    f"source slice shape: {b} at dimension {d}."
                )
        raise RuntimeError(
            f"{name}_(): When source and destination are not scalars, their "
            "dimensionality must match. Source dimensionality "
            f"({source.dim()}), destination dimensionality ({input.dim()})"
        )
    counted = shape_src[dim] if source.dim() else 1
    if counted != index.numel():
        raise RuntimeError(
            f"{name}_(): Number of indices ({index.numel()}) should be equal to "
            f"source.size(dim) ({counted})"
        )


# ---------------------------------------------------------------------------
# The ops
# ---------------------------------------------------------------------------


def _index_source_args(
    name: str, input: Tensor, dim: int, index: Tensor, source: Tensor, wording: str
) -> int:
    """torch's checks of index_copy/index_reduce's index and source; the dim."""
    dim = wrap_dim(dim, input.dim())
    size = input.shape[dim] if input.dim() else 1
    _index_vector(name, index, size, dim, wording)
    _same_slices(name, input, dim, index, source)
    if source.dtype is not input.dtype:
        raise RuntimeError(
            f"{name}_(): self and source expected to have the same dtype, but "
            f"got (self) {input.dtype.scalar_type} and (source) "
            f"{source.dtype.scalar_type}"
        )
    return dim


@declare
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``torch.index_copy``: ``source``'s slices written at ``index`` along ``dim``."""
    if _autocast.on:
        return _autocast.run("index_copy", index_copy, input, dim, index, source)
    _require_tensors("index_copy", input)
    _require_tensors("index_copy", source)
    dim = _index_source_args("index_copy", input, dim, index, source, "copy")
    return apply("IndexCopyBackward0", _index_copy_fn, input, index, source, dim=dim)


saves("IndexCopyBackward0", (1, None), (2, 2))


@declare
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """``torch.index_fill``: ``value`` at ``index`` along ``dim``."""
    _require_tensors("index_fill", input)
    dim = wrap_dim(dim, input.dim())
    size = input.shape[dim] if input.dim() else 1
    _index_vector("index_fill", index, size, dim, "fill")
    if isinstance(value, TensorBase) and value.dim():
        raise RuntimeError(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor "
            f"with {value.dim()} dimension(s)."
        )
    name = (
        "IndexFillBackward1"
        if isinstance(value, TensorBase)
        else ("IndexFillBackward0")
    )
    return apply(name, _index_fill_fn, input, index, _value(value), dim=dim)


saves("IndexFillBackward0", (1, 0))


@declare
def index_put(
    input: Tensor, indices: Any, values: Tensor, accumulate: bool = False
) -> Tensor:
    """``torch.index_put``: ``input[indices] = values`` (``+=`` with
    ``accumulate``) on a copy."""
    if _autocast.on:
        return _autocast.run("index_put", index_put, input, indices, values, accumulate)
    _require_tensors("index_put", input)
    if not isinstance(indices, tuple | list):
        raise TypeError(
            "index_put(): argument 'indices' must be tuple of Tensors, not "
            f"{type(indices).__name__}"
        )
    if len(indices) > builtins.max(input.dim(), 1):
        raise IndexError(
            f"too many indices for tensor of dimension {input.dim()} (got "
            f"{len(indices)})"
        )
    index = tuple(slice(None) if i is None else i for i in indices)
    if not isinstance(values, TensorBase):
        raise TypeError("index_put(): argument 'values' must be Tensor")
    if values.dtype is not input.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{input.dtype.scalar_type} for the destination and "
            f"{values.dtype.scalar_type} for the source."
        )
    if len(index) == 1 and not accumulate:  # a mask and one value: a `where`
        value = mask_where_value(input, index[0], values)
        if value is not None:
            return mask_fill(input, value, index[0])
    parts = _parts(index)
    spec, arrays, _ = _spec(index, tuple(input.shape), parts)
    values = _fit_value(values, spec, arrays, input)
    return apply(
        "IndexPutBackward0",
        _index_put_fn,
        input,
        values,
        *arrays,
        spec=spec,
        accumulate=bool(accumulate),
    )


def _too_many_ones(mask, *, repeats, available):
    """Whether the mask, broadcast (each element ``repeats`` times), has more
    ones than the source has elements."""
    ones = mask.astype("int64").sum() * repeats
    return ones > available, ones


@declare
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``torch.masked_scatter``: ``source``'s elements, in order, where ``mask``."""
    _require_tensors("masked_scatter", input, mask)
    _require_tensors("masked_scatter", source)
    if not _is_bool_mask(mask):
        raise RuntimeError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{mask.dtype.scalar_type}"
        )
    if source.dtype is not input.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{input.dtype.scalar_type} and {source.dtype.scalar_type}"
        )
    shape = tuple(broadcast_shapes(tuple(input.shape), tuple(mask.shape)))
    # the count decides no shape: lazily, checked at the next sync point
    check_values(
        [mask],
        _too_many_ones,
        error("Number of elements of source < number of ones in mask"),
        traced="masked_scatter (torch counts the mask)",
        repeats=math.prod(shape) // max(mask.numel(), 1),
        available=source.numel(),
    )
    return apply(
        "MaskedScatterBackward0", _masked_scatter_fn, input, mask, source, shape=shape
    )


saves("MaskedScatterBackward0", (1, None))


@declare
def put(
    input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False
) -> Tensor:
    """``torch.put``: ``source`` at the flat positions ``index`` (negatives count
    from the end), added with ``accumulate``."""
    _require_tensors("put", input)
    if index.dtype is not _dtype.int64:
        raise RuntimeError(
            "put_(): Expected a long tensor for index, but got "
            f"{index.dtype.scalar_type}"
        )
    if source.dtype is not input.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got "
            f"self.dtype = {input.dtype.scalar_type} and source.dtype = "
            f"{source.dtype.scalar_type}"
        )
    if index.numel() != source.numel():
        raise RuntimeError(
            f"put_(): Expected source and index to have the same number of "
            f"elements, but got source.numel() = {source.numel()}, index.numel() = "
            f"{index.numel()}"
        )
    _check_flat(index, "put", input.numel())
    return apply(
        "PutBackward0", _put_fn, input, index, source, accumulate=bool(accumulate)
    )


saves("PutBackward0", (1, None), (2, 2))


@declare
def index_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    source: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
) -> Tensor:
    """``torch.index_reduce``: prod, mean, amax or amin of what lands at each
    index along ``dim`` (with the element there, ``include_self``)."""
    _require_tensors("index_reduce", input)
    _require_tensors("index_reduce", source)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin "
            f"but got {reduce}."
        )
    dim = _index_source_args("index_reduce", input, dim, index, source, "reduce")
    if reduce != "mean" and (input.requires_grad or source.requires_grad):
        raise NotImplementedError(
            f"index_reduce(reduce={reduce!r}) with autograd is not supported by "
            "jaxblitz.compat (torch's gradient splits ties and zeros its own way)"
        )
    return apply(
        "IndexReduceBackward0",
        _index_reduce_fn,
        input,
        index,
        source,
        dim=dim,
        reduce=reduce,
        include_self=bool(include_self),
    )


saves("IndexReduceBackward0", (0, None), (1, None), (2, None), ("result", None))


@declare
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``torch.take_along_dim``: ``gather`` with ``indices`` broadcast against
    ``input`` except along ``dim``; without ``dim``, of the flattened input."""
    _require_tensors("take_along_dim", input, indices)
    if indices.dtype is not _dtype.int64:
        raise RuntimeError(
            "torch.take_along_dim(): dtype of indices should be Long but got "
            f"{indices.dtype.scalar_type}"
        )
    if dim is None:
        flat = input.reshape(-1)
        return gather(flat, 0, _wrapped(indices.reshape(-1), flat.numel()))
    dim = wrap_dim(dim, input.dim())
    if input.dim() != indices.dim():
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number "
            f"of dimensions, but got {input.dim()} dimensions for input, and "
            f"{indices.dim()} dimensions for indices"
        )
    shape_in, shape_idx = list(input.shape), list(indices.shape)
    shape_in[dim] = shape_idx[dim] = 1
    common = list(broadcast_shapes(tuple(shape_in), tuple(shape_idx)))
    want_in, want_idx = list(common), list(common)
    if input.dim():
        want_in[dim], want_idx[dim] = input.shape[dim], indices.shape[dim]
    indices = _wrapped(indices, input.shape[dim] if input.dim() else 1)
    return gather(input.broadcast_to(want_in), dim, indices.broadcast_to(want_idx))


def _wrapped(indices: Tensor, size: int) -> Tensor:
    """Negative indices counted from the end, as take_along_dim takes them."""
    return where(indices < 0, indices + size, indices)


def _embed(name: str, input: Tensor, src: Tensor, view: Any) -> Tensor:
    """``input`` with ``src`` where ``view(x)`` reads ``x``: the view taken of
    ``input``'s element numbers (so its checks are the view's), then a scatter."""
    _require_tensors(name, input)
    _require_tensors(name, src)
    positions = view(arange(input.numel()).reshape(input.shape))
    if tuple(src.shape) != tuple(positions.shape):
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(positions.shape)}"
        )
    return apply(_NODE[name], _embed_fn, input, src, positions.contiguous())


def _embed_fn(x, src, positions):
    flat = x.reshape(-1).at[positions.reshape(-1)].set(src.reshape(-1).astype(x.dtype))
    return flat.reshape(x.shape)


_NODE = {
    "select_scatter": "SelectScatterBackward0",
    "slice_scatter": "SliceScatterBackward0",
    "diagonal_scatter": "DiagonalScatterBackward0",
    "as_strided_scatter": "AsStridedScatterBackward0",
}


@declare
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """``torch.select_scatter``: ``input`` with ``src`` as ``select(dim, index)``."""
    return _embed("select_scatter", input, src, lambda x: select(x, dim, index))


@declare
def slice_scatter(
    input: Tensor,
    src: Tensor,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
) -> Tensor:
    """``torch.slice_scatter``: ``input`` with ``src`` as ``input[..., start:end:step]``
    along ``dim``."""

    def view(x: Tensor) -> Tensor:
        d = wrap_dim(dim, x.dim())
        return x[(slice(None),) * d + (slice(start, end, step),)]

    return _embed("slice_scatter", input, src, view)


@declare
def diagonal_scatter(
    input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1
) -> Tensor:
    """``torch.diagonal_scatter``: ``input`` with ``src`` as its diagonal."""
    return _embed(
        "diagonal_scatter", input, src, lambda x: diagonal(x, offset, dim1, dim2)
    )


@declare
def as_strided_scatter(
    input: Tensor,
    src: Tensor,
    size: Any,
    stride: Any,
    storage_offset: int | None = None,
) -> Tensor:
    """``torch.as_strided_scatter``: ``input`` with ``src`` where
    ``input.as_strided(size, stride, storage_offset)`` reads it."""
    if isinstance(input, TensorBase) and input.requires_grad and is_grad_enabled():
        raise NotImplementedError(
            "as_strided_scatter with input.requires_grad is not supported by "
            "jaxblitz.compat (torch's gradient for input keeps the scattered "
            "positions instead of zeroing them)"
        )
    return _embed(
        "as_strided_scatter",
        input,
        src,
        lambda x: as_strided(x, size, stride, storage_offset),
    )


@declare
def unique_consecutive(
    input: Tensor,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """``torch.unique_consecutive``: each run of equal elements (or, with ``dim``,
    of equal slices) kept once."""
    _require_tensors("unique_consecutive", input)
    a = _numpy(input, "unique_consecutive")
    if dim is None:
        work = a.reshape(-1, 1)
    else:
        axis = wrap_dim(dim, input.dim())
        work = np.moveaxis(a, axis, 0)
        work = work.reshape(work.shape[0], int(np.prod(work.shape[1:])))
    n = work.shape[0]
    starts = np.ones(n, bool)
    if n > 1:
        starts[1:] = (work[1:] != work[:-1]).any(axis=1)
    picked = np.flatnonzero(starts)
    values = a.reshape(-1)[picked] if dim is None else np.take(a, picked, axis=axis)
    out = [tensor(values, dtype=input.dtype)]
    if return_inverse:
        inverse = np.cumsum(starts) - 1
        out.append(
            tensor(
                inverse.reshape(a.shape if dim is None else (n,)), dtype=_dtype.int64
            )
        )
    if return_counts:
        out.append(tensor(np.diff(np.append(picked, n)), dtype=_dtype.int64))
    return out[0] if len(out) == 1 else tuple(out)


def _diagonal_positions(self: Tensor, wrap: bool) -> np.ndarray:
    """Flat positions of ``fill_diagonal_``'s main diagonal (torch's rule: every
    size equal beyond 2-D; a tall matrix restarts below with ``wrap``)."""
    shape = tuple(self.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if len(shape) == 2:
        rows, cols = shape
        end = rows * cols if wrap and rows > cols + 1 else min(rows, cols) * cols
        return np.arange(0, end, cols + 1)
    n = shape[0]
    step = sum(n**k for k in range(len(shape)))
    return np.arange(n) * step


# ---------------------------------------------------------------------------
# As Tensor methods
# ---------------------------------------------------------------------------

_OPS = [
    "index_copy",
    "index_fill",
    "index_put",
    "index_reduce",
    "masked_scatter",
    "put",
    "take_along_dim",
    "select_scatter",
    "slice_scatter",
    "diagonal_scatter",
    "as_strided_scatter",
    "unique_consecutive",
]
# torch has ``x.name_(...)`` for the first six (index_copy ... put), writing into x.
_INPLACE = _OPS[:6]


class ScatterMixin(AutogradMixin):
    """The ops above as ``Tensor`` methods, and ``index_copy_`` ... ``put_``."""

    __slots__ = ()

    def masked_scatter_(self, mask: Tensor, source: Tensor) -> Tensor:
        if tuple(broadcast_shapes(tuple(self.shape), tuple(mask.shape))) != tuple(
            self.shape
        ):
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast "
                f"shape {list(broadcast_shapes(tuple(self.shape), tuple(mask.shape)))}"
            )
        self._check_inplace()
        return self._inplace(masked_scatter(self, mask, source))

    def fill_diagonal_(self, fill_value: Any, wrap: bool = False) -> Tensor:
        """The main diagonal set to ``fill_value``."""
        positions = _diagonal_positions(self, wrap)
        with no_grad():
            values = full((len(positions),), fill_value, dtype=self.dtype)
        return self.put_(tensor(positions, dtype=_dtype.int64), values)


for _name in _OPS:
    setattr(ScatterMixin, _name, globals()[_name])
for _name in _INPLACE:
    if not hasattr(ScatterMixin, f"{_name}_"):
        setattr(ScatterMixin, f"{_name}_", _in_place(globals()[_name], _name))
