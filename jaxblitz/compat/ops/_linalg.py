"""Blitz 1, "Tensors": matrix products (``matmul``, ``mm``, ``mv``, ``dot``,
``bmm``, ``addmm``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._funnel import (
    _addmm_fn,
    _as_tensor,
    _cast,
    _check_arguments,
    _check_cast,
    _matmul_fn,
    _not_implemented,
    _promote,
    _to_out,
)
from jaxblitz.compat.ops._scalars import number
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
    if _autocast.on:
        return _autocast.run("matmul", matmul, input, other, out=out)
    input, other = _as_tensor(input), _as_tensor(other)
    _check_matmul(input, other)
    _check_arguments(_KERNELS.get(input.dim(), "mm"), self=input, mat2=other)
    name = _matmul_node(input, other)
    precision = _precision.of("matmul", input, other)
    return _exact_out(apply(name, _matmul_fn, input, other, precision=precision), out)


def _exact_out(result: Tensor, out: Tensor | None, refusal: str = "") -> Tensor:
    """torch's ``out=`` for the products, whose kernels write only the result's
    dtype (``refusal``: the kernel's own words for another one)."""
    if out is not None and out.dtype is not result.dtype:
        raise RuntimeError(
            refusal
            or f"Expected out tensor to have dtype {_CPP[result.dtype.np_name]}, "
            f"but got {_CPP[out.dtype.np_name]} instead"
        )
    return _to_out(result, out)


def _matmul_node(input: Tensor, other: Tensor) -> str:
    """The grad_fn torch's matmul ends in: a vector times a matrix is mm on the
    vector unsqueezed, then squeezed; a matrix times a batch is folded into mm
    on the transposes, copied back to contiguous, when the matrix requires
    grad; every other batched form ends in _unsafe_view."""
    dims = input.dim(), other.dim()
    name = _MATMUL_NODES.get(dims)
    if name is not None:
        return name
    if dims[0] == 2 and input.requires_grad:
        return "CloneBackward0"
    return "UnsafeViewBackward0"


_MATMUL_NODES = {
    (2, 2): "MmBackward0",
    (2, 1): "MvBackward0",
    (1, 1): "DotBackward0",
    (1, 2): "SqueezeBackward4",
}

saves("MmBackward0", (1, 0), (0, 1))
saves("MvBackward0", (1, 0), (0, 1))
saves("DotBackward0", (1, 0), (0, 1))


# the kernel torch's matmul reaches for an input of this many dims (its device
# check names it): mm, bmm for batches
_KERNELS = {3: "bmm"}


@declare(method=True)
def mm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    if _autocast.on:
        return _autocast.run("mm", mm, input, mat2, out=out)
    if input.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError("self must be a matrix")
    return matmul(input, mat2, out=out)


@declare(method=True)
def mv(input: Tensor, vec: Tensor, *, out: Tensor | None = None) -> Tensor:
    if _autocast.on:
        return _autocast.run("mv", mv, input, vec, out=out)
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {input.dim()}, {vec.dim()}"
        )
    if out is not None and out.dtype is not input.dtype:  # torch: mv is addmv
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{out.dtype.scalar_type}, {input.dtype.scalar_type}, and "
            f"{vec.dtype.scalar_type}"
        )
    return matmul(input, vec, out=out)


@declare(method=True)
def dot(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    if _autocast.on:
        return _autocast.run("dot", dot, input, other, out=out)
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors"
        )
    return _exact_out(matmul(input, other), out, dot_refusal(input, out))


def dot_refusal(input: Tensor, out: Tensor | None) -> str:
    """dot's and vdot's words for an ``out`` of another dtype."""
    if out is None:
        return ""
    return (
        f"result dtype {out.dtype.scalar_type} does not match input dtype "
        f"{input.dtype.scalar_type}"
    )


@declare(method=True)
def bmm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    if _autocast.on:
        return _autocast.run("bmm", bmm, input, mat2, out=out)
    if input.dim() != 3 or mat2.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError("batch1 and batch2 must have same number of batches")
    return matmul(input, mat2, out=out)


def _numbers(what: str, beta: Any, alpha: Any) -> tuple[Any, Any]:
    # the kernels branch on beta == 0 (torch ignores input's nan then): a tensor
    # beta or alpha is read as the number it holds, as torch's parser reads it
    return number(beta, what, "beta"), number(alpha, what, "alpha")


@declare(method=True, inplace=True)
def addmm(
    input: Tensor,
    mat1: Tensor,
    mat2: Tensor,
    *,
    beta: Any = 1,
    alpha: Any = 1,
    out: Tensor | None = None,
) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``; beta=0 ignores input's values."""
    if _autocast.on:
        return _autocast.run(
            "addmm", addmm, input, mat1, mat2, beta=beta, alpha=alpha, out=out
        )
    beta, alpha = _numbers("addmm", beta, alpha)
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
    result = apply(
        "AddmmBackward0",
        _addmm_fn,
        input,
        mat1,
        mat2,
        beta=beta,
        alpha=alpha,
        precision=precision,
    )
    return _exact_out(result, out)


saves("AddmmBackward0", (2, 1), (1, 2))


def _expand_check(input: Tensor, shape: tuple) -> None:
    """torch's error where ``input`` does not broadcast to a product's shape."""
    try:
        fits = np.broadcast_shapes(tuple(input.shape), shape) == shape
    except ValueError:
        fits = False
    if fits and input.dim() <= len(shape):
        return
    if input.dim() > len(shape):  # torch's expand of a tensor of more dims
        kind = input.dtype.scalar_type
        raise RuntimeError(
            f"expand(torch.{kind}Tensor{{{list(input.shape)}}}, "
            f"size={list(shape)}): the number of sizes provided ({len(shape)}) must "
            f"be greater or equal to the number of dimensions in the tensor "
            f"({input.dim()})"
        )
    got = (1,) * (len(shape) - input.dim()) + tuple(input.shape)
    k = next(
        (i for i in reversed(range(len(shape))) if got[i] not in (1, shape[i])),
        0,
    )
    raise RuntimeError(
        f"The expanded size of the tensor ({shape[k]}) must match the existing size "
        f"({got[k]}) at non-singleton dimension {k}.  Target sizes: {list(shape)}.  "
        f"Tensor sizes: {list(input.shape)}"
    )


def _scaled_product(name, input, a, b, beta, alpha, names, fn=_addmm_fn):
    method = name.removesuffix("Backward0").lower()
    _check_arguments(method, self=input, **dict(zip(names, (a, b), strict=True)))
    precision = _precision.of("matmul", a, b)
    return apply(name, fn, input, a, b, beta=beta, alpha=alpha, precision=precision)


@declare(method=True, inplace=True)
def addmv(
    input: Tensor,
    mat: Tensor,
    vec: Tensor,
    *,
    beta: Any = 1,
    alpha: Any = 1,
    out: Tensor | None = None,
) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``; beta=0 ignores input's values."""
    if _autocast.on:
        return _autocast.run(
            "addmv", addmv, input, mat, vec, beta=beta, alpha=alpha, out=out
        )
    beta, alpha = _numbers("addmv", beta, alpha)
    input, mat, vec = _as_tensor(input), _as_tensor(mat), _as_tensor(vec)
    if not (mat.dim() == 2 and vec.dim() == 1 and input.dim() <= 1):
        raise RuntimeError(
            "vector + matrix @ vector expected, got "
            f"{input.dim()}, {mat.dim()}, {vec.dim()}"
        )
    if mat.shape[1] != vec.shape[0] or input.numel() not in (1, mat.shape[0]):
        size = input.shape[0] if input.dim() else input.numel()
        raise RuntimeError(
            f"size mismatch, got input ({size}), mat ({mat.shape[0]}x{mat.shape[1]})"
            f", vec ({vec.shape[0]})"
        )
    if not input.dtype is mat.dtype is vec.dtype:
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{input.dtype.scalar_type}, {mat.dtype.scalar_type}, and "
            f"{vec.dtype.scalar_type}"
        )
    if input.dtype is _dtype.bool:
        raise NotImplementedError("\"addmv_impl_cpu\" not implemented for 'Bool'")
    result = _scaled_product(
        "AddmvBackward0", input, mat, vec, beta, alpha, ("mat", "vec")
    )
    return _exact_out(result, out)


saves("AddmvBackward0", (2, 1), (1, 2))


def _batches(batch1: Tensor, batch2: Tensor) -> None:
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.dim() != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(
            "batch1 and batch2 must have same number of batches, got "
            f"{batch1.shape[0]} and {batch2.shape[0]}"
        )
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} "
            f"and {batch2.shape[1]}x{batch2.shape[2]})"
        )


@declare(method=True, inplace=True)
def baddbmm(
    input: Tensor,
    batch1: Tensor,
    batch2: Tensor,
    *,
    beta: Any = 1,
    alpha: Any = 1,
    out: Tensor | None = None,
) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)``, batch by batch."""
    if _autocast.on:
        return _autocast.run(
            "baddbmm", baddbmm, input, batch1, batch2, beta=beta, alpha=alpha, out=out
        )
    beta, alpha = _numbers("baddbmm", beta, alpha)
    input, batch1, batch2 = map(_as_tensor, (input, batch1, batch2))
    if not input.dtype is batch1.dtype is batch2.dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {_CPP[input.dtype.np_name]}, "
            f"batch1: {_CPP[batch1.dtype.np_name]}, batch2: "
            f"{_CPP[batch2.dtype.np_name]}"
        )
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.dim() != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    want = [batch1.shape[0], batch1.shape[2]]
    if list(batch2.shape[:2]) != want:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: {want} "
            f"but got: {list(batch2.shape[:2])}."
        )
    _expand_check(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    if input.dtype is _dtype.bool:
        raise NotImplementedError("\"baddbmm\" not implemented for 'Bool'")
    result = _scaled_product(
        "BaddbmmBackward0", input, batch1, batch2, beta, alpha, ("batch1", "batch2")
    )
    return _exact_out(result, out)


saves("BaddbmmBackward0", (2, 1), (1, 2))


def _addbmm_fn(bias, x, y, *, beta, alpha, precision):
    # torch's loop: the first batch's addmm takes beta * input, each later one
    # adds its product into the result
    bias = jnp.broadcast_to(bias, (x.shape[1], y.shape[2]))
    if not x.shape[0]:
        return bias * beta if beta != 0 else jnp.zeros_like(bias)
    first = _addmm_fn(bias, x[0], y[0], beta=beta, alpha=alpha, precision=precision)

    def add(acc, pair):
        a, b = pair
        return _addmm_fn(acc, a, b, beta=1, alpha=alpha, precision=precision), None

    return lax.scan(add, first, (x[1:], y[1:]))[0]


@declare(method=True, inplace=True)
def addbmm(
    input: Tensor,
    batch1: Tensor,
    batch2: Tensor,
    *,
    beta: Any = 1,
    alpha: Any = 1,
    out: Tensor | None = None,
) -> Tensor:
    """``beta * input + alpha * sum(batch1 @ batch2)`` over the batches."""
    if _autocast.on:
        return _autocast.run(
            "addbmm", addbmm, input, batch1, batch2, beta=beta, alpha=alpha, out=out
        )
    beta, alpha = _numbers("addbmm", beta, alpha)
    input, batch1, batch2 = map(_as_tensor, (input, batch1, batch2))
    _batches(batch1, batch2)
    if input.dtype is not batch2.dtype:
        raise RuntimeError(
            "self and mat2 must have the same dtype, but got "
            f"{input.dtype.scalar_type} and {batch2.dtype.scalar_type}"
        )
    if batch1.dtype is not batch2.dtype:
        raise RuntimeError(
            "mat1 and mat2 must have the same dtype, but got "
            f"{batch1.dtype.scalar_type} and {batch2.dtype.scalar_type}"
        )
    _expand_check(input, (batch1.shape[1], batch2.shape[2]))
    names = ("batch1", "batch2")
    result = _scaled_product(
        "AddbmmBackward0", input, batch1, batch2, beta, alpha, names, _addbmm_fn
    )
    refusal = (
        ""
        if out is None
        else "self and mat2 must have the same dtype, but got "
        f"{out.dtype.scalar_type} and {batch2.dtype.scalar_type}"
    )
    return _exact_out(result, out, refusal)


saves("AddbmmBackward0", (2, 1), (1, 2))


def _addr_fn(input, v1, v2, *, beta, alpha, dt):
    input, v1, v2 = (a.astype(dt) for a in (input, v1, v2))
    outer = v1[:, None] * v2[None, :]
    if dt == jnp.bool_:
        return (input & bool(beta)) | (outer & bool(alpha))
    outer = outer if alpha == 1 else _cast(alpha, dt) * outer
    if beta == 0:
        return jnp.broadcast_to(outer, jnp.broadcast_shapes(input.shape, outer.shape))
    return (input if beta == 1 else _cast(beta, dt) * input) + outer


@declare(method=True, inplace=True)
def addr(
    input: Tensor,
    vec1: Tensor,
    vec2: Tensor,
    *,
    beta: Any = 1,
    alpha: Any = 1,
    out: Tensor | None = None,
) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``, promoting as torch."""
    if _autocast.on:
        return _autocast.run(
            "addr", addr, input, vec1, vec2, beta=beta, alpha=alpha, out=out
        )
    beta, alpha = _numbers("addr", beta, alpha)
    input, vec1, vec2 = map(_as_tensor, (input, vec1, vec2))
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.dim() != 1:
            raise RuntimeError(
                f"addr: Expected 1-D argument {name}, but got {v.dim()}-D"
            )
    dt = _promote(input, vec1, vec2)
    for name, value in (("beta", beta), ("alpha", alpha)):
        if isinstance(value, bool) and dt is not _dtype.bool:
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
        if not dt.is_floating_point and isinstance(value, float):
            raise RuntimeError(
                f"For integral input tensors, argument {name} must not be a "
                "floating point number."
            )
    _expand_check(input, (vec1.shape[0], vec2.shape[0]))
    _check_cast(dt, out)
    result = apply(
        "AddrBackward0",
        _addr_fn,
        input,
        vec1,
        vec2,
        beta=beta,
        alpha=alpha,
        dt=dt.np_name,
    )
    return _to_out(result, out)


saves("AddrBackward0", (2, 1), (1, 2))
