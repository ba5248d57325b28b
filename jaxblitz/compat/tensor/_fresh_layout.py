"""Blitz 1, "Tensors": the layout torch gives a new tensor asked for in a
``memory_format`` (``torch.empty(..., memory_format=...)``, the ``*_like``
factories, ``x.to(dtype)``).

A fresh tensor is laid out by permuting its storage and giving it the strides
of the format, as ``clone(memory_format=...)`` does: the values are the same,
``stride()`` and ``is_contiguous(memory_format=...)`` are torch's.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from jaxblitz.compat.tensor import _info
from jaxblitz.compat.tensor._layout import Layout, dense_order


def _transpose_fn(x, *, axes):
    return jnp.transpose(x, axes)


def _relaid(t: Any, outer_first: tuple[int, ...], stride: tuple[int, ...]) -> Any:
    # deferred import: autograd loads after the tensor package
    from jaxblitz.compat.autograd.graph import run  # noqa: PLC0415

    shape = tuple(t.shape)
    t._s.array = run(_transpose_fn, t._s.pending, axes=outer_first)
    t._view = Layout(shape, stride, 0)
    return t


def laid_out(t: Any, memory_format: Any, like: Any = None) -> Any:
    """``t`` (fresh and row-major) in ``memory_format``; preserve (the ``*_like``
    default) keeps ``like``'s strides where ``like`` is dense, as torch's
    ``empty_like`` does, and is refused without a ``like``."""
    if memory_format is None:
        memory_format = (
            _info.contiguous_format if like is None else _info.preserve_format
        )
    if memory_format is _info.preserve_format:
        if like is None:
            raise RuntimeError("unsupported memory format Preserve")
        layout = like._view
        if layout is None or like.is_contiguous():
            return t
        perm = dense_order(layout)
        if perm is None:  # torch: a row-major result for a layout with gaps
            return t
        return _relaid(t, perm, tuple(layout.stride))
    order = _info.channels_last_order(memory_format, t.dim())
    if order is None:
        return t
    shape = tuple(t.shape)
    return _relaid(t, tuple(reversed(order)), _info.strides_in(order, shape))
