"""Blitz 1, "Tensors": the layout torch gives a new tensor asked for in a
``memory_format`` (``torch.empty(..., memory_format=...)``, the ``*_like``
factories, ``x.to(dtype)``), and the layout of an elementwise op's result
(``x.t() + 1``, ``relu`` of a channels-last input), which follows its inputs'.

A fresh tensor is laid out by permuting its storage and giving it the strides
of the format, as ``clone(memory_format=...)`` does: the values are the same,
``stride()``, ``is_contiguous(memory_format=...)`` and ``view()`` are torch's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax.numpy as jnp

from jaxblitz.compat.tensor import _info
from jaxblitz.compat.tensor._iter_strides import (
    iterator_strides,
    outer_first,
    preserved,
)
from jaxblitz.compat.tensor._layout import Layout, contiguous_strides, identity
from jaxblitz.compat.tensor._tensor_base import TensorBase

# autograd.graph's ``run`` (a jitted call, unrecorded), set by that module when it
# loads: autograd loads after the tensor package, and its funnel calls this one
RUN: list = []


def _transpose_fn(x, *, axes):
    return jnp.transpose(x, axes)


def _relaid(t: Any, stride: tuple[int, ...]) -> Any:
    """``t`` (fresh and row-major) with its storage laid out in dense
    ``stride``; its value, as computed, stays its cached read."""
    run = RUN[0]
    shape = tuple(t.shape)
    s, value = t._s, t._s.pending
    axes = outer_first(stride)
    if axes != tuple(range(len(axes))):
        s.array = run(_transpose_fn, value, axes=axes)
    t._view = Layout(shape, stride, 0)
    t._cache = (s.pending, value)  # (what reading the layout would give)
    return t


def laid_out(t: Any, memory_format: Any, like: Any = None) -> Any:
    """``t`` (fresh and row-major) in ``memory_format``; preserve (the ``*_like``
    default) keeps ``like``'s strides where ``like`` is dense, else its order,
    as torch's ``empty_like`` does, and is refused without a ``like``."""
    if memory_format is None:
        memory_format = (
            _info.contiguous_format if like is None else _info.preserve_format
        )
    if memory_format is _info.preserve_format:
        if like is None:
            raise RuntimeError("unsupported memory format Preserve")
        layout = like._view
        if layout is None:
            return t
        stride = preserved(layout.shape, layout.stride)
        if stride == contiguous_strides(layout.shape):
            return t
        return _relaid(t, stride)
    order = _info.channels_last_order(memory_format, t.dim())
    if order is None:
        return t
    return _relaid(t, _info.strides_in(order, tuple(t.shape)))


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


# ---------------------------------------------------------------------------
# Elementwise results: torch's TensorIterator
# ---------------------------------------------------------------------------


class _Operands(NamedTuple):
    """Which arguments of an elementwise kernel are torch's operands."""

    count: int | None  # the leading arguments that may be (None: all)
    scalars: tuple[int, ...]  # where a number is torch's Scalar, not an operand
    uncast: tuple[int, ...]  # never cast to the common dtype (where's condition)


# The pure JAX functions of the elementwise ops, each marked where it is
# defined; the funnel lays out their results (graph._apply, ops._no_grad).
ELEMENTWISE: dict[Callable, _Operands] = {}


def elementwise(
    fn: Callable | None = None,
    *,
    count: int | None = None,
    scalars: tuple[int, ...] = (),
    uncast: tuple[int, ...] = (),
) -> Any:
    """Mark ``fn``, an op's pure JAX function, elementwise: its result takes
    the layout torch's TensorIterator gives it from its operands'. A number
    argument is a 0-d operand (torch wraps ``x + 1``'s) except at ``scalars``
    (``x ** 2``, ``x.clamp(0, 1)``); arguments from ``count`` on are not
    operands (``alpha``); operands of another dtype than the ``dt`` the kernel
    computes in are copies (torch casts them first), except at ``uncast``."""

    def mark(fn: Callable) -> Callable:
        ELEMENTWISE[fn] = _Operands(count, scalars, uncast)
        return fn

    return mark if fn is None else mark(fn)


def follow_operands(out: Any, fn: Callable, args: Any, dt: str | None) -> Any:
    """``out`` (fresh and row-major), the result of elementwise ``fn`` on
    ``args`` computing in ``dt``, laid out as torch's TensorIterator lays it
    out. Called only where an operand is not a whole row-major storage."""
    spec = ELEMENTWISE[fn]
    shape = out._shape()
    operands, same = [], True
    for i, a in enumerate(args if spec.count is None else args[: spec.count]):
        if isinstance(a, TensorBase):
            view = a._view or identity(a._shape())
            stride = view.stride
            if dt is not None and i not in spec.uncast and a.dtype.np_name != dt:
                stride = preserved(view.shape, stride)  # torch's a.to(dt)
            operands.append(Layout(view.shape, stride, 0))
            same = same and view.shape == shape
        elif a is not None and i not in spec.scalars:
            same = same and not shape  # a number: a 0-d operand
    stride = iterator_strides(shape, tuple(operands), same)
    return out if stride is None else _relaid(out, stride)
