"""Blitz 1, "Tensors": where a tensor's elements lie in its storage, as torch counts.

A storage is one buffer of elements; a tensor is a :class:`Layout` over it: a shape,
a stride per dimension (in elements) and an offset. Views (``view``, slicing,
``transpose``, ``expand`` ...) are new layouts over the same storage, so a write
through any of them is seen by all. JAX arrays are immutable, so a storage holds
its buffer as a JAX array in the shape of the tensor that made it, and a write
through a view builds the storage's next array (:func:`write`) instead of changing
the old one. Reading a view gathers its elements (:func:`read`).

Everything here is pure: layouts are tuples, the JAX functions are jitted with the
layout as a static argument (one small program per layout, cached like every other
op in compat).
"""

from __future__ import annotations

import math
from functools import lru_cache, partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import lazy


class Layout(NamedTuple):
    """A tensor's shape, strides (elements) and offset into its storage."""

    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int


@lru_cache(maxsize=4096)  # pure, and asked for on every view op
def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides of ``shape``, as torch gives them (size-0/1 dims too)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


@lru_cache(maxsize=4096)
def identity(shape: tuple[int, ...]) -> Layout:
    return Layout(tuple(shape), contiguous_strides(shape), 0)


def is_contiguous(layout: Layout) -> bool:
    """torch's ``is_contiguous()``: row-major, ignoring dims of size 1."""
    if math.prod(layout.shape) < 2:
        return True
    step = 1
    for size, stride in zip(
        reversed(layout.shape), reversed(layout.stride), strict=True
    ):
        if size != 1:
            if stride != step:
                return False
            step *= size
    return True


def inside(layout: Layout, numel: int) -> bool:
    """Whether every element of ``layout`` lies in a storage of ``numel`` elements
    (and the layout is well formed: sizes, strides and offset not negative)."""
    if min((*layout.shape, *layout.stride, layout.offset), default=0) < 0:
        return False
    if math.prod(layout.shape) == 0:
        return layout.offset <= numel
    last = layout.offset + sum(
        (n - 1) * s for n, s in zip(layout.shape, layout.stride, strict=True)
    )
    return last < numel


def has_overlap(layout: Layout) -> bool:
    """True where two elements share memory in a way torch can see (a 0 stride)."""
    return any(
        st == 0 and sz > 1 for sz, st in zip(layout.shape, layout.stride, strict=True)
    )


def dense_order(layout: Layout) -> tuple[int, ...] | None:
    """For a layout whose elements fill a block with no gaps or overlaps (torch's
    "non-overlapping and dense"), its dims from the largest stride to the
    smallest; None for any other layout."""
    dims = sorted(range(len(layout.shape)), key=lambda d: -layout.stride[d])
    step = 1
    for d in reversed(dims):
        if layout.shape[d] != 1:
            if layout.stride[d] != step:
                return None
            step *= layout.shape[d]
    return tuple(dims)


def view_strides(
    shape: tuple[int, ...], stride: tuple[int, ...], new: tuple[int, ...]
) -> tuple[int, ...] | None:
    """The strides ``view(new)`` gives a tensor of ``shape``/``stride``, or None.

    torch's ``computeStride``: each run of old dims that are contiguous with each
    other may be split or merged freely; None where ``new`` would need a copy.
    """
    if not shape:
        return (1,) * len(new)
    numel = math.prod(shape)
    if numel == 0:
        return contiguous_strides(new) if shape != new else stride
    out = [0] * len(new)
    view_d = len(new) - 1
    chunk_base_stride = stride[-1] if stride else 1
    tensor_numel, view_numel = 1, 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (
            shape[tensor_d - 1] != 1
            and stride[tensor_d - 1] != tensor_numel * chunk_base_stride
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                out[view_d] = view_numel * chunk_base_stride
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = stride[tensor_d - 1]
                tensor_numel, view_numel = 1, 1
    if view_d != -1:
        return None
    return tuple(out)


def indices(layout: Layout) -> np.ndarray:
    """The storage index of each element of ``layout``, in its shape."""
    index = np.full(layout.shape, layout.offset, np.int64)
    for d, (size, stride) in enumerate(zip(layout.shape, layout.stride, strict=True)):
        shape = [1] * len(layout.shape)
        shape[d] = size
        index = index + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
    return index


def _is_range(layout: Layout) -> bool:
    return is_contiguous(layout)


def is_transpose(layout: Layout, shape: tuple[int, ...]) -> bool:
    """Whether ``layout`` is ``t()`` of a whole row-major 2-D buffer of ``shape``."""
    return len(shape) == 2 and layout == Layout(shape[::-1], (1, shape[1]), 0)


def transposed_block(layout: Layout) -> Layout | None:
    """For a 2-D ``layout`` that is ``t()`` of a row-major block of its storage
    (at any offset, its rows any distance apart: torch's BLAS leading dimension),
    that block's own layout; else None. ``t()`` of a whole row-major buffer is
    the commonest: :func:`is_transpose`."""
    if len(layout.shape) != 2:
        return None
    rows = layout.shape[0]
    step, ld = layout.stride
    if step != 1 or ld < rows:
        return None
    return permute(layout, (1, 0))


def read(array: jax.Array, *, layout: Layout) -> jax.Array:
    """The elements of ``layout`` in ``array`` (a storage buffer, any shape).

    A contiguous run of elements is read at an offset given to the program as an
    argument, not built into it: ``x[i]`` for every ``i`` is one program.
    """
    if _is_range(layout) and layout.offset:
        return _read_at(array, layout.offset, shape=layout.shape)
    return _read(array, layout=layout)


@partial(lazy.jit, static_argnames=("layout",))
def _read(array: jax.Array, *, layout: Layout) -> jax.Array:
    flat = array.reshape(-1)
    n = math.prod(layout.shape)
    if flat.shape[0] == n and is_transpose(layout, layout.shape[::-1]):  # t()
        return flat.reshape(layout.shape[::-1]).T
    if _is_range(layout):
        return jax.lax.slice(flat, (layout.offset,), (layout.offset + n,)).reshape(
            layout.shape
        )
    return flat[jnp.asarray(indices(layout))]


@partial(lazy.jit, static_argnames=("shape",))
def _read_at(array: jax.Array, offset: int, *, shape: tuple) -> jax.Array:
    flat = array.reshape(-1)
    return jax.lax.dynamic_slice(flat, (offset,), (math.prod(shape),)).reshape(shape)


def write(array: jax.Array, value: jax.Array, *, layout: Layout) -> jax.Array:
    """``array`` with the elements of ``layout`` replaced by ``value`` (a
    contiguous run at an offset given as an argument: one program for all)."""
    if _is_range(layout):
        return _write_at(array, value, layout.offset, shape=layout.shape)
    return _write(array, value, layout=layout)


@partial(lazy.jit, static_argnames=("layout",))
def _write(array: jax.Array, value: jax.Array, *, layout: Layout) -> jax.Array:
    flat = array.reshape(-1)
    value = jnp.broadcast_to(value.astype(array.dtype), layout.shape).reshape(-1)
    flat = flat.at[jnp.asarray(indices(layout)).reshape(-1)].set(value)
    return flat.reshape(array.shape)


@partial(lazy.jit, static_argnames=("shape",))
def _write_at(array: jax.Array, value: jax.Array, offset: int, *, shape: tuple):
    flat = array.reshape(-1)
    value = jnp.broadcast_to(value.astype(array.dtype), shape).reshape(-1)
    flat = jax.lax.dynamic_update_slice(flat, value, (offset,))
    return flat.reshape(array.shape)


def numpy_view(buffer: np.ndarray, layout: Layout) -> np.ndarray:
    """``layout`` over a C-contiguous NumPy ``buffer``, sharing its memory."""
    flat = buffer.reshape(-1)
    item = buffer.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[layout.offset :] if flat.size else flat,
        layout.shape,
        tuple(s * item for s in layout.stride),
    )


# -- the layouts of torch's view ops ----------------------------------------------


def permute(layout: Layout, axes: tuple[int, ...]) -> Layout:
    shape, stride = layout.shape, layout.stride
    if axes == (1, 0):  # t(): every F.linear's weight
        return Layout((shape[1], shape[0]), (stride[1], stride[0]), layout.offset)
    return Layout(
        tuple([shape[a] for a in axes]), tuple([stride[a] for a in axes]), layout.offset
    )


def select(layout: Layout, dim: int, index: int) -> Layout:
    size = layout.shape[dim]
    index = index + size if index < 0 else index
    return Layout(
        layout.shape[:dim] + layout.shape[dim + 1 :],
        layout.stride[:dim] + layout.stride[dim + 1 :],
        layout.offset + index * layout.stride[dim],
    )


def slice_(layout: Layout, dim: int, start: int, stop: int, step: int) -> Layout:
    """``[start:stop:step]`` on ``dim``; start/stop already clamped to the size."""
    size = max(0, -(-(stop - start) // step))
    shape, stride = list(layout.shape), list(layout.stride)
    offset = layout.offset + (start * stride[dim] if size else 0)
    shape[dim], stride[dim] = size, stride[dim] * step
    return Layout(tuple(shape), tuple(stride), offset)


def unsqueeze(layout: Layout, dim: int) -> Layout:
    shape, stride = list(layout.shape), list(layout.stride)
    new_stride = 1 if dim >= len(shape) else shape[dim] * stride[dim]
    shape.insert(dim, 1)
    stride.insert(dim, new_stride)
    return Layout(tuple(shape), tuple(stride), layout.offset)


def squeeze(layout: Layout, dims: tuple[int, ...]) -> Layout:
    keep = [d for d in range(len(layout.shape)) if d not in dims]
    return Layout(
        tuple(layout.shape[d] for d in keep),
        tuple(layout.stride[d] for d in keep),
        layout.offset,
    )


def expand(layout: Layout, shape: tuple[int, ...]) -> Layout:
    lead = len(shape) - len(layout.shape)
    stride = [0] * lead + [
        0 if old == 1 and new != 1 else st
        for old, new, st in zip(layout.shape, shape[lead:], layout.stride, strict=True)
    ]
    return Layout(tuple(shape), tuple(stride), layout.offset)


def diagonal(layout: Layout, offset: int, dim1: int, dim2: int) -> Layout:
    s1, s2 = layout.shape[dim1], layout.shape[dim2]
    if offset >= 0:
        size = max(0, min(s1, s2 - offset))
        start = offset * layout.stride[dim2]
    else:
        size = max(0, min(s1 + offset, s2))
        start = -offset * layout.stride[dim1]
    keep = [d for d in range(len(layout.shape)) if d not in (dim1, dim2)]
    return Layout(
        tuple(layout.shape[d] for d in keep) + (size,),
        tuple(layout.stride[d] for d in keep)
        + (layout.stride[dim1] + layout.stride[dim2],),
        layout.offset + (start if size else 0),
    )


def unfold(layout: Layout, dim: int, size: int, step: int) -> Layout:
    shape, stride = list(layout.shape), list(layout.stride)
    count = (shape[dim] - size) // step + 1 if shape else 1
    d_stride = stride[dim] if shape else 1
    if shape:
        shape[dim], stride[dim] = count, d_stride * step
    return Layout(
        (*shape, size),
        (*stride, d_stride),
        layout.offset,
    )
