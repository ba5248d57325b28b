"""Blitz 1, "Tensors": the pure JAX kernels behind compat's math ops and the
funnel glue: operands, torch's dtype promotion, argument checks, ``out=``."""

from __future__ import annotations

import builtins
import math
import numbers
from functools import partial
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxblitz.compat.autograd import _dual
from jaxblitz.compat.autograd.grad_mode import is_grad_enabled
from jaxblitz.compat.autograd.graph import apply, run
from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.tensor import _dtype, _meta
from jaxblitz.compat.tensor._checks import check_values, error
from jaxblitz.compat.tensor._fresh_layout import (
    ELEMENTWISE,
    elementwise,
    follow_operands,
)
from jaxblitz.compat.tensor._tensor_base import TensorBase
from jaxblitz.compat.tensor.creation import tensor

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


# ---------------------------------------------------------------------------
# Pure JAX functions (module level: stable jit cache keys)
# ---------------------------------------------------------------------------


def _cast(v, dt):
    v = jnp.asarray(v)
    out = v.astype(dt)
    if v.dtype == bool and jnp.issubdtype(out.dtype, jnp.floating):
        # XLA rewrites x * float(mask) as select(mask, x, 0), which loses torch's
        # -0.0 for -x * False; the barrier keeps the product a product.
        out = lax.optimization_barrier(out)
    return out


def _is_int(x) -> bool:
    return jnp.issubdtype(x.dtype, jnp.integer)


@elementwise
def _binary_fn(x, y, *, op, dt):
    return op(_cast(x, dt), _cast(y, dt))


@elementwise(count=2)
def _add_fn(x, y, scale=None, *, alpha, dt):  # x + alpha * y
    return _cast(x, dt) + _times_alpha(y, scale, alpha, dt)


@elementwise(count=2)
def _sub_fn(x, y, scale=None, *, alpha, dt):  # x - alpha * y
    return _cast(x, dt) - _times_alpha(y, scale, alpha, dt)


def _times_alpha(y, scale, alpha, dt):
    """``alpha * y``: ``alpha`` static (1, or a bool), else passed as ``scale``, an
    operand, so each new value does not compile a new program."""
    y = _cast(y, dt)
    if scale is not None:
        return _cast(scale, dt) * y
    return y if alpha == 1 else _cast(alpha, dt) * y


def _alpha_operand(alpha) -> tuple[tuple, Any]:
    """(extra operands, static alpha) for :func:`_add_fn` and :func:`_sub_fn`."""
    if isinstance(alpha, TensorBase):  # a pending step size stays in the program
        return (alpha,), None
    if isinstance(alpha, bool) or alpha == 1:
        return (), alpha
    return (alpha,), None


def _without_derivative(name: str, fn, *args):
    """``fn(*args)``, whose backward raises torch's error (torch's grad_fn for
    such an op is ``NotImplemented``), and so does forward AD through it."""
    _dual.underived.append(name)  # (seen while a tangent is traced: torch's name)

    @jax.custom_vjp
    def f(*args):
        return fn(*args)

    def bwd(_, g):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    f.defvjp(lambda *args: (fn(*args), None), bwd)
    return f(*args)


def _floor_divide_float(a, b):
    # torch's div_floor_floating: Python's float floor division, a / b where b == 0.
    mod = jnp.fmod(a, b)
    div = (a - mod) / b
    div = jnp.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    floor = jnp.floor(div)
    floor = jnp.where(div - floor > 0.5, floor + 1, floor)
    floor = jnp.where(div == 0, jnp.copysign(jnp.zeros_like(div), a / b), floor)
    return jnp.where(b == 0, a / b, floor)


def _true_divide(x, y):
    """``x / y`` rounded as a division, as torch's CPU kernel rounds it. XLA
    rewrites a division by a broadcast value (a scalar, a row) into a multiply
    by its reciprocal, which rounds twice; on the CPU the divisor goes in at
    full size through a barrier XLA does not look through. torch's CUDA kernel
    multiplies by the reciprocal itself, so elsewhere the rewrite stays."""
    shape = jnp.broadcast_shapes(jnp.shape(x), jnp.shape(y))
    if jnp.shape(y) == shape or not jnp.issubdtype(jnp.result_type(y), jnp.inexact):
        return x / y

    def exact(x, y):
        return x / lax.optimization_barrier(jnp.broadcast_to(y, shape))

    return lax.platform_dependent(x, y, cpu=exact, default=lambda x, y: x / y)


def _mean(x, axis=None, keepdims=False):
    """``jnp.mean`` as torch's CPU mean rounds it: the sum divided by the count.
    jnp.mean divides by the count as a constant, which XLA rewrites into a
    multiply by its reciprocal (an ulp off, 160 / 12 in float32); on the CPU
    the count goes in through a barrier. torch's CUDA mean multiplies by the
    reciprocal itself, so elsewhere the rewrite stays."""
    axes = range(x.ndim) if axis is None else np.atleast_1d(axis)
    n = math.prod(x.shape[a] for a in axes)
    small = x.dtype in (jnp.float16, jnp.bfloat16)  # summed in float32, as jnp
    total = jnp.sum(
        x, axis=axis, keepdims=keepdims, dtype=jnp.float32 if small else None
    )

    def exact(total):
        count = jnp.full(total.shape, n, total.dtype)
        return total / lax.optimization_barrier(count)

    out = lax.platform_dependent(total, cpu=exact, default=lambda t: t / n)
    return out.astype(x.dtype)


@elementwise
def _div_fn(x, y, *, mode, dt):
    x, y = _cast(x, dt), _cast(y, dt)
    if mode is None:
        return _true_divide(x, y)
    if _is_int(x):
        trunc = lax.div(*jnp.broadcast_arrays(x, y))  # C's integer division
        return trunc if mode == "trunc" else jnp.floor_divide(x, y)
    q = jnp.trunc(x / y) if mode == "trunc" else _floor_divide_float(x, y)
    return lax.stop_gradient(q)  # torch: a rounded quotient has zero gradient


@elementwise
def _floor_divide_fn(x, y, *, dt):
    floor = partial(_div_fn, mode="floor", dt=dt)
    return _without_derivative("floor_divide", floor, x, y)


@elementwise
def _remainder_fn(x, y, *, dt):
    x, y = _cast(x, dt), _cast(y, dt)
    if _is_int(x):
        return jnp.remainder(x, y)
    mod = jnp.fmod(x, y)  # torch: the remainder takes the divisor's sign
    return jnp.where((mod != 0) & ((y < 0) != (mod < 0)), mod + y, mod)


@elementwise
def _rremainder_fn(x, y, *, dt):  # number % tensor: torch has no derivative
    return _without_derivative("remainder", partial(_remainder_fn, dt=dt), x, y)


def _int_pow(a, b):
    # torch's powi: square-and-multiply until no exponent bit is left (3 ** 40
    # wraps as in C); b < 0 gives 0, but 1 and -1 for bases 1 and -1.
    a, b = jnp.broadcast_arrays(a, b)

    def step(carry):
        acc, base, e = carry
        return jnp.where(e & 1, acc * base, acc), base * base, e >> 1

    info = jnp.iinfo(a.dtype)
    start = (jnp.ones_like(a), a, jnp.maximum(b, 0))
    acc = lax.while_loop(lambda carry: jnp.any(carry[2] != 0), step, start)[0]
    if info.min == 0:
        return acc
    one = jnp.ones_like(a)
    negative = jnp.where(
        a == 1, one, jnp.where(a == -1, jnp.where(b & 1, -one, one), 0)
    )
    return jnp.where(b < 0, negative, acc)


@elementwise(scalars=(1,))
def _pow_fn(x, y, *, dt):
    x, y = _cast(x, dt), _cast(y, dt)
    if dt == "bool":  # only a Python bool exponent gets here: x ** True, x ** False
        return jnp.where(y, x, True)
    return _int_pow(x, y) if _is_int(x) else jnp.power(x, y)


def _base_pow_fn(x, y, *, dt):
    """``number ** tensor``: not elementwise's layout, as torch's pow(Scalar,
    Tensor) gives a row-major result."""
    return _pow_fn(x, y, dt=dt)


@elementwise
def _shift_fn(x, y, *, left, dt):
    # torch's shifts: a shift by a negative amount or past the width gives 0, or
    # the sign for >> of a signed integer.
    x, y = jnp.broadcast_arrays(_cast(x, dt), _cast(y, dt))
    info = jnp.iinfo(x.dtype)
    signed = info.min < 0
    negative = y.astype(f"int{info.bits}") < 0
    if left:
        out = lax.shift_left(x, jnp.where(negative, 0, y))
        return jnp.where(negative | (y >= info.bits), 0, out)
    most = info.bits - signed
    return jnp.right_shift(x, jnp.where(negative | (y >= most), most, y))


@elementwise
def _logical_fn(x, y, *, op):
    return op(jnp.asarray(x).astype(bool), jnp.asarray(y).astype(bool))


@elementwise
def _unary_fn(x, *, op, dt):
    return op(x.astype(dt))


def _sign(x):  # torch: sign(nan) is 0
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


@jax.custom_jvp
def _abs(x):
    return jnp.abs(x)


@_abs.defjvp
def _abs_jvp(primals, tangents):  # torch: the slope is sign(x), 0 at 0
    (x,), (t,) = primals, tangents
    return jnp.abs(x), t * _sign(x)


@jax.custom_jvp
def _relu(x):
    # torch: max(x, 0) keeps -0.0 and NaN
    return jnp.where(x > 0, x, jnp.where(x < 0, 0, x))


@_relu.defjvp
def _relu_jvp(primals, tangents):
    # torch's threshold_backward on the result: the gradient passes where the
    # result is not <= 0, so through a NaN, and is 0 at 0
    (x,), (t,) = primals, tangents
    y = _relu(x)
    return y, jnp.where(y <= 0, jnp.zeros_like(t), t)


def _frac(x):
    return x - jnp.trunc(x)


def _round_fn(x, *, decimals):
    scale = 10.0 ** builtins.abs(decimals)
    if decimals < 0:
        return jnp.round(x / scale) * scale
    return jnp.round(x * scale) / scale


@elementwise(scalars=(1, 2))
def _clamp_fn(x, lo, hi, *, dt):
    # where, not maximum/minimum: torch's gradient passes at the bounds (x == lo),
    # JAX's maximum would split it; a NaN bound gives NaN, as torch's.
    x = _cast(x, dt)
    if lo is not None:
        lo = _cast(lo, dt)
        x = jnp.where((x < lo) | jnp.isnan(lo), lo, x)
    if hi is not None:
        hi = _cast(hi, dt)
        x = jnp.where((x > hi) | jnp.isnan(hi), hi, x)
    return x


@elementwise(uncast=(0,))
def _where_fn(c, x, y, *, dt):
    return jnp.where(jnp.asarray(c).astype(bool), _cast(x, dt), _cast(y, dt))


@elementwise(scalars=(2,))
def _lerp_fn(x, end, weight, *, dt):
    x, end, weight = _cast(x, dt), _cast(end, dt), _cast(weight, dt)
    diff = end - x  # torch's two-sided formula, exact at weight 0 and 1
    return jnp.where(
        jnp.abs(weight) < 0.5, x + weight * diff, end - diff * (1 - weight)
    )


@elementwise(count=3)
def _addcmul_fn(x, t1, t2, scale=None, *, value, dt):
    # scale: a tensor ``value`` as an operand (compat.ops._scalars)
    value = value if scale is None else scale
    return _cast(x, dt) + _cast(value, dt) * _cast(t1, dt) * _cast(t2, dt)


@elementwise(count=3)
def _addcdiv_fn(x, t1, t2, scale=None, *, value, dt):
    value = value if scale is None else scale
    return _cast(x, dt) + _cast(value, dt) * _cast(t1, dt) / _cast(t2, dt)


def _matmul_fn(x, y, *, precision):
    # precision: torch's float32 flags for this device (compat.backends._precision)
    return jnp.matmul(x, y, precision=precision)


def _addmm_fn(bias, x, y, *, beta, alpha, precision):
    product = jnp.matmul(x, y, precision=precision)
    product = product if alpha == 1 else _cast(alpha, x.dtype) * product
    if beta == 0:  # torch: input is ignored, its nan/inf not propagated
        return product
    return (bias if beta == 1 else _cast(beta, x.dtype) * bias) + product


def _keepdim(value: Any) -> bool:
    """A reduction's ``keepdim``, refused unless a bool, as torch refuses
    ``keepdim=1`` (and NumPy's bool)."""
    if type(value) is not bool:
        raise TypeError(f"argument 'keepdim' must be bool, not {type(value).__name__}")
    return value


def _reduce_fn(x, *, op, axis, keepdims, dt):
    if dt is None:
        return op(x, axis=axis, keepdims=keepdims)
    # cast after as well: JAX sums and multiplies bools as ints, torch as bools
    return op(x.astype(dt), axis=axis, keepdims=keepdims).astype(dt)


def _scan_fn(x, *, op, axis, dt):
    x = x.astype(dt)
    return op(x.reshape(x.shape or (1,)), axis=axis).reshape(x.shape).astype(dt)


def _var_fn(x, *, axis, correction, keepdims, root):
    n = math.prod(x.shape[a] for a in axis)
    centred = x - jnp.mean(x, axis=axis, keepdims=True)
    v = jnp.sum(centred * centred, axis=axis, keepdims=keepdims)
    v = v / builtins.max(n - correction, 0)  # torch: 0 dof gives inf or nan
    return jnp.sqrt(v) if root else v


def _logsumexp_fn(x, *, axis, keepdims, dt):
    return jax.nn.logsumexp(x.astype(dt), axis=axis, keepdims=keepdims)


def _truth_fn(x, *, op, axis, keepdims, dt):
    return op(x.astype(bool), axis=axis, keepdims=keepdims).astype(dt)


def _norm_fn(x, *, p, axis, keepdims):
    if p == "nuc":  # sum of singular values over the two axes
        m = jnp.moveaxis(x, axis, (-2, -1))
        s = jnp.sum(jnp.linalg.svd(m, compute_uv=False), axis=-1)
        if keepdims:
            s = jnp.expand_dims(s, tuple(sorted(a % x.ndim for a in axis)))
        return s
    if p in (math.inf, -math.inf):
        op = jnp.max if p > 0 else jnp.min
        return op(_abs(x), axis=axis, keepdims=keepdims)
    if p == 0:
        return jnp.sum(x != 0, axis=axis, keepdims=keepdims).astype(x.dtype)
    reduced = range(x.ndim) if axis is None else np.atleast_1d(axis)
    if math.prod(x.shape[a] for a in reduced) == 1:
        # torch: the norm of one element is its |x|, not (|x| ** p) ** (1 / p)
        return jnp.sum(_abs(x), axis=axis, keepdims=keepdims)
    # torch: zero entries, and a zero norm, pass back a zero gradient where the
    # slopes of |x| ** p and of the root would give nan
    if p < 0:  # a zero entry makes the norm, and its gradient, 0 (|0| ** p is inf)
        a = _abs(x)
        has_zero = jnp.any(a == 0, axis=axis, keepdims=keepdims)
        total = jnp.sum(jnp.where(a == 0, 1, a) ** p, axis=axis, keepdims=keepdims)
        return jnp.where(has_zero, 0, total ** (1.0 / p))
    if p == 2:
        terms = jnp.square(x)
    else:
        a = _abs(x)
        terms = jnp.where(a == 0, 0, jnp.where(a == 0, 1, a) ** p)
    total = jnp.sum(terms, axis=axis, keepdims=keepdims)
    zero = total == 0
    safe = jnp.where(zero, 1, total)
    return jnp.where(zero, 0, jnp.sqrt(safe) if p == 2 else safe ** (1.0 / p))


def _argmax_fn(x, *, axis, keepdims, op):
    out = op(x, axis=axis, keepdims=keepdims)
    return out.astype(jnp.int64)


def _picked_fn(x, *, axis, keepdims, op):
    """``max``/``min`` along ``axis`` as torch: the value at the index it returns,
    so the gradient goes to that element alone, not shared among ties."""
    index = op(x, axis=axis, keepdims=True)
    values = jnp.take_along_axis(x, index, axis=axis)
    return values if keepdims else jnp.squeeze(values, axis)


@elementwise
def _cast_fn(x, *, dt):
    return x.astype(dt)


# ---------------------------------------------------------------------------
# Operands and their promotion
# ---------------------------------------------------------------------------


def _is_operand(v: Any) -> bool:
    return isinstance(v, TensorBase | np.ndarray | numbers.Number | np.bool_)


def _operand(v: Any) -> tuple[_dtype.dtype, int]:
    """``(dtype, priority)`` of an operand, for :func:`._dtype.result_type`."""
    if isinstance(v, TensorBase):
        return v.dtype, 2 if v.dim() else 1
    if isinstance(v, np.ndarray):
        return _dtype.to_dtype(v.dtype), 2 if v.ndim else 1
    if isinstance(v, np.bool_):  # torch reads a NumPy bool as a float number
        return _dtype.get_default_dtype(), 0
    if isinstance(v, bool):
        return _dtype.bool, 0
    if isinstance(v, numbers.Integral):
        return _dtype.int64, 0
    if isinstance(v, numbers.Real):
        return _dtype.get_default_dtype(), 0
    if isinstance(v, numbers.Complex):
        raise NotImplementedError(
            f"complex number {v!r}: jaxblitz.compat has no complex dtypes (torch "
            "would promote to complex64); use real tensors"
        )
    raise TypeError(
        f"expected a Tensor or a number as an operand, got {type(v).__name__}"
    )


def _value(v: Any) -> Any:
    """What an operand passes to the jitted function: a Tensor or a plain number."""
    if isinstance(v, np.ndarray):
        return tensor(v)
    if isinstance(v, np.bool_):
        return builtins.float(v)
    if isinstance(v, np.generic):
        return v.item()
    if not isinstance(v, TensorBase):
        _operand(v)  # refuses what is not a number
    return v


def _promote(*values: Any) -> _dtype.dtype:
    return _dtype.result_type([_operand(v) for v in values])


@declare
def result_type(tensor: Any, other: Any) -> _dtype.dtype:
    """``torch.result_type(tensor, other)``: the dtype an arithmetic op gives."""
    return _promote(tensor, other)


def _default_float(dt: _dtype.dtype) -> _dtype.dtype:
    return dt if dt.is_floating_point else _dtype.get_default_dtype()


def _check_broadcast(*values: Any) -> None:
    shapes = [v._shape() for v in values if isinstance(v, TensorBase)]
    for sb in shapes[1:]:
        sa = shapes[0]
        for i in range(1, builtins.min(len(sa), len(sb)) + 1):
            if sa[-i] != sb[-i] and sa[-i] != 1 and sb[-i] != 1:
                dim = builtins.max(len(sa), len(sb)) - i
                raise RuntimeError(
                    f"The size of tensor a ({sa[-i]}) must match the size of tensor "
                    f"b ({sb[-i]}) at non-singleton dimension {dim}"
                )
        if sa != sb:  # the broadcast shape, as np.broadcast_shapes (checked above)
            n = builtins.max(len(sa), len(sb))
            sa, sb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
            shapes[0] = tuple(a if b == 1 else b for a, b in zip(sa, sb, strict=True))


def _check_devices(*values: Any) -> None:
    """torch's device rule for an elementwise op's tensors
    (:func:`._dtype.iterator_device`): only where JAX has an accelerator, as
    everything is on the CPU elsewhere."""
    if _dtype.home() is None:
        return
    found = [
        (d, v.dim())
        for v in values
        if isinstance(v, TensorBase) and (d := _dtype.tensor_device(v)) is not None
    ]
    if len(found) > 1:
        _dtype.iterator_device(found)


def _check_arguments(method: str, **tensors: Any) -> None:
    """torch's device check of a kernel's tensor arguments, by name, in order
    (:func:`._dtype.guard_device`: ``mat1 is on cpu, different from ...``)."""
    if _dtype.home() is None:
        return
    found = [
        (name, d)
        for name, v in tensors.items()
        if isinstance(v, TensorBase) and (d := _dtype.tensor_device(v)) is not None
    ]
    if len(found) > 1:
        _dtype.guard_device(found, method)


def _to_device_of(dest: Tensor, src: Tensor) -> Tensor:
    """``src`` on ``dest``'s device, for ``dest.copy_(src)`` (torch copies across
    devices; the result stays where ``dest`` is)."""
    if _meta.is_meta(dest) or _meta.is_meta(src):  # into meta: no values kept
        if not _meta.is_meta(dest):
            raise NotImplementedError(_meta.NO_DATA)
        return src if _meta.is_meta(src) else src.to(_meta.META)
    if _dtype.home() is None:
        return src
    here, there = _dtype.tensor_device(dest), _dtype.tensor_device(src)
    if here is None or there is None or here == there:
        return src
    return src.to(here)


def _elementwise(name: str, fn, *values: Any, dt: _dtype.dtype, **static) -> Tensor:
    _check_broadcast(*values)
    _check_devices(*values)
    return apply(name, fn, *values, dt=dt.np_name, **static)


def _no_grad(fn, *values: Any, **static: Any) -> Tensor:
    """An op without a derivative: run, nothing recorded (as torch's bool results)."""
    _check_broadcast(*values)
    _check_devices(*values)
    arrays, viewed = [], False
    for v in values:
        if isinstance(v, TensorBase):
            viewed = viewed or v._view is not None
            v = v._value()
        arrays.append(v)
    out = TensorBase._wrap(run(fn, *arrays, **static))
    if viewed and fn in ELEMENTWISE:  # torch: strides that follow the inputs'
        return follow_operands(out, fn, values, static.get("dt"))
    return out


def _not_implemented(kernel: str, dt: _dtype.dtype) -> NotImplementedError:
    # torch's own wording for a kernel it lacks for a dtype (its error type, too)
    return NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_type}'")


def _require_tensors(what: str, input: Any, other: Any = None) -> None:
    """torch's argument parser: these functions take Tensors, not numbers
    (``other=None``: only ``input`` must be one)."""
    named = (("input", input),) + (() if other is None else (("other", other),))
    for position, (arg, v) in enumerate(named, 1):
        if not isinstance(v, TensorBase):
            raise TypeError(
                f"{what}(): argument '{arg}' (position {position}) must be Tensor, "
                f"not {type(v).__name__}"
            )


def _require_a_tensor(what: str, *values: Any) -> None:
    if not builtins.any(isinstance(v, TensorBase) for v in values):
        kinds = ", ".join(type(v).__name__ for v in values)
        raise TypeError(
            f"{what}() received an invalid combination of arguments - got ({kinds}), "
            "but expected at least one Tensor"
        )


def _check_divisor(divisor: Any, dt: _dtype.dtype) -> None:
    """torch raises on integer division by zero, so the divisor's values are read
    (inside ``torch.compile``, a :class:`TracedValueError` says so)."""
    if isinstance(divisor, TensorBase):
        divisor._needs_value(
            "integer division by a tensor (torch checks it for zeros)",
            "divide by a Python int, or divide floats",
        )
        check_values([divisor], _zeros, _DIVISION_BY_ZERO, dt=dt.np_name)
    elif np.asarray(divisor).astype(dt.np) == 0:
        raise _DIVISION_BY_ZERO()


def _zeros(y, *, dt):
    """The divisors that are zero in ``dt``, for :func:`check_values`."""
    return y.astype(dt) == 0, y


_DIVISION_BY_ZERO = error("ZeroDivisionError")


def _as_tensor(v: Any) -> Tensor:
    return v if isinstance(v, TensorBase) else tensor(v)


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


def _check_cast(dt: _dtype.dtype, out: Tensor | None) -> None:
    """torch's refusal of an ``out`` that the result's dtype does not cast to."""
    if out is not None and not _dtype.can_cast(dt, out.dtype):
        raise RuntimeError(
            f"result type {dt.scalar_type} can't be cast to the desired output "
            f"type {out.dtype.scalar_type}"
        )


def _tensor(name: str, input: Any) -> None:
    """torch's TypeError for an ``input`` that is not a Tensor."""
    if not isinstance(input, TensorBase):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
