"""Blitz 1, "Tensors": the ``*_copy`` functions of torch 2.x (``view_copy``,
``permute_copy``, ``select_copy``, ...): the view op's result as a fresh
contiguous tensor that shares no memory with its input, differentiated as the
view op is. Each is declared from one row of :data:`_COPIES`: its name, the
view op it copies and torch's signature (names, defaults) for that op.

The sparse family (``values_copy``, ``indices_copy``, ``crow_indices_copy``...)
raises torch's own error for a strided input: compat tensors are all strided.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jaxblitz.compat.autograd.grad_mode import is_grad_enabled
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.ops._funnel import _require_tensors
from jaxblitz.compat.ops.shape_ops import (
    _identity_fn,
    as_strided,
    diagonal,
    expand,
    permute,
    select,
    split,
    split_with_sizes,
    squeeze,
    t,
    transpose,
    unbind,
    unfold,
    unsqueeze,
    view,
)
from jaxblitz.compat.tensor import _dtype, _info
from jaxblitz.compat.tensor._tensor_base import wrap_dim

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


def _view_copy(input: Tensor, size: Any) -> Tensor:
    """``view_copy(x, size)`` or ``view_copy(x, dtype)``; like ``reshape``, it
    takes any input layout (the copy is made from the elements)."""
    if isinstance(size, _dtype.dtype):
        return view(input, size)
    return view(input.contiguous(), tuple(size))


def _slice(input: Tensor, dim: int = 0, start: Any = None, end: Any = None, step=1):
    """``aten::slice``: ``input[..., start:end:step]`` along ``dim``."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    dim = wrap_dim(dim, input.dim())
    return input[(slice(None),) * dim + (slice(start, end, step),)]


def _split_copy(input: Tensor, split_size: int, dim: int = 0) -> tuple:
    if not isinstance(split_size, int) or isinstance(split_size, bool):
        raise TypeError(
            "split_copy(): argument 'split_size' (position 2) must be int, not "
            f"{type(split_size).__name__}"
        )
    return split(input, split_size, dim)


# name: (the view op, torch's argument names and defaults after input, the
# grad_fn torch gives the copy, less its _copy). A default of _REQUIRED is a
# required argument.
_REQUIRED = object()
_COPIES: dict[str, tuple[Callable[..., Any], tuple[tuple[str, Any], ...], str]] = {
    "view_copy": (_view_copy, (("size", _REQUIRED),), "ViewBackward0"),
    "permute_copy": (
        lambda x, dims: permute(x, *dims),
        (("dims", _REQUIRED),),
        "PermuteBackward0",
    ),
    "expand_copy": (
        lambda x, size, implicit: expand(x, *size),
        (("size", _REQUIRED), ("implicit", False)),
        "ExpandBackward0",
    ),
    "t_copy": (t, (), "TBackward0"),
    "transpose_copy": (
        transpose,
        (("dim0", _REQUIRED), ("dim1", _REQUIRED)),
        "TransposeBackward0",
    ),
    "unsqueeze_copy": (unsqueeze, (("dim", _REQUIRED),), "UnsqueezeBackward0"),
    "squeeze_copy": (squeeze, (("dim", None),), "SqueezeBackward"),
    "select_copy": (
        select,
        (("dim", _REQUIRED), ("index", _REQUIRED)),
        "SelectBackward0",
    ),
    "slice_copy": (
        _slice,
        (("dim", 0), ("start", None), ("end", None), ("step", 1)),
        "SliceBackward0",
    ),
    "split_copy": (
        _split_copy,
        (("split_size", _REQUIRED), ("dim", 0)),
        "SplitBackward0",
    ),
    "split_with_sizes_copy": (
        split_with_sizes,
        (("split_sizes", _REQUIRED), ("dim", 0)),
        "SplitWithSizesBackward0",
    ),
    "unbind_copy": (unbind, (("dim", 0),), "UnbindBackward0"),
    "unfold_copy": (
        unfold,
        (("dimension", _REQUIRED), ("size", _REQUIRED), ("step", _REQUIRED)),
        "UnfoldBackward0",
    ),
    "diagonal_copy": (
        diagonal,
        (("offset", 0), ("dim1", 0), ("dim2", 1)),
        "DiagonalBackward0",
    ),
    "alias_copy": (lambda x: x, (), "AliasBackward0"),
    "as_strided_copy": (
        as_strided,
        (("size", _REQUIRED), ("stride", _REQUIRED), ("storage_offset", None)),
        "AsStridedBackward0",
    ),
}


def _bind(name: str, params: tuple, args: tuple, kwargs: dict) -> list[Any]:
    """``args``/``kwargs`` bound to torch's parameter ``params``, with torch's
    TypeErrors for too many, unknown or missing arguments."""
    if len(args) > len(params):
        raise TypeError(
            f"{name}() takes {len(params) + 1} positional arguments but "
            f"{len(args) + 1} were given"
        )
    values = list(args) + [_REQUIRED] * (len(params) - len(args))
    names = [p for p, _ in params]
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        values[names.index(key)] = value
    for i, (p, default) in enumerate(params):
        if values[i] is _REQUIRED:
            if default is _REQUIRED:
                raise TypeError(
                    f"{name}() missing 1 required positional argument: '{p}'"
                )
            values[i] = default
    return values


def _fresh(out: Any, grad_fn: str) -> Any:
    """The view ``out`` (or each of a tuple) copied into new contiguous memory,
    recorded under torch's ``<view grad_fn>_copy`` name."""
    if isinstance(out, tuple):
        return tuple(_fresh(o, grad_fn) for o in out)
    return apply(f"{grad_fn}_copy", _identity_fn, out)


def _copy_function(name: str) -> Callable[..., Any]:
    view_op, params, grad_fn = _COPIES[name]

    def copy(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        _require_tensors(name, input)
        bound = _bind(name, params, args, kwargs)
        node = grad_fn
        if node == "SqueezeBackward":  # torch's overloads: all, one dim, dims
            node += (
                "0" if bound[0] is None else "1" if isinstance(bound[0], int) else "2"
            )
        return _fresh(view_op(input, *bound), node)

    copy.__name__ = copy.__qualname__ = name
    view_name = name.removesuffix("_copy")
    copy.__doc__ = (
        f"``torch.{name}``: ``torch.{view_name}``'s result in new memory "
        "(no aliasing), with its gradient."
    )
    return copy


for _name in _COPIES:
    declare.alias(_name, _copy_function(_name))


@declare
def detach_copy(input: Tensor) -> Tensor:
    """``torch.detach_copy``: a detached copy. torch's result of an input that
    requires grad still requires grad, with no derivative: refused there."""
    _require_tensors("detach_copy", input)
    if input.requires_grad and is_grad_enabled():
        raise NotImplementedError(
            "torch.detach_copy of a tensor that requires grad is not supported by "
            "jaxblitz.compat (torch's result requires grad but has no derivative): "
            "use input.detach().clone()"
        )
    return input.detach().clone(memory_format=_info.contiguous_format)


def _sparse_only(name: str, what: str, layout: str) -> Callable[..., Any]:
    def refuse(input: Tensor) -> Tensor:
        _require_tensors(name, input)
        raise RuntimeError(f"{what} expected {layout} layout but got Strided")

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"``torch.{name}``: sparse tensors only (compat has none)."
    return refuse


for _name, _what, _layout in (
    ("values_copy", "values", "sparse tensor"),
    ("indices_copy", "indices", "sparse coordinate tensor"),
    ("crow_indices_copy", "crow_indices", "sparse row compressed tensor"),
    ("col_indices_copy", "col_indices", "sparse row compressed tensor"),
    ("ccol_indices_copy", "ccol_indices", "sparse column compressed tensor"),
    ("row_indices_copy", "row_indices", "sparse column compressed tensor"),
):
    declare.alias(_name, _sparse_only(_name, _what, _layout))
