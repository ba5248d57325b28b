"""Blitz 1, "Tensors": reshaping, joining and indexing, as ``torch.*`` functions
and, through :class:`ShapeMixin`, as ``Tensor`` methods and ``x[idx]``.

Where torch returns a view, so does this module (:func:`_as_view`): the result
shares its input's storage under a new layout (:mod:`._layout`), so in-place ops
through either are seen by both. ``reshape``, ``flatten`` and ``contiguous`` copy
only where a view cannot express the result; ``clone``, ``cat``/``stack`` and
advanced indexing (integer tensors, lists, bool masks) always copy.
``x[idx] = v`` writes through the view ``x[idx]`` (torch's ``CopySlices``), or
with ``index_put_`` for advanced indices.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _autocast, lazy
from jaxblitz.compat.autograd.grad_mode import is_grad_enabled
from jaxblitz.compat.autograd.graph import (
    AutogradMixin,
    _view_requires,
    apply,
    node_class,
    record_view,
)
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.tensor import _dtype, _info, _layout
from jaxblitz.compat.tensor._checks import check_array_range, check_range
from jaxblitz.compat.tensor._fresh_layout import laid_out
from jaxblitz.compat.tensor._layout import Layout
from jaxblitz.compat.tensor._meta import NO_ITEM, MetaArray
from jaxblitz.compat.tensor._signatures import VIEW_OPTIONS
from jaxblitz.compat.tensor._tensor_base import (
    TensorBase,
    UntypedStorage,
    _as_int,
    _type_name,
    sizes,
    wrap_dim,
)

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


def _cat_fn(*xs, axis, dt, keep=None):
    xs = xs if keep is None else [x for x, k in zip(xs, keep, strict=True) if k]
    return jnp.concatenate([x.astype(dt) for x in xs], axis=axis)


def _stack_fn(*xs, axis, dt):
    return jnp.stack([x.astype(dt) for x in xs], axis=axis)


def _identity_fn(x):
    return x + jnp.zeros((), x.dtype)  # a copy


def _repeat_fn(x, *, reps):
    return jnp.tile(x, reps)


def _layout_fn(x, *, layout):
    """Any view's value from its input's: ``layout`` over ``x``'s row-major order."""
    return _layout.read(x, layout=layout)


def _as_view(
    self: Tensor, out: Tensor, layout: Layout, multi: str | None = None
) -> Tensor:
    """Make ``out`` (``self`` viewed, as computed by ``apply``) share ``self``'s
    storage as ``layout`` over it, and its version counter."""
    s, array = self._s, out._s.pending
    out._s = s
    out._view = None if layout == _layout.identity(s.shape) else layout
    out._base = self if self._base is None else self._base
    out._vc, out._gv = self._vc, self._vc[0]
    out._as = self._as
    out._cache = (s.pending, array) if s.numpy is None else None
    # How the view was made decides what in-place ops on it may do; a view of
    # such a view inherits it, as torch's creation_meta does.
    if multi is None and "_multi_view" in self.__dict__:
        node = out._grad_fn
        multi = (type(node).__name__ if node is not None else "View", 0)
    if multi is not None:
        out.__dict__["_multi_view"] = multi
    if self.requires_grad and not is_grad_enabled():
        out.__dict__["_no_grad_view"] = True  # torch's creation_meta NO_GRAD_MODE
    elif self.__dict__.get("_no_grad_view"):  # inherited: named in the message
        node = out._grad_fn
        out.__dict__["_no_grad_view"] = type(node).__name__ if node else True
    return out


def _view_apply(
    self: Tensor, name: str, op, *op_args, fn=None, multi=None, **static
) -> Tensor:
    """``self`` viewed by ``op`` (a function of :mod:`._layout`) as torch's view
    ``name``; ``fn(x, **static)`` computes its value from ``self``'s (default:
    ``op`` applied to ``self``'s own row-major layout, read out)."""
    layout = op(self._place(), *op_args)
    if fn is None:
        fn, static = _layout_fn, {"layout": op(_layout.identity(self.shape), *op_args)}
    return _as_view(self, apply(name, fn, self, **static), layout, multi)


def _swap_view(self: Tensor, name: str) -> Tensor | None:
    """``self``'s 2-D transpose as torch's view ``name``, its value not computed:
    an op given it transposes inside its own program (``graph._operands``: a
    ``linear``'s weight is read by the dot as it is), and reading it transposes
    then. None where ``self`` is not a row-major block of a JAX storage
    (``_layout.transposed_block``; then the view is made as any other)."""
    s = self._s
    layout = _layout.permute(self._place(), (1, 0))
    if (
        self._as is not None
        or s.numpy is not None
        or isinstance(s.pending, jax.core.Tracer)
        or _layout.transposed_block(layout) is None
        or "_fw" in self.__dict__  # a dual tensor: its tangent through apply
    ):
        return None
    needs = is_grad_enabled() and (
        self.requires_grad_flag or (self._base is not None and _view_requires(self))
    )
    node = (
        record_view(name, _permute_fn, self, layout.shape, axes=(1, 0))
        if needs
        else None
    )
    out = _as_view(
        self, TensorBase._wrap(None, requires_grad=needs, grad_fn=node), layout
    )
    out._cache = None
    return out


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


def _reshaped(layout: Layout, shape: tuple[int, ...], strides) -> Layout:
    return Layout(shape, strides, layout.offset)


def _view_as_shape(self: Tensor, target: tuple[int, ...]) -> Tensor | None:
    own = self._place()
    strides = _layout.view_strides(own.shape, own.stride, target)
    if strides is None:
        return None
    return _view_apply(
        self,
        "ViewBackward0",
        _reshaped,
        target,
        strides,
        fn=_reshape_fn,
        shape=target,
    )


def _view_dtype(self: Tensor, dt: Any) -> Tensor:
    """``view(dtype)``: the same elements' bits read as ``dt``, sharing storage
    (not differentiable, not a view for autograd, as in torch)."""
    if dt.itemsize != self.element_size():
        raise NotImplementedError(
            f"view(dtype) between dtypes of different sizes ({self.dtype} -> {dt}) "
            "is not supported by jaxblitz.compat"
        )
    out = TensorBase._wrap(None)
    out._share(self)
    out._as = None if np.dtype(dt.np) == self._s.dtype else np.dtype(dt.np)
    out._vc = self._vc
    return out


def view(self: Tensor, *shape: Any) -> Tensor:
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return _view_dtype(self, shape[0])
    target = _resolve(sizes("view", shape, "size", VIEW_OPTIONS), self.numel())
    out = _view_as_shape(self, target)
    if out is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at "
            "least one dimension spans across two contiguous subspaces). Use "
            ".reshape(...) instead."
        )
    return out


def _reshape(self: Tensor, target: tuple[int, ...]) -> Tensor:
    out = _view_as_shape(self, target)
    if out is None:  # torch: a copy, then an unsafe view of it (not a view)
        out = apply("UnsafeViewBackward0", _reshape_fn, clone(self), shape=target)
    return out


@declare
def reshape(self: Tensor, *shape: Any) -> Tensor:
    return _reshape(self, _resolve(sizes("reshape", shape, "shape"), self.numel()))


def view_as(self: Tensor, other: Tensor) -> Tensor:
    return view(self, *other.shape)


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return reshape(self, *other.shape)


@declare
def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    shape = self.shape
    start, end = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if start > end:
        raise RuntimeError(
            "flatten() has invalid args: start_dim cannot come after end_dim"
        )
    if not shape:
        return _reshape(self, (1,))
    if start == end:
        return self
    merged = math.prod(shape[start : end + 1])
    return _reshape(self, (*shape[:start], merged, *shape[end + 1 :]))


@declare
def unflatten(self: Tensor, dim: int, sizes_: Any) -> Tensor:
    dim = wrap_dim(dim, self.dim())
    inner = tuple(sizes("unflatten", (sizes_,), "sizes"))
    if not inner:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = self.shape[dim]
    if -1 in inner:
        known = int(np.prod([d for d in inner if d != -1]))
        inner = tuple(size // known if d == -1 else d for d in inner)
    if int(np.prod(inner)) != size:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(inner)} don't multiply up to the size "
            f"of dim {dim} ({size}) in the input tensor"
        )
    return view(self, *self.shape[:dim], *inner, *self.shape[dim + 1 :])


@declare
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
    return _view_apply(
        self, "PermuteBackward0", _layout.permute, axes, fn=_permute_fn, axes=axes
    )


def t(self: Tensor) -> Tensor:
    if self.dim() > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {self.dim()}D"
        )
    if self.dim() == 2 and (out := _swap_view(self, "TBackward0")) is not None:
        return out
    axes = tuple(range(self.dim()))[::-1]
    return _view_apply(
        self, "TBackward0", _layout.permute, axes, fn=_permute_fn, axes=axes
    )


@declare
def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    if not self.dim():  # dims 0/-1 of a 0-d tensor: itself, as a view
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return _view_apply(
            self, "TransposeBackward0", _layout.permute, (), fn=_permute_fn, axes=()
        )
    axes = list(range(self.dim()))
    dim0, dim1 = wrap_dim(dim0, self.dim()), wrap_dim(dim1, self.dim())
    axes[dim0], axes[dim1] = axes[dim1], axes[dim0]
    axes = tuple(axes)
    return _view_apply(
        self, "TransposeBackward0", _layout.permute, axes, fn=_permute_fn, axes=axes
    )


def T(self: Tensor) -> Tensor:  # noqa: N802 -- torch's name
    axes = tuple(range(self.dim()))[::-1]
    return _view_apply(
        self, "PermuteBackward0", _layout.permute, axes, fn=_permute_fn, axes=axes
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
    out = tuple(out)
    return _view_apply(
        self, "ExpandBackward0", _layout.expand, out, fn=_expand_fn, shape=out
    )


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


@declare
def tile(self: Tensor, *dims: Any) -> Tensor:
    """``torch.tile``: ``repeat`` with ``dims`` padded by leading ones to the
    tensor's number of dimensions."""
    reps = sizes("tile", dims, "dims")
    return repeat(self, (1,) * (self.dim() - len(reps)) + reps)


@declare
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
    return _view_apply(self, name, _layout.squeeze, axis, fn=_squeeze_fn, axis=axis)


@declare
def unsqueeze(self: Tensor, dim: int) -> Tensor:
    axis = wrap_dim(dim, self.dim() + 1)
    return _view_apply(
        self, "UnsqueezeBackward0", _layout.unsqueeze, axis, fn=_unsqueeze_fn, axis=axis
    )


def _slice_fn(x, *, dim, start, stop, step):
    return jax.lax.slice_in_dim(x, start, stop, step, axis=dim)


def _select_fn(x, *, dim, index):
    return jax.lax.index_in_dim(x, index, axis=dim, keepdims=False)


@declare
def select(self: Tensor, dim: int, index: int) -> Tensor:
    if not self.dim():
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, self.dim())
    value, size = _as_int(index), self.shape[dim]
    if value is None:
        raise TypeError(
            f"select(): argument 'index' (position 2) must be int, not "
            f"{type(index).__name__}"
        )
    if not -size <= value < size:
        raise IndexError(
            f"select(): index {value} out of range for tensor of size "
            f"{list(self.shape)} at dimension {dim}"
        )
    value %= size
    return _view_apply(
        self,
        "SelectBackward0",
        _layout.select,
        dim,
        value,
        fn=_select_fn,
        dim=dim,
        index=value,
    )


def _slice(
    self: Tensor, dim: int, start: int, stop: int, step: int = 1, name=None, multi=None
) -> Tensor:
    """``self`` sliced on ``dim``; start/stop within the size, step > 0."""
    return _view_apply(
        self,
        name or "SliceBackward0",
        _layout.slice_,
        dim,
        start,
        stop,
        step,
        fn=_slice_fn,
        multi=multi,
        dim=dim,
        start=start,
        stop=stop,
        step=step,
    )


@declare
def narrow(self: Tensor, dim: int, start: Any, length: int) -> Tensor:
    if not self.dim():
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, self.dim())
    size = self.shape[dim]
    if isinstance(start, TensorBase) and (
        start.dim() or start.dtype.is_floating_point or start.dtype is _dtype.bool
    ):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    start = _as_int(start)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but "
            f"got {start})"
        )
    start = start + size if start < 0 else start
    if start + length > size:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({size})."
        )
    return _slice(self, dim, start, start + length)


@declare
def split(self: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    dim = wrap_dim(dim, self.dim())
    size = self.shape[dim] if self.dim() else 1
    if isinstance(split_size_or_sections, list | tuple):
        sections = [int(v) for v in split_size_or_sections]
        if sum(sections) != size or any(v < 0 for v in sections):
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} "
                f"(input tensor's size at dimension {dim}), but got "
                f"split_sizes={sections}"
            )
        name = "SplitWithSizesBackward0"
    else:
        step = _as_int(split_size_or_sections)
        if step is None or step < 0:
            raise RuntimeError(
                f"split expects split_size be non-negative, but got split_size={step}"
            )
        if step == 0 and size:
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension "
                f"size of {size}"
            )
        count = max(1, -(-size // step)) if step else 1
        sections = [min(step, size - i * step) for i in range(count)]
        name = "SplitBackward0"
    return _pieces(self, dim, sections, name)


def _pieces(self: Tensor, dim: int, sections: list[int], name: str) -> tuple:
    out, start = [], 0
    for i, n in enumerate(sections):
        out.append(_slice(self, dim, start, start + n, name=name, multi=(name, i)))
        start += n
    return tuple(out)


@declare
def chunk(self: Tensor, chunks: int, dim: int = 0) -> tuple:
    if chunks <= 0:
        raise RuntimeError(
            f"chunk expects `chunks` to be greater than 0, got: {chunks}"
        )
    dim = wrap_dim(dim, self.dim())
    size = self.shape[dim]
    step = -(-size // chunks)
    if step == 0:
        return _pieces(self, dim, [0] * chunks, "SplitBackward0")
    return split(self, step, dim)


@declare
def split_with_sizes(self: Tensor, split_sizes: Any, dim: int = 0) -> tuple:
    return split(self, list(split_sizes), dim)


def _unsafe(pieces: tuple, self: Tensor, dim: int, name: str) -> tuple:
    """``pieces`` of ``self`` again, under torch's ``unsafe_*`` node ``name``."""
    dim = wrap_dim(dim, self.dim())
    return _pieces(self, dim, [p.shape[dim] if p.dim() else 1 for p in pieces], name)


@declare
def unsafe_split(self: Tensor, split_size: Any, dim: int = 0) -> tuple:
    """``torch.unsafe_split``: ``split`` (torch's pieces share no version counter
    with ``self``; compat's are views as ``split``'s)."""
    return _unsafe(split(self, split_size, dim), self, dim, "UnsafeSplitBackward0")


@declare
def unsafe_split_with_sizes(self: Tensor, split_sizes: Any, dim: int = 0) -> tuple:
    return _unsafe(
        split(self, list(split_sizes), dim), self, dim, "UnsafeSplitWithSizesBackward0"
    )


@declare
def unsafe_chunk(self: Tensor, chunks: int, dim: int = 0) -> tuple:
    return _unsafe(chunk(self, chunks, dim), self, dim, "UnsafeSplitBackward0")


def _split_along(name: str, dim: int, least: int):
    """``torch.hsplit``/``vsplit``/``dsplit``: ``tensor_split`` along ``dim``, an
    int being a count of equal pieces."""

    def fn(self: Tensor, indices_or_sections: Any) -> tuple:
        if self.dim() < least:
            raise RuntimeError(
                f"torch.{name} requires a tensor with at least {least} dimension, "
                f"but got a tensor with {self.dim()} dimensions!"
            )
        if not isinstance(indices_or_sections, int | list | tuple | TensorBase):
            got = type(indices_or_sections).__name__
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got "
                f"(Tensor, {got}), but expected one of:\n * (Tensor input, int "
                "sections)\n      didn't match because some of the arguments have "
                f"invalid types: (Tensor, !{got}!)\n * (Tensor input, tuple of ints "
                "indices)\n      didn't match because some of the arguments have "
                f"invalid types: (Tensor, !{got}!)\n"
            )
        axis = 0 if name == "hsplit" and self.dim() == 1 else dim
        sections = _as_int(indices_or_sections)
        if sections is not None and not isinstance(indices_or_sections, TensorBase):
            size = self.shape[axis]
            if sections == 0 or size % sections:
                raise RuntimeError(
                    f"torch.{name} attempted to split along dimension {axis}, but "
                    f"the size of the dimension {size} is not divisible by the "
                    f"split_size {sections}!"
                )
        return tensor_split(self, indices_or_sections, axis)

    fn.__name__ = fn.__qualname__ = name
    return fn


hsplit = _split_along("hsplit", 1, 1)
declare.alias("hsplit", hsplit)
vsplit = _split_along("vsplit", 0, 2)
declare.alias("vsplit", vsplit)
dsplit = _split_along("dsplit", 2, 3)
declare.alias("dsplit", dsplit)


@declare
def ravel(self: Tensor) -> Tensor:
    return reshape(self, -1)


@declare
def narrow_copy(self: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """``torch.narrow_copy``: ``narrow``'s elements as a new tensor."""
    if _as_int(dim) is not None and dim >= self.dim():
        raise RuntimeError(
            "Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but "
            "got false.  (Could this error message be improved?  If so, please "
            "report an enhancement request to PyTorch.)"
        )
    narrow(self, dim, start, length)  # torch's checks and wording
    dim = wrap_dim(dim, self.dim())
    begin = _as_int(start)
    begin = begin + self.shape[dim] if begin < 0 else begin
    return apply(
        "NarrowCopyBackward0",
        _slice_fn,
        self,
        dim=dim,
        start=begin,
        stop=begin + length,
        step=1,
    )


def sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """``x.sum_to_size(*size)``: summed down to ``size``, which ``x`` must expand
    from."""
    target = sizes("sum_to_size", size)
    if not target:  # torch: the sum of every element
        return self.sum()
    shape = tuple(self.shape)
    lead = len(shape) - len(target)
    if lead < 0 or any(
        t not in (1, n) for t, n in zip(target, shape[lead:], strict=True)
    ):
        raise RuntimeError(
            f"size {{{list(target)}}} is not expandable to size {{{list(shape)}}}."
        )
    dims = tuple(range(lead)) + tuple(
        lead + i for i, t in enumerate(target) if t == 1 and shape[lead + i] != 1
    )
    if not dims:
        return self
    out = self.sum(dims, keepdim=True)
    return out.view(target) if lead else out


@declare
def tensor_split(self: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple:
    dim = wrap_dim(dim, self.dim())
    size = self.shape[dim]
    if isinstance(indices_or_sections, TensorBase):
        if indices_or_sections.dtype.is_floating_point or indices_or_sections.dim() > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have integral "
                "dtype, but got "
                f"{indices_or_sections.dtype}"
                if indices_or_sections.dtype.is_floating_point
                else "tensor_split expected tensor_indices_or_sections to be a "
                "zero-dimensional or one-dimensional tensor, but got a tensor with "
                f"{indices_or_sections.dim()} dims"
            )
        if indices_or_sections.dim() == 1:
            indices_or_sections = indices_or_sections.tolist()
        else:
            indices_or_sections = indices_or_sections.item()
    if isinstance(indices_or_sections, list | tuple):
        bounds = [int(i) for i in indices_or_sections]
    else:
        n = _as_int(indices_or_sections)
        if n is None or n <= 0:
            raise RuntimeError(
                f"number of sections must be larger than 0, got {indices_or_sections}"
            )
        per, extra = divmod(size, n)
        bounds, at = [], 0
        for i in range(n - 1):
            at += per + (i < extra)
            bounds.append(at)
    out, start = [], 0
    for stop in [*bounds, size]:
        lo = min(max(start if start >= 0 else start + size, 0), size)
        hi = min(max(stop if stop >= 0 else stop + size, 0), size)
        out.append(_slice(self, dim, lo, max(lo, hi)))
        start = stop
    return tuple(out)


@declare
def unbind(self: Tensor, dim: int = 0) -> tuple:
    if not self.dim():
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = wrap_dim(dim, self.dim())
    return tuple(
        _view_apply(
            self,
            "UnbindBackward0",
            _layout.select,
            dim,
            i,
            fn=_select_fn,
            multi=("UnbindBackward0", i),
            dim=dim,
            index=i,
        )
        for i in range(self.shape[dim])
    )


@declare
def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    d1, d2 = wrap_dim(dim1, self.dim()), wrap_dim(dim2, self.dim())
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _view_apply(self, "DiagonalBackward0", _layout.diagonal, offset, d1, d2)


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    dim = wrap_dim(dimension, self.dim())
    have = self.shape[dim] if self.dim() else 1
    if size > have:
        raise RuntimeError(
            f"maximum size for tensor at dimension {dim} is {have} but size is {size}"
        )
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _view_apply(self, "UnfoldBackward0", _layout.unfold, dim, size, step)


@declare
def as_strided(
    self: Tensor, size: Any, stride: Any, storage_offset: int | None = None
) -> Tensor:
    size, stride = (
        tuple(sizes("as_strided", (size,))),
        tuple(sizes("as_strided", (stride,), "stride")),
    )
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    offset = self.storage_offset() if storage_offset is None else storage_offset
    layout = Layout(size, stride, offset)
    need = offset + sum((n - 1) * st for n, st in zip(size, stride, strict=True)) + 1
    if math.prod(size) and need > math.prod(self._s.shape):
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{offset}, and itemsize {self.element_size()} requiring a storage size "
            f"of {need * self.element_size()} are out of bounds for storage of size "
            f"{self._s.nbytes()}"
        )
    if self._view is not None and self.requires_grad:
        raise NotImplementedError(
            "as_strided with autograd on a tensor that is itself a view is not "
            "supported; call it on the base tensor"
        )
    if self._view is None:
        return _view_apply(self, "AsStridedBackward0", lambda _: layout)
    s = self._s
    array = s.pending if s.numpy is None else jnp.asarray(s.numpy)
    out = TensorBase._wrap(_layout.read(array, layout=layout))
    return _as_view(self, out, layout)


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    return expand(self, *other.shape)


@declare
def broadcast_to(self: Tensor, size: Any) -> Tensor:
    return expand(self, *sizes("broadcast_to", (size,)))


@declare
def movedim(self: Tensor, source: Any, destination: Any) -> Tensor:
    src = source if isinstance(source, list | tuple) else [source]
    dst = destination if isinstance(destination, list | tuple) else [destination]
    if len(src) != len(dst):
        raise RuntimeError(
            "movedim: Invalid source or destination dims: source "
            f"({list(src)} dims) should contain the same number of dims as "
            f"destination ({list(dst)} dims)"
        )
    n = self.dim()
    src = [wrap_dim(d, n) for d in src]
    dst = [wrap_dim(d, n) for d in dst]
    for name, dims, given in (
        ("source", src, source),
        ("destination", dst, destination),
    ):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    order = [None] * n
    for s_, d_ in zip(src, dst, strict=True):
        order[d_] = s_
    rest = iter(d for d in range(n) if d not in src)
    axes = tuple(next(rest) if o is None else o for o in order)
    return _view_apply(
        self, "PermuteBackward0", _layout.permute, axes, fn=_permute_fn, axes=axes
    )


@declare
def swapaxes(self: Tensor, axis0: int, axis1: int) -> Tensor:
    return transpose(self, axis0, axis1)


def adjoint(self: Tensor) -> Tensor:
    return transpose(self, -2, -1)


def _index_add_fn(x, index, source, *, dim, alpha):
    shape, dt = x.shape, x.dtype
    if not x.ndim:  # a 0-d tensor indexes as one of size 1
        x, source = x.reshape(1), jnp.reshape(source, (-1,))
    work = jnp.int8 if dt == jnp.bool_ else dt  # bools add as 0/1, then or
    where = (slice(None),) * dim + (index,)
    out = x.astype(work).at[where].add((alpha * source).astype(work))
    return (out != 0 if dt == jnp.bool_ else out).reshape(shape)


def _index_tensor(name: str, index: Any, size: int, dim: int, ndim: int) -> Tensor:
    if not isinstance(index, TensorBase):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if index.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(
            f"{name}_(): Expected dtype int32/int64 for index but got: "
            f"{index.dtype.scalar_type}"
        )
    if index.dim() > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    # torch's kernels word it so: a vector's, and the others'
    error = (
        _index_out_of_range
        if ndim <= 1
        else lambda value, _: RuntimeError(
            f"index {value} is out of bounds for dimension {dim} with size {size}"
        )
    )
    check_range(index, 0, size, error)
    return index


def _index_out_of_range(*_: Any) -> IndexError:
    return IndexError("index out of range in self")


@declare
def index_add(
    input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1
) -> Tensor:
    dim = wrap_dim(dim, input.dim())
    size = input.shape[dim] if input.dim() else 1
    _index_tensor("index_add", index, size, dim, input.dim())
    expected = list(input.shape)
    if expected:
        expected[dim] = index.numel()
    if list(source.shape) != expected and not (
        not input.dim() and source.numel() == index.numel() == 1
    ):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the "
            f"specified dimension. Got self.shape = {list(input.shape)} "
            f"source.shape = {list(source.shape)}"
        )
    if source.dtype is not input.dtype:
        raise RuntimeError(
            f"index_add_(): self ({input.dtype.scalar_type}) and source "
            f"({source.dtype.scalar_type}) must have the same scalar type"
        )
    return apply(
        "IndexAddBackward0", _index_add_fn, input, index, source, dim=dim, alpha=alpha
    )


saves("IndexAddBackward0", (1, 2), (2, 2))


def _diag_fn(x, *, k):
    return jnp.diag(x, k)


@declare(method=True)
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """torch.diag: a vector's diagonal matrix, or a matrix's diagonal (a copy)."""
    if input.dim() not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")
    return apply("DiagBackward0", _diag_fn, input, k=diagonal)


@declare
def broadcast_shapes(*shapes: Any) -> Any:
    from jaxblitz.compat.tensor._tensor_base import Size

    out: list[int] = []
    for shape in shapes:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if len(shape) > len(out):
            out = [1] * (len(shape) - len(out)) + out
        for i, d in enumerate(shape):
            j = len(out) - len(shape) + i
            if d != out[j] and d != 1 and out[j] != 1:
                raise RuntimeError(
                    "Shape mismatch: objects cannot be broadcast to a single shape.  "
                    "Mismatch is between arg 0 and arg 1."
                )
            out[j] = d if out[j] == 1 else out[j]
    return Size(out)


@declare
def broadcast_tensors(*tensors: Tensor) -> tuple:
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(expand(t, *shape) for t in tensors)


def clone(self: Tensor, *, memory_format: Any = None) -> Tensor:
    out = apply("CloneBackward0", _identity_fn, self)
    return laid_out(out, memory_format, self)  # (torch's default preserves)


def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    order = _info.channels_last_order(memory_format, self.dim())
    if order is not None:
        if self.is_contiguous(memory_format):
            return self
        return laid_out(apply("CloneBackward0", _identity_fn, self), memory_format)
    if self.is_contiguous():
        return self
    return apply("CloneBackward0", _identity_fn, self)  # row-major, unlike clone


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


@declare
def cat(tensors: Any, dim: int = 0, *, out: Any = None) -> Tensor:
    if _autocast.on:
        return _autocast.run("cat", cat, tensors, dim, out=out)
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    dt = tensors[0].dtype
    for other in tensors[1:]:
        dt = _dtype.promote(dt, other.dtype)
    # torch's legacy rule: 1-D empty tensors are left out (their dtype counts).
    keep = tuple(tuple(t.shape) != (0,) for t in tensors)
    if not any(keep):
        return apply("CatBackward0", _cat_fn, *tensors, axis=0, dt=dt.np_name)
    everything, tensors = tensors, [t for t, k in zip(tensors, keep, strict=True) if k]
    for i, t in enumerate(tensors):
        if not t.dim():
            raise RuntimeError(
                f"zero-dimensional tensor (at position {i}) cannot be concatenated"
            )
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
    return apply(
        "CatBackward0",
        _cat_fn,
        *everything,
        axis=dim,
        dt=dt.np_name,
        keep=None if all(keep) else keep,
    )


concat = concatenate = cat
declare.alias("concatenate", concatenate)
declare.alias("concat", concat)


def _diff_fn(x, *, n, axis):
    return jnp.diff(x, n, axis)  # bool: != as torch's logical_xor


@declare
def diff(
    input: Tensor,
    n: int = 1,
    dim: int = -1,
    prepend: Tensor | None = None,
    append: Tensor | None = None,
) -> Tensor:
    """``torch.diff``: the ``n``-th forward difference along ``dim``, after
    ``prepend`` and ``append`` are joined on (``cat``)."""
    if input.dim() < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    ends = [t for t in (prepend, append) if t is not None]
    if any(t.dim() != input.dim() for t in ends):
        raise RuntimeError(
            "diff expects prepend or append to be the same dimension as input"
        )
    axis = wrap_dim(dim, input.dim())
    if n and ends:
        input = cat([t for t in (prepend, input, append) if t is not None], axis)
    return apply("SubBackward0", _diff_fn, input, n=n, axis=axis)


@declare
def stack(tensors: Any, dim: int = 0) -> Tensor:
    if _autocast.on:
        return _autocast.run("stack", stack, tensors, dim)
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
    return apply("StackBackward0", _stack_fn, *tensors, axis=dim, dt=dt.np_name)


# ---------------------------------------------------------------------------
# Indexing
# ---------------------------------------------------------------------------


def _get_fn(x, *arrays, spec):
    x, spec = _dynamic_slices(x, spec, arrays)
    return _take(x, spec, arrays)


def _dynamic_slices(x, spec, arrays):
    """``x`` cut by the spec's slices whose start is an argument (``"ds"``:
    the start's position among the arrays, the slice's length), and the spec
    with those dimensions whole: ``x[i:i + 4]`` for every ``i`` is one program."""
    if not any(kind == "ds" for kind, _ in spec):
        return x, spec
    used = sum(kind in ("i", "d", "a", "s", "ds") for kind, _ in spec)
    dim, rest = 0, []
    for kind, item in spec:
        if kind == "ds":
            k, length = item
            x = jax.lax.dynamic_slice_in_dim(x, arrays[k], length, axis=dim)
            rest.append(("s", (None, None, None)))
            dim += 1
            continue
        if kind in ("i", "d", "a", "s"):
            dim += 1
        elif kind == "c" and item is Ellipsis:
            dim += x.ndim - used
        rest.append((kind, item))
    return x, tuple(rest)


def _set_fn(x, value, *arrays, spec):
    value = jnp.asarray(value).astype(x.dtype)
    steps = _torch_steps(spec)
    if steps is None:
        return x.at[_build(spec, arrays)].set(value)
    first, second = steps
    inner = x[_build(first, arrays)]
    return x.at[_build(first, arrays)].set(inner.at[_build(second, arrays)].set(value))


def _take(x, spec, arrays):
    """``x[index]`` as torch reads it (``x`` a JAX or NumPy array)."""
    steps = _torch_steps(spec)
    if steps is None:
        return x[_build(spec, arrays)]
    first, second = steps
    return x[_build(first, arrays)][_build(second, arrays)]


def _torch_steps(spec):
    """``spec`` as two NumPy-style indices, ints first, or None if one will do.

    torch selects the integer indices before it indexes with tensors, so
    ``x[1, :, [0, 3]]`` of a (2, 3, 4) tensor is (3, 2); NumPy counts the integer
    as an advanced index too and puts the broadcast dimensions first: (2, 3).
    """
    kinds = {kind for kind, _ in spec}
    if "i" not in kinds or "a" not in kinds:
        return None
    first, second = [], []
    for kind, value in spec:
        if kind == "c" and value is not Ellipsis:  # None or a bool: no dim of x
            second.append((kind, value))
        elif kind in ("a", "s"):  # kept whole now, indexed in the second step
            first.append(("s", (None, None, None)))
            second.append((kind, value))
        else:  # an int is consumed now; Ellipsis stands in both steps
            first.append((kind, value))
            if kind == "c":
                second.append((kind, value))
    return tuple(first), tuple(second)


def _build(spec, arrays):
    out = []
    for kind, item in spec:
        if kind in ("a", "d"):  # an index array; "d": an int given as an argument
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
        if dt not in (_dtype.int64, _dtype.int32, _dtype.bool):
            raise IndexError(
                "tensors used as indices must be long, int, byte or bool tensors"
            )
        # a mask's values decide the result's shape: read now; indices may be
        # pending (lazy), their bounds checked at the sync point
        return np.asarray(item._data, bool) if dt is _dtype.bool else item._value()
    array = np.asarray(item)
    if array.size and array.dtype.kind not in "biu":
        raise IndexError(
            "tensors used as indices must be long, int, byte or bool tensors"
        )
    return array.astype(np.int64) if not array.size else array


def _sequence_as_tuple(index: list) -> bool:
    """torch's rule for ``x[[...]]``: a short list holding slices, Ellipsis, None,
    sequences or tensors is read as a tuple of indices (deprecated in torch)."""
    return len(index) < 32 and any(
        item is None
        or item is Ellipsis
        or isinstance(item, slice | list | tuple | TensorBase | np.ndarray)
        for item in index
    )


def _parts(index: Any) -> list[tuple[str, Any, int]]:
    """``index`` as ``(kind, value, dims it consumes)``; refuses what torch does."""
    parts = []
    if isinstance(index, list) and _sequence_as_tuple(index):
        warnings.warn(
            "Using a non-tuple sequence for multidimensional indexing is deprecated "
            "and will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. "
            "In pytorch 2.9 this will be interpreted as tensor index, "
            "x[torch.tensor(seq)], which will result either in an error or a "
            "different result",
            UserWarning,
            stacklevel=4,
        )
        index = tuple(index)
    for item in index if isinstance(index, tuple) else (index,):
        if isinstance(item, range | tuple):  # torch: any sequence of ints, as a list
            item = list(item)
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
        elif isinstance(item, jax.Array | np.ndarray | lazy.LazyArray):
            values = _concrete(item) if item.ndim == 0 else None
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
        elif type(item) is MetaArray:  # a meta index: positions of no value
            if not item.ndim:  # torch reads a 0-d index as a number
                raise RuntimeError(NO_ITEM)
            parts.append(("a", item, 1))
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
            check_array_range(
                value,
                -shape[dim],
                shape[dim],
                lambda v, _, dim=dim: _out_of_bounds(v, dim, shape[dim]),
            )
        elif kind == "mask":
            for j, size in enumerate(value.shape):
                if size != shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {list(value.shape)} at index {j} "
                        "does not match the shape of the indexed tensor "
                        f"{list(shape)} at index {dim + j}"
                    )
        dim += n


def _spec(
    index: Any, shape: tuple[int, ...], parts: list | None = None
) -> tuple[tuple, list, str]:
    """A hashable description of ``index`` plus its array parts and torch's name."""
    parts = _parts(index) if parts is None else parts
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


def _is_basic(parts: list) -> bool:
    """Only ints, slices, None and Ellipsis: torch returns a view."""
    return all(
        kind in ("i", "s", "...") or (kind == "c" and value is None)
        for kind, value, _ in parts
    )


def _basic_view(self: Tensor, parts: list) -> Tensor:
    """``self[index]`` for a basic index: a view, named for torch's last step."""
    layout, ndim = self._place(), self.dim()
    used = sum(n for _, _, n in parts)
    spec, dim, name, at = [], 0, "AliasBackward0", []
    for kind, value, _ in parts:
        if kind == "...":
            dim += ndim - used
            spec.append(("c", Ellipsis))
        elif kind == "i":
            index = value + layout.shape[dim] if value < 0 else value
            layout = _layout.select(layout, dim, index)
            # an argument of the program, not part of it: x[i] for every i is
            # one program (a loop of x[i] = v compiled one per i)
            spec.append(("d", len(at)))
            at.append(np.int64(index))
            name = "SelectBackward0"
        elif kind == "s":
            size = layout.shape[dim]
            start, stop, step = slice(*value).indices(size)
            layout = _layout.slice_(layout, dim, start, max(start, stop), step)
            if step == 1 and 0 < stop - start < size:
                # a part of the dimension: its start an argument of the program,
                # as an int index's is (a loop over x[i:i + n] is one program)
                spec.append(("ds", (len(at), stop - start)))
                at.append(np.int64(start))
            else:
                spec.append(("s", (start, max(start, stop), step)))
            dim, name = dim + 1, "SliceBackward0"
        else:  # None: a new axis
            layout = _layout.unsqueeze(layout, dim)
            spec.append(("c", None))
            dim, name = dim + 1, "UnsqueezeBackward0"
    out = apply(name, _get_fn, self, *at, spec=tuple(spec))
    return _as_view(self, out, layout)


def getitem(self: Tensor, index: Any) -> Tensor:
    parts = _parts(index)
    if _is_basic(parts):
        _check_bounds(parts, tuple(self.shape))
        return _basic_view(self, parts)
    spec, arrays, name = _spec(index, tuple(self.shape), parts)
    return apply(name, _get_fn, self, *arrays, spec=spec)


def _fit_value(value: Any, spec: tuple, arrays: list, x: Tensor) -> Any:
    """``value`` fitted to ``x[index]``'s shape as torch fits it, or an error.

    Leading size-1 dimensions beyond the target's are dropped (torch allows
    ``m[0] = torch.ones(1, 4)``); anything else must broadcast.
    """
    numbers = int | float | complex | np.number | np.bool_
    if not isinstance(value, TensorBase | numbers):
        raise TypeError(
            f"can't assign a {_type_name(value)} to a torch.{x.dtype.scalar_type}Tensor"
        )
    if not isinstance(value, TensorBase):
        checked_scalar(value, x.dtype)
    # the indexed shape, which the indices' values do not change: read with
    # zeros of their shapes (they may be pending, or traced)
    indices = [np.zeros(a.shape, np.int64) for a in arrays]
    zeros = np.broadcast_to(np.zeros((), np.int8), tuple(x.shape))  # no memory
    target = _take(zeros, spec, indices)
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


_C_NAMES = {
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "float16": "at::Half",
    "bfloat16": "at::BFloat16",
    "float32": "float",
    "float64": "double",
}


def checked_scalar(value: Any, dt: Any) -> None:
    """torch's check when a Python number is written into a tensor of ``dt``:
    a value outside the dtype's range (nan or inf into an integer) is an error."""
    if dt is _dtype.bool or isinstance(value, complex) or dt.name not in _C_NAMES:
        return
    value = value.item() if isinstance(value, np.generic) else value
    if dt.is_floating_point:
        limit = float(jnp.finfo(dt.np).max)
        bad = math.isfinite(value) and abs(value) > limit
    elif isinstance(value, float):
        info = np.iinfo(dt.np)
        bad = not math.isfinite(value) or not info.min <= value <= info.max
    else:
        info = np.iinfo(dt.np)
        low = -info.max if info.min == 0 else info.min  # unsigned: negatives wrap
        bad = not low <= int(value) <= info.max
    if bad:
        raise RuntimeError(
            f"value cannot be converted to type {_C_NAMES[dt.name]} without overflow"
        )


_NUMBERS = (int, float, np.integer, np.floating)  # bool is an int


def _store_on_host(self: Tensor, index: Any, value: Any) -> bool:
    """``x[i] = v`` / ``x[i, j] = v``: one element of a CPU tensor outside
    autograd set to a number, stored in place in the storage's host copy (as
    torch stores it), not by a program. False where it does not apply (then the
    general path decides, with torch's errors)."""
    if not isinstance(value, _NUMBERS) or self.requires_grad_flag:
        return False
    if self._view is not None or self._as is not None:
        return False
    s = self._s
    host = s.numpy
    if host is None:
        array = lazy.current(s.pending)
        if not isinstance(array, jax.Array) or isinstance(array, jax.core.Tracer):
            return False  # pending (recorded) or traced: the general path
        if _dtype.device_of(array).type != "cpu":
            return False
    kind = (host if host is not None else array).dtype
    where = index if type(index) is tuple else (index,)
    shape = (host if host is not None else array).shape
    if len(where) != len(shape) or kind.kind not in "biuf":
        return False
    for i, n in zip(where, shape, strict=True):
        if type(i) is not int or not -n <= i < n:
            return False
    if kind.kind in "iu":  # torch truncates a float and wraps an int: in range only
        info = np.iinfo(kind)
        if not (math.isfinite(value) and info.min <= value <= info.max):
            return False
    if host is None:  # the first such write: the storage moves to the host
        host = np.array(array)
        s.numpy, s.pending = host, None
    host[where] = value
    s.exclusive = False
    self._vc[0] += 1
    return True


def _mask_fill_fn(x, value, mask):
    mask = mask.reshape(mask.shape + (1,) * (x.ndim - mask.ndim))
    return jnp.where(mask, jnp.asarray(value).astype(x.dtype), x)


def mask_where_value(self: Tensor, index: Any, value: Any) -> Any:
    """``self[index] = value`` as a ``where``, when ``index`` is a boolean mask
    over ``self``'s leading dimensions and ``value`` one value: the result's shape
    does not depend on the mask's values, so it is recorded lazily, where the
    general path would read the mask to find its indices. The value as the
    ``where``'s operand; None where this does not apply."""
    if not (isinstance(index, TensorBase) and index.dtype is _dtype.bool):
        return None
    k = index.dim()
    if not k or tuple(index.shape) != tuple(self.shape[:k]):
        return None
    if isinstance(value, TensorBase):
        if value.dim() or value.dtype is not self.dtype:
            return None
    elif not (self.dtype.is_floating_point and isinstance(value, _NUMBERS)):
        return None  # an integer's wrap-around and range: the general path
    tensors = [index, *([value] if isinstance(value, TensorBase) else [])]
    here = _dtype.tensor_device(self)
    if any(_dtype.tensor_device(t) != here for t in tensors):
        return None  # torch's device rules for indices: the general path
    if not isinstance(value, TensorBase):
        value = np.asarray(value)  # an operand: each value compiles nothing
    return value


def mask_fill(self: Tensor, value: Any, mask: Tensor) -> Tensor:
    """``self`` with ``value`` where ``mask`` (:func:`mask_where_value`'s)."""
    return apply("IndexPutBackward0", _mask_fill_fn, self, value, mask)


def _fill_by_mask(self: Tensor, index: Any, value: Any) -> bool:
    """``x[mask] = v`` as a ``where`` (:func:`mask_where_value`); False where it
    does not apply."""
    value = mask_where_value(self, index, value)
    if value is None:
        return False
    self._check_inplace()
    self._inplace(mask_fill(self, value, index))
    return True


def setitem(self: Tensor, index: Any, value: Any) -> None:
    if _store_on_host(self, index, value) or _fill_by_mask(self, index, value):
        return
    parts = _parts(index)
    spec, arrays, _ = _spec(index, tuple(self.shape), parts)
    value = _fit_value(value, spec, arrays, self)
    if isinstance(value, np.ndarray):
        value = TensorBase._wrap(jnp.asarray(value))
    if _is_basic(parts):  # torch: self[index].copy_(value)
        _basic_view(self, parts).copy_(value)
        return
    self._check_inplace()
    if isinstance(value, TensorBase) and value.dtype is not self.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{self.dtype.scalar_type} for the destination and "
            f"{value.dtype.scalar_type} for the source."
        )
    result = apply("IndexPutBackward0", _set_fn, self, value, *arrays, spec=spec)
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
    expand, repeat, tile, squeeze, unsqueeze = expand, repeat, tile, squeeze, unsqueeze
    clone, contiguous = clone, contiguous
    view_as, reshape_as, unflatten, select, narrow = (
        view_as,
        reshape_as,
        unflatten,
        select,
        narrow,
    )
    split, chunk, tensor_split, unbind = split, chunk, tensor_split, unbind
    split_with_sizes, unsafe_split, unsafe_chunk = (
        split_with_sizes,
        unsafe_split,
        unsafe_chunk,
    )
    unsafe_split_with_sizes = unsafe_split_with_sizes
    hsplit, vsplit, dsplit, ravel = hsplit, vsplit, dsplit, ravel
    narrow_copy, sum_to_size = narrow_copy, sum_to_size
    diagonal, unfold, as_strided = diagonal, unfold, as_strided
    expand_as, broadcast_to, movedim, moveaxis = (
        expand_as,
        broadcast_to,
        movedim,
        movedim,
    )
    swapaxes = swapdims = swapaxes
    diff = diff
    index_add = index_add

    def index_add_(
        self, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1
    ) -> Tensor:
        self._check_inplace()
        return self._inplace(index_add(self, dim, index, source, alpha=alpha))

    adjoint = adjoint
    __getitem__, __setitem__ = getitem, setitem
    T = property(T)

    @property
    def mT(self) -> Tensor:  # noqa: N802 -- torch's name
        return transpose(self, -2, -1)

    def t_(self) -> Tensor:
        return _restride(self, t(self), "TBackward1")

    def transpose_(self, dim0: int, dim1: int) -> Tensor:
        return _restride(self, transpose(self, dim0, dim1), "TransposeBackward1")

    def swapdims_(self, dim0: int, dim1: int) -> Tensor:
        return self.transpose_(dim0, dim1)

    swapaxes_ = swapdims_

    def unsqueeze_(self, dim: int) -> Tensor:
        return _restride(self, unsqueeze(self, dim), "UnsqueezeBackward1")

    def squeeze_(self, dim: Any = None) -> Tensor:
        name = (
            "SqueezeBackward3"
            if dim is None
            else "SqueezeBackward5"
            if isinstance(dim, tuple | list)
            else "SqueezeBackward4"
        )
        return _restride(self, squeeze(self, dim), name)

    def storage(self) -> TypedStorage:
        warn_typed_storage(stacklevel=3)
        return TypedStorage(self._s, self.dtype)


def warn_typed_storage(stacklevel: int) -> None:
    """torch's warning for a typed storage (``Tensor.storage()``,
    ``torch.cuda.FloatStorage``)."""
    warnings.warn(
        "TypedStorage is deprecated. It will be removed in the future and "
        "UntypedStorage will be the only storage class. This should only matter "
        "to you if you are using storages directly.  To access UntypedStorage "
        "directly, use tensor.untyped_storage() instead of tensor.storage()",
        UserWarning,
        stacklevel=stacklevel,
    )


def _restride(self: Tensor, view: Tensor, name: str) -> Tensor:
    """torch's ``t_``/``transpose_``/``unsqueeze_``...: ``self`` takes the layout
    of ``view`` (``self`` viewed) and its history, renamed ``name``."""
    self._check_inplace()
    layout = view._place()
    self._view = None if layout == _layout.identity(self._s.shape) else layout
    self._cache, self._vc[0] = view._cache, self._vc[0] + 1
    if view._grad_fn is not None:
        view._grad_fn.__class__ = node_class(name)
        self._grad_fn = view._grad_fn
    return self


class TypedStorage(UntypedStorage):
    """What the deprecated ``Tensor.storage()`` returns: counts elements."""

    def __init__(self, storage: Any, dtype: Any) -> None:
        super().__init__(storage)
        self.dtype = dtype

    def size(self) -> int:
        return self.nbytes() // self.dtype.itemsize

    __len__ = size


swapdims, moveaxis = swapaxes, movedim
declare.alias("moveaxis", moveaxis)
declare.alias("swapdims", swapdims)
