"""Blitz 1, "Tensors": numerical integration and differentiation of samples --
``trapezoid`` (``trapz``), ``cumulative_trapezoid`` and ``gradient`` -- made of
slices, sums and products as ATen's own composites are (``Integration.cpp``,
``ReduceOps.cpp``), so their gradients and lazy recording are those ops';
``renorm``, one recorded node as torch's ``RenormBackward0``; the deprecated
``chain_matmul``; and the out-of-place ``fill``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp

from jaxblitz.compat import _autocast
from jaxblitz.compat._warn_always import warn_once
from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._funnel import _abs, _require_tensors
from jaxblitz.compat.ops._linalg import mm
from jaxblitz.compat.ops.shape_ops import _slice, cat
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._tensor_base import TensorBase, _type_name, wrap_dim
from jaxblitz.compat.tensor.creation import _check_fill, full

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

# ---------------------------------------------------------------------------
# Slices as ATen's at::slice takes them (Python's bounds, clamped)
# ---------------------------------------------------------------------------


def _sl(t: Tensor, dim: int, start: int | None = None, stop: int | None = None):
    """``t[..., start:stop, ...]`` on ``dim`` (torch's ``at::slice``)."""
    begin, end, _ = slice(start, stop).indices(t.shape[dim])
    return _slice(t, dim, begin, max(begin, end))


def _size_at(name: str, y: Tensor, dim: Any) -> int:
    """``dim`` wrapped, as torch's ``y.sym_size(dim)`` wants it: a 0-d ``y`` has
    no dimension to integrate along."""
    if not y.dim():
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, y.dim())


def _real_dx(name: str, dx: Any) -> float:
    """``dx=`` (a Number, or a 0-d tensor as torch's parser takes it) as a float."""
    if isinstance(dx, TensorBase):
        dx = dx.item()
    if isinstance(dx, bool | complex):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    if not isinstance(dx, int | float):
        raise TypeError(f"{name}(): argument 'dx' must be Number, not {_type_name(dx)}")
    return float(dx)


def _x_along(name: str, y: Tensor, x: Tensor, dim: int) -> Tensor:
    """``x``'s differences along ``dim``, shaped to broadcast against ``y``'s
    (torch: a 1-D ``x`` laid along ``dim``, a shorter one padded in front)."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(
                f"{name}: There must be one `x` value for each sample point"
            )
        shape = [1] * y.dim()
        shape[dim] = x.shape[0]
        x = x.reshape(shape)
    elif x.dim() < y.dim():
        x = x.reshape([1] * (y.dim() - x.dim()) + list(x.shape))
    return _sl(x, dim, 1) - _sl(x, dim, 0, -1)


def _y_and_x(name: str, y: Any, x: Any, dx: Any, dim: Any) -> tuple:
    _require_tensors(name, y)
    if x is not None and dx is not None:
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got (Tensor, "
            "dx=Number, x=Tensor): give x or dx, not both"
        )
    if x is not None and not isinstance(x, TensorBase):
        raise TypeError(
            f"{name}(): argument 'x' (position 2) must be Tensor, not {_type_name(x)}"
        )
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {_type_name(dim)}")
    return y, x


@declare
def trapezoid(
    y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1
) -> Tensor:
    """``torch.trapezoid``: the trapezoidal rule along ``dim``, at the sample
    points ``x`` or a constant spacing ``dx`` (default 1)."""
    y, x = _y_and_x("trapezoid", y, x, dx, dim)
    dim = _size_at("trapezoid", y, dim)
    if y.shape[dim] == 0:  # numpy's answer: zero
        shape = [s for i, s in enumerate(y.shape) if i != dim]
        return full(shape, 0, dtype=y.dtype, device=_dtype.tensor_device(y))
    if x is None:
        if y.dtype is _dtype.bool:
            raise RuntimeError(
                "trapezoid: received a bool input for `y`, but bool is not supported"
            )
        step = _real_dx("trapezoid", 1 if dx is None else dx)
        ends = y.select(dim, 0) + y.select(dim, -1)
        return (y.sum(dim) - ends * 0.5) * step
    if _dtype.bool in (y.dtype, x.dtype):
        raise RuntimeError(
            "trapezoid: received a bool input for `x` or `y`, but bool is not supported"
        )
    widths = _x_along("trapezoid", y, x, dim)
    return ((_sl(y, dim, 1) + _sl(y, dim, 0, -1)) * widths).sum(dim) / 2.0


@declare
def trapz(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1):
    """``torch.trapz``: :func:`trapezoid` by its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


@declare
def cumulative_trapezoid(
    y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1
) -> Tensor:
    """``torch.cumulative_trapezoid``: the running trapezoidal integral along
    ``dim`` (one value fewer than samples)."""
    name = "cumulative_trapezoid"
    y, x = _y_and_x(name, y, x, dx, dim)
    if x is None:
        if y.dtype is _dtype.bool:
            raise RuntimeError(
                f"{name}: received a bool input for `y`, but bool is not supported"
            )
        widths: Any = _real_dx(name, 1 if dx is None else dx)
    else:
        if _dtype.bool in (y.dtype, x.dtype):
            raise RuntimeError(
                f"{name}: received a bool input for `x` or `y`, but bool is not "
                "supported"
            )
    if not y.dim():
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, y.dim())
    if x is not None:
        widths = _x_along(name, y, x, dim)
    return ((_sl(y, dim, 0, -1) + _sl(y, dim, 1)) * widths / 2.0).cumsum(dim)


# ---------------------------------------------------------------------------
# gradient
# ---------------------------------------------------------------------------


def _check_gradient(y: Tensor, given: int | None, dims: list | None, edge: int):
    """torch's ``pre_check_gradient``, in its order and words."""
    if y.dtype is _dtype.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if given is not None and dims is None and given != y.dim():
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list "
            f"of length equal to 'self.dim() = {y.dim()}', since dim argument was "
            f"not given, but got a list of length {given}"
        )
    if given is not None and dims is not None and given != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's "
            "spacing and dim arguments to have the same length, but got a spacing "
            f"argument of length {given} and a dim argument of length {len(dims)}."
        )
    if edge not in (1, 2):
        raise RuntimeError(
            "torch.gradient only supports edge_order=1 and edge_order=2."
        )
    wrapped = [wrap_dim(d, y.dim()) for d in (dims or [])]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(
            f"dim {wrapped[len(set(wrapped))]} appears multiple times in the list of "
            "dims"
        )
    for d in wrapped if dims is not None else range(y.dim()):
        if y.shape[d] < edge + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least "
                "edge_order+1"
            )


def _by_scalar(y: Tensor, h: Any, d: int, edge: int) -> Tensor:
    """Central differences inside, one-sided at the ends, a constant step ``h``."""
    center = (_sl(y, d, 2) - _sl(y, d, 0, -2)) / h
    if edge == 1:
        first = (_sl(y, d, 1, 2) - _sl(y, d, 0, 1)) / h
        last = (_sl(y, d, -1) - _sl(y, d, -2, -1)) / h
    else:
        first = (
            _sl(y, d, 0, 1) * -1.5 + _sl(y, d, 1, 2) * 2 - _sl(y, d, 2, 3) * 0.5
        ) / h
        last = (
            _sl(y, d, -3, -2) * 0.5 + _sl(y, d, -2, -1) * -2 + _sl(y, d, -1) * 1.5
        ) / h
    return cat([first, center / 2, last], d)


def _by_points(y: Tensor, points: Tensor, d: int, edge: int) -> Tensor:
    """The same at the sample coordinates ``points`` (1-D) along ``d``."""
    if points.dim() != 1:
        raise RuntimeError(
            "torch.gradient expected each element of spacing to have one dimension, "
            f"but got an element with {points.dim()} dimensions!"
        )
    shape = [1] * y.dim()
    shape[d] = -1
    h = points.diff(1, 0)
    h1, h2 = _sl(h, 0, 0, -1), _sl(h, 0, 1)
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    center = a * _sl(y, d, 0, -2) + b * _sl(y, d, 1, -1) + c * _sl(y, d, 2)
    if edge == 1:
        first = (_sl(y, d, 1, 2) - _sl(y, d, 0, 1)) / h[0]
        last = (_sl(y, d, -1) - _sl(y, d, -2, -1)) / h[-1]
    else:
        a = -(2.0 * h[0] + h[1]) / (h[0] * (h[0] + h[1]))
        b = (h[0] + h[1]) / (h[0] * h[1])
        c = (-h[0]) / (h[1] * (h[0] + h[1]))
        first = a * _sl(y, d, 0, 1) + b * _sl(y, d, 1, 2) + c * _sl(y, d, 2, 3)
        a = (h[-1]) / (h[-2] * (h[-1] + h[-2]))
        b = -(h[-1] + h[-2]) / (h[-1] * h[-2])
        c = (2 * h[-1] + h[-2]) / (h[-1] * (h[-1] + h[-2]))
        last = a * _sl(y, d, -3, -2) + b * _sl(y, d, -2, -1) + c * _sl(y, d, -1)
    return cat([first, center, last], d)


def _number(v: Any) -> bool:
    return (
        isinstance(v, int | float)
        and not isinstance(v, bool)
        or (isinstance(v, TensorBase) and not v.dim())
    )


@declare
def gradient(
    input: Tensor, *, spacing: Any = None, dim: Any = None, edge_order: int = 1
) -> tuple:
    """``torch.gradient``: the derivative estimated from samples along each of
    ``dim`` (every dimension by default), one tensor per dimension, with unit,
    constant (``spacing=2.0`` or one per dimension) or coordinate (1-D tensors)
    spacing; second-order accurate inside, ``edge_order`` at the ends."""
    _require_tensors("gradient", input)
    listed = isinstance(dim, list | tuple)
    dims = list(dim) if listed else None if dim is None else [dim]
    if spacing is None or _number(spacing):
        h = 1.0 if spacing is None else spacing
        if isinstance(h, TensorBase):
            h = h.item()
        count = len(dims) if dims is not None else input.dim()
        given = None if spacing is None and not listed else count
        steps: list = [h] * count
    elif isinstance(spacing, list | tuple):
        steps, given = list(spacing), len(spacing)
    else:
        raise TypeError(
            "gradient(): argument 'spacing' must be Number, tuple of Numbers or "
            f"tuple of Tensors, not {_type_name(spacing)}"
        )
    _check_gradient(input, given, dims, edge_order)
    axes = [wrap_dim(d, input.dim()) for d in dims] if dims else range(input.dim())
    out = []
    for h, d in zip(steps, axes, strict=False):
        if isinstance(h, TensorBase):
            out.append(_by_points(input, h, d, edge_order))
        else:
            out.append(_by_scalar(input, h, d, edge_order))
    return tuple(out)


# ---------------------------------------------------------------------------
# renorm
# ---------------------------------------------------------------------------


def _vector_norm(x, *, p, axes):
    if p == float("inf"):
        return jnp.max(_abs(x), axis=axes, keepdims=True)
    if p == 2:
        return jnp.sqrt(jnp.sum(x * x, axis=axes, keepdims=True))
    if p == 1:
        return jnp.sum(_abs(x), axis=axes, keepdims=True)
    return jnp.sum(_abs(x) ** p, axis=axes, keepdims=True) ** (1.0 / p)


def _renorm_fn(x, *, p, axes, maxnorm):
    """Each slice whose p-norm passes ``maxnorm`` scaled down to it, the norm and
    scale in torch's CPU accumulate type (double for float), the scale rounded
    to ``x``'s dtype. A slice kept as it is gets no gradient through a norm
    (none is taken of it: a zero slice's norm has no finite derivative)."""
    wide = jnp.float64 if x.dtype in (jnp.float32, jnp.float64) else jnp.float32
    xa = x.astype(wide)
    over = _vector_norm(jax.lax.stop_gradient(xa), p=p, axes=axes) > maxnorm
    norm = _vector_norm(jnp.where(over, xa, 1), p=p, axes=axes)
    factor = jnp.where(over, maxnorm / (norm + 1e-7), 1.0)
    return x * factor.astype(x.dtype)


@declare(method=True, inplace=True)
def renorm(input: Tensor, p: Any, dim: int, maxnorm: Any) -> Tensor:
    """``torch.renorm``: each slice along ``dim`` with a p-norm over ``maxnorm``
    scaled to norm ``maxnorm``."""
    if _autocast.on:
        return _autocast.run("renorm", renorm, input, p, dim, maxnorm)
    _require_tensors("renorm", input)
    p, maxnorm = (v.item() if isinstance(v, TensorBase) else v for v in (p, maxnorm))
    if isinstance(p, complex):
        raise RuntimeError("renorm: p must be real-valued")
    if not float(p) > 0.0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if not float(maxnorm) >= 0.0:
        raise RuntimeError(
            f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}"
        )
    if input.dim() <= 1:
        raise RuntimeError(
            f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions"
        )
    dim = wrap_dim(dim, input.dim())
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as "
            f"input. Got {input.dtype.scalar_type}"
        )
    axes = tuple(i for i in range(input.dim()) if i != dim)
    return apply(
        "RenormBackward0",
        _renorm_fn,
        input,
        p=float(p),
        axes=axes,
        maxnorm=float(maxnorm),
    )


saves("RenormBackward0", (0, 0))

# ---------------------------------------------------------------------------
# chain_matmul, fill
# ---------------------------------------------------------------------------


def _chain(matrices: list, i: int, j: int, split: list) -> Tensor:
    if i == j:
        return matrices[i]
    k = split[i][j]
    return mm(_chain(matrices, i, k, split), _chain(matrices, k + 1, j, split))


@declare
def chain_matmul(*matrices: Tensor) -> Tensor:
    """``torch.chain_matmul`` (deprecated): the product of the matrices, in the
    order of fewest multiplications (``torch.linalg.multi_dot``'s)."""
    if _autocast.on:
        return _autocast.run("chain_matmul", chain_matmul, *matrices)
    warn_once(
        "chain_matmul",
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch "
        "release. Use torch.linalg.multi_dot instead, which accepts a list of two "
        "or more tensors rather than multiple parameters.",
    )
    if len(matrices) == 1 and isinstance(matrices[0], list | tuple):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        _require_tensors("chain_matmul", m)
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    for i, m in enumerate(matrices):
        if m.dtype is not matrices[0].dtype:
            raise RuntimeError(
                "multi_dot(): all tensors must have be the same dtype but tensor 0 "
                f"is {_dtype._CPP[matrices[0].dtype.np_name]} and tensor {i} "
                f"{_dtype._CPP[m.dtype.np_name]}"
            )
    for i in range(len(matrices) - 1):
        a, b = matrices[i], matrices[i + 1]
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(a.shape)} "
                f"and {list(b.shape)} cannot be multiplied"
            )
    n = len(matrices)
    dims = [m.shape[0] for m in matrices] + [matrices[-1].shape[1]]
    cost = [[0.0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):  # torch's matrix_chain_order
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return _chain(list(matrices), 0, n - 1, split)


def _fill_fn(dst, src, *, dt):
    """``dst`` overwritten by ``src`` (broadcast, cast): no gradient to ``dst``."""
    return jnp.broadcast_to(jnp.asarray(src).astype(dt), dst.shape)


def filled(input: Tensor, value: Any, names: tuple[str, str]) -> Tensor:
    """``input``'s shape and dtype holding ``value`` (a number, checked as torch
    checks it by the tensor's size, or a 0-d tensor whose gradient is the sum
    of the result's), recorded as ``names[0]`` for a tensor value, ``names[1]``
    for a number: ``torch.fill`` and ``Tensor.fill_``."""
    if isinstance(value, TensorBase):
        if value.dim():
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.dim()} dimensions."
            )
        name = names[0]
    else:
        _check_fill(value, input.dtype.np, input.numel())  # torch's, by its size
        with no_grad():
            value = full((), value, dtype=input.dtype)
        name = names[1]
    return apply(name, _fill_fn, input, value, dt=input.dtype.np_name)


@declare
def fill(input: Tensor, value: Any) -> Tensor:
    """``torch.fill``: a tensor like ``input`` holding ``value`` everywhere."""
    _require_tensors("fill", input)
    return filled(input, value, ("FillBackward1", "FillBackward0"))
