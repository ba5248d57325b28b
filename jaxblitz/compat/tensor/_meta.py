"""Blitz 1, "Tensors": torch's ``meta`` device -- tensors with a shape, a dtype
and strides but no elements.

A meta tensor's storage holds a :class:`MetaArray` instead of a JAX array. Ops
need no kernels of their own: every compiled call compat makes goes through
:class:`jaxblitz.compat.lazy.jit`, and JAX's jit refuses a ``MetaArray`` as an
argument, so that refusal (eager) or the pytree walk its type forces (lazy) is
where :func:`call` takes over and runs the op's very function through
``jax.eval_shape``: torch's shapes and dtypes, no values, nothing recorded or
compiled. Reading a value raises torch's errors for meta tensors.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import jax
import numpy as np

from jaxblitz.compat.tensor._dtype import device

META = device("meta")
NO_DATA = "Cannot copy out of meta tensor; no data!"
NO_ITEM = "Tensor.item() cannot be called on meta tensors"


class MetaArray:
    """The shape and dtype of a meta tensor's storage; asked for its elements,
    torch's error."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape: tuple, dtype: Any, weak_type: bool = False):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def astype(self, dtype: Any) -> MetaArray:
        return MetaArray(self.shape, dtype)

    # gradients summed outside the funnel (autograd's accumulation) add as
    # arrays do: the broadcast shape and the promoted dtype
    def __add__(self, other: Any) -> MetaArray:
        return _abstractly(operator.add, self, other)

    def __radd__(self, other: Any) -> MetaArray:
        return _abstractly(operator.add, other, self)

    def __mul__(self, other: Any) -> MetaArray:
        return _abstractly(operator.mul, self, other)

    def __rmul__(self, other: Any) -> MetaArray:
        return _abstractly(operator.mul, other, self)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise NotImplementedError(NO_DATA)

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"


def like(array: Any, dtype: Any = None) -> MetaArray:
    """A MetaArray of ``array``'s shape (a JAX, NumPy or pending array, or a
    MetaArray) and of ``dtype``, else its dtype: no element is read."""
    return MetaArray(np.shape(array), array.dtype if dtype is None else dtype)


def is_meta(t: Any) -> bool:
    """Whether the tensor ``t`` is on the meta device (no device lookup)."""
    return type(t._s.pending) is MetaArray


def _device_error(leaves: list) -> RuntimeError | None:
    """torch's error where a meta operand meets a CPU tensor: the first tensor's
    device is the one expected. A 0-dim CPU tensor joins, as a number."""
    first = None
    for v in leaves:
        kind = type(v)
        if kind is MetaArray:
            here = "meta"
        elif isinstance(v, jax.Array) or kind.__name__ == "LazyArray":
            if not np.ndim(v):
                continue
            here = "cpu"
        else:
            continue
        if first is None:
            first = here
        elif here != first:
            return RuntimeError(
                f"Tensor on device {here} is not on the expected device {first}!"
            )
    return None


def _abstract(v: Any) -> Any:
    if type(v) is MetaArray:
        return jax.ShapeDtypeStruct(v.shape, v.dtype, weak_type=v.weak_type)
    if isinstance(v, jax.Array) or type(v).__name__ == "LazyArray":
        return jax.ShapeDtypeStruct(v.shape, v.dtype)  # its value is not needed
    return v


def _meta_of(v: Any) -> Any:
    if isinstance(v, jax.ShapeDtypeStruct):
        return MetaArray(v.shape, v.dtype, v.weak_type)
    return v


def _abstractly(op: Any, *args: Any) -> Any:
    return call(op, args, {}, (), list(args))


def has_meta(leaves: list) -> bool:
    return any(type(v) is MetaArray for v in leaves)


def call(fun: Any, args: tuple, kwargs: dict, static: tuple, leaves: list) -> Any:
    """``fun(*args, **kwargs)`` run abstractly (the kwargs named in ``static``
    as they are), its arrays as MetaArrays: the meta result of a compiled call
    one of whose ``leaves`` is meta."""
    error = _device_error(leaves)
    if error is not None:
        raise error
    fixed = {k: kwargs.pop(k) for k in static if k in kwargs}
    args, kwargs = jax.tree.map(_abstract, (args, kwargs))
    with jax.enable_x64(True):
        out = jax.eval_shape(lambda a, k: fun(*a, **k, **fixed), args, kwargs)
    return jax.tree.map(_meta_of, out)
