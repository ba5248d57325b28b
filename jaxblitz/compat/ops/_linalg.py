"""Blitz 1, "Tensors": matrix products (``matmul``, ``mm``, ``mv``, ``dot``,
``bmm``, ``addmm``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._funnel import (
    _addmm_fn,
    _as_tensor,
    _check_arguments,
    _matmul_fn,
    _not_implemented,
    _to_out,
)
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._dtype import _CPP

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

# ---------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------


def _check_matmul(input: Tensor, other: Tensor) -> None:
    """torch's shape and dtype errors (JAX would name dot_general's dimensions, or
    promote where torch refuses)."""
    a, b = tuple(input.shape), tuple(other.shape)
    if not a or not b:
        raise RuntimeError(
            "both arguments to matmul need to be at least 1D, but they are "
            f"{len(a)}D and {len(b)}D"
        )
    if input.dtype is not other.dtype:
        x, y = input.dtype, other.dtype
        if len(a) == len(b) == 1:
            raise RuntimeError(
                "dot : expected both vectors to have same dtype, but found "
                f"{x.scalar_type} and {y.scalar_type}"
            )
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_CPP[x.name]} != {_CPP[y.name]}"
        )
    if input.dtype is _dtype.bool:
        raise _not_implemented(
            "dot" if len(a) == len(b) == 1 else "addmm_impl_cpu_", input.dtype
        )
    if len(a) == len(b) == 1 and a != b:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to "
            f"have the same number of elements, but got {a[0]} and {b[0]} elements "
            "respectively"
        )
    if len(a) == 2 and len(b) == 1 and a[1] != b[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a[0]}), mat ({a[0]}x{a[1]}), vec ({b[0]})"
        )
    rows = a if len(a) > 1 else (1, *a)
    cols = b if len(b) > 1 else (*b, 1)
    if rows[-1] != cols[-2]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows[-2]}x{rows[-1]} and "
            f"{cols[-2]}x{cols[-1]})"
            + ("" if len(a) <= 2 and len(b) <= 2 else f" in shapes {a} @ {b}")
        )
    try:
        np.broadcast_shapes(rows[:-2], cols[:-2])
    except ValueError:
        raise RuntimeError(
            f"matmul: the batch dimensions of {list(a)} and {list(b)} do not broadcast"
        ) from None


@declare(method=True)
def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    input, other = _as_tensor(input), _as_tensor(other)
    _check_matmul(input, other)
    _check_arguments(_KERNELS.get(input.dim(), "mm"), self=input, mat2=other)
    names = {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 1): "DotBackward0"}
    name = names.get((input.dim(), other.dim()), "UnsafeViewBackward0")
    precision = _precision.of("matmul", input, other)
    return _to_out(apply(name, _matmul_fn, input, other, precision=precision), out)


saves("MmBackward0", (1, 0), (0, 1))
saves("MvBackward0", (1, 0), (0, 1))
saves("DotBackward0", (1, 0), (0, 1))


# the kernel torch's matmul reaches for an input of this many dims (its device
# check names it): mm, bmm for batches
_KERNELS = {3: "bmm"}


@declare(method=True)
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError("self must be a matrix")
    return matmul(input, mat2)


@declare(method=True)
def mv(input: Tensor, vec: Tensor) -> Tensor:
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {input.dim()}, {vec.dim()}"
        )
    return matmul(input, vec)


@declare(method=True)
def dot(input: Tensor, other: Tensor) -> Tensor:
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors"
        )
    return matmul(input, other)


@declare(method=True)
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.dim() != 3 or mat2.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError("batch1 and batch2 must have same number of batches")
    return matmul(input, mat2)


@declare(method=True, inplace=True)
def addmm(
    input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``; beta=0 ignores input's values."""
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(
            "mat1 must be a matrix" if mat1.dim() != 2 else "mat2 must be a matrix"
        )
    _check_matmul(mat1, mat2)
    if input.dtype is not mat2.dtype:
        raise RuntimeError(
            "self and mat2 must have the same dtype, but got "
            f"{input.dtype.scalar_type} and {mat2.dtype.scalar_type}"
        )
    shape = (mat1.shape[0], mat2.shape[1])
    if np.broadcast_shapes(tuple(input.shape), shape) != shape:
        raise RuntimeError(
            f"The expanded size of the tensor ({shape[1]}) must match the existing "
            f"size ({input.shape[-1]}) at non-singleton dimension 1. Target sizes: "
            f"{list(shape)}. Tensor sizes: {list(input.shape)}"
        )
    _check_arguments("addmm", self=input, mat1=mat1, mat2=mat2)
    precision = _precision.of("matmul", mat1, mat2)
    return apply(
        "AddmmBackward0",
        _addmm_fn,
        input,
        mat1,
        mat2,
        beta=beta,
        alpha=alpha,
        precision=precision,
    )


saves("AddmmBackward0", (2, 1), (1, 2))
