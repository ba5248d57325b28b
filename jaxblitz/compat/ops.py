"""Blitz 1, "Tensors": torch's math -- arithmetic, unary ops, reductions, matmul,
comparisons and dtype/device moves -- as ``torch.*`` functions and, through
:class:`MathMixin`, as the methods and operators of ``Tensor``.

Each op is a module-level pure JAX function (so the funnel's jit cache keys on it)
passed to :func:`graph.apply` with the grad_fn name torch gives it. Dtypes follow
torch's promotion (see :mod:`._dtype`), computed here before the call.
"""

from __future__ import annotations

import builtins
import numbers
from functools import partialmethod
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _dtype
from jaxblitz.compat._tensor_base import TensorBase, wrap_dim
from jaxblitz.compat.autograd.grad_mode import is_grad_enabled
from jaxblitz.compat.autograd.graph import AutogradMixin, apply, run
from jaxblitz.compat.creation import tensor

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

# ---------------------------------------------------------------------------
# Pure JAX functions (module level: stable jit cache keys)
# ---------------------------------------------------------------------------


def _binary_fn(x, y, *, op, dt):
    return op(x.astype(dt), jnp.asarray(y).astype(dt))


def _compare_fn(x, y, *, op, dt):
    return op(x.astype(dt), jnp.asarray(y).astype(dt))


def _rsub_fn(x, y, *, alpha, dt):
    return jnp.asarray(y).astype(dt) - alpha * x.astype(dt)


def _add_fn(x, y, *, alpha, dt):
    return x.astype(dt) + alpha * jnp.asarray(y).astype(dt)


def _unary_fn(x, *, op):
    return op(x)


def _cast_fn(x, *, dt):
    return x.astype(dt)


def _pow_fn(x, y, *, dt):
    return jnp.power(x.astype(dt), jnp.asarray(y).astype(dt))


def _reduce_fn(x, *, op, axis, keepdims, dt):
    x = x if dt is None else x.astype(dt)
    return op(x, axis=axis, keepdims=keepdims)


def _norm_fn(x, *, p, axis, keepdims):
    if p == 2:
        return jnp.sqrt(jnp.sum(jnp.square(x), axis=axis, keepdims=keepdims))
    return jnp.sum(jnp.abs(x) ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def _matmul_fn(x, y, *, dt):
    return jnp.matmul(x.astype(dt), y.astype(dt))


def _clamp_fn(x, *, lo, hi):
    return jnp.clip(x, lo, hi)


def _where_fn(c, x, y, *, dt):
    return jnp.where(c, jnp.asarray(x).astype(dt), jnp.asarray(y).astype(dt))


def _argmax_fn(x, *, axis, keepdims, op):
    out = op(x, axis=axis, keepdims=keepdims)
    return out.astype(jnp.int64)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _priority(v: Any) -> tuple[_dtype.dtype, int]:
    if isinstance(v, TensorBase):
        return v.dtype, 2 if v.shape else 1
    if isinstance(v, np.ndarray | np.generic):
        return _dtype.to_dtype(v.dtype), 2 if np.ndim(v) else 1
    if isinstance(v, bool | numbers.Number):
        return _dtype.scalar_dtype(v), 0
    raise TypeError(f"unsupported operand type {type(v).__name__} for a tensor op")


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return TensorBase._wrap(jnp.asarray(v))
    return v


def _check_broadcast(a: Any, b: Any) -> None:
    if not (isinstance(a, TensorBase) and isinstance(b, TensorBase)):
        return
    sa, sb = a.shape, b.shape
    for i in range(1, builtins.min(len(sa), len(sb)) + 1):
        if sa[-i] != sb[-i] and sa[-i] != 1 and sb[-i] != 1:
            dim = builtins.max(len(sa), len(sb)) - i
            raise RuntimeError(
                f"The size of tensor a ({sa[-i]}) must match the size of tensor b "
                f"({sb[-i]}) at non-singleton dimension {dim}"
            )


def _binary(name: str, op, a: Tensor, b: Any, *, floats: bool = False) -> Tensor:
    b = _plain(b)
    _check_broadcast(a, b)
    dt = _dtype.result_type([_priority(a), _priority(b)])
    if floats and not dt.is_floating_point:
        dt = _dtype.get_default_dtype()
    return apply(name, _binary_fn, a, b, op=op, dt=dt.np.name)


def _compare(op, a: Tensor, b: Any) -> Tensor:
    b = _plain(b)
    _check_broadcast(a, b)
    dt = _dtype.result_type([_priority(a), _priority(b)])
    arrays = [v._data if isinstance(v, TensorBase) else v for v in (a, b)]
    return TensorBase._wrap(run(_compare_fn, *arrays, op=op, dt=dt.np.name))


def _dim(dim: Any, ndim: int) -> Any:
    if dim is None or (isinstance(dim, list | tuple) and not dim):
        return None  # torch: dim=[] reduces over every dimension
    if isinstance(dim, list | tuple):
        dims = tuple(wrap_dim(d, ndim) for d in dim)
        for d in dims:
            if dims.count(d) > 1:
                raise RuntimeError(
                    f"dim {d} appears multiple times in the list of dims"
                )
        return dims
    return wrap_dim(dim, ndim)


# ---------------------------------------------------------------------------
# Arithmetic (also the operators)
# ---------------------------------------------------------------------------


def add(input: Tensor, other: Any, *, alpha: Any = 1, out: Tensor | None = None):
    """``torch.add(input, other, alpha=1, out=None)``."""
    input, other = _as_tensor(input), _plain(other)
    _check_broadcast(input, other)
    dt = _dtype.result_type([_priority(input), _priority(other)])
    result = apply("AddBackward0", _add_fn, input, other, alpha=alpha, dt=dt.np.name)
    return _to_out(result, out)


def _to_out(result: Tensor, out: Tensor | None) -> Tensor:
    """torch's ``out=``: write ``result`` into ``out`` (resized if needed)."""
    if out is None:
        return result
    if result.requires_grad and is_grad_enabled():
        raise RuntimeError(
            "functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    if tuple(out.shape) == tuple(result.shape) and out.dtype is result.dtype:
        out._set_data(result._data)
    else:
        out._s.array, out._s.numpy = result.to(out.dtype)._data, None
    return out


def sub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    input, other = _as_tensor(input), _plain(other)
    _check_broadcast(input, other)
    dt = _dtype.result_type([_priority(input), _priority(other)])
    return apply("SubBackward0", _add_fn, input, other, alpha=-alpha, dt=dt.np.name)


def rsub(input: Tensor, other: Any) -> Tensor:
    """``other - input`` for a number ``other`` (torch: RsubBackward1)."""
    other = _plain(other)
    dt = _dtype.result_type([_priority(input), _priority(other)])
    return apply("RsubBackward1", _rsub_fn, input, other, alpha=1, dt=dt.np.name)


def mul(input: Tensor, other: Any, *, out: Tensor | None = None) -> Tensor:
    return _to_out(_binary("MulBackward0", jnp.multiply, _as_tensor(input), other), out)


def div(input: Tensor, other: Any) -> Tensor:
    return _binary(
        "DivBackward0", jnp.true_divide, _as_tensor(input), other, floats=True
    )


def pow(input: Tensor, exponent: Any) -> Tensor:  # noqa: A001 -- torch's name
    exponent = _plain(exponent)
    dt = _dtype.result_type([_priority(input), _priority(exponent)])
    name = "PowBackward1" if isinstance(exponent, TensorBase) else "PowBackward0"
    return apply(name, _pow_fn, input, exponent, dt=dt.np.name)


def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _to_out(_matmul(input, other), out)


def _check_matmul(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    """torch's shape errors (JAX's name dot_general's dimension numbers instead)."""
    if not a or not b:
        raise RuntimeError(
            "both arguments to matmul need to be at least 1D, but they are "
            f"{len(a)}D and {len(b)}D"
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


def _matmul(input: Tensor, other: Tensor) -> Tensor:
    a, b = tuple(input.shape), tuple(other.shape)
    _check_matmul(a, b)
    name = {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 1): "DotBackward0"}
    dt = _dtype.promote(input.dtype, other.dtype)
    return apply(
        name.get((len(a), len(b)), "UnsafeViewBackward0"),
        _matmul_fn,
        input,
        other,
        dt=dt.np.name,
    )


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError("self must be a matrix")
    return matmul(input, mat2)


def _as_tensor(v: Any) -> Tensor:
    return v if isinstance(v, TensorBase) else tensor(v)


def _unary(name: str, op):
    def method(self: Tensor) -> Tensor:
        x = self if self.dtype.is_floating_point or op in _INT_OK else self.float()
        return apply(name, _unary_fn, x, op=op)

    method.__name__ = op.__name__
    return method


_INT_OK = {jnp.negative, jnp.abs}
neg = _unary("NegBackward0", jnp.negative)
exp = _unary("ExpBackward0", jnp.exp)
log = _unary("LogBackward0", jnp.log)
sqrt = _unary("SqrtBackward0", jnp.sqrt)
abs = _unary("AbsBackward0", jnp.abs)  # noqa: A001
sin = _unary("SinBackward0", jnp.sin)
cos = _unary("CosBackward0", jnp.cos)
tanh = _unary("TanhBackward0", jnp.tanh)
sigmoid = _unary("SigmoidBackward0", jax.nn.sigmoid)
relu = _unary("ReluBackward0", jax.nn.relu)


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    return apply("ClampBackward1", _clamp_fn, input, lo=min, hi=max)


def where(condition: Tensor, input: Any, other: Any) -> Tensor:
    dt = _dtype.result_type([_priority(_plain(input)), _priority(_plain(other))])
    return apply(
        "WhereBackward0",
        _where_fn,
        condition,
        _plain(input),
        _plain(other),
        dt=dt.np.name,
    )


def to_dtype(input: Tensor, dt: _dtype.dtype) -> Tensor:
    if input.dtype is dt:
        return input
    return apply("ToCopyBackward0", _cast_fn, input, dt=dt.np.name)


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype=None):  # noqa: A001
    dt = None if dtype is None else _dtype.to_dtype(dtype).np.name
    if dt is None and not input.dtype.is_floating_point:
        dt = "int64"
    name = "SumBackward0" if dim is None else "SumBackward1"
    return apply(
        name,
        _reduce_fn,
        input,
        op=jnp.sum,
        axis=_dim(dim, input.dim()),
        keepdims=keepdim,
        dt=dt,
    )


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype=None):
    if not input.dtype.is_floating_point and dtype is None:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a "
            f"floating point or complex dtype. Got: {input.dtype.scalar_type}"
        )
    dt = None if dtype is None else _dtype.to_dtype(dtype).np.name
    name = "MeanBackward0" if dim is None else "MeanBackward1"
    return apply(
        name,
        _reduce_fn,
        input,
        op=jnp.mean,
        axis=_dim(dim, input.dim()),
        keepdims=keepdim,
        dt=dt,
    )


class _ReturnType(tuple):
    """``torch.return_types.max(values=..., indices=...)``."""

    name = ""

    def __new__(cls, values, indices):
        return super().__new__(cls, (values, indices))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])

    def __repr__(self) -> str:
        return (
            f"torch.return_types.{self.name}(\nvalues={self[0]!r},\n"
            f"indices={self[1]!r})"
        )


def _extreme(name: str, op, arg_op):
    result_type = type(name, (_ReturnType,), {"name": name})

    def reduce(input: Tensor, dim: Any = None, keepdim: bool = False):
        if isinstance(dim, TensorBase):  # torch.max(a, b): elementwise
            return _binary(
                "MaximumBackward0" if name == "max" else "MinimumBackward0",
                jnp.maximum if name == "max" else jnp.minimum,
                input,
                dim,
            )
        if dim is None:
            return apply(
                f"{name.title()}Backward1",
                _reduce_fn,
                input,
                op=op,
                axis=None,
                keepdims=False,
                dt=None,
            )
        dim = wrap_dim(dim, input.dim())
        values = apply(
            f"{name.title()}Backward0",
            _reduce_fn,
            input,
            op=op,
            axis=dim,
            keepdims=keepdim,
            dt=None,
        )
        indices = TensorBase._wrap(
            run(_argmax_fn, input._data, axis=dim, keepdims=keepdim, op=arg_op)
        )
        return result_type(values, indices)

    reduce.__name__ = name
    return reduce


max = _extreme("max", jnp.max, jnp.argmax)  # noqa: A001
min = _extreme("min", jnp.min, jnp.argmin)  # noqa: A001


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    dim = _dim(dim, input.dim())
    return TensorBase._wrap(
        run(_argmax_fn, input._data, axis=dim, keepdims=keepdim, op=jnp.argmax)
    )


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    dim = _dim(dim, input.dim())
    return TensorBase._wrap(
        run(_argmax_fn, input._data, axis=dim, keepdims=keepdim, op=jnp.argmin)
    )


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False):
    p = 2 if p in ("fro", None) else p
    return apply(
        "LinalgVectorNormBackward0",
        _norm_fn,
        input,
        p=p,
        axis=_dim(dim, input.dim()),
        keepdims=keepdim,
    )


# ---------------------------------------------------------------------------
# Comparisons and logic (no gradients)
# ---------------------------------------------------------------------------


def eq(a, b):
    return _compare(jnp.equal, a, b)


def ne(a, b):
    return _compare(jnp.not_equal, a, b)


def lt(a, b):
    return _compare(jnp.less, a, b)


def le(a, b):
    return _compare(jnp.less_equal, a, b)


def gt(a, b):
    return _compare(jnp.greater, a, b)


def ge(a, b):
    return _compare(jnp.greater_equal, a, b)


def equal(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and bool(np.array_equal(np.asarray(a), np.asarray(b)))


def allclose(a: Tensor, b: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return bool(np.allclose(np.asarray(a), np.asarray(b), rtol, atol, equal_nan))


def isclose(a: Tensor, b: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    return TensorBase._wrap(
        jnp.asarray(np.isclose(np.asarray(a), np.asarray(b), rtol, atol, equal_nan))
    )


# ---------------------------------------------------------------------------
# As Tensor methods and operators
# ---------------------------------------------------------------------------


class MathMixin(AutogradMixin):
    """The functions above as methods (``x.add(y)``) and operators (``x + y``)."""

    __slots__ = ()

    add, sub, mul, div, pow, matmul, mm = add, sub, mul, div, pow, matmul, mm
    neg, exp, log, sqrt, abs, sin, cos = neg, exp, log, sqrt, abs, sin, cos
    tanh, sigmoid, relu, clamp = tanh, sigmoid, relu, clamp
    sum, mean, max, min, norm = sum, mean, max, min, norm
    argmax, argmin = argmax, argmin
    eq, ne, lt, le, gt, ge, equal, allclose = eq, ne, lt, le, gt, ge, equal, allclose
    multiply, divide, subtract, dot, mv, clip = mul, div, sub, matmul, matmul, clamp

    # x + y is add(x, y); 2 + x is x.__radd__(2), add(x, 2) again.
    __add__ = __radd__ = add
    __sub__, __rsub__ = sub, rsub
    __mul__ = __rmul__ = mul
    __truediv__, __pow__, __matmul__ = div, pow, matmul

    def __rtruediv__(self, other: Any) -> Tensor:
        return mul(pow(self, -1), other)

    def __rpow__(self, other: Any) -> Tensor:
        return pow(tensor(other, dtype=self.dtype), self)

    def __rmatmul__(self, other: Any) -> Tensor:
        return matmul(tensor(other), self)

    def __floordiv__(self, other: Any) -> Tensor:
        return _binary("DivBackward2", jnp.floor_divide, self, other)

    def __mod__(self, other: Any) -> Tensor:
        return _binary("RemainderBackward0", jnp.remainder, self, other)

    def __and__(self, other: Any) -> Tensor:
        bool_ = self.dtype is _dtype.bool
        return _compare(jnp.logical_and if bool_ else jnp.bitwise_and, self, other)

    def __or__(self, other: Any) -> Tensor:
        bool_ = self.dtype is _dtype.bool
        return _compare(jnp.logical_or if bool_ else jnp.bitwise_or, self, other)

    def __invert__(self) -> Tensor:
        return TensorBase._wrap(jnp.invert(self._data))

    def __pos__(self) -> Tensor:
        return self

    __neg__, __abs__ = neg, abs
    __eq__, __ne__, __lt__, __le__, __gt__, __ge__ = eq, ne, lt, le, gt, ge
    # Identity hashing in C, as torch's (optimizer.state[p]); __eq__ above unset it.
    __hash__ = object.__hash__

    # -- dtype and device ----------------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """``x.to(device)``, ``x.to(dtype)``, ``x.to(device, dtype)``, ``x.to(t)``."""
        target_dtype, target_device = kwargs.get("dtype"), kwargs.get("device")
        for arg in args:
            if isinstance(arg, _dtype.dtype):
                target_dtype = arg
            elif isinstance(arg, TensorBase):
                target_dtype, target_device = arg.dtype, arg.device
            elif isinstance(arg, str | _dtype.device):
                target_device = arg
        out = self if target_dtype is None else to_dtype(self, target_dtype)
        if target_device is not None:
            dev = _dtype.device(target_device)
            if dev != self.device:
                moved = jax.device_put(out._data, _dtype.jax_device(dev))
                out = TensorBase._wrap(moved, out.requires_grad, out._grad_fn)
        return out

    def cuda(self, device: Any = None, non_blocking: bool = False) -> Tensor:
        return self.to("cuda")

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def type(self, dtype: Any = None) -> Any:
        if dtype is None:
            return f"torch.{self.dtype.scalar_type}Tensor"
        return self.to(dtype)

    # x.float() is to_dtype(x, torch.float), and so on.
    float = partialmethod(to_dtype, _dtype.float)
    double = partialmethod(to_dtype, _dtype.double)
    half = partialmethod(to_dtype, _dtype.half)
    long = partialmethod(to_dtype, _dtype.long)
    int = partialmethod(to_dtype, _dtype.int)
    bool = partialmethod(to_dtype, _dtype.bool)
