"""Blitz 1, "Tensors": the ``torch.*`` functions that build grids and join
tensors out of ``reshape``, ``expand``, ``cat`` and ``stack`` -- ``meshgrid``,
``cartesian_prod``, ``atleast_1d/2d/3d`` and ``hstack``/``vstack``/``dstack``/
``column_stack`` -- as torch's own ``torch/functional.py`` and ATen composites
are: made of the ops they name, so their gradients and lazy recording are those
ops'. ``meshgrid``'s outputs are expanded views, with torch's strides."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.ops.shape_ops import _tensor_list, cat, expand, reshape, stack

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


def _tensors(name: str, tensors: tuple) -> list[Tensor]:
    """``f(a, b)`` or ``f([a, b])``: the tensors, as torch's varargs functions
    take them."""
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tuple(tensors[0])
    return _tensor_list(name, tensors)


@declare
def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    """``torch.meshgrid``: 0-D or 1-D tensors of one dtype to a grid of
    coordinates, ``"ij"`` (matrix) or ``"xy"`` (Cartesian) indexing."""
    tensors = _tensors("meshgrid", tensors)
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass "
            "the indexing argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                f"got: {t}"
            )
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("xy", "ij"):
        raise RuntimeError(
            'torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
            f"{indexing}"
        )
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:  # Cartesian: the first two axes exchanged
        tensors = [tensors[1], tensors[0], *tensors[2:]]
    shape = [t.numel() for t in tensors]
    grids = []
    for i, t in enumerate(tensors):
        view_shape = [1] * len(tensors)
        view_shape[i] = -1
        grids.append(expand(reshape(t, *view_shape), *shape))
    if swap:  # and the outputs exchanged back
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@declare
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """``torch.cartesian_prod``: every combination of the 1-D inputs' elements,
    one per row (a single input comes back as it is)."""
    tensors = _tensor_list("cartesian_prod", tensors)
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(
                "Expect a 1D vector, but got shape " + str(list(t.shape))
            )
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, -1) for g in grids], 1)


def _at_least(name: str, rank: int, tensors: tuple) -> Any:
    """``atleast_<rank>d``: one tensor for one tensor, else a tuple."""
    if len(tensors) == 1 and not isinstance(tensors[0], list | tuple):
        return _raise(tensors[0], rank)
    return tuple(_raise(t, rank) for t in _tensors(name, tensors))


def _raise(t: Tensor, rank: int) -> Tensor:
    """``t`` with unit dims added as torch's atleast_nd adds them: (n,) is
    (1, n) in 2-D and (1, n, 1) in 3-D; (m, n) is (m, n, 1)."""
    if t.dim() >= rank:
        return t
    shape = tuple(t.shape)
    if t.dim() == 0:
        return reshape(t, *([1] * rank))
    if t.dim() == 1:
        return reshape(t, *((1, shape[0]) if rank == 2 else (1, shape[0], 1)))
    return reshape(t, *shape, 1)  # 2-D to 3-D


@declare
def atleast_1d(*tensors: Any) -> Any:
    return _at_least("atleast_1d", 1, tensors)


@declare
def atleast_2d(*tensors: Any) -> Any:
    return _at_least("atleast_2d", 2, tensors)


@declare
def atleast_3d(*tensors: Any) -> Any:
    return _at_least("atleast_3d", 3, tensors)


def _nonempty(name: str, tensors: Any) -> list[Tensor]:
    tensors = _tensor_list(name, tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


@declare
def hstack(tensors: Any) -> Tensor:
    """``torch.hstack``: joined along dim 0 when all are 1-D (after atleast_1d),
    else along dim 1."""
    tensors = [_raise(t, 1) for t in _nonempty("hstack", tensors)]
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1)


@declare
def vstack(tensors: Any) -> Tensor:
    return cat([_raise(t, 2) for t in _nonempty("vstack", tensors)], 0)


declare.alias("row_stack", vstack)


@declare
def dstack(tensors: Any) -> Tensor:
    return cat([_raise(t, 3) for t in _nonempty("dstack", tensors)], 2)


@declare
def column_stack(tensors: Any) -> Tensor:
    """``torch.column_stack``: 0-D and 1-D tensors become columns, then hstack."""
    tensors = _nonempty("column_stack", tensors)
    return hstack([reshape(t, t.numel(), 1) if t.dim() <= 1 else t for t in tensors])
