"""Blitz 1, "Tensors": the ``torch.linalg`` functions torch itself builds from
other ops -- ``multi_dot``, ``matrix_rank``, ``cond``, ``vander``,
``tensorinv``, ``tensorsolve``, ``diagonal`` -- built here from compat's the
same way, so that values, dtypes, gradients and lazy recording follow theirs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from jaxblitz.compat import _autocast
from jaxblitz.compat.ops._decompositions import _matrices, svdvals
from jaxblitz.compat.ops._linalg import mm
from jaxblitz.compat.ops._linalg_ex import _singular, check_info, inv_ex
from jaxblitz.compat.ops._linalg_facade import linalg
from jaxblitz.compat.ops.shape_ops import _tensor_list, cat
from jaxblitz.compat.ops.shape_ops import diagonal as _diagonal
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._dtype import _CPP
from jaxblitz.compat.tensor._tensor_base import TensorBase
from jaxblitz.compat.tensor.creation import full, zeros

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


# ---------------------------------------------------------------------------
# multi_dot
# ---------------------------------------------------------------------------


def _chain_order(dims: list[int]) -> list[list[int]]:
    """torch's matrix_chain_order: ``split[i][j]``, where the cheapest product
    of matrices i..j splits (matrix i is ``dims[i] x dims[i + 1]``)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf  # type: ignore[call-overload]
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(mats: list[Tensor], split: list[list[int]], i: int, j: int) -> Tensor:
    if i == j:
        return mats[i]
    k = split[i][j]
    return mm(_chain(mats, split, i, k), _chain(mats, split, k + 1, j))


def _product(mats: list[Tensor]) -> Tensor:
    """The product in torch's order: the cheapest one."""
    if len(mats) == 2:
        return mm(*mats)
    if len(mats) == 3:
        a, b = mats[0].shape
        c, d = mats[2].shape
        if (a * c) * (b + d) > (b * d) * (a + c):
            return mm(mats[0], mm(mats[1], mats[2]))
        return mm(mm(mats[0], mats[1]), mats[2])
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    return _chain(mats, _chain_order(dims), 0, len(mats) - 1)


def multi_dot(tensors: Any, *, out: Any = None) -> Tensor:
    """``torch.linalg.multi_dot``: the product of a chain of matrices (the
    first and last may be vectors), multiplied in the cheapest order."""
    if _autocast.on:
        return _autocast.run("multi_dot", multi_dot, tensors, out=out)
    given = _tensor_list("linalg_multi_dot", tensors)
    n = len(given)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    mats, shape = list(given), []
    for end, place in (("first", 0), ("last", n - 1)):
        t = given[place]
        if t.dim() == 1:  # a row vector first, a column vector last
            mats[place] = t.unsqueeze(0 if place == 0 else -1)
        elif t.dim() == 2:
            shape.append(t.shape[0 if place == 0 else 1])
        else:
            raise RuntimeError(
                f"multi_dot(): the {end} tensor must be 1D or 2D but got {t.dim()}D"
            )
    for i in range(1, n - 1):
        if given[i].dim() != 2:
            raise RuntimeError(
                f"multi_dot(): tensor {i} must be 2D but got {given[i].dim()}D"
            )
    for i in range(1, n):
        if mats[i].dtype is not mats[0].dtype:
            raise RuntimeError(
                "multi_dot(): all tensors must have be the same dtype but tensor 0 "
                f"is {_CPP[mats[0].dtype.np_name]} and tensor {i} "
                f"{_CPP[mats[i].dtype.np_name]}"
            )
        if mats[i - 1].shape[-1] != mats[i].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i - 1} and {i} with shapes "
                f"{list(given[i - 1].shape)} and {list(given[i].shape)} cannot be "
                "multiplied"
            )
    return _product(mats).view(shape)


# ---------------------------------------------------------------------------
# matrix_rank, cond
# ---------------------------------------------------------------------------


def _tolerances(A: Tensor, atol: Any, rtol: Any) -> tuple[Tensor, Tensor]:
    """torch's get_atol_rtol: float64 scalars (or the tensors given); without
    ``rtol``, eps * max(m, n) -- 0 where ``atol`` is positive."""
    eps = float(np.finfo(A.dtype.np).eps) * max(A.shape[-2:])
    f64 = _dtype.float64
    if isinstance(atol, TensorBase) or isinstance(rtol, TensorBase):
        a = zeros((), dtype=f64) if atol is None else atol
        if rtol is not None:
            return a, rtol
        default = full((), eps, dtype=f64)
        if atol is None:
            return a, default
        return a, default.where(~(atol > 0), zeros((), dtype=f64))
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else eps
    return full((), float(atol or 0.0), dtype=f64), full((), float(rtol), dtype=f64)


def matrix_rank(
    A: Tensor,
    tol: Any = None,
    hermitian: bool = False,
    *,
    atol: Any = None,
    rtol: Any = None,
) -> Tensor:
    """``torch.linalg.matrix_rank``: the number of singular values (absolute
    eigenvalues, ``hermitian``) above ``max(atol, rtol * the largest)``; the
    old ``tol`` is ``atol`` with ``rtol`` 0."""
    if tol is not None:
        if atol is not None or rtol is not None:
            raise TypeError(
                "linalg_matrix_rank() received an invalid combination of arguments: "
                "tol goes with neither atol nor rtol"
            )
        atol, rtol = tol, 0.0
    if A.dim() < 2:
        raise RuntimeError(
            "torch.linalg.matrix_rank: The input tensor input must have at least 2 "
            "dimensions."
        )
    if A.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError(
            "This function doesn't handle types other than float and double"
        )
    atol, rtol = _tolerances(A, atol, rtol)
    if not A.numel():
        return zeros(tuple(A.shape[:-2]), dtype=_dtype.int64)
    if hermitian:
        S = linalg("eigvalsh")(A).abs()
        top = S.amax(-1, keepdim=True)
    else:
        S = svdvals(A)
        top = S.narrow(-1, 0, 1)  # sorted: the largest first
    bound = atol.unsqueeze(-1).maximum(rtol.unsqueeze(-1) * top)
    return (bound < S).sum(-1)


def _invalid_ord(ord: Any) -> RuntimeError:
    text = f"{ord:g}" if isinstance(ord, float) else str(ord)
    return RuntimeError(f"linalg.cond got an invalid norm type: {text}")


def _by_inverse(A: Tensor, ord: Any) -> Tensor:
    """``norm(A) * norm(A^-1)``; a singular matrix's inverse is infinite."""
    inverse, info = inv_ex(A)
    inverse = inverse.masked_fill((info > 0)[..., None, None], math.inf)
    norm = linalg("matrix_norm")
    return (norm(A, ord) * norm(inverse, ord)).nan_to_num(math.inf, math.inf, -math.inf)


def _empty_cond(A: Tensor) -> Tensor:
    return zeros(tuple(A.shape[:-2]), dtype=A.dtype)  # 0 for 0x0, as torch's


def cond(A: Tensor, p: Any = None) -> Tensor:
    """``torch.linalg.cond``: the condition number in the norm ``p`` (2 by
    default, from the singular values; 'fro', 'nuc', +-1 and +-inf)."""
    if isinstance(p, str):
        _matrices(f"linalg.cond(ord={p})", A)
        if p not in ("fro", "nuc"):
            raise _invalid_ord(p)
        if not A.numel():
            return _empty_cond(A)
        if p == "nuc":
            S: Any = svdvals(A)  # (Tensor's math methods are added at import)
            return S.sum(-1) * S.reciprocal().sum(-1)
        return _by_inverse(A, p)
    if A.dim() < 2:
        raise RuntimeError(
            "linalg.cond: The input tensor must have at least 2 dimensions."
        )
    ord = 2 if p is None else p
    if abs(ord) not in (1, 2, math.inf):
        raise _invalid_ord(ord)
    if not A.numel():
        return _empty_cond(A)
    if abs(ord) == 2:
        S = svdvals(A)
        top, bottom = S.narrow(-1, 0, 1), S.narrow(-1, -1, 1)
        return (bottom / top if ord < 0 else top / bottom).squeeze(-1)
    text = f"{ord:f}" if isinstance(ord, float) else str(int(ord))
    _matrices(f"linalg.cond(ord={text})", A)
    return _by_inverse(A, ord)


# ---------------------------------------------------------------------------
# vander, diagonal
# ---------------------------------------------------------------------------


def vander(x: Tensor, N: int | None = None) -> Tensor:
    """``torch.linalg.vander``: the powers ``x**0 .. x**(N-1)`` along a new
    last dim, by cumulative products (an integer input gives int64)."""
    dt = x.dtype
    if dt not in (_dtype.float32, _dtype.float64) and (
        dt.is_floating_point or dt is _dtype.bool
    ):
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, "
            f"but got {dt.scalar_type}"
        )
    x = x.unsqueeze(-1) if x.dim() == 0 else x
    shape = list(x.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x.unsqueeze(-1).expand(*shape, n - 1).cumprod(-1)
    return cat([powers.new_ones((*shape, 1)), powers], dim=-1)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``torch.linalg.diagonal``: ``torch.diagonal`` over the last two dims."""
    return _diagonal(A, offset, dim1, dim2)


# ---------------------------------------------------------------------------
# tensorinv, tensorsolve
# ---------------------------------------------------------------------------


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """``torch.linalg.tensorinv``: the inverse of ``A`` as the square matrix of
    its first ``ind`` dims by the rest, shaped ``A.shape[ind:] + A.shape[:ind]``."""
    if ind <= 0:
        raise RuntimeError(
            f"Expected a strictly positive integer for 'ind', but got {ind}"
        )
    end, start = tuple(A.shape[ind:]), tuple(A.shape[:ind])
    rows, cols = math.prod(end), math.prod(start)
    if rows != cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {rows} != {cols}"
        )
    square = A.reshape(rows, rows)
    inverse, info = inv_ex(square)
    check_info(square, info, _singular("inv"))
    return inverse.reshape(*end, *start)


def tensorsolve(A: Tensor, B: Tensor, dims: Any = None) -> Tensor:
    """``torch.linalg.tensorsolve``: ``X`` with ``tensordot(A, X, X.ndim) = B``
    (``dims`` of ``A`` moved last first)."""
    if dims is not None:
        dims = list(dims)
        A = A.movedim(dims, list(range(A.dim() - len(dims), A.dim())))
    shape = tuple(A.shape[B.dim() :])
    rows, cols = math.prod(shape), B.numel()
    if rows != cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
            f"== prod(self.shape[:other.ndim]), but got {rows} != {cols}"
        )
    return linalg("solve")(A.reshape(rows, rows), B.flatten()).reshape(shape)
