"""Blitz 1, "Tensors": the layout torch gives a new tensor asked for in a
``memory_format`` (``torch.empty(..., memory_format=...)``, the ``*_like``
factories, ``x.to(dtype)``).

A fresh tensor is laid out by permuting its storage and giving it the strides
of the format, as ``clone(memory_format=...)`` does: the values are the same,
``stride()`` and ``is_contiguous(memory_format=...)`` are torch's.
"""

from __future__ import annotations

import functools
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


def _suggests_channels_last(t: Any) -> bool:
    """torch's ``suggest_memory_format``: a 4-d tensor laid out channels-last
    (and not also row-major, as a tensor with one channel can be)."""
    if getattr(t, "_view", None) is None:  # a whole row-major storage, or no tensor
        return False  # (is_contiguous() holds): the hot path, one read
    return (
        t.dim() == 4
        and not t.is_contiguous()
        and t.is_contiguous(memory_format=_info.channels_last)
    )


def keeps_channels_last(sources: int):
    """For a 4-d op (conv2d, batch_norm, the 2-d pools) whose result torch lays
    out channels-last when one of its first ``sources`` arguments is: the
    result (or each result) re-laid out so."""

    def wrap(fn):
        @functools.wraps(fn)
        def op(*args: Any, **kwargs: Any) -> Any:
            out = fn(*args, **kwargs)
            for t in (*args[:sources], kwargs.get("input"), kwargs.get("weight")):
                if _suggests_channels_last(t):
                    break
            else:
                return out
            outs = out if isinstance(out, tuple) else (out,)
            for t in outs:
                if t.dim() == 4 and t._view is None:
                    laid_out(t, _info.channels_last)
            return out

        return op

    return wrap
