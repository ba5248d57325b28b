"""Blitz 1, "Tensors": reshaping, joining and indexing, as ``torch.*`` functions
and, through :class:`ShapeMixin`, as ``Tensor`` methods and ``x[idx]``.

torch returns views here; these return copies (see :mod:`._tensor_base` on what
that changes). ``x[idx] = v`` writes into ``x`` itself, recorded as torch's
``CopySlices``.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _dtype
from jaxblitz.compat._tensor_base import TensorBase, _as_int, sizes, wrap_dim
from jaxblitz.compat.autograd.graph import AutogradMixin, apply

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


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


def _repeat_fn(x, *, reps):
    return jnp.tile(x, reps)


def _resolve(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    for i, d in enumerate(shape):
        if d < -1:
            raise RuntimeError(
                f"invalid shape dimension {d} at index {i} of shape {list(shape)}"
            )
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if -1 in shape and numel == 0 and known == 0:
        raise RuntimeError(
            f"cannot reshape tensor of 0 elements into shape {list(shape)} because "
            "the unspecified dimension size -1 can be any value and is ambiguous"
        )
    if shape.count(-1) == 1 and known and numel % known == 0:
        shape = tuple(numel // known if d == -1 else d for d in shape)
    if int(np.prod(shape, dtype=np.int64)) != numel or -1 in shape:
        dims = ", ".join(str(d) for d in shape)
        raise RuntimeError(f"shape '[{dims}]' is invalid for input of size {numel}")
    return shape


def view(self: Tensor, *shape: Any) -> Tensor:
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        raise NotImplementedError("view(dtype) is not supported; use .to(dtype)")
    target = _resolve(sizes("view", shape), self.numel())
    return apply("ViewBackward0", _reshape_fn, self, shape=target)


def reshape(self: Tensor, *shape: Any) -> Tensor:
    target = _resolve(sizes("reshape", shape, "shape"), self.numel())
    return apply("ViewBackward0", _reshape_fn, self, shape=target)


def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    shape = self.shape
    start, end = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if start > end:
        raise RuntimeError(
            "flatten() has invalid args: start_dim cannot come after end_dim"
        )
    if not shape:
        return view(self, 1)
    merged = int(np.prod(shape[start : end + 1], dtype=np.int64))
    return view(self, *shape[:start], merged, *shape[end + 1 :])


def permute(self: Tensor, *dims: Any) -> Tensor:
    axes = tuple(wrap_dim(d, self.dim()) for d in sizes("permute", dims, "dims"))
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


def _type_string(self: Tensor) -> str:
    return f"torch.{self.dtype.scalar_type}Tensor{{{list(self.shape)}}}"


def expand(self: Tensor, *sizes_: Any) -> Tensor:
    target = sizes("expand", sizes_)
    if len(target) < self.dim():
        raise RuntimeError(
            f"expand({_type_string(self)}, size={list(target)}): the number of "
            f"sizes provided ({len(target)}) must be greater or equal to the number "
            f"of dimensions in the tensor ({self.dim()})"
        )
    lead = len(target) - self.dim()
    out = []
    for i, d in enumerate(target):
        if i < lead:
            if d < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({d}) isn't allowed in a "
                    f"leading, non-existing dimension {i}"
                )
            out.append(d)
            continue
        size = self.shape[i - lead]
        if d == -1:
            d = size
        if d != size and size != 1 or d < 0:
            raise RuntimeError(
                f"The expanded size of the tensor ({d}) must match the existing "
                f"size ({size}) at non-singleton dimension {i}.  Target sizes: "
                f"{list(target)}.  Tensor sizes: {list(self.shape)}"
            )
        out.append(d)
    return apply("ExpandBackward0", _expand_fn, self, shape=tuple(out))


def repeat(self: Tensor, *repeats: Any) -> Tensor:
    reps = sizes("repeat", repeats, "repeats")
    if len(reps) < self.dim():
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of "
            "dimensions of tensor"
        )
    shape = (1,) * (len(reps) - self.dim()) + tuple(self.shape)
    result = [s * r for s, r in zip(shape, reps, strict=True)]
    for d in result:
        if d < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {d}: {result}"
            )
    x = view(self, shape) if len(shape) != self.dim() else self
    return apply("RepeatBackward0", _repeat_fn, x, reps=reps)


def squeeze(self: Tensor, dim: Any = None) -> Tensor:
    if dim is None:
        axis = tuple(i for i, s in enumerate(self.shape) if s == 1)
    else:
        dims = dim if isinstance(dim, tuple | list) else (dim,)
        wrapped = [wrap_dim(d, self.dim()) for d in dims]
        for d in wrapped:
            if wrapped.count(d) > 1:
                raise RuntimeError(
                    f"dim {d} appears multiple times in the list of dims"
                )
        axis = tuple(d for d in wrapped if self.dim() and self.shape[d] == 1)
    name = "SqueezeBackward0" if dim is None else "SqueezeBackward1"
    return apply(name, _squeeze_fn, self, axis=axis)


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    axis = wrap_dim(dim, self.dim() + 1)
    return apply("UnsqueezeBackward0", _unsqueeze_fn, self, axis=axis)


def clone(self: Tensor, *, memory_format: Any = None) -> Tensor:
    return apply("CloneBackward0", _identity_fn, self)


def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    return self  # storage is always contiguous


def _tensor_list(name: str, tensors: Any) -> list[Tensor]:
    if isinstance(tensors, TensorBase):
        raise TypeError(
            f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
            "not Tensor"
        )
    tensors = list(tensors)
    for i, x in enumerate(tensors):
        if not isinstance(x, TensorBase):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got "
                f"{type(x).__name__}"
            )
    return tensors


def cat(tensors: Any, dim: int = 0) -> Tensor:
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
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
    tensors = _tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    dim = wrap_dim(dim, tensors[0].dim() + 1)
    for i, other in enumerate(tensors[1:], 1):
        if tuple(other.shape) != tuple(tensors[0].shape):
            raise RuntimeError(
                "stack expects each tensor to be equal size, but got "
                f"{list(tensors[0].shape)} at entry 0 and {list(other.shape)} "
                f"at entry {i}"
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


_VALID_INDICES = (
    "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
    "Variables are valid indices (got {})"
)


def _concrete(array: Any) -> np.ndarray | None:
    """An index array's values, or None while ``torch.compile`` traces them."""
    return None if isinstance(array, jax.core.Tracer) else np.asarray(array)


def _index_array(item: Any) -> Any:
    """A Tensor, list or ndarray index as an array, refused unless int or bool."""
    if isinstance(item, TensorBase):
        dt = item.dtype
        if dt is _dtype.uint8:  # torch still reads a byte tensor as a mask
            warnings.warn(
                "indexing with dtype torch.uint8 is now deprecated, please use a "
                "dtype torch.bool instead.",
                UserWarning,
                stacklevel=4,
            )
            dt = _dtype.bool
        if dt.is_floating_point:
            raise IndexError(
                "tensors used as indices must be long, int, byte or bool tensors"
            )
        return np.asarray(item._data, bool) if dt is _dtype.bool else item._data
    array = np.asarray(item)
    if array.size and array.dtype.kind not in "biu":
        raise IndexError(
            "tensors used as indices must be long, int, byte or bool tensors"
        )
    return array.astype(np.int64) if not array.size else array


def _parts(index: Any) -> list[tuple[str, Any, int]]:
    """``index`` as ``(kind, value, dims it consumes)``; refuses what torch does."""
    parts = []
    for item in index if isinstance(index, tuple) else (index,):
        if isinstance(item, TensorBase | list | np.ndarray):
            item = _index_array(item)
        if isinstance(item, bool | np.bool_) or (
            getattr(item, "dtype", None) == np.bool_ and np.ndim(item) == 0
        ):
            parts.append(("c", bool(item), 0))  # True is a new axis, False an empty one
        elif isinstance(item, np.ndarray) and item.dtype == np.bool_:
            parts.append(("mask", item, item.ndim))
        elif isinstance(item, int | np.integer):
            parts.append(("i", int(item), 1))
        elif isinstance(item, jax.Array | np.ndarray):
            values = _concrete(item)
            if item.ndim == 0 and values is not None:
                parts.append(("i", int(values), 1))
            else:
                parts.append(("a", item, 1))
        elif isinstance(item, slice):
            if item.step is not None and _as_int(item.step) is not None:
                if item.step == 0:
                    raise ValueError("slice step cannot be zero")
                if item.step < 0:
                    raise ValueError("step must be greater than zero")
            parts.append(("s", (item.start, item.stop, item.step), 1))
        elif item is None:
            parts.append(("c", None, 0))
        elif item is Ellipsis:
            parts.append(("...", Ellipsis, 0))
        else:  # torch: a TypeError for a str, an IndexError for the rest
            error = TypeError if isinstance(item, str) else IndexError
            raise error(_VALID_INDICES.format(type(item).__name__))
    return parts


def _out_of_bounds(value: int, dim: int, size: int) -> IndexError:
    return IndexError(
        f"index {value} is out of bounds for dimension {dim} with size {size}"
    )


def _check_bounds(parts: list, shape: tuple[int, ...]) -> None:
    """torch's bounds checks, which JAX lacks (it clamps reads and drops writes).

    Dimensions are counted in the indexed tensor itself.
    """
    ndim = len(shape)
    used = sum(n for _, _, n in parts)
    if used > ndim:
        if ndim == 0:
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
            )
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    dim = 0
    for kind, value, n in parts:
        if kind == "...":
            dim += ndim - used
        elif kind == "i" and not -shape[dim] <= value < shape[dim]:
            raise _out_of_bounds(value, dim, shape[dim])
        elif kind == "a":
            values = _concrete(value)
            if values is not None and values.size:
                bad = values[(values < -shape[dim]) | (values >= shape[dim])]
                if bad.size:
                    raise _out_of_bounds(int(bad.flat[0]), dim, shape[dim])
        elif kind == "mask":
            for j, size in enumerate(value.shape):
                if size != shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {list(value.shape)} at index {j} "
                        "does not match the shape of the indexed tensor "
                        f"{list(shape)} at index {dim + j}"
                    )
        dim += n


def _spec(index: Any, shape: tuple[int, ...]) -> tuple[tuple, list, str]:
    """A hashable description of ``index`` plus its array parts and torch's name."""
    parts = _parts(index)
    _check_bounds(parts, shape)
    spec, arrays, name = [], [], "SliceBackward0"
    for kind, value, _ in parts:
        if kind == "mask":
            arrays.extend(np.nonzero(value))  # concrete: a static result shape
            spec.extend(("a", len(arrays) - value.ndim + k) for k in range(value.ndim))
            name = "IndexBackward0"
        elif kind == "a":
            arrays.append(value)
            spec.append(("a", len(arrays) - 1))
            name = "IndexBackward0"
        elif kind == "i":
            spec.append(("i", value))
            name = "SelectBackward0" if name != "IndexBackward0" else name
        else:  # slice, None, a bool, Ellipsis
            spec.append(("c" if kind == "..." else kind, value))
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = ", ".join(str(list(a.shape)) for a in arrays)
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with "
            f"shapes {shapes}"
        ) from None
    return tuple(spec), arrays, name


def getitem(self: Tensor, index: Any) -> Tensor:
    spec, arrays, name = _spec(index, tuple(self.shape))
    return apply(name, _get_fn, self, *arrays, spec=spec)


def _fit_value(value: Any, spec: tuple, arrays: list, x: Tensor) -> Any:
    """``value`` fitted to ``x[index]``'s shape as torch fits it, or an error.

    Leading size-1 dimensions beyond the target's are dropped (torch allows
    ``m[0] = torch.ones(1, 4)``); anything else must broadcast.
    """
    numbers = int | float | complex | np.number | np.bool_
    if not isinstance(value, TensorBase | np.ndarray | list | tuple | numbers):
        raise TypeError(
            f"can't assign a {type(value).__name__} to a "
            f"torch.{x.dtype.scalar_type}Tensor"
        )
    concrete = [_concrete(a) for a in arrays]
    if any(a is None for a in concrete):
        return value  # traced indices: JAX checks what it can
    zeros = np.broadcast_to(np.zeros((), np.int8), tuple(x.shape))  # no memory
    target = zeros[_build(spec, concrete)]
    given = tuple(value.shape) if isinstance(value, TensorBase) else np.shape(value)
    fitted = given
    while len(fitted) > target.ndim and fitted[0] == 1:
        fitted = fitted[1:]
    if len(fitted) > target.ndim or any(
        v not in (1, t) for v, t in zip(fitted[::-1], target.shape[::-1], strict=False)
    ):
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(given)} cannot be "
            f"broadcast to indexing result of shape {list(target.shape)}"
        )
    if fitted == given:
        return value
    return (
        value.reshape(fitted)
        if isinstance(value, TensorBase)
        else np.reshape(value, fitted)
    )


def setitem(self: Tensor, index: Any, value: Any) -> None:
    self._check_inplace()
    spec, arrays, _ = _spec(index, tuple(self.shape))
    value = _fit_value(value, spec, arrays, self)
    if isinstance(value, np.ndarray):
        value = TensorBase._wrap(jnp.asarray(value))
    result = apply("CopySlices", _set_fn, self, value, *arrays, spec=spec)
    self._inplace(result)


# ---------------------------------------------------------------------------
# As Tensor methods
# ---------------------------------------------------------------------------


class ShapeMixin(AutogradMixin):
    """The functions above as ``Tensor`` methods, ``x[idx]`` and ``x[idx] = v``."""

    __slots__ = ()

    view, reshape, flatten, permute, t, transpose = (
        view,
        reshape,
        flatten,
        permute,
        t,
        transpose,
    )
    expand, repeat, squeeze, unsqueeze = expand, repeat, squeeze, unsqueeze
    clone, contiguous = clone, contiguous
    __getitem__, __setitem__ = getitem, setitem
    T = property(T)

    @property
    def mT(self) -> Tensor:  # noqa: N802 -- torch's name
        return transpose(self, -2, -1)

    def t_(self) -> Tensor:
        self._check_inplace()
        result = t(self)
        self._set_data(result._data)
        if result._grad_fn is not None:
            self._grad_fn = result._grad_fn
        return self
