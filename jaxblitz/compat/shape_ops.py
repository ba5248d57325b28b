"""Blitz 1, "Tensors": reshaping, joining and indexing.

torch returns views here; these return copies (see :mod:`.tensor` on what that
changes). ``x[idx] = v`` writes into ``x`` itself, recorded as torch's
``CopySlices``.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _dtype
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.tensor import Tensor, wrap_dim


def _reshape_fn(x, *, shape):
    return x.reshape(shape)


def _permute_fn(x, *, axes):
    return jnp.transpose(x, axes)


def _expand_fn(x, *, shape):
    return jnp.broadcast_to(x, shape)


def _squeeze_fn(x, *, axis):
    return jnp.squeeze(x, axis)


def _unsqueeze_fn(x, *, axis):
    return jnp.expand_dims(x, axis)


def _cat_fn(*xs, axis, dt):
    return jnp.concatenate([x.astype(dt) for x in xs], axis=axis)


def _stack_fn(*xs, axis, dt):
    return jnp.stack([x.astype(dt) for x in xs], axis=axis)


def _identity_fn(x):
    return x + jnp.zeros((), x.dtype)  # a copy


def _sizes(args: tuple) -> tuple[int, ...]:
    if len(args) == 1 and isinstance(args[0], tuple | list):
        args = tuple(args[0])
    return tuple(int(a) for a in args)


def _resolve(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if shape.count(-1) == 1 and known and numel % known == 0:
        shape = tuple(numel // known if d == -1 else d for d in shape)
    if int(np.prod(shape, dtype=np.int64)) != numel or -1 in shape:
        dims = ", ".join(str(d) for d in shape)
        raise RuntimeError(f"shape '[{dims}]' is invalid for input of size {numel}")
    return shape


def view(self: Tensor, *shape: Any) -> Tensor:
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        raise NotImplementedError("view(dtype) is not supported; use .to(dtype)")
    target = _resolve(_sizes(shape), self.numel())
    return apply("ViewBackward0", _reshape_fn, self, shape=target)


reshape = view


def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    shape = self.shape
    if not shape:
        return view(self, 1)
    start, end = start_dim % len(shape), end_dim % len(shape)
    merged = int(np.prod(shape[start : end + 1], dtype=np.int64))
    return view(self, *shape[:start], merged, *shape[end + 1 :])


def permute(self: Tensor, *dims: Any) -> Tensor:
    axes = tuple(wrap_dim(d, self.dim()) for d in _sizes(dims))
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    if len(axes) != self.dim():
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not "
            "match the length of the desired ordering of dimensions i.e. input.dim()"
            f" = {self.dim()} is not equal to len(dims) = {len(axes)}"
        )
    return apply("PermuteBackward0", _permute_fn, self, axes=axes)


def t(self: Tensor) -> Tensor:
    if self.dim() > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {self.dim()}D"
        )
    axes = tuple(range(self.dim()))[::-1]
    return apply("TBackward0", _permute_fn, self, axes=axes)


def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    axes = list(range(self.dim()))
    dim0, dim1 = wrap_dim(dim0, self.dim()), wrap_dim(dim1, self.dim())
    axes[dim0], axes[dim1] = axes[dim1], axes[dim0]
    return apply("TransposeBackward0", _permute_fn, self, axes=tuple(axes))


def T(self: Tensor) -> Tensor:  # noqa: N802 -- torch's name
    return apply(
        "PermuteBackward0", _permute_fn, self, axes=tuple(range(self.dim()))[::-1]
    )


def expand(self: Tensor, *sizes: Any) -> Tensor:
    target = _sizes(sizes)
    target = tuple(
        s if d == -1 else d
        for d, s in zip(
            target, (1,) * (len(target) - self.dim()) + self.shape, strict=True
        )
    )
    return apply("ExpandBackward0", _expand_fn, self, shape=target)


def squeeze(self: Tensor, dim: Any = None) -> Tensor:
    if dim is None:
        axis = tuple(i for i, s in enumerate(self.shape) if s == 1)
    else:
        dims = dim if isinstance(dim, tuple | list) else (dim,)
        axis = tuple(d % max(self.dim(), 1) for d in dims if self.shape[d] == 1)
    name = "SqueezeBackward0" if dim is None else "SqueezeBackward1"
    return apply(name, _squeeze_fn, self, axis=axis)


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    axis = wrap_dim(dim, self.dim() + 1)
    return apply("UnsqueezeBackward0", _unsqueeze_fn, self, axis=axis)


def clone(self: Tensor, *, memory_format: Any = None) -> Tensor:
    return apply("CloneBackward0", _identity_fn, self)


def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    return self  # storage is always contiguous


def cat(tensors: Any, dim: int = 0) -> Tensor:
    tensors = list(tensors)
    dim = wrap_dim(dim, tensors[0].dim())
    first = tensors[0].shape
    for i, other in enumerate(tensors[1:], 1):
        if other.dim() != len(first):
            raise RuntimeError(
                "Tensors must have same number of dimensions: got "
                f"{len(first)} and {other.dim()}"
            )
        for d, (a, b) in enumerate(zip(first, other.shape, strict=True)):
            if d != dim and a != b:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. "
                    f"Expected size {a} but got size {b} for tensor number {i} in "
                    "the list."
                )
    dt = tensors[0].dtype
    for other in tensors[1:]:
        dt = _dtype.promote(dt, other.dtype)
    return apply("CatBackward0", _cat_fn, *tensors, axis=dim, dt=dt.np.name)


concat = concatenate = cat


def stack(tensors: Any, dim: int = 0) -> Tensor:
    tensors = list(tensors)
    shapes = {tuple(x.shape) for x in tensors}
    if len(shapes) > 1:
        raise RuntimeError(
            "stack expects each tensor to be equal size, but got "
            f"{list(tensors[0].shape)} at entry 0 and {list(tensors[1].shape)} "
            "at entry 1"
        )
    dt = tensors[0].dtype
    for other in tensors[1:]:
        dt = _dtype.promote(dt, other.dtype)
    return apply("StackBackward0", _stack_fn, *tensors, axis=dim, dt=dt.np.name)


# ---------------------------------------------------------------------------
# Indexing
# ---------------------------------------------------------------------------


def _get_fn(x, *arrays, spec):
    return x[_build(spec, arrays)]


def _set_fn(x, value, *arrays, spec):
    return x.at[_build(spec, arrays)].set(jnp.asarray(value).astype(x.dtype))


def _build(spec, arrays):
    out = []
    for kind, item in spec:
        if kind == "a":
            out.append(arrays[item])
        elif kind == "s":
            out.append(slice(*item))
        else:
            out.append(item)
    return tuple(out)


def _spec(index: Any) -> tuple[tuple, list, str]:
    """A hashable description of ``index`` plus its array parts and torch's name."""
    items = index if isinstance(index, tuple) else (index,)
    spec, arrays, name = [], [], "SliceBackward0"
    for item in items:
        if isinstance(item, Tensor):
            item = np.asarray(item._data) if item.dtype is _dtype.bool else item._data
        elif isinstance(item, list):
            item = np.asarray(item)
        if isinstance(item, np.ndarray) and item.dtype == np.bool_:
            arrays.extend(np.nonzero(item))  # concrete: a static result shape
            spec.extend(("a", len(arrays) - item.ndim + k) for k in range(item.ndim))
            name = "IndexBackward0"
        elif hasattr(item, "shape") and hasattr(item, "dtype"):
            if np.ndim(item) == 0:
                spec.append(("i", int(item)))
                name = "SelectBackward0" if name != "IndexBackward0" else name
                continue
            arrays.append(item)
            spec.append(("a", len(arrays) - 1))
            name = "IndexBackward0"
        elif isinstance(item, slice):
            spec.append(("s", (item.start, item.stop, item.step)))
        elif isinstance(item, int):
            spec.append(("i", item))
            name = "SelectBackward0" if name != "IndexBackward0" else name
        else:  # None, Ellipsis
            spec.append(("c", item))
    return tuple(spec), arrays, name


def getitem(self: Tensor, index: Any) -> Tensor:
    spec, arrays, name = _spec(index)
    if spec and spec[0][0] == "i" and self.dim():
        item = spec[0][1]
        if not -self.shape[0] <= item < self.shape[0]:
            raise IndexError(
                f"index {item} is out of bounds for dimension 0 with size "
                f"{self.shape[0]}"
            )
    return apply(name, _get_fn, self, *arrays, spec=spec)


def setitem(self: Tensor, index: Any, value: Any) -> None:
    self._check_inplace()
    spec, arrays, _ = _spec(index)
    if isinstance(value, np.ndarray):
        value = Tensor._wrap(jnp.asarray(value))
    result = apply("CopySlices", _set_fn, self, value, *arrays, spec=spec)
    self._inplace(result)
