"""Blitz 1, "Tensors": torch's linear algebra from before ``torch.linalg`` --
``torch.lu``, ``lu_unpack``, ``lu_solve``, ``triangular_solve``,
``nuclear_norm``, ``frobenius_norm`` (Householder QR is in :mod:`._householder`)
-- and the ones torch 2.x removed (``lstsq``, ``solve``, ``eig``, ``symeig``,
``matrix_rank``), which raise torch's own error naming the ``torch.linalg``
function to use. The LU factorization is JAX's LAPACK call (``lax.linalg.lu``).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._decompositions import _floating, _return_type
from jaxblitz.compat.ops._funnel import _no_grad, _not_implemented, _require_tensors
from jaxblitz.compat.ops._linalg_facade import linalg
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor.creation import zeros

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

_LuWithInfo = _return_type("_lu_with_info", ("LU", "pivots", "info"))
_LuUnpack = _return_type("lu_unpack", ("P", "L", "U"))
_TriangularSolve = _return_type("triangular_solve", ("solution", "cloned_coefficient"))

# ---------------------------------------------------------------------------
# Removed in torch 2.x: torch's RuntimeError, word for word
# ---------------------------------------------------------------------------

_REMOVED = "This function was deprecated since version 1.9 and is now removed."
_REMOVED_MESSAGES = {
    "lstsq": (
        f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
        "`torch.linalg.lstsq` has reversed arguments and does not return the QR "
        "decomposition in the returned tuple (although it returns other "
        "information about the problem).\n\nTo get the QR decomposition consider "
        "using `torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored "
        "the residuals of the solution in the last m - n columns of the returned "
        "value whenever m > n. In torch.linalg.lstsq, the residuals are in the "
        "field 'residuals' of the returned named tuple.\n\nThe unpacking of the "
        "solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be "
        "replaced with:\nX = torch.linalg.lstsq(A, B).solution"
    ),
    "solve": (
        f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. "
        "`torch.linalg.solve` has its arguments reversed and does not return the "
        "LU factorization.\n\nTo get the LU factorization see `torch.lu`, which "
        "can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = "
        "torch.solve(B, A).solution should be replaced with:\nX = "
        "torch.linalg.solve(A, B)"
    ),
    "eig": (
        f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` "
        "or `cdouble` rather than real tensors mimicking complex tensors.\n\nL, _ "
        "= torch.eig(A) should be replaced with:\nL_complex = "
        "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) "
        "should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)"
    ),
    "symeig": (
        f"{_REMOVED} The default behavior has changed from using the upper "
        "triangular portion of the matrix by default to using the lower "
        "triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be "
        "replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else "
        "'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be "
        "replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"
    ),
    "matrix_rank": (
        f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. "
        "The parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to "
        "'hermitian'."
    ),
}


def _removed(name: str, params: tuple[str, ...]) -> Any:
    def removed(*args: Any, **kwargs: Any) -> Any:
        if len(args) + len(kwargs) < len(params):  # torch's parser runs first
            missing = params[len(args) + len(kwargs)]
            raise TypeError(
                f"{name}() missing 1 required positional argument: '{missing}'"
            )
        raise RuntimeError(_REMOVED_MESSAGES[name])

    removed.__name__ = removed.__qualname__ = name
    removed.__doc__ = f"``torch.{name}``: removed in torch 2.x; raises torch's error."
    return removed


lstsq = declare.alias("lstsq", _removed("lstsq", ("self", "A")), method=True)
solve = declare.alias("solve", _removed("solve", ("self", "A")), method=True)
eig = declare.alias("eig", _removed("eig", ("self",)), method=True)
symeig = declare.alias("symeig", _removed("symeig", ("self",)), method=True)
matrix_rank = declare.alias("matrix_rank", _removed("matrix_rank", ("self",)))

# ---------------------------------------------------------------------------
# LU
# ---------------------------------------------------------------------------


def _lu_fn(x):
    return lax.linalg.lu(x)[0]


def _pivots_fn(x):
    return (lax.linalg.lu(x)[1] + 1).astype(jnp.int32)  # 1-based, as LAPACK's


def _info_fn(x):
    """LAPACK getrf's info: the 1-based index of the first zero pivot, else 0."""
    d = jnp.diagonal(lax.linalg.lu(x)[0], axis1=-2, axis2=-1)
    if not d.shape[-1]:  # no pivots: nothing failed (argmax has nothing to take)
        return jnp.zeros(d.shape[:-1], jnp.int32)
    zero = d == 0
    return jnp.where(zero.any(-1), jnp.argmax(zero, -1) + 1, 0).astype(jnp.int32)


def _lu_checks(what: str, A: Tensor) -> None:
    _require_tensors(what, A)
    if A.dim() < 2:
        raise RuntimeError(
            f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(A.shape)} instead"
        )
    if not A.dtype.is_floating_point:
        raise _not_implemented("lu_cpu", A.dtype)
    _floating("linalg.lu_factor", A)


_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    """torch's TORCH_WARN_ONCE: the first call in a process warns."""
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


@declare(method=True)
def lu(A: Tensor, pivot: bool = True, get_infos: bool = False):
    """``torch.lu``: ``(LU, pivots)`` (``pivots`` int32, 1-based), and ``info``
    with ``get_infos=True``; as ``linalg.lu_factor_ex``."""
    _lu_checks("lu", A)
    _warn_once(
        "lu",
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / "
        "torch.linalg.lu_factor_ex and will be removed in a future PyTorch "
        "release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced "
        "with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, "
        "pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be "
        "replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
        "compute_pivots)",
    )
    if not pivot:
        raise RuntimeError(
            "linalg.lu_factor: LU without pivoting is not implemented on the CPU"
        )
    LU = apply("LinalgLuFactorExBackward0", _lu_fn, A)
    pivots = _no_grad(_pivots_fn, A)
    if get_infos:
        return _LuWithInfo(LU, pivots, _no_grad(_info_fn, A))
    return LU, pivots


saves("LinalgLuFactorExBackward0", ("result", None))  # (its pivots: no grad)


def _permutation_fn(pivots, *, m, dt):
    """The ``(*, m, m)`` matrix P of ``A = P L U`` from LAPACK's pivots."""
    perm = lax.linalg.lu_pivots_to_permutation(pivots - 1, m)
    return jnp.swapaxes(_one_hot(perm, m, dt), -1, -2)


def _one_hot(index, n, dt):
    return (index[..., :, None] == jnp.arange(n)).astype(dt)


def _l_fn(lu_data, *, k):
    m = lu_data.shape[-2]
    return jnp.tril(lu_data[..., :, :k], -1) + jnp.eye(m, k, dtype=lu_data.dtype)


def _u_fn(lu_data, *, k):
    return jnp.triu(lu_data[..., :k, :])


def _check_pivots(pivots: Tensor, message: str) -> None:
    if pivots.dtype is not _dtype.int32:
        raise RuntimeError(message)


@declare
def lu_unpack(
    LU_data: Tensor,
    LU_pivots: Tensor,
    unpack_data: bool = True,
    unpack_pivots: bool = True,
):
    """``torch.lu_unpack``: ``(P, L, U)`` with ``A = P @ L @ U``; what is not
    unpacked comes back empty."""
    _require_tensors("lu_unpack", LU_data)
    _check_pivots(
        LU_pivots,
        "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
        "torch.int32 dtype.\nNote: this function is intended to be used with the "
        "output produced by torch.linalg.lu_factor",
    )
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = zeros(0, dtype=LU_data.dtype)
    if unpack_data:
        L = apply("LuUnpackBackward0", _l_fn, LU_data, k=k)
        U = apply("LuUnpackBackward0", _u_fn, LU_data, k=k)
    else:
        L, U = empty, zeros(0, dtype=LU_data.dtype)
    if unpack_pivots:
        P = _no_grad(_permutation_fn, LU_pivots, m=m, dt=np.dtype(LU_data.dtype.np))
        if tuple(P.shape[:-2]) != tuple(LU_data.shape[:-2]):
            P = P.expand(*LU_data.shape[:-2], m, m).contiguous()
    else:
        P = zeros(0, dtype=LU_data.dtype)
    return _LuUnpack(P, L, U)


def _lu_solve_fn(b, lu_data, pivots):
    m = lu_data.shape[-1]
    perm = lax.linalg.lu_pivots_to_permutation(pivots - 1, m)
    pb = jnp.take_along_axis(b, perm[..., :, None], axis=-2)
    y = lax.linalg.triangular_solve(
        lu_data, pb, left_side=True, lower=True, unit_diagonal=True
    )
    return lax.linalg.triangular_solve(lu_data, y, left_side=True, lower=False)


@declare(method=True)
def lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """``torch.lu_solve(b, LU, pivots)``: ``x`` with ``A x = b``."""
    _require_tensors("lu_solve", input)
    _warn_once(
        "lu_solve",
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be "
        "removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has "
        "its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be "
        "replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)",
    )
    if LU_data.dim() < 2:
        raise RuntimeError(
            "linalg.lu_solve: The input tensor LU must have at least 2 dimensions."
        )
    if input.dim() < 2:
        raise RuntimeError(
            "linalg.lu_solve: The input tensor B must have at least 2 dimensions."
        )
    _check_pivots(
        LU_pivots,
        "linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32",
    )
    n = LU_data.shape[-1]
    if LU_data.shape[-2] != n:
        raise RuntimeError(
            "linalg.lu_solve: A must be batches of square matrices, but they are "
            f"{LU_data.shape[-2]} by {n} matrices"
        )
    if input.shape[-2] != n:
        raise RuntimeError(
            "linalg.lu_solve: Incompatible shapes of A and B for the equation AX = "
            f"B ({n}x{n} and {input.shape[-2]}x{input.shape[-1]})"
        )
    if input.dtype is not LU_data.dtype:
        raise RuntimeError(
            "linalg.lu_solve: Expected LU and B to have the same dtype, but found "
            f"LU of type {LU_data.dtype.scalar_type} and B of type "
            f"{input.dtype.scalar_type} instead"
        )
    batch = np.broadcast_shapes(tuple(input.shape[:-2]), tuple(LU_data.shape[:-2]))
    b = input.expand(*batch, *input.shape[-2:])
    lu_data = LU_data.expand(*batch, n, n)
    pivots = LU_pivots.expand(*batch, n)
    return apply("LinalgLuSolveBackward0", _lu_solve_fn, b, lu_data, pivots)


saves("LinalgLuSolveBackward0", (1, None), (2, None), ("result", None))


# ---------------------------------------------------------------------------
# Triangular solve
# ---------------------------------------------------------------------------


def _triangular_fn(b, a, *, upper, transpose, unitriangular):
    return lax.linalg.triangular_solve(
        a,
        b,
        left_side=True,
        lower=not upper,
        transpose_a=transpose,
        unit_diagonal=unitriangular,
    )


@declare(method=True)
def triangular_solve(
    input: Tensor,
    A: Tensor,
    upper: bool = True,
    transpose: bool = False,
    unitriangular: bool = False,
):
    """``torch.triangular_solve(b, A)``: ``(solution, cloned_coefficient)``,
    ``A`` (one triangle of it read) and ``b`` broadcast over their batch dims."""
    _require_tensors("triangular_solve", input, A)
    if input.dim() < 2:
        raise RuntimeError(
            "torch.triangular_solve: Expected b to have at least 2 dimensions, but "
            f"it has {input.dim()} dimensions instead"
        )
    if A.dim() < 2:
        raise RuntimeError(
            "torch.triangular_solve: Expected A to have at least 2 dimensions, but "
            f"it has {A.dim()} dimensions instead"
        )
    if input.dtype is not A.dtype:
        raise RuntimeError(
            "Expected b and A to have the same dtype, but found b of type "
            f"{input.dtype.scalar_type} and A of type {A.dtype.scalar_type} "
            "instead."
        )
    m, n = A.shape[-2:]
    if m != n or input.shape[-2] != n:
        raise RuntimeError(
            "Incompatible matrix sizes for triangular_solve: each A matrix is "
            f"{m} by {n} but each b matrix is {input.shape[-2]} by "
            f"{input.shape[-1]}"
        )
    _floating("triangular_solve", A)
    batch = np.broadcast_shapes(tuple(input.shape[:-2]), tuple(A.shape[:-2]))
    b = input.expand(*batch, *input.shape[-2:])
    a = A.expand(*batch, n, n)
    solution = apply(
        "TriangularSolveBackward0",
        _triangular_fn,
        b,
        a,
        upper=bool(upper),
        transpose=bool(transpose),
        unitriangular=bool(unitriangular),
    )
    return _TriangularSolve(solution, a.clone())


saves("TriangularSolveBackward0", (0, None), (1, None), ("result", None))


# ---------------------------------------------------------------------------
# Norms kept for TorchScript
# ---------------------------------------------------------------------------


@declare
def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """``torch.nuclear_norm(A, keepdim=False)`` or ``(A, dim, keepdim=False)``:
    ``linalg.matrix_norm(A, 'nuc', dim, keepdim)``."""
    _warn_once(
        "nuclear_norm",
        "at::nuclear_norm is deprecated and it is just left for JIT compatibility. "
        "It will be removed in a future PyTorch release. Please use "
        "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead",
    )
    if isinstance(dim, bool):  # nuclear_norm(A, True): keepdim, positionally
        dim, keepdim = None, dim
    return linalg("matrix_norm")(
        input, "nuc", (-2, -1) if dim is None else dim, keepdim=keepdim
    )


@declare
def frobenius_norm(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``torch.frobenius_norm(A, dim, keepdim=False)``:
    ``linalg.vector_norm(A, 2, dim, keepdim)`` over at most 2 dims."""
    _warn_once(
        "frobenius_norm",
        "at::frobenius_norm is deprecated and it is just left for JIT "
        "compatibility. It will be removed in a future PyTorch release. Please use "
        "`linalg.vector_norm(A, 2., dim, keepdim)` instead",
    )
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(
            f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead."
        )
    return linalg("vector_norm")(input, 2, dims, keepdim=keepdim)
