"""Blitz 1, "Tensors": linear algebra past matrix products -- ``trace``,
``kron``, ``cross``, ``det``, ``inverse``, ``cholesky``, ``qr``, ``svd`` ... (the
``torch.*`` names; ``compat.linalg`` holds the ``torch.linalg.*`` ones).

An op with several differentiable outputs (``slogdet``, ``qr``, ``svd``)
records one node per output, each under torch's grad_fn name: the gradients
add up as torch's single node's do. Errors that depend on the values (a
singular matrix to invert, a matrix that is not positive-definite) are checked
where the values are (lazily, at the next sync point), with torch's messages.
"""

from __future__ import annotations

import builtins
import functools
import math
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._funnel import (
    _as_tensor,
    _check_cast,
    _no_grad,
    _norm_fn,
    _not_implemented,
    _promote,
    _require_tensors,
    _to_out,
)
from jaxblitz.compat.ops._linalg import _exact_out, dot_refusal, matmul
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._checks import check_values
from jaxblitz.compat.tensor._tensor_base import TensorBase, wrap_dim
from jaxblitz.compat.tensor.creation import zeros

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


class LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: a decomposition failed on these values."""


LinAlgError.__module__ = "torch._C"
LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"  # as torch's


def _return_type(name: str, fields: tuple[str, ...]) -> type:
    """A ``torch.return_types`` named tuple with these field names."""

    def new(cls, *values):
        return tuple.__new__(cls, values)

    def repr_(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self, strict=True))
        return f"torch.return_types.{name}(\n{body})"

    attrs = {f: property(lambda self, i=i: self[i]) for i, f in enumerate(fields)}
    attrs.update(__new__=new, __repr__=repr_, __module__="torch.return_types")
    return type(name, (tuple,), attrs)


_Slogdet = _return_type("slogdet", ("sign", "logabsdet"))
_LinalgSlogdet = _return_type("linalg_slogdet", ("sign", "logabsdet"))
_Qr = _return_type("qr", ("Q", "R"))
_LinalgQr = _return_type("linalg_qr", ("Q", "R"))
_Svd = _return_type("svd", ("U", "S", "V"))
_LinalgSvd = _return_type("linalg_svd", ("U", "S", "Vh"))

# ---------------------------------------------------------------------------
# Checks, with torch's messages
# ---------------------------------------------------------------------------


def _floating(what: str, input: Tensor) -> None:
    dt = input.dtype
    if dt in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError(
            f"{what}: Low precision dtypes not supported. Got {dt.scalar_type}"
        )
    if not dt.is_floating_point:
        raise RuntimeError(
            f"{what}: Expected a floating point or complex tensor as input. "
            f"Got {dt.scalar_type}"
        )


def _matrices(what: str, input: Tensor, square: bool = True) -> None:
    _require_tensors(what, input)
    if input.dim() < 2:
        raise RuntimeError(
            f"{what}: The input tensor A must have at least 2 dimensions."
        )
    m, n = input.shape[-2:]
    if square and m != n:
        raise RuntimeError(
            f"{what}: A must be batches of square matrices, but they are {m} by "
            f"{n} matrices"
        )


def _lu_diag_fn(x):
    lu, _, _ = lax.linalg.lu(x)
    return jnp.diagonal(lu, axis1=-2, axis2=-1)


def _singular(d):
    """Per matrix (``d``: its LU's diagonals), whether a pivot is zero, and the
    first zero one's place (1-based)."""
    zero = (d == 0).reshape(-1, d.shape[-1])
    return zero.any(axis=-1), zero.argmax(axis=-1) + 1


def _not_finite(L):
    """Per matrix, whether its factor has an element that is not finite (LAPACK
    left it unfinished: NaN)."""
    n = L.shape[-1]
    finite = ((L - L) == 0).reshape(-1, n * n)
    return ~finite.all(axis=-1), finite.all(axis=-1)


def _prefix(input: Tensor, first: int) -> str:
    """torch's "(Batch element k): " for a batch's failing matrix."""
    return "" if input.dim() <= 2 else f"(Batch element {first}): "


def _check_invertible(what: str, input: Tensor, message: str | None = None) -> None:
    """torch's error for a singular matrix; lazily, at the sync point."""
    if not input.numel():
        return

    def singular(k: int, first: int) -> LinAlgError:
        if message is not None:
            return LinAlgError(f"{what}: {_prefix(input, first)}{message}")
        return LinAlgError(
            f"{what}: {_prefix(input, first)}The diagonal element {k} is zero, the "
            "inversion could not be completed because the input matrix is singular."
        )

    check_values([_no_grad(_lu_diag_fn, input)], _singular, singular)


def _check_positive_definite(what: str, input: Tensor, L: Tensor) -> None:
    """torch's error for a matrix that is not positive-definite; lazily, at the
    sync point, where the input's values are known to name the leading minor
    that fails (found on the host, once failed)."""
    if not L.numel():
        return
    a = input._value()  # this call's input, whatever becomes of the tensor later

    def not_positive_definite(_: Any, first: int) -> LinAlgError:
        m = np.asarray(a).reshape(-1, *input.shape[-2:])[first]
        order = m.shape[-1]
        for k in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:k, :k])
            except np.linalg.LinAlgError:
                order = k
                break
        return LinAlgError(
            f"{what}: {_prefix(input, first)}The factorization could not be completed "
            "because the input is not positive-definite (the leading minor of order "
            f"{order} is not positive-definite)."
        )

    check_values([L], _not_finite, not_positive_definite)


# ---------------------------------------------------------------------------
# Pure JAX functions
# ---------------------------------------------------------------------------


def _trace_fn(x, *, dt):
    return jnp.trace(x).astype(dt)


def _kron_fn(a, b, *, dt):
    work = "uint8" if dt == "bool" else dt  # XLA multiplies no bools
    return jnp.kron(a.astype(work), b.astype(work)).astype(dt)


def _vdot_fn(a, b):
    return jnp.vdot(a, b)


def _cross_fn(a, b, *, axis, dt):
    return jnp.cross(a.astype(dt), b.astype(dt), axis=axis)


def _dist_fn(a, b, *, p, dt):
    return _norm_fn((a - b).astype(dt), p=p, axis=None, keepdims=False)


def _diag_embed_fn(x, *, offset, dim1, dim2):
    k = x.shape[-1]
    n = k + builtins.abs(offset)
    idx = jnp.arange(k)
    rows, cols = idx + builtins.max(-offset, 0), idx + builtins.max(offset, 0)
    out = jnp.zeros((*x.shape[:-1], n, n), x.dtype).at[..., rows, cols].set(x)
    return jnp.moveaxis(out, (-2, -1), (dim1, dim2))


def _rot90_fn(x, *, k, axes):
    return jnp.rot90(x, k, axes=axes) + jnp.zeros((), x.dtype)


def _eye_like_fn(x):
    return jnp.broadcast_to(jnp.eye(x.shape[-1], dtype=x.dtype), x.shape)


def _matrix_exp_fn(x):
    return jax.scipy.linalg.expm(x)


def _det_fn(x):
    if not x.shape[-1]:  # an empty matrix: 1, with no gradient to pass back
        return jnp.ones(x.shape[:-2], x.dtype) + 0 * jnp.sum(x, axis=(-2, -1))
    return jnp.linalg.det(x)


def _slogdet_fn(x, *, which):
    return jnp.linalg.slogdet(x)[which]


def _logdet_fn(x):
    sign, logabs = jnp.linalg.slogdet(x)
    return jnp.where(sign < 0, jnp.nan, logabs)


def _inv_fn(x):
    return jnp.linalg.inv(x)


def _pinv_fn(x, *, rtol, hermitian):
    if hermitian:
        return _hermitian_pinv(x, rtol)
    return jnp.linalg.pinv(x, rtol=rtol)


def _lower_hermitian(x):
    """The Hermitian matrix of ``x``'s lower triangle (eigh's ``UPLO="L"``)."""
    lower = jnp.tril(x, -1)
    diagonal = jnp.tril(jnp.triu(x))
    return lower + jnp.swapaxes(lower, -1, -2).conj() + diagonal


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def _hermitian_pinv(x, rtol):
    return jnp.linalg.pinv(_lower_hermitian(x), rtol=rtol, hermitian=True)


def _hermitian_pinv_fwd(x, rtol):
    p = _hermitian_pinv(x, rtol)
    return p, (x, p)


def _hermitian_pinv_bwd(rtol, saved, g):
    # torch's pinv_backward, with the input as given (every entry)
    a, p = saved
    ph, gh = _mh(p), _mh(g)
    k = gh @ p
    kph = k @ ph
    grad = -_mh(p @ k) + kph - (a @ p) @ kph + (ph @ p) @ (gh - k @ a)
    return (grad,)


def _mh(x):
    return jnp.swapaxes(x, -1, -2).conj()


_hermitian_pinv.defvjp(_hermitian_pinv_fwd, _hermitian_pinv_bwd)


def _cholesky_fn(x, *, upper):
    L = jnp.linalg.cholesky(x)
    return jnp.swapaxes(L, -1, -2).conj() if upper else L


def _lower(L, upper):
    return jnp.swapaxes(L, -1, -2).conj() if upper else L


def _triangular_solve_fn(b, L, *, upper):
    L = _lower(L, upper)
    y = lax.linalg.triangular_solve(L, b, left_side=True, lower=True)
    return lax.linalg.triangular_solve(
        L, y, left_side=True, lower=True, transpose_a=True, conjugate_a=True
    )


def _as_gram(L, upper):
    """``L L^H`` (``U^H U``) from every entry, for torch's gradients: its
    backward treats the factor as a full matrix, though the forward reads one
    triangle."""
    Lh = jnp.swapaxes(L, -1, -2).conj()
    return Lh @ L if upper else L @ Lh


def _cholesky_solve_fn(b, L, *, upper):
    exact = _triangular_solve_fn(b, L, upper=upper)
    dense = jnp.linalg.solve(_as_gram(L, upper), b)
    return dense + lax.stop_gradient(exact - dense)


def _cholesky_inverse_fn(L, *, upper):
    eye = jnp.broadcast_to(jnp.eye(L.shape[-1], dtype=L.dtype), L.shape)
    exact = _triangular_solve_fn(eye, L, upper=upper)
    dense = jnp.linalg.inv(_as_gram(L, upper))
    return dense + lax.stop_gradient(exact - dense)


def _qr_fn(x, *, mode, which):
    out = jnp.linalg.qr(x, mode=mode)
    return out if mode == "r" else out[which]


def _svd_fn(x, *, full, which):
    m, n = x.shape[-2:]
    out = jnp.linalg.svd(x, full_matrices=False)[which]
    if not full or m == n or which == 1:
        return out
    # torch: the columns past min(m, n) get no gradient
    whole = jnp.linalg.svd(lax.stop_gradient(x), full_matrices=True)[which]
    k = builtins.min(m, n)
    if which == 0:
        return jnp.concatenate([out, whole[..., :, k:]], axis=-1)
    return jnp.concatenate([out, whole[..., k:, :]], axis=-2)


def _svdvals_fn(x):
    return jnp.linalg.svd(x, compute_uv=False)


def _solve_fn(a, b, *, vector):
    if vector:
        return jnp.linalg.solve(a, b[..., None])[..., 0]
    return jnp.linalg.solve(a, b)


def _lstsq_fn(a, b, *, vector):
    b = b[..., None] if vector else b
    x = jnp.linalg.pinv(a) @ b
    return x[..., 0] if vector else x


# ---------------------------------------------------------------------------
# torch.* functions
# ---------------------------------------------------------------------------


@declare(method=True)
def trace(input: Tensor) -> Tensor:
    if _autocast.on:
        return _autocast.run("trace", trace, input)
    _require_tensors("trace", input)
    if input.dim() != 2:
        raise RuntimeError(
            f"trace: expected a matrix, but got tensor with dim {input.dim()}"
        )
    if input.dtype is _dtype.bool:
        raise _not_implemented("trace", input.dtype)
    dt = input.dtype if input.dtype.is_floating_point else _dtype.int64
    return apply("TraceBackward0", _trace_fn, input, dt=dt.np_name)


@declare(method=True)
def kron(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    input, other = _as_tensor(input), _as_tensor(other)
    dt = _promote(input, other)
    _check_cast(dt, out)
    result = apply("UnsafeViewBackward0", _kron_fn, input, other, dt=dt.np_name)
    return _to_out(result, out)


@declare(method=True)
def inner(input: Tensor, other: Tensor) -> Tensor:
    if _autocast.on:
        return _autocast.run("inner", inner, input, other)
    input, other = _as_tensor(input), _as_tensor(other)
    a, b = tuple(input.shape), tuple(other.shape)
    if a and b and a[-1] != b[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got "
            f"shapes {list(a)} and {list(b)}"
        )
    if not a or not b:  # torch multiplies (promoting, as mul does)
        return input * other
    if input.dtype is not other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    # torch's inner is tensordot over the last dimensions (a dot of two vectors,
    # viewed as 0-d), so its nodes save what torch's do
    if len(a) == 1 and len(b) == 1:
        return matmul(input, other).view(())
    return tensordot(input, other, ([-1], [-1]))


def _tensordot_dims(a: Tensor, b: Tensor, dims: Any) -> tuple[list, list]:
    """``dims`` of ``torch.tensordot`` as two lists of dimensions, as torch's
    Python wrapper reads it (an int: the last ``dims`` of ``a`` with the first
    of ``b``)."""
    if isinstance(dims, TensorBase):
        if dims.numel() > 1:
            listed = dims.tolist()
            return list(listed[0]), list(listed[1])
        dims = int(dims.item())
    elif isinstance(dims, list | tuple):
        first, second = dims
        for name, position, listed in (("self", 3, first), ("other", 4, second)):
            what = f"tensordot(): argument 'dims_{name}' (position {position})"
            if not isinstance(listed, list | tuple):
                raise TypeError(
                    f"{what} must be tuple of ints, not {type(listed).__name__}"
                )
            for k, d in enumerate(listed):
                if not isinstance(d, int):
                    raise TypeError(
                        f"{what} must be tuple of ints, but found element of type "
                        f"{type(d).__name__} at pos {k}"
                    )
        return list(first), list(second)
    if isinstance(dims, bool) or not isinstance(dims, int):
        raise RuntimeError(
            "tensordot expects dims to be int or tuple[list[int], list[int]] or "
            f"list[list[int]] containing two lists, but got dims={dims}"
        )
    if dims < 0:
        raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
    if dims > builtins.min(a.dim(), b.dim()):
        raise RuntimeError(
            f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}"
        )
    return list(range(-dims, 0)), list(range(dims))


@declare
def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    """``torch.tensordot``: as torch's, one product of matrices (dimensions of
    size 1 against others summed first), permuted and reshaped around it."""
    if _autocast.on:
        return _autocast.run("tensordot", tensordot, a, b, dims, out)
    a, b = _as_tensor(a), _as_tensor(b)
    dims_a, dims_b = _tensordot_dims(a, b, dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    t1, t2, contracted = a, b, 1
    for d1, d2 in zip(dims_a, dims_b, strict=True):
        s1, s2 = a.shape[wrap_dim(d1, a.dim())], b.shape[wrap_dim(d2, b.dim())]
        if s2 == 1:  # summed at once, as torch's broadcast dimensions
            t1 = t1.sum(d1, keepdim=True)
        elif s1 == 1:
            t2 = t2.sum(d2, keepdim=True)
        elif s1 != s2:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {s1} in "
                f"dim {d1} and second has size {s2} in dim {d2}"
            )
        else:
            contracted *= s1
    for t, listed in ((a, dims_a), (b, dims_b)):
        wrapped = [wrap_dim(d, t.dim()) for d in listed]
        for d in wrapped:
            if wrapped.count(d) > 1:
                raise RuntimeError(
                    f"dim {d} appears multiple times in the list of dims"
                )
    c1 = {wrap_dim(d, a.dim()) for d in dims_a}
    c2 = {wrap_dim(d, b.dim()) for d in dims_b}
    kept1 = [i for i in range(a.dim()) if i not in c1]
    kept2 = [i for i in range(b.dim()) if i not in c2]
    rows = math.prod(t1.shape[i] for i in kept1)
    cols = math.prod(t2.shape[i] for i in kept2)
    m1 = t1.permute(*kept1, *[wrap_dim(d, a.dim()) for d in dims_a])
    m2 = t2.permute(*[wrap_dim(d, b.dim()) for d in dims_b], *kept2)
    product = matmul(m1.reshape(rows, contracted), m2.reshape(contracted, cols))
    sizes = [t1.shape[i] for i in kept1] + [t2.shape[i] for i in kept2]
    return product.reshape(*sizes)


@declare(method=True)
def vdot(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    if _autocast.on:
        return _autocast.run("vdot", vdot, input, other, out=out)
    input, other = _as_tensor(input), _as_tensor(other)
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors"
        )
    if input.dtype is not other.dtype:
        raise RuntimeError(
            "vdot : expected both vectors to have same dtype, but found "
            f"{input.dtype.scalar_type} and {other.dtype.scalar_type}"
        )
    if input.shape[0] != other.shape[0]:
        n, m = input.shape[0], other.shape[0]
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have "
            f"the same number of elements, but got {n} and {m} elements respectively"
        )
    result = apply("VdotBackward0", _vdot_fn, input, other)
    return _exact_out(result, out, dot_refusal(input, out))


saves("VdotBackward0", (1, 0), (0, 1))


def _cross(what: str, input: Tensor, other: Tensor, dim: Any) -> Tensor:
    input, other = _as_tensor(input), _as_tensor(other)
    if input.dim() != other.dim():
        raise RuntimeError(f"{what}: inputs must have the same number of dimensions.")
    shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    axis = wrap_dim(dim, len(shape))
    if input.shape[axis] != 3 or other.shape[axis] != 3:
        raise RuntimeError(
            f"{what}: inputs dimension {dim} must have length 3. Got "
            f"{input.shape[axis]} and {other.shape[axis]}"
        )
    if input.dtype is not other.dtype:
        raise RuntimeError(
            f"expected scalar type {input.dtype.scalar_type} but found "
            f"{other.dtype.scalar_type}"
        )
    return apply(
        "LinalgCrossBackward0",
        _cross_fn,
        input,
        other,
        axis=axis,
        dt=input.dtype.np_name,
    )


saves("LinalgCrossBackward0", (1, 0), (0, 1))


@declare(method=True)
def cross(input: Tensor, other: Tensor, dim: int | None = None, *, out=None):
    """``torch.cross``: without ``dim``, the first dimension of size 3."""
    if _autocast.on:
        return _autocast.run("cross", cross, input, other, dim, out=out)
    if dim is None:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dims = [i for i, s in enumerate(shape) if s == 3]
        if not dims:
            raise RuntimeError("no dimension of size 3 in input")
        dim = dims[0]
    return _cross("linalg.cross", input, other, dim)


@declare(method=True)
def dist(input: Tensor, other: Tensor, p: Any = 2) -> Tensor:
    if _autocast.on:
        return _autocast.run("dist", dist, input, other, p)
    input, other = _as_tensor(input), _as_tensor(other)
    dt = _promote(input, other)
    if not dt.is_floating_point:
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{dt.scalar_type} instead."
        )
    return apply("DistBackward0", _dist_fn, input, other, p=float(p), dt=dt.np_name)


saves("DistBackward0", (0, None), (1, None), ("result", None))


@declare(method=True)
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1):
    _require_tensors("diag_embed", input)
    ndim = input.dim() + 1
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if d1 > d2:  # the same diagonal, read from the other side
        d1, d2, offset = d2, d1, -offset
    return apply(
        "DiagEmbedBackward0", _diag_embed_fn, input, offset=offset, dim1=d1, dim2=d2
    )


@declare(method=True)
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    _require_tensors("diagflat", input)
    return diag_embed(input.reshape(-1), offset)


@declare(method=True)
def rot90(input: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    _require_tensors("rot90", input)
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(
            f"expected total rotation dims == 2, but got dims = {len(dims)}"
        )
    if input.dim() < 2:
        raise RuntimeError(
            f"expected total dims >= 2, but got total dims = {input.dim()}"
        )
    a, b = (wrap_dim(d, input.dim()) for d in dims)
    if a == b:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {a} and dim1 = {b}"
        )
    return apply("Rot90Backward0", _rot90_fn, input, k=k % 4, axes=(a, b))


@declare(method=True)
def matrix_power(input: Tensor, n: int) -> Tensor:
    """``torch.matrix_power``: products of ``input`` (of its inverse for a
    negative ``n``) by repeated squaring, as torch's, so the grad_fn names are
    its matmuls'."""
    _matrices("linalg.matrix_power", input)
    if n == 0:
        return apply("CopyBackwards", _eye_like_fn, input)
    if n == 1:
        return input.clone()
    if n < 0:
        input, n = inverse(input), -n
    if n == 1:
        return input
    if n in (2, 3):
        out = matmul(input, input)
        return out if n == 2 else matmul(out, input)
    z = result = None
    while n:
        z = input if z is None else matmul(z, z)
        if n & 1:
            result = z if result is None else matmul(result, z)
        n >>= 1
    return result


def _of_square(what: str, grad_fn: str, fn, input: Tensor, **static) -> Tensor:
    """``fn`` of a batch of square floating matrices, with torch's checks."""
    _matrices(what, input)
    _floating(what, input)
    return apply(grad_fn, fn, input, **static)


@declare(method=True)
def matrix_exp(input: Tensor) -> Tensor:
    return _of_square(
        "linalg.matrix_exp", "LinalgMatrixExpBackward0", _matrix_exp_fn, input
    )


saves("LinalgMatrixExpBackward0", (0, None))


@declare(method=True)
def det(input: Tensor) -> Tensor:
    return _of_square("linalg.det", "LinalgDetBackward0", _det_fn, input)


saves("LinalgDetBackward0", (0, None), ("result", None))


def _slogdet(input: Tensor, result: type, what: str = "linalg.slogdet"):
    _matrices(what, input)
    _floating(what, input)
    sign = apply("LinalgSlogdetBackward0", _slogdet_fn, input, which=0)
    logabs = apply("LinalgSlogdetBackward0", _slogdet_fn, input, which=1)
    return result(sign, logabs)


@declare(method=True)
def slogdet(input: Tensor):
    return _slogdet(input, _Slogdet)


@declare(method=True)
def logdet(input: Tensor) -> Tensor:
    """``torch.logdet``: NaN for a negative determinant, -inf for a zero one."""
    return _of_square("linalg.slogdet", "WhereBackward0", _logdet_fn, input)


@declare(method=True)
def inverse(input: Tensor) -> Tensor:
    if _autocast.on:
        return _autocast.run("inverse", inverse, input)
    _matrices("linalg.inv", input)
    _floating("linalg.inv", input)
    _check_invertible("linalg.inv", input)
    return apply("LinalgInvExBackward0", _inv_fn, input)


saves("LinalgInvExBackward0", ("result", None))


def _pinv(input: Tensor, rtol: float, hermitian: bool) -> Tensor:
    if (
        input.dim() < 2
        or not input.dtype.is_floating_point
        or input.dtype
        in (
            _dtype.float16,
            _dtype.bfloat16,
        )
    ):
        raise RuntimeError(
            f"linalg.pinv({input.dtype.scalar_type}{{{list(input.shape)}}}): expected "
            "a tensor with 2 or more dimensions of float, double, cfloat or cdouble "
            "types"
        )
    return apply(
        "LinalgPinvBackward0", _pinv_fn, input, rtol=rtol, hermitian=bool(hermitian)
    )


saves("LinalgPinvBackward0", (0, None), ("result", None))


@declare(method=True)
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    if _autocast.on:
        return _autocast.run("pinverse", pinverse, input, rcond)
    return _pinv(input, float(rcond), False)


def _cholesky(what: str, name: str, input: Tensor, upper: bool) -> Tensor:
    L = _of_square(what, name, _cholesky_fn, input, upper=bool(upper))
    _check_positive_definite(what, input, L)
    return L


@declare(method=True)
def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    return _cholesky("cholesky", "CholeskyBackward0", input, upper)


saves("CholeskyBackward0", ("result", None))


@declare(method=True)
def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky_solve(B, L)``: ``X`` with ``L L^H X = B``."""
    if _autocast.on:
        return _autocast.run("cholesky_solve", cholesky_solve, input, input2, upper)
    for name, t in (("b", input), ("u", input2)):
        if t.dim() < 2:
            raise RuntimeError(
                f"{name} should have at least 2 dimensions, but has {t.dim()} "
                "dimensions instead"
            )
    if input.dtype is not input2.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type "
            f"{input.dtype.scalar_type} and A of type {input2.dtype.scalar_type} "
            "instead."
        )
    _floating("cholesky_solve", input)
    batch = np.broadcast_shapes(tuple(input.shape[:-2]), tuple(input2.shape[:-2]))
    b = input.expand(*batch, *input.shape[-2:])
    L = input2.expand(*batch, *input2.shape[-2:])
    return apply("CholeskySolveBackward0", _cholesky_solve_fn, b, L, upper=bool(upper))


saves("CholeskySolveBackward0", (0, None), (1, None), ("result", None))


@declare(method=True)
def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:
    return _of_square(
        "cholesky_inverse",
        "CholeskyInverseBackward0",
        _cholesky_inverse_fn,
        input,
        upper=bool(upper),
    )


saves("CholeskyInverseBackward0", (0, None), ("result", None))


def _qr(input: Tensor, mode: str, result: type):
    _matrices("linalg.qr", input, square=False)
    _floating("linalg.qr", input)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            "qr received unrecognized mode '"
            + mode
            + "' but expected one of 'reduced' (default), 'r', or 'complete'"
        )
    R = apply("LinalgQrBackward0", _qr_fn, input, mode=mode, which=-1)
    if mode == "r":
        return result(zeros(0, dtype=input.dtype), R)
    Q = apply("LinalgQrBackward0", _qr_fn, input, mode=mode, which=0)
    return result(Q, R)


@declare(method=True)
def qr(input: Tensor, some: bool = True):
    return _qr(input, "reduced" if some else "complete", _Qr)


def _svd(input: Tensor, full: bool, what: str = "linalg.svd"):
    _matrices(what, input, square=False)
    _floating(what, input)
    return tuple(
        apply("LinalgSvdBackward0", _svd_fn, input, full=bool(full), which=i)
        for i in range(3)
    )


@declare(method=True)
def svd(input: Tensor, some: bool = True, compute_uv: bool = True):
    """``torch.svd``: ``(U, S, V)`` with ``V``, not ``Vh``; without
    ``compute_uv``, ``U`` and ``V`` are zeros of the full shapes."""
    if not compute_uv:
        S = svdvals(input)
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        U = zeros(*batch, m, m, dtype=input.dtype)
        return _Svd(U, S, zeros(*batch, n, n, dtype=input.dtype))
    U, S, Vh = _svd(input, not some)
    return _Svd(U, S, Vh.mT)


def svdvals(A: Tensor, *, driver: Any = None) -> Tensor:
    _matrices("linalg.svd", A, square=False)
    _floating("linalg.svd", A)
    return apply("LinalgSvdBackward0", _svdvals_fn, A)
