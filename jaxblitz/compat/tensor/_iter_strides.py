"""Blitz 1, "Tensors": the strides torch gives a new tensor made from others, as
pure functions of shapes and strides.

Two rules, both torch's: a copy that preserves its source's format (``clone()``,
``empty_like``, ``x.to(dtype)``: ``empty_like``'s and ``_to_copy``'s
``Preserve``), and the result of an elementwise op (TensorIterator's
``fast_set_up``, ``reorder_dimensions`` and ``allocate_or_resize_outputs``):
``(x.t() + 1).stride()`` is ``x.t()``'s, a channels-last input gives a
channels-last result.
"""

from __future__ import annotations

from functools import lru_cache

from jaxblitz.compat.tensor import _info
from jaxblitz.compat.tensor._layout import Layout, is_contiguous

Strides = tuple[int, ...]
Shape = tuple[int, ...]

_CHANNELS_LAST = _info._INNER_FIRST[_info.channels_last]


def non_overlapping_and_dense(shape: Shape, stride: Strides) -> bool:
    """torch's ``is_non_overlapping_and_dense()``: the dims of size 2 or more,
    from the smallest stride up, fill a block with no gaps or overlaps."""
    if len(shape) == 1:
        return shape[0] < 2 or stride[0] == 1
    dims = sorted(
        range(len(shape)),
        key=lambda d: (shape[d] < 2, 0 if shape[d] < 2 else stride[d]),
    )
    step = 1
    for d in dims:
        if shape[d] < 2:
            return True
        if stride[d] != step:
            return False
        step *= shape[d]
    return True


def _order(shape: Shape, strides: list[Strides]) -> list[int]:
    """The dims, fastest first, as torch's insertion sort puts them: ``strides``
    are each operand's over ``shape`` (0 where it broadcasts), asked in turn;
    a broadcast dim leaves the question to the next operand, equal strides put
    the smaller dim first, and a question no operand settles moves nothing."""

    def should_swap(d0: int, d1: int) -> int:
        for stride in strides:
            s0, s1 = stride[d0], stride[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(len(shape)))[::-1]
    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            swap = should_swap(perm[d0], perm[d1])
            if swap > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif swap < 0:
                break
    return perm


@lru_cache(maxsize=4096)
def preserved(shape: Shape, stride: Strides) -> Strides:
    """The strides of a copy that preserves ``stride``'s format (torch's
    ``Preserve``): the same where they are non-overlapping and dense, else
    dense in the same order (``infer_dense_strides``)."""
    if non_overlapping_and_dense(shape, stride):
        return stride
    out, step = [0] * len(shape), 1
    for d in _order(shape, [tuple(stride)]):
        out[d] = step
        step *= max(shape[d], 1)  # torch: a size-0 dim counts as 1 here
    return tuple(out)


def _broadcast(shape: Shape, operand: Layout) -> Strides:
    """An operand's strides over the result's ``shape``: 0 where it broadcasts
    (torch's ``compute_strides``)."""
    lead = len(shape) - len(operand.shape)
    return (0,) * lead + tuple(
        0 if size == 1 and shape[lead + d] != 1 else st
        for d, (size, st) in enumerate(zip(operand.shape, operand.stride, strict=True))
    )


def _fast(shape: Shape, operands: tuple[Layout, ...]) -> Strides | None | bool:
    """torch's ``fast_set_up`` for operands all of the result's shape: None for a
    row-major result, the result's strides, or False where it does not apply."""
    if all(is_contiguous(op) for op in operands):
        return None
    if len(shape) == 4 and all(
        _info.is_dense_in(_CHANNELS_LAST, op.shape, op.stride) for op in operands
    ):
        return _info.strides_in(_CHANNELS_LAST, shape)
    first = operands[0].stride
    if all(
        op.stride == first and non_overlapping_and_dense(op.shape, op.stride)
        for op in operands
    ):
        return first
    return False


@lru_cache(maxsize=4096)
def iterator_strides(
    shape: Shape, operands: tuple[Layout, ...], same_shape: bool
) -> Strides | None:
    """The strides torch's TensorIterator gives the result of an elementwise op
    of ``shape`` over the tensor ``operands`` (in order, offsets ignored), or
    None for row-major. ``same_shape``: every operand, a number counted as a
    0-d one, has the result's shape (torch's fast set-up)."""
    if same_shape and operands:
        fast = _fast(shape, operands)
        if fast is not False:
            return fast
    perm = _order(shape, [_broadcast(shape, op) for op in operands])
    if perm == list(range(len(shape)))[::-1]:
        return None  # torch: a plain contiguous result
    out, step = [0] * len(shape), 1
    for d in perm:
        out[d] = step
        step *= shape[d]  # (torch's compatible_stride: a size-0 dim makes 0s)
    return tuple(out)


def outer_first(stride: Strides) -> tuple[int, ...]:
    """For dense ``stride``, the dims from the largest stride to the smallest:
    the transpose that lays a row-major array out in them (a dim of size 1,
    or of a tensor with no elements, may go anywhere: no element moves)."""
    return tuple(sorted(range(len(stride)), key=lambda d: -stride[d]))
