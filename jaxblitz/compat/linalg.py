"""``torch.linalg``: decompositions, inverses, solves and norms."""

from __future__ import annotations

import builtins
import math
from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxblitz.compat import _autocast, _not_offered
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops import _linalg_facade, _out
from jaxblitz.compat.ops._decompositions import (
    LinAlgError,
    _check_invertible,
    _cholesky,
    _cross,
    _floating,
    _LinalgQr,
    _LinalgSlogdet,
    _LinalgSvd,
    _lstsq_fn,
    _matrices,
    _pinv,
    _qr,
    _return_type,
    _slogdet,
    _svd,
    det,
    matrix_exp,
    matrix_power,
    svdvals,
)
from jaxblitz.compat.ops._decompositions import inverse as inv
from jaxblitz.compat.ops._funnel import (
    _abs,
    _keepdim,
    _no_grad,
    _norm_fn,
    _require_tensors,
)
from jaxblitz.compat.ops._householder import householder_product as _orgqr
from jaxblitz.compat.ops._linalg import matmul
from jaxblitz.compat.ops._linalg_composite import (
    cond,
    diagonal,
    matrix_rank,
    multi_dot,
    tensorinv,
    tensorsolve,
    vander,
)
from jaxblitz.compat.ops._linalg_ex import (
    _solve_fn,
    cholesky_ex,
    inv_ex,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    solve_checks,
    solve_ex,
    solve_triangular,
)
from jaxblitz.compat.ops._reduce import _dim
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._tensor_base import wrap_dim
from jaxblitz.compat.tensor.creation import zeros

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]

_COMPLEX = "compat has no complex dtypes (its tensors are real), and {} complex"
_LDL = (
    "the LDL^T (Bunch-Kaufman) factorization is not implemented: "
    "torch.linalg.cholesky, torch.linalg.lu_factor or torch.linalg.solve"
)
__getattr__ = _not_offered.refuser(
    __name__,
    "torch.linalg",
    {
        "eig": _COMPLEX.format("a general matrix's eigenvalues and eigenvectors are")
        + ": torch.linalg.eigh for a symmetric one",
        "eigvals": _COMPLEX.format("a general matrix's eigenvalues are")
        + ": torch.linalg.eigvalsh for a symmetric one",
        **_not_offered.each("ldl_factor ldl_factor_ex ldl_solve", _LDL),
    },
)

_LinalgEigh = _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
_Lstsq = _return_type(
    "linalg_lstsq", ("solution", "residuals", "rank", "singular_values")
)


def slogdet(A: Tensor):
    return _slogdet(A, _LinalgSlogdet)


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    return _cholesky("linalg.cholesky", "LinalgCholeskyExBackward0", A, upper)


def qr(A: Tensor, mode: str = "reduced"):
    return _qr(A, mode, _LinalgQr)


def svd(A: Tensor, full_matrices: bool = True, *, driver: Any = None):
    return _LinalgSvd(*_svd(A, full_matrices))


def pinv(
    A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False
) -> Tensor:
    if atol is not None:
        raise NotImplementedError(
            "linalg.pinv: atol is not supported by jaxblitz.compat"
        )
    if rtol is None:  # torch: eps * max(m, n) without atol
        rtol = (
            float(np.finfo(A.dtype.np).eps) * builtins.max(A.shape[-2:])
            if A.dim() >= 2
            else 0.0
        )
    return _pinv(A, float(rtol), hermitian)


def _eigh_fn(x, *, uplo, which):
    # torch reads one triangle only, and its gradient is the symmetric one
    # (V (...) V^H with the skew part of V^H gV). JAX's eigh averages x with its
    # transpose under autodiff and leaves the gradient unsymmetrised; so the
    # symmetric matrix the triangle gives is made here, and the gradient passes
    # to x through (x + x^T) / 2, which symmetrises it.
    tri = jnp.tril(x) if uplo == "L" else jnp.triu(x)
    eye = jnp.eye(x.shape[-1], dtype=x.dtype)
    full = tri + jnp.swapaxes(tri, -1, -2) - tri * eye
    sym = (x + jnp.swapaxes(x, -1, -2)) / 2
    full = sym + lax.stop_gradient(full - sym)
    return jnp.linalg.eigh(full, UPLO=uplo, symmetrize_input=False)[which]


def _eigh(A: Tensor, UPLO: str, which: tuple[int, ...]) -> list[Tensor]:  # noqa: N803
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _matrices("linalg.eigh", A)
    if not A.dtype.is_floating_point or A.dtype.itemsize < 4:
        raise NotImplementedError(
            f"\"linalg_eigh_cpu\" not implemented for '{A.dtype.scalar_type}'"
        )
    return [
        apply("LinalgEighBackward0", _eigh_fn, A, uplo=UPLO, which=i) for i in which
    ]


def eigh(A: Tensor, UPLO: str = "L"):  # noqa: N803 -- torch's name
    """The eigenvalues (ascending) and eigenvectors of the symmetric matrix
    whose lower (``UPLO="L"``) or upper triangle ``A`` holds; an eigenvector's
    sign may differ from PyTorch's (LAPACK's) choice."""
    return _LinalgEigh(*_eigh(A, UPLO, (0, 1)))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803 -- torch's name
    """The eigenvalues (ascending) of the symmetric matrix ``A``'s triangle gives."""
    return _eigh(A, UPLO, (0,))[0]


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    return _cross("linalg.cross", input, other, dim)


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    vector = solve_checks(A, B, left)
    _check_invertible(
        "torch.linalg.solve",
        A,
        "The solver failed because the input matrix is singular.",
    )
    return apply(
        "LinalgSolveExBackward0", _solve_fn, A, B, vector=vector, left=bool(left)
    )


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """``torch.linalg.householder_product``: ``torch.orgqr``."""
    return _orgqr(A, tau, "torch.linalg.householder_product")


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _residuals_fn(a, b, *, vector):
    x = _lstsq_fn(a, b, vector=vector)
    r = (a @ x[..., None])[..., 0] - b if vector else a @ x - b
    return jnp.sum(r * r, axis=-1 if vector else -2)


def _nothing_fn(a, b):
    return jnp.zeros((0,), a.dtype) + 0 * jnp.sum(a) + 0 * jnp.sum(b)


def _rank_fn(a, *, rcond):
    s = jnp.linalg.svd(a, compute_uv=False)
    top = jnp.max(s, axis=-1, keepdims=True) if s.shape[-1] else s
    return jnp.sum(s > rcond * top, axis=-1).astype(jnp.int64)


def lstsq(A: Tensor, B: Tensor, rcond: Any = None, *, driver: Any = None):
    """``torch.linalg.lstsq``: the least-squares solution (the minimum-norm one,
    from the pseudo-inverse), and what torch's CPU ``driver`` reports besides:
    the rank (all but ``gels``), the singular values (``gelsd``, ``gelss``) and
    the residuals (all but ``gelsy``, for tall full-rank matrices)."""
    if A.dtype is not B.dtype:
        raise RuntimeError(
            "torch.linalg.lstsq: Expected input and other to have the same dtype, "
            f"but got input's dtype {A.dtype.scalar_type} and other's dtype "
            f"{B.dtype.scalar_type}"
        )
    _matrices("linalg.lstsq", A, square=False)
    _floating("linalg.lstsq", A)
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError(
            f"torch.linalg.lstsq: parameter `driver` should be one of {_DRIVERS}"
        )
    m, n = A.shape[-2:]
    if rcond is None:
        rcond = float(np.finfo(A.dtype.np).eps) * builtins.max(m, n)
    vector = B.dim() == A.dim() - 1
    X = apply("LinalgLstsqBackward0", _lstsq_fn, A, B, vector=vector)
    empty = zeros(0, dtype=A.dtype)
    rank = zeros(0, dtype=_dtype.int64)
    if driver != "gels":
        rank = _no_grad(_rank_fn, A, rcond=float(rcond))
    values = svdvals(A).detach() if driver in ("gelsd", "gelss") else empty
    residuals = apply("LinalgLstsqBackward0", _nothing_fn, A, B)
    full = driver == "gels" or bool((rank == builtins.min(m, n)).all())
    if driver != "gelsy" and m > n and full:
        residuals = apply("LinalgLstsqBackward0", _residuals_fn, A, B, vector=vector)
    return _Lstsq(X, residuals, rank, values)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """``torch.linalg.vecdot``: ``(x.conj() * y).sum(dim)``, of one floating
    dtype."""
    if _autocast.on:
        return _autocast.run("vecdot", vecdot, x, y, dim=dim)
    if not x.dtype.is_floating_point:
        raise RuntimeError(
            "linalg.vecdot: Expected a floating point or complex tensor as input. "
            f"Got {x.dtype.scalar_type}"
        )
    if x.dtype is not y.dtype:
        raise RuntimeError(
            "linalg.vecdot: Expected x and y to have the same dtype, but found x of "
            f"type {x.dtype.scalar_type} and y of type {y.dtype.scalar_type} instead"
        )
    return (x * y).sum(dim)


def vector_norm(
    x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype=None
) -> Tensor:
    _require_tensors("linalg.vector_norm", x)
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as "
            f"input. Got {x.dtype.scalar_type}"
        )
    return apply(
        "LinalgVectorNormBackward0",
        _norm_fn,
        x,
        p=float(ord),
        axis=_dim(dim, x.dim()),
        keepdims=_keepdim(keepdim),
    )


def _largest(values, axis):
    """The max of non-negative ``values`` along ``axis``: 0 for none, as torch's."""
    if not values.shape[axis]:
        return jnp.zeros(np.delete(values.shape, axis), values.dtype)
    return jnp.max(values, axis=axis)


def _matrix_norm_fn(x, *, ord, axis, keepdims):
    m = jnp.moveaxis(x, axis, (-2, -1))
    if ord == "fro":
        out = jnp.sqrt(jnp.sum(m * m, axis=(-2, -1)))
    elif ord in ("nuc", 2, -2):
        s = jnp.linalg.svd(m, compute_uv=False)
        out = {"nuc": jnp.sum, 2: _largest, -2: jnp.min}[ord](s, axis=-1)
    else:
        along = -2 if ord in (1, -1) else -1  # 1: column sums, inf: row sums
        sums = jnp.sum(_abs(m), axis=along)
        out = (_largest if ord > 0 else jnp.min)(sums, axis=-1)
    if keepdims:
        out = jnp.expand_dims(out, tuple(sorted(axis)))
    return out


def _check_nonempty_minimum(A: Tensor, ord: Any, axis: tuple) -> None:
    """torch's error for a negative ``ord`` whose minimum is over nothing."""
    if ord in ("fro", "nuc") or ord > 0:
        return
    rows, cols = (A.shape[d] for d in axis)
    if ord == -2 and not builtins.min(rows, cols):
        reduced = -1  # torch: the minimum over svdvals' last dim
    elif ord == -1 and not cols:  # column sums: one per column
        reduced = axis[1]
    elif ord == -math.inf and not rows:  # row sums: one per row
        reduced = axis[0]
    else:
        return
    raise IndexError(f"amin(): Expected reduction dim {reduced} to have non-zero size.")


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def matrix_norm(
    A: Tensor,
    ord: Any = "fro",
    dim: Any = (-2, -1),
    keepdim: bool = False,
    *,
    dtype=None,
) -> Tensor:
    _require_tensors("linalg.matrix_norm", A)
    if dtype is not None:
        A = A.to(dtype)
    if A.dim() < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    _floating("linalg.matrix_norm", A)
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    axis = tuple(wrap_dim(d, A.dim()) for d in dim)
    _check_nonempty_minimum(A, ord, axis)
    if ord == "fro":
        return vector_norm(A, 2, axis, keepdim)
    name = (
        "SumBackward1"
        if ord == "nuc"
        else "AmaxBackward0"
        if ord > 0
        else "AminBackward0"
    )
    return apply(
        name, _matrix_norm_fn, A, ord=ord, axis=axis, keepdims=_keepdim(keepdim)
    )


def norm(
    A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype=None
) -> Tensor:
    """``torch.linalg.norm``: a matrix norm for a 2-D ``dim`` (or a 2-D input
    with an ``ord`` and no ``dim``), else a vector norm."""
    if isinstance(dim, int):
        dim = (dim,)
    if ord is not None and (
        (dim is not None and len(dim) == 2) or (dim is None and A.dim() == 2)
    ):
        return matrix_norm(
            A, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype
        )
    if isinstance(ord, str):
        raise RuntimeError(
            "linalg.norm: If dim is specified, it must be of length 2. Got "
            f"{list(dim or ())}"
        )
    if ord is not None and dim is None and A.dim() != 1:
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D "
            f"or 2D. Got {A.dim()}D."
        )
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


_linalg_facade.register(
    eigvalsh=eigvalsh, matrix_norm=matrix_norm, solve=solve, vector_norm=vector_norm
)
# torch's out= for every torch.linalg op that takes it (ops/_out.py)
_out.give_out(globals(), "linalg.")
