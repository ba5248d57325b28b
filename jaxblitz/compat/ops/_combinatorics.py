"""Blitz 1, "Tensors": index sets and structured matrices -- ``unravel_index``,
``tril_indices``/``triu_indices``, ``combinations``, ``block_diag`` and
``vander``.

``unravel_index``, ``combinations`` and ``vander`` are made of the ops torch's
own composites use (``torch/functional.py``, ATen's Itertools.cpp and
``vander``), so their gradients, and ``vander``'s refusal of one (torch's
``cumprod`` there overwrites what its backward saved), are those ops'.
``block_diag`` is one recorded op, torch's ``BlockDiagBackward0``. The index
sets depend on sizes only, and are made on the host.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._arith import floor_divide, remainder
from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.ops._funnel import _not_implemented, _tensor
from jaxblitz.compat.ops._gather import masked_select
from jaxblitz.compat.ops._joining import meshgrid
from jaxblitz.compat.ops._reduce import cumprod
from jaxblitz.compat.ops.shape_ops import _tensor_list, stack
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._tensor_base import TensorBase
from jaxblitz.compat.tensor.creation import _check_layout, _int, empty, tensor

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

# ---------------------------------------------------------------------------
# unravel_index
# ---------------------------------------------------------------------------


@declare
def unravel_index(indices: Tensor, shape: Any) -> tuple:
    """``torch.unravel_index``: flat indices into ``shape`` as one index tensor
    (int64) per dimension; negative indices count from the end, as Python's
    ``divmod`` does (``indices // strides % shape``, torch's formula)."""
    if not isinstance(indices, TensorBase):  # torch calls indices.is_complex()
        raise AttributeError(
            f"'{type(indices).__name__}' object has no attribute 'is_complex'"
        )
    if indices.dtype.is_floating_point or indices.dtype is _dtype.bool:
        raise TypeError(
            f"expected 'indices' to be integer dtype, but got {indices.dtype}"
        )
    if not isinstance(shape, int | Sequence):
        raise TypeError(
            f"expected 'shape' to be int or sequence of ints, but got {type(shape)}"
        )
    if isinstance(shape, int):
        shape = (shape,)
    for dim in shape:
        if not isinstance(dim, int):
            raise TypeError(
                f"expected 'shape' sequence to only contain ints, but got {type(dim)}"
            )
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    # each dimension's stride: the product of the sizes after it
    strides = list(itertools.accumulate(reversed((*shape[1:], 1)), operator.mul))
    strides.reverse()
    flat = floor_divide(indices.unsqueeze(-1), tensor(strides, dtype=_dtype.int64))
    return remainder(flat, tensor(shape, dtype=_dtype.int64)).unbind(-1)


# ---------------------------------------------------------------------------
# tril_indices, triu_indices
# ---------------------------------------------------------------------------


def _triangle(
    name: str,
    row: Any,
    col: Any,
    offset: Any,
    dtype: Any,
    device: Any,
    layout: Any,
    requires_grad: bool,
) -> Tensor:
    row, col = _int(name, "row", 1, row), _int(name, "col", 2, col)
    offset = _int(name, "offset", 3, offset)
    for arg, value in (("row", row), ("col", col)):
        if value < 0:
            raise RuntimeError(f"{arg} must be non-negative, got{value}")
    _check_layout(name, layout)
    dt = _dtype.int64 if dtype is None else _dtype.to_dtype(dtype)
    if dt not in (_dtype.int32, _dtype.int64):  # torch's index types only
        raise _not_implemented(name, dt)
    pick = np.tril_indices if name == "tril_indices" else np.triu_indices
    indices = np.stack(pick(row, offset, col)).astype(dt.np)  # (2, n), row-major
    return tensor(indices, dtype=dt, device=device, requires_grad=requires_grad)


@declare
def tril_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: Any = None,
    device: Any = None,
    layout: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """``torch.tril_indices``: the (row, column) indices of a ``row`` x ``col``
    matrix's lower triangle (at and below diagonal ``offset``), as ``(2, n)``."""
    return _triangle(
        "tril_indices", row, col, offset, dtype, device, layout, requires_grad
    )


@declare
def triu_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: Any = None,
    device: Any = None,
    layout: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """``torch.triu_indices``: the upper triangle's, as :func:`tril_indices`."""
    return _triangle(
        "triu_indices", row, col, offset, dtype, device, layout, requires_grad
    )


# ---------------------------------------------------------------------------
# combinations
# ---------------------------------------------------------------------------


def _ordered_mask(n: int, r: int, with_replacement: bool) -> np.ndarray:
    """torch's _triu_mask: True where the r-dim grid index is i < j < k ...
    (i <= j <= k ... with replacement)."""
    grids = np.meshgrid(*[np.arange(n)] * r, indexing="ij")
    before = operator.le if with_replacement else operator.lt
    mask = np.ones((n,) * r, bool)
    for a, b in itertools.pairwise(grids):
        mask &= before(a, b)
    return mask


@declare
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """``torch.combinations``: the length-``r`` combinations of a 1-D tensor's
    elements, one per row, in itertools' order."""
    _tensor("combinations", input)
    r = _int("combinations", "r", 2, r)
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty(0, dtype=input.dtype)
    mask = tensor(_ordered_mask(input.numel(), r, bool(with_replacement)))
    grids = meshgrid(*[input] * r, indexing="ij")
    return stack([masked_select(g, mask) for g in grids], 1)


# ---------------------------------------------------------------------------
# block_diag
# ---------------------------------------------------------------------------


def _block_diag_fn(*blocks, dt):
    blocks = [b.reshape((1,) * (2 - b.ndim) + b.shape) for b in blocks]  # to 2-D
    rows = sum(b.shape[0] for b in blocks)
    cols = sum(b.shape[1] for b in blocks)
    out = jnp.zeros((rows, cols), dt)
    i = j = 0
    for b in blocks:
        out = out.at[i : i + b.shape[0], j : j + b.shape[1]].set(b.astype(dt))
        i, j = i + b.shape[0], j + b.shape[1]
    return out


@declare
def block_diag(*tensors: Tensor) -> Tensor:
    """``torch.block_diag``: the tensors (0-, 1- or 2-D; a vector is a row) as
    the diagonal blocks of one matrix, in their promoted dtype."""
    tensors = _tensor_list("block_diag", tensors)
    if not tensors:
        return empty(1, 0)
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                "torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                f"Input {i} has {t.dim()} dimensions"
            )
    operands = [(t.dtype, 2 if t.dim() else 1) for t in tensors]
    dt = _dtype.result_type(operands)
    return apply("BlockDiagBackward0", _block_diag_fn, *tensors, dt=dt.np_name)


# ---------------------------------------------------------------------------
# vander
# ---------------------------------------------------------------------------


@declare
def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """``torch.vander``: the Vandermonde matrix of a 1-D ``x``, its columns the
    powers ``x**(N-1)`` down to ``x**0`` (up, with ``increasing``), built as
    torch builds it: ones, then a cumulative product (integers in int64)."""
    _tensor("vander", x)
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0]
    if N is not None:
        n = _int_n(N)
        if n < 0:
            raise RuntimeError("N must be non-negative.")
    dt = _dtype.promote_types(x.dtype, _dtype.int64)
    result = empty(x.shape[0], n, dtype=dt)
    if n > 0:
        result.fill_(1)
        if n > 1:
            result[:, 1:].copy_(x.unsqueeze(1))
            # torch's cumprod kernel multiplies floats in its accumulate type
            # (float32 and float64 in double, half types in float) and rounds
            powers = cumprod(result[:, 1:], 1, dtype=_ACCUMULATE.get(dt, dt))
            result[:, 1:].copy_(powers)
    return result if increasing else result.flip(1)


_ACCUMULATE = {
    _dtype.float32: _dtype.float64,
    _dtype.float16: _dtype.float32,
    _dtype.bfloat16: _dtype.float32,
}


def _int_n(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(
            f"vander(): argument 'N' must be int, not {type(value).__name__}"
        )
    return int(value)
