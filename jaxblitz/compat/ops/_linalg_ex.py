"""Blitz 1, "Tensors": ``torch.linalg``'s factorizations and solves that report a
failure in an ``info`` tensor instead of raising (``inv_ex``, ``cholesky_ex``,
``solve_ex``, ``lu_factor_ex``), the LU family built on them (``lu_factor``,
``lu``, ``lu_solve``) and ``solve_triangular``.

``info`` is LAPACK's: per matrix, 0, or the 1-based place of the first zero
pivot (the first leading minor that is not positive-definite). It is computed
with the result, as a tensor, so it costs no sync; ``check_errors=True`` (and
``lu_factor``) raise torch's error from it where the values are (lazily, at the
next sync point).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._declare import saves
from jaxblitz.compat.ops._decompositions import (
    LinAlgError,
    _cholesky_fn,
    _floating,
    _inv_fn,
    _matrices,
    _prefix,
    _return_type,
)
from jaxblitz.compat.ops._funnel import _no_grad, _not_implemented, _require_tensors
from jaxblitz.compat.ops._legacy_linalg import (
    _check_pivots,
    _info_fn,
    _l_fn,
    _lu_fn,
    _permutation_fn,
    _pivots_fn,
    _triangular_fn,
    _u_fn,
)
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._checks import check_values

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

_LinalgInvEx = _return_type("linalg_inv_ex", ("inverse", "info"))
_LinalgCholeskyEx = _return_type("linalg_cholesky_ex", ("L", "info"))
_LinalgSolveEx = _return_type("linalg_solve_ex", ("result", "info"))
_LinalgLuFactor = _return_type("linalg_lu_factor", ("LU", "pivots"))
_LinalgLuFactorEx = _return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_LinalgLu = _return_type("linalg_lu", ("P", "L", "U"))


def _failed(info):
    return info > 0, info


def check_info(
    input: Tensor, info: Tensor, error: Callable[[str, int], Exception]
) -> None:
    """Raise ``error(prefix, info)`` for the first matrix whose ``info`` is not 0
    (``prefix``: torch's "(Batch element k): "); lazily, at the sync point."""
    if input.numel():
        check_values(
            [info], _failed, lambda k, first: error(_prefix(input, first), int(k))
        )


def solver_shapes(what: str, A: Tensor, B: Tensor, left: bool) -> None:
    """torch's checkInputsSolver: ``A`` square, ``B`` a matrix, shapes that fit."""
    _matrices(what, A)
    if B.dim() < 2:
        raise RuntimeError(
            f"{what}: The input tensor B must have at least 2 dimensions."
        )
    n, (rows, cols) = A.shape[-1], B.shape[-2:]
    if (rows if left else cols) != n:
        raise RuntimeError(
            f"{what}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})"
        )


def _broadcast(A: Tensor, B: Tensor) -> tuple[Tensor, Tensor]:
    """``A`` and ``B`` expanded to their common batch dims."""
    batch = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    return A.expand(*batch, *A.shape[-2:]), B.expand(*batch, *B.shape[-2:])


# ---------------------------------------------------------------------------
# inv_ex, solve_ex
# ---------------------------------------------------------------------------


def inv_ex(A: Tensor, *, check_errors: bool = False):
    """``torch.linalg.inv_ex``: ``(inverse, info)``; a singular matrix's inverse
    holds what LAPACK's division by its zero pivot gives (infinities)."""
    _matrices("linalg.inv", A)
    _floating("linalg.inv", A)
    inverse = apply("LinalgInvExBackward0", _inv_fn, A)
    info = _no_grad(_info_fn, A)
    if check_errors:
        check_info(A, info, _singular("linalg.inv_ex"))
    return _LinalgInvEx(inverse, info)


def _singular(what: str) -> Callable[[str, int], Exception]:
    def error(prefix: str, k: int) -> Exception:
        return LinAlgError(
            f"{what}: {prefix}The diagonal element {k} is zero, the inversion could "
            "not be completed because the input matrix is singular."
        )

    return error


def _solve_fn(a, b, *, vector, left):
    if vector:
        return jnp.linalg.solve(a, b[..., None])[..., 0]
    if left:
        return jnp.linalg.solve(a, b)
    # X A = B is A^T X^T = B^T
    return jnp.swapaxes(
        jnp.linalg.solve(jnp.swapaxes(a, -1, -2), jnp.swapaxes(b, -1, -2)), -1, -2
    )


def solve_checks(A: Tensor, B: Tensor, left: bool) -> bool:
    """torch's checks of ``linalg.solve``; whether ``B`` is a (batch of) vector."""
    _matrices("linalg.solve", A)
    _floating("linalg.solve", A)
    if A.dtype is not B.dtype:
        raise RuntimeError(
            "linalg.solve: Expected A and B to have the same dtype, but found A of "
            f"type {A.dtype.scalar_type} and B of type {B.dtype.scalar_type} instead"
        )
    # torch: B is a batch of vectors when it has one dimension less than A
    vector = B.dim() == 1 or (
        B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1])
    )
    solver_shapes("linalg.solve", A, B.unsqueeze(-1) if vector else B, left)
    return vector


def solve_ex(
    A: Tensor,
    B: Tensor,
    *,
    left: bool = True,
    check_errors: bool = False,
):
    """``torch.linalg.solve_ex``: ``(result, info)``."""
    vector = solve_checks(A, B, left)
    result = apply(
        "LinalgSolveExBackward0", _solve_fn, A, B, vector=vector, left=bool(left)
    )
    info = _no_grad(_info_fn, A)
    if check_errors:
        check_info(A, info, _solver_failed("torch.linalg.solve_ex"))
    return _LinalgSolveEx(result, info)


def _solver_failed(what: str) -> Callable[[str, int], Exception]:
    def error(prefix: str, k: int) -> Exception:
        return LinAlgError(
            f"{what}: {prefix}The solver failed because the input matrix is singular."
        )

    return error


# ---------------------------------------------------------------------------
# cholesky_ex
# ---------------------------------------------------------------------------


def _potf2(a):
    """LAPACK's unblocked lower Cholesky (``potf2``), as it leaves a matrix that
    is not positive-definite: the factor's columns before the first failing
    pivot, that pivot's value (not its square root), the input's lower
    triangle after it; and ``info`` (1-based place of the failure, 0: none)."""
    n = a.shape[-1]
    index = jnp.arange(n)

    def column(j, carry):
        L, info = carry
        before = index < j  # the columns factored so far
        row = jnp.where(before, L[..., j, :], 0)  # L[j, :j]
        left = jnp.where(before, L, 0)  # L[:, :j]
        dots = jnp.einsum("...ik,...k->...i", left, row, precision="highest")
        pivot = L[..., j, j] - dots[..., j]
        ok = pivot > 0  # NaN fails too, as LAPACK's DISNAN
        root = jnp.sqrt(jnp.where(ok, pivot, 1))
        below = (L[..., :, j] - dots) / root[..., None]
        new = jnp.where((index > j) & ok[..., None], below, L[..., :, j])
        new = jnp.where(index == j, jnp.where(ok, root, pivot)[..., None], new)
        going = info == 0
        L = jnp.where(going[..., None, None], L.at[..., :, j].set(new), L)
        return L, jnp.where(going & ~ok, j + 1, info)

    info = jnp.zeros(a.shape[:-2], jnp.int32)
    if not n:  # (the loop's body is traced even for no steps)
        return a, info
    return lax.fori_loop(0, n, column, (jnp.tril(a), info))


def _lower_input(x, upper):
    return jnp.swapaxes(x, -1, -2) if upper else x


def _cholesky_ex_fn(x, *, upper):
    partial, info = _potf2(lax.stop_gradient(_lower_input(x, upper)))
    failed = (info > 0)[..., None, None]
    return jnp.where(failed, _lower_input(partial, upper), _cholesky_fn(x, upper=upper))


def _cholesky_info_fn(x, *, upper):
    return _potf2(_lower_input(x, upper))[1]


def cholesky_ex(
    A: Tensor,
    *,
    upper: bool = False,
    check_errors: bool = False,
):
    """``torch.linalg.cholesky_ex``: ``(L, info)``; where a matrix is not
    positive-definite, ``L`` holds what LAPACK's unblocked factorization leaves
    (torch's CPU result for matrices up to LAPACK's block size)."""
    _matrices("linalg.cholesky", A)
    if A.dtype in (_dtype.float16, _dtype.bfloat16):
        raise _not_implemented("cholesky_cpu", A.dtype)
    _floating("linalg.cholesky", A)
    upper = bool(upper)
    L = apply("LinalgCholeskyExBackward0", _cholesky_ex_fn, A, upper=upper)
    info = _no_grad(_cholesky_info_fn, A, upper=upper)
    if check_errors:
        check_info(A, info, _not_positive_definite("linalg.cholesky_ex"))
    return _LinalgCholeskyEx(L, info)


def _not_positive_definite(what: str) -> Callable[[str, int], Exception]:
    def error(prefix: str, k: int) -> Exception:
        return LinAlgError(
            f"{what}: {prefix}The factorization could not be completed because the "
            f"input is not positive-definite (the leading minor of order {k} is not "
            "positive-definite)."
        )

    return error


# ---------------------------------------------------------------------------
# LU
# ---------------------------------------------------------------------------


def _zero_pivot(what: str) -> Callable[[str, int], Exception]:
    def error(prefix: str, k: int) -> Exception:
        return RuntimeError(
            f"{what}: {prefix}U[{k},{k}] is zero and using it on lu_solve would "
            "result in a division by zero. If you still want to perform the "
            "factorization, consider calling linalg.lu(A, pivot) or "
            "linalg.lu_factor_ex(A, pivot)"
        )

    return error


def _no_pivoting(pivot: bool) -> None:
    if not pivot:
        raise RuntimeError(
            "linalg.lu_factor: LU without pivoting is not implemented on the CPU"
        )


def _lu_factor(A: Tensor, pivot: bool) -> tuple[Tensor, Tensor, Tensor]:
    _require_tensors("linalg.lu_factor", A)
    if A.dim() < 2:
        raise RuntimeError(
            "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(A.shape)} instead"
        )
    if not A.dtype.is_floating_point or A.dtype.itemsize < 4:
        raise _not_implemented("lu_cpu", A.dtype)
    _no_pivoting(pivot)
    LU = apply("LinalgLuFactorExBackward0", _lu_fn, A)
    return LU, _no_grad(_pivots_fn, A), _no_grad(_info_fn, A)


def lu_factor_ex(
    A: Tensor,
    *,
    pivot: bool = True,
    check_errors: bool = False,
):
    """``torch.linalg.lu_factor_ex``: ``(LU, pivots, info)``, ``pivots`` int32
    and 1-based, as LAPACK's."""
    LU, pivots, info = _lu_factor(A, pivot)
    if check_errors:
        check_info(A, info, _zero_pivot("torch.linalg.lu_factor_ex"))
    return _LinalgLuFactorEx(LU, pivots, info)


def lu_factor(A: Tensor, *, pivot: bool = True):
    """``torch.linalg.lu_factor``: ``(LU, pivots)``; a zero pivot raises."""
    LU, pivots, info = _lu_factor(A, pivot)
    check_info(A, info, _zero_pivot("torch.linalg.lu_factor"))
    return _LinalgLuFactor(LU, pivots)


def _lu_part_fn(x, *, which):
    lu = _lu_fn(x)
    k = min(x.shape[-2:])
    return _l_fn(lu, k=k) if which == "L" else _u_fn(lu, k=k)


def lu(A: Tensor, *, pivot: bool = True):
    """``torch.linalg.lu``: ``(P, L, U)`` with ``A = P @ L @ U``."""
    _require_tensors("linalg.lu", A)
    if A.dim() < 2:
        raise RuntimeError(
            "linalg.lu: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(A.shape)} instead"
        )
    if not A.dtype.is_floating_point or A.dtype.itemsize < 4:
        raise _not_implemented("lu_cpu", A.dtype)
    _no_pivoting(pivot)
    m = A.shape[-2]
    pivots = _no_grad(_pivots_fn, A)
    P = _no_grad(_permutation_fn, pivots, m=m, dt=np.dtype(A.dtype.np))
    L = apply("LinalgLuBackward0", _lu_part_fn, A, which="L")
    U = apply("LinalgLuBackward0", _lu_part_fn, A, which="U")
    return _LinalgLu(P, L, U)


saves("LinalgLuBackward0", ("result", None))


def _lu_solve_fn(b, lu_data, pivots, *, left, adjoint):
    if not left:  # X A = B is A^T X^T = B^T (A^H: the other way round)
        b, adjoint = jnp.swapaxes(b, -1, -2), not adjoint
    m = lu_data.shape[-1]
    perm = lax.linalg.lu_pivots_to_permutation(pivots - 1, m)
    if adjoint:  # A^T = U^T L^T P^T
        y = lax.linalg.triangular_solve(
            lu_data, b, left_side=True, lower=False, transpose_a=True
        )
        z = lax.linalg.triangular_solve(
            lu_data,
            y,
            left_side=True,
            lower=True,
            transpose_a=True,
            unit_diagonal=True,
        )
        x = jnp.take_along_axis(z, jnp.argsort(perm, axis=-1)[..., :, None], axis=-2)
    else:
        pb = jnp.take_along_axis(b, perm[..., :, None], axis=-2)
        y = lax.linalg.triangular_solve(
            lu_data, pb, left_side=True, lower=True, unit_diagonal=True
        )
        x = lax.linalg.triangular_solve(lu_data, y, left_side=True, lower=False)
    return x if left else jnp.swapaxes(x, -1, -2)


def lu_solve(
    LU: Tensor,
    pivots: Tensor,
    B: Tensor,
    *,
    left: bool = True,
    adjoint: bool = False,
) -> Tensor:
    """``torch.linalg.lu_solve``: ``X`` with ``A X = B`` (``X A = B`` for
    ``left=False``; ``A^H`` for ``adjoint``), ``A`` given by ``lu_factor``."""
    _require_tensors("linalg.lu_solve", LU, pivots)
    _require_tensors("linalg.lu_solve", B)
    _floating("torch.linalg.lu_solve", LU)
    if LU.dtype is not B.dtype:
        raise RuntimeError(
            "linalg.lu_solve: Expected LU and B to have the same dtype, but found "
            f"LU of type {LU.dtype.scalar_type} and B of type {B.dtype.scalar_type} "
            "instead"
        )
    _check_pivots(
        pivots, "linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32"
    )
    _matrices("torch.linalg.lu_solve", LU)
    solver_shapes("linalg.lu_solve", LU, B, left)
    n = LU.shape[-1]
    if pivots.shape[-1:] != (n,):
        raise RuntimeError(
            "linalg.lu_solve: Number of pivots per batch should be same as the "
            "dimension of the matrix"
        )
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(
            "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the "
            f"same, but got pivots with shape {list(pivots.shape)} instead"
        )
    lu_data, b = _broadcast(LU, B)
    pivots = pivots.expand(*lu_data.shape[:-1])
    return apply(
        "LinalgLuSolveBackward0",
        _lu_solve_fn,
        b,
        lu_data,
        pivots,
        left=bool(left),
        adjoint=bool(adjoint),
    )


# ---------------------------------------------------------------------------
# solve_triangular
# ---------------------------------------------------------------------------


def _solve_triangular_fn(a, b, *, upper, left, unitriangular):
    if left:
        return _triangular_fn(
            b, a, upper=upper, transpose=False, unitriangular=unitriangular
        )
    return lax.linalg.triangular_solve(
        a, b, left_side=False, lower=not upper, unit_diagonal=unitriangular
    )


def solve_triangular(
    A: Tensor,
    B: Tensor,
    *,
    upper: bool,
    left: bool = True,
    unitriangular: bool = False,
) -> Tensor:
    """``torch.linalg.solve_triangular``: ``X`` with ``A X = B`` (``X A = B``
    for ``left=False``), one triangle of ``A`` read; ``B`` is cast to ``A``'s
    dtype, as torch's."""
    _require_tensors("linalg.solve_triangular", A, B)
    solver_shapes("linalg.solve_triangular", A, B, left)
    if not A.dtype.is_floating_point or A.dtype.itemsize < 4:
        raise _not_implemented("triangular_solve_cpu", A.dtype)
    a, b = _broadcast(A, B.to(A.dtype))
    return apply(
        "LinalgSolveTriangularBackward0",
        _solve_triangular_fn,
        a,
        b,
        upper=bool(upper),
        left=bool(left),
        unitriangular=bool(unitriangular),
    )


saves("LinalgSolveTriangularBackward0", (0, None), ("result", None))
