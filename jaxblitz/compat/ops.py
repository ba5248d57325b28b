"""Blitz 1, "Tensors": torch's math -- arithmetic, unary ops, reductions, matmul,
comparisons and dtype/device moves -- as ``torch.*`` functions and, through
:class:`MathMixin`, as the methods and operators of ``Tensor``.

Each op is a module-level pure JAX function (so the funnel's jit cache keys on it)
passed to :func:`graph.apply` with the grad_fn name torch gives it. The result
dtype is torch's, chosen here before the call (:func:`._dtype.result_type` over the
operands: tensors with dims, 0-dim tensors, Python and NumPy numbers) and passed
as ``dt``; the function casts its inputs to it, as torch's TensorIterator does, so
JAX's own promotion never decides a dtype. Ops without a derivative (comparisons,
logic, ``isnan``) go through :func:`graph.run` and record nothing.

Integer division (``//``, ``%``, ``fmod``, rounded ``div``) reads the divisor, as
torch's CPU kernels do, to raise ``RuntimeError: ZeroDivisionError``; inside
``torch.compile`` an integer tensor divisor is therefore a value the step needs
(a ``CompileError``). Complex numbers are refused with ``NotImplementedError``:
compat has no complex dtypes.
"""

from __future__ import annotations

import builtins
import math
import numbers
import warnings
from functools import partial, partialmethod
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

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


def _binary_fn(x, y, *, op, dt):
    return op(_cast(x, dt), _cast(y, dt))


def _add_fn(x, y, *, alpha, dt):  # x + alpha * y
    x, y = _cast(x, dt), _cast(y, dt)
    return x + (y if alpha == 1 else _cast(alpha, dt) * y)


def _sub_fn(x, y, *, alpha, dt):  # x - alpha * y
    x, y = _cast(x, dt), _cast(y, dt)
    return x - (y if alpha == 1 else _cast(alpha, dt) * y)


def _without_derivative(name: str, fn, *args):
    """``fn(*args)``, whose backward raises torch's error (torch's grad_fn for
    such an op is ``NotImplemented``)."""

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


def _div_fn(x, y, *, mode, dt):
    x, y = _cast(x, dt), _cast(y, dt)
    if mode is None:
        return x / y
    if _is_int(x):
        trunc = lax.div(*jnp.broadcast_arrays(x, y))  # C's integer division
        return trunc if mode == "trunc" else jnp.floor_divide(x, y)
    q = jnp.trunc(x / y) if mode == "trunc" else _floor_divide_float(x, y)
    return lax.stop_gradient(q)  # torch: a rounded quotient has zero gradient


def _floor_divide_fn(x, y, *, dt):
    floor = partial(_div_fn, mode="floor", dt=dt)
    return _without_derivative("floor_divide", floor, x, y)


def _remainder_fn(x, y, *, dt):
    x, y = _cast(x, dt), _cast(y, dt)
    if _is_int(x):
        return jnp.remainder(x, y)
    mod = jnp.fmod(x, y)  # torch: the remainder takes the divisor's sign
    return jnp.where((mod != 0) & ((y < 0) != (mod < 0)), mod + y, mod)


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


def _pow_fn(x, y, *, dt):
    x, y = _cast(x, dt), _cast(y, dt)
    if dt == "bool":  # only a Python bool exponent gets here: x ** True, x ** False
        return jnp.where(y, x, True)
    return _int_pow(x, y) if _is_int(x) else jnp.power(x, y)


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


def _logical_fn(x, y, *, op):
    return op(jnp.asarray(x).astype(bool), jnp.asarray(y).astype(bool))


def _unary_fn(x, *, op, dt):
    return op(x.astype(dt))


def _sign(x):  # torch: sign(nan) is 0
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def _relu(x):
    # torch: max(x, 0) keeps -0.0 and NaN, and the gradient is 0 at 0
    return jnp.where(x > 0, x, lax.stop_gradient(jnp.where(x < 0, 0, x)))


def _frac(x):
    return x - jnp.trunc(x)


def _round_fn(x, *, decimals):
    scale = 10.0 ** builtins.abs(decimals)
    if decimals < 0:
        return jnp.round(x / scale) * scale
    return jnp.round(x * scale) / scale


def _has_zero_fn(y, *, dt):
    return jnp.any(_cast(y, dt) == 0)


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


def _where_fn(c, x, y, *, dt):
    return jnp.where(jnp.asarray(c).astype(bool), _cast(x, dt), _cast(y, dt))


def _lerp_fn(x, end, weight, *, dt):
    x, end, weight = _cast(x, dt), _cast(end, dt), _cast(weight, dt)
    diff = end - x  # torch's two-sided formula, exact at weight 0 and 1
    return jnp.where(
        jnp.abs(weight) < 0.5, x + weight * diff, end - diff * (1 - weight)
    )


def _addcmul_fn(x, t1, t2, *, value, dt):
    return _cast(x, dt) + _cast(value, dt) * _cast(t1, dt) * _cast(t2, dt)


def _addcdiv_fn(x, t1, t2, *, value, dt):
    return _cast(x, dt) + _cast(value, dt) * _cast(t1, dt) / _cast(t2, dt)


def _matmul_fn(x, y):
    return jnp.matmul(x, y)


def _addmm_fn(bias, x, y, *, beta, alpha):
    product = jnp.matmul(x, y)
    product = product if alpha == 1 else _cast(alpha, x.dtype) * product
    if beta == 0:  # torch: input is ignored, its nan/inf not propagated
        return product
    return (bias if beta == 1 else _cast(beta, x.dtype) * bias) + product


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
        return op(jnp.abs(x), axis=axis, keepdims=keepdims)
    if p == 0:
        return jnp.sum(x != 0, axis=axis, keepdims=keepdims).astype(x.dtype)
    if p == 2:
        return jnp.sqrt(jnp.sum(jnp.square(x), axis=axis, keepdims=keepdims))
    return jnp.sum(jnp.abs(x) ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def _argmax_fn(x, *, axis, keepdims, op):
    out = op(x, axis=axis, keepdims=keepdims)
    return out.astype(jnp.int64)


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


def result_type(tensor: Any, other: Any) -> _dtype.dtype:
    """``torch.result_type(tensor, other)``: the dtype an arithmetic op gives."""
    return _promote(tensor, other)


def _default_float(dt: _dtype.dtype) -> _dtype.dtype:
    return dt if dt.is_floating_point else _dtype.get_default_dtype()


def _check_broadcast(*values: Any) -> None:
    shapes = [tuple(v.shape) for v in values if isinstance(v, TensorBase)]
    for sb in shapes[1:]:
        sa = shapes[0]
        for i in range(1, builtins.min(len(sa), len(sb)) + 1):
            if sa[-i] != sb[-i] and sa[-i] != 1 and sb[-i] != 1:
                dim = builtins.max(len(sa), len(sb)) - i
                raise RuntimeError(
                    f"The size of tensor a ({sa[-i]}) must match the size of tensor "
                    f"b ({sb[-i]}) at non-singleton dimension {dim}"
                )
        shapes[0] = np.broadcast_shapes(sa, sb)


def _elementwise(name: str, fn, *values: Any, dt: _dtype.dtype, **static) -> Tensor:
    _check_broadcast(*values)
    return apply(name, fn, *values, dt=dt.np.name, **static)


def _no_grad(fn, *values: Any, **static: Any) -> Tensor:
    """An op without a derivative: run, nothing recorded (as torch's bool results)."""
    _check_broadcast(*values)
    arrays = [v._data if isinstance(v, TensorBase) else v for v in values]
    return TensorBase._wrap(run(fn, *arrays, **static))


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
        zero = builtins.bool(run(_has_zero_fn, divisor._data, dt=dt.np.name))
    else:
        zero = np.asarray(divisor).astype(dt.np) == 0
    if zero:
        raise RuntimeError("ZeroDivisionError")


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


# ---------------------------------------------------------------------------
# Arithmetic (also the operators)
# ---------------------------------------------------------------------------


def _check_alpha(dt: _dtype.dtype, alpha: Any) -> None:
    if isinstance(alpha, bool) and dt is not _dtype.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not dt.is_floating_point and not isinstance(alpha, numbers.Integral):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating "
            "point number."
        )


def add(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None):
    """``torch.add(input, other, alpha=1, out=None)``: ``input + alpha * other``."""
    input, other = _value(input), _value(other)
    dt = _promote(input, other)
    _check_alpha(dt, alpha)
    result = _elementwise("AddBackward0", _add_fn, input, other, dt=dt, alpha=alpha)
    return _to_out(result, out)


def _check_sub(input: Any, other: Any) -> None:
    a, b = (_operand(v)[0] is _dtype.bool for v in (input, other))
    if a and b:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if a or b:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If "
            "you are trying to invert a mask, use the `~` or `logical_not()` "
            "operator instead."
        )


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input - alpha * other``."""
    input, other = _value(input), _value(other)
    _check_sub(input, other)
    dt = _promote(input, other)
    _check_alpha(dt, alpha)
    return _elementwise("SubBackward0", _sub_fn, input, other, dt=dt, alpha=alpha)


def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input`` (``2 - x``; torch: RsubBackward1)."""
    _require_tensors("rsub", input)
    input, other = _value(input), _value(other)
    _check_sub(input, other)
    dt = _promote(input, other)
    _check_alpha(dt, alpha)
    return _elementwise("RsubBackward1", _sub_fn, other, input, dt=dt, alpha=alpha)


def mul(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    input, other = _value(input), _value(other)
    dt = _promote(input, other)
    result = _elementwise(
        "MulBackward0", _binary_fn, input, other, op=jnp.multiply, dt=dt
    )
    return _to_out(result, out)


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """``torch.div``: true division (ints give the default float dtype), or with
    ``rounding_mode`` ``'trunc'``/``'floor'`` in the promoted dtype."""
    input, other = _value(input), _value(other)
    dt = _promote(input, other)
    if rounding_mode is None:
        return _elementwise(
            "DivBackward0", _div_fn, input, other, dt=_default_float(dt), mode=None
        )
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
            f"found '{rounding_mode}'"
        )
    if dt is _dtype.bool:
        raise _not_implemented(f"div_{rounding_mode}_cpu", dt)
    if not dt.is_floating_point:
        _check_divisor(other, dt)
    return _elementwise(
        "DivBackward2", _div_fn, input, other, dt=dt, mode=rounding_mode
    )


def true_divide(input: Any, other: Any) -> Tensor:
    return div(input, other)


def floor_divide(input: Any, other: Any) -> Tensor:
    """``input // other``: Python's floor division (torch has no derivative)."""
    input, other = _value(input), _value(other)
    dt = _promote(input, other)
    if dt is _dtype.bool:
        raise _not_implemented("div_floor_cpu", dt)
    if not dt.is_floating_point:
        _check_divisor(other, dt)
    return _elementwise("NotImplemented", _floor_divide_fn, input, other, dt=dt)


def remainder(input: Any, other: Any) -> Tensor:
    """``input % other``: Python's modulus, the sign of the divisor."""
    _require_a_tensor("remainder", input, other)
    input, other = _value(input), _value(other)
    dt = _promote(input, other)
    if dt is _dtype.bool:
        raise _not_implemented("remainder_cpu", dt)
    if not dt.is_floating_point:
        _check_divisor(other, dt)
    if not isinstance(input, TensorBase):  # 2 % x: torch has no derivative
        return _elementwise("NotImplemented", _rremainder_fn, input, other, dt=dt)
    tensor_other = isinstance(other, TensorBase)
    name = "RemainderBackward1" if tensor_other else "RemainderBackward0"
    return _elementwise(name, _remainder_fn, input, other, dt=dt)


def fmod(input: Any, other: Any) -> Tensor:
    """C's ``fmod``: the remainder takes the sign of the dividend."""
    _require_tensors("fmod", input)
    input, other = _value(input), _value(other)
    dt = _promote(input, other)
    if dt is _dtype.bool:
        raise _not_implemented("fmod_cpu", dt)
    if not dt.is_floating_point:
        _check_divisor(other, dt)
    name = "FmodBackward1" if isinstance(other, TensorBase) else "FmodBackward0"
    return _elementwise(name, _binary_fn, input, other, op=jnp.fmod, dt=dt)


def pow(input: Any, exponent: Any) -> Tensor:  # noqa: A001 -- torch's name
    """``input ** exponent``; either may be a number (``torch.pow(2, x)``)."""
    _require_a_tensor("pow", input, exponent)
    input, exponent = _value(input), _value(exponent)
    dt = _promote(input, exponent)
    if not isinstance(exponent, TensorBase):
        if _dtype.category(dt) == 1 and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        name = "PowBackward0"
    elif dt is _dtype.bool:  # x ** True is a copy, but no bool kernel takes tensors
        raise _not_implemented("pow", dt)
    else:
        name = "PowBackward1" if isinstance(input, TensorBase) else "PowBackward2"
    return _elementwise(name, _pow_fn, input, exponent, dt=dt)


def square(input: Tensor) -> Tensor:
    return pow(input, 2)


multiply, divide, subtract = mul, div, sub


# ---------------------------------------------------------------------------
# Bitwise and logical ops, comparisons (no gradients)
# ---------------------------------------------------------------------------


def _bitwise(kernel: str, op):
    def fn(input: Any, other: Any) -> Tensor:
        _require_a_tensor(fn.__name__, input, other)
        input, other = _value(input), _value(other)
        dt = _promote(input, other)
        if dt.is_floating_point:
            raise _not_implemented(f"{kernel}_cpu", dt)
        return _no_grad(_binary_fn, input, other, op=op, dt=dt.np.name)

    fn.__name__ = f"bitwise_{kernel}"
    return fn


bitwise_and = _bitwise("and", jnp.bitwise_and)
bitwise_or = _bitwise("or", jnp.bitwise_or)
bitwise_xor = _bitwise("xor", jnp.bitwise_xor)


def _shift(kernel: str, left: bool):
    def fn(input: Any, other: Any) -> Tensor:
        _require_a_tensor(fn.__name__, input, other)
        input, other = _value(input), _value(other)
        dt = _promote(input, other)
        if dt.is_floating_point or dt is _dtype.bool:
            raise _not_implemented(f"{kernel}_cpu", dt)
        return _no_grad(_shift_fn, input, other, left=left, dt=dt.np.name)

    fn.__name__ = f"bitwise_{'left' if left else 'right'}_shift"
    return fn


bitwise_left_shift = _shift("lshift", left=True)
bitwise_right_shift = _shift("rshift", left=False)


def bitwise_not(input: Tensor) -> Tensor:
    if input.dtype.is_floating_point:
        raise _not_implemented("bitwise_not_cpu", input.dtype)
    return _no_grad(_unary_fn, input, op=jnp.invert, dt=input.dtype.np.name)


def _logical(op):
    def fn(input: Tensor, other: Tensor) -> Tensor:
        _require_tensors(op.__name__, input, other)
        return _no_grad(_logical_fn, input, other, op=op)

    fn.__name__ = op.__name__
    return fn


logical_and = _logical(jnp.logical_and)
logical_or = _logical(jnp.logical_or)
logical_xor = _logical(jnp.logical_xor)


def logical_not(input: Tensor) -> Tensor:
    return _no_grad(_unary_fn, input, op=jnp.logical_not, dt="bool")


def _comparison(name: str, op):
    def fn(input: Tensor, other: Any) -> Tensor:
        _require_tensors(name, input)
        input, other = _value(input), _value(other)
        dt = _promote(input, other)  # both are cast to it, as torch does
        return _no_grad(_binary_fn, input, other, op=op, dt=dt.np.name)

    fn.__name__ = name
    return fn


eq = _comparison("eq", jnp.equal)
ne = _comparison("ne", jnp.not_equal)
lt = _comparison("lt", jnp.less)
le = _comparison("le", jnp.less_equal)
gt = _comparison("gt", jnp.greater)
ge = _comparison("ge", jnp.greater_equal)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _bool_unary(op):
    def fn(input: Tensor) -> Tensor:
        return _no_grad(_unary_fn, input, op=op, dt=input.dtype.np.name)

    fn.__name__ = op.__name__
    return fn


isnan = _bool_unary(jnp.isnan)
isinf = _bool_unary(jnp.isinf)
isfinite = _bool_unary(jnp.isfinite)
isposinf = _bool_unary(jnp.isposinf)
isneginf = _bool_unary(jnp.isneginf)


def equal(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and builtins.bool(
        np.array_equal(np.asarray(a), np.asarray(b))
    )


def allclose(a: Tensor, b: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return builtins.bool(
        np.allclose(np.asarray(a), np.asarray(b), rtol, atol, equal_nan)
    )


def isclose(a: Tensor, b: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    _require_tensors("isclose", a, b)
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if tol < 0:
            raise RuntimeError(
                f"{name} must be greater than or equal to zero, but got {tol}"
            )
    return TensorBase._wrap(
        jnp.asarray(np.isclose(np.asarray(a), np.asarray(b), rtol, atol, equal_nan))
    )


# ---------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------

# C++ type names, as torch's matmul and clamp errors print them
_CPP = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
}


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


def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    input, other = _as_tensor(input), _as_tensor(other)
    _check_matmul(input, other)
    names = {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 1): "DotBackward0"}
    name = names.get((input.dim(), other.dim()), "UnsafeViewBackward0")
    return _to_out(apply(name, _matmul_fn, input, other), out)


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError("self must be a matrix")
    return matmul(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {input.dim()}, {vec.dim()}"
        )
    return matmul(input, vec)


def dot(input: Tensor, other: Tensor) -> Tensor:
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors"
        )
    return matmul(input, other)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.dim() != 3 or mat2.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError("batch1 and batch2 must have same number of batches")
    return matmul(input, mat2)


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
    return apply("AddmmBackward0", _addmm_fn, input, mat1, mat2, beta=beta, alpha=alpha)


# ---------------------------------------------------------------------------
# Unary ops
# ---------------------------------------------------------------------------


def _floating_unary(name: str, op):
    """An op that gives floats: integer and bool inputs become the default dtype."""

    def fn(input: Tensor) -> Tensor:
        dt = _default_float(input.dtype)
        return apply(name, _unary_fn, input, op=op, dt=dt.np.name)

    fn.__name__ = name.removesuffix("Backward0").lower()  # ExpBackward0: exp
    return fn


exp = _floating_unary("ExpBackward0", jnp.exp)
exp2 = _floating_unary("Exp2Backward0", jnp.exp2)
expm1 = _floating_unary("Expm1Backward0", jnp.expm1)
log = _floating_unary("LogBackward0", jnp.log)
log2 = _floating_unary("Log2Backward0", jnp.log2)
log10 = _floating_unary("Log10Backward0", jnp.log10)
log1p = _floating_unary("Log1PBackward0", jnp.log1p)
sqrt = _floating_unary("SqrtBackward0", jnp.sqrt)
rsqrt = _floating_unary("RsqrtBackward0", lax.rsqrt)
sin = _floating_unary("SinBackward0", jnp.sin)
cos = _floating_unary("CosBackward0", jnp.cos)
tan = _floating_unary("TanBackward0", jnp.tan)
asin = _floating_unary("AsinBackward0", jnp.arcsin)
acos = _floating_unary("AcosBackward0", jnp.arccos)
atan = _floating_unary("AtanBackward0", jnp.arctan)
sinh = _floating_unary("SinhBackward0", jnp.sinh)
cosh = _floating_unary("CoshBackward0", jnp.cosh)
tanh = _floating_unary("TanhBackward0", jnp.tanh)
sigmoid = _floating_unary("SigmoidBackward0", jax.nn.sigmoid)
erf = _floating_unary("ErfBackward0", jax.scipy.special.erf)
reciprocal = _floating_unary("ReciprocalBackward0", jnp.reciprocal)
arcsin, arccos, arctan = asin, acos, atan


def _same_unary(name: str, op, *, ints: bool = True, bools: Any = None):
    """An op that keeps the dtype. ``ints=False``: integers are refused;
    ``bools``: for bool, the kernel torch lacks, or ``(message,)`` of torch's
    RuntimeError (None: bool is identity)."""

    def fn(input: Tensor) -> Tensor:
        dt = input.dtype
        if dt is _dtype.bool and bools is not None:
            if isinstance(bools, str):
                raise _not_implemented(bools, dt)
            raise RuntimeError(bools[0])
        if not dt.is_floating_point and not ints:
            raise _not_implemented(f"{fn.__name__}_cpu", dt)
        if dt is _dtype.bool or (not dt.is_floating_point and op in _IDENTITY_ON_INTS):
            return apply(name, _cast_fn, input, dt=dt.np.name)
        return apply(name, _unary_fn, input, op=op, dt=dt.np.name)

    fn.__name__ = name.removesuffix("Backward0").lower()  # NegBackward0: neg
    return fn


_IDENTITY_ON_INTS = {jnp.floor, jnp.ceil, jnp.round, jnp.trunc}
_BOOL_NEG = (
    "Negation, the `-` operator, on a bool tensor is not supported. If you are "
    "trying to invert a mask, use the `~` or `logical_not()` operator instead.",
)
neg = _same_unary("NegBackward0", jnp.negative, bools=_BOOL_NEG)
abs = _same_unary("AbsBackward0", jnp.abs, bools="abs_cpu")  # noqa: A001
sign = _same_unary("SignBackward0", _sign)
floor = _same_unary("FloorBackward0", jnp.floor, bools="floor_vml_cpu")
ceil = _same_unary("CeilBackward0", jnp.ceil, bools="ceil_vml_cpu")
trunc = _same_unary("TruncBackward0", jnp.trunc, bools="trunc_vml_cpu")
frac = _same_unary("FracBackward0", _frac, ints=False, bools="frac_cpu")
relu = _same_unary(
    "ReluBackward0",
    _relu,
    bools=("Boolean inputs not supported for relu",),
)
negative, absolute, fix = neg, abs, trunc
_round0 = _same_unary("RoundBackward0", jnp.round, bools="round_cpu")


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001
    """``torch.round``: half to even; ``decimals`` scales by 10**decimals first."""
    if decimals == 0:
        return _round0(input)
    if not input.dtype.is_floating_point:
        raise _not_implemented("round_cpu", input.dtype)
    return apply("RoundBackward1", _round_fn, input, decimals=decimals)


def positive(input: Tensor) -> Tensor:
    if input.dtype is _dtype.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ---------------------------------------------------------------------------
# Clamping, selection, interpolation
# ---------------------------------------------------------------------------


def _check_fits(value: Any, dt: _dtype.dtype) -> None:
    """torch converts a clamp bound to the result dtype, refusing an overflow."""
    if dt.is_floating_point:
        fits = not math.isfinite(value) or builtins.abs(value) <= jnp.finfo(dt.np).max
    else:
        info = np.iinfo(dt.np)
        # c10's overflows(): an unsigned type takes -max..max (negatives wrap)
        fits = (info.min or -info.max) <= value <= info.max
    if not fits:
        cpp = {"int64": "int64_t", "int32": "int", "int16": "int16_t"}
        name = cpp.get(dt.name, f"{dt.name}_t" if "int" in dt.name else _CPP[dt.name])
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def _clamp(what: str, input: Tensor, lo: Any, hi: Any) -> Tensor:
    """``torch.<what>(input, lo, hi)``."""
    _require_tensors(what, input)
    lo, hi = (None if b is None else _value(b) for b in (lo, hi))
    bounds = [b for b in (lo, hi) if b is not None]
    if not bounds:
        raise RuntimeError(
            "torch.clamp: At least one of 'min' or 'max' must not be None"
        )
    tensors = [isinstance(b, TensorBase) for b in bounds]
    if builtins.any(tensors) and not builtins.all(tensors):
        raise TypeError(
            "clamp() received an invalid combination of arguments: min and max must "
            "both be Tensors or both be numbers"
        )
    dt = _promote(input, *bounds)
    if len(bounds) == 2 and builtins.all(tensors) and dt is _dtype.bool:
        raise _not_implemented("clamp_cpu", dt)
    if not builtins.any(tensors):
        if dt is _dtype.bool:
            raise _not_implemented("clamp_scalar_cpu", dt)
        for b in bounds:
            _check_fits(b, dt)
    # torch's grad_fn: ClampBackward1 for number bounds, ClampMinBackward0 ...
    names = {"clamp": ("ClampBackward0", "ClampBackward1")}.get(what)
    if names is None:
        kind = "ClampMin" if what == "clamp_min" else "ClampMax"
        names = (f"{kind}Backward1", f"{kind}Backward0")
    name = names[0] if builtins.any(tensors) else names[1]
    return _elementwise(name, _clamp_fn, input, lo, hi, dt=dt)


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """``torch.clamp``: bounds are numbers or Tensors; the dtype is promoted."""
    return _clamp("clamp", input, min, max)


def clamp_min(input: Tensor, min: Any) -> Tensor:  # noqa: A002
    return _clamp("clamp_min", input, min, None)


def clamp_max(input: Tensor, max: Any) -> Tensor:  # noqa: A002
    return _clamp("clamp_max", input, None, max)


clip = clamp


def _binary_tensors(name: str, op, what: str):
    def fn(input: Tensor, other: Tensor) -> Tensor:
        _require_tensors(what, input, other)
        dt = _promote(input, other)
        return _elementwise(name, _binary_fn, input, other, op=op, dt=dt)

    fn.__name__ = what
    return fn


maximum = _binary_tensors("MaximumBackward0", jnp.maximum, "maximum")
minimum = _binary_tensors("MinimumBackward0", jnp.minimum, "minimum")


def where(condition: Tensor, input: Any, other: Any) -> Tensor:
    """``torch.where(condition, input, other)``: input and other promoted together."""
    if condition.dtype is _dtype.uint8:
        warnings.warn(
            "where received a uint8 condition tensor. This behavior is deprecated and "
            "will be removed in a future version of PyTorch. Use a boolean condition "
            "instead.",
            UserWarning,
            stacklevel=2,
        )
    elif condition.dtype is not _dtype.bool:
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor with "
            f"dtype {condition.dtype.scalar_type}"
        )
    input, other = _value(input), _value(other)
    dt = _promote(input, other)
    return _elementwise("WhereBackward0", _where_fn, condition, input, other, dt=dt)


def _same_dtype(input: Tensor, other: Any, what: str) -> None:
    if isinstance(other, TensorBase) and other.dtype is not input.dtype:
        raise RuntimeError(
            f"expected dtype {_CPP[input.dtype.name]} for `{what}` but got dtype "
            f"{_CPP[other.dtype.name]}"
        )


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)``; all three of one floating dtype."""
    _same_dtype(input, end, "end")
    weight = _value(weight)
    _same_dtype(input, weight, "weight")
    scalar = not isinstance(weight, TensorBase)
    if not input.dtype.is_floating_point:
        kernel = "lerp_kernel_scalar" if scalar else "lerp_kernel_tensor"
        raise _not_implemented(kernel, input.dtype)
    name = "LerpBackward0" if scalar else "LerpBackward1"
    return _elementwise(name, _lerp_fn, input, end, weight, dt=input.dtype)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1):
    """``input + value * tensor1 * tensor2``, all three promoted together."""
    dt = _promote(input, tensor1, tensor2)
    if dt is _dtype.bool:
        raise _not_implemented("addcmul_cpu_out", dt)
    return _elementwise(
        "AddcmulBackward0", _addcmul_fn, input, tensor1, tensor2, dt=dt, value=value
    )


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1):
    """``input + value * tensor1 / tensor2``; integer tensor1/tensor2 are refused."""
    if not (tensor1.dtype.is_floating_point or tensor2.dtype.is_floating_point):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  "
            "release addcdiv will perform a true division of tensor1 and tensor2. "
            "The historic addcdiv behavior can be implemented as (input + value * "
            "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and "
            "as (input + value * tensor1 / tensor2) for float inputs. The future "
            "addcdiv behavior is just the latter implementation: (input + value * "
            "tensor1 / tensor2), for all dtypes."
        )
    dt = _promote(input, tensor1, tensor2)
    return _elementwise(
        "AddcdivBackward0", _addcdiv_fn, input, tensor1, tensor2, dt=dt, value=value
    )


def to_dtype(input: Tensor, dt: _dtype.dtype) -> Tensor:
    if input.dtype is dt:
        return input
    return apply("ToCopyBackward0", _cast_fn, input, dt=dt.np.name)


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------


def _dim(dim: Any, ndim: int) -> Any:
    """A reduction's ``dim`` as JAX's ``axis`` (None: every dimension)."""
    if dim is None or (isinstance(dim, list | tuple) and not dim):
        return None  # torch: dim=[] reduces over every dimension
    if ndim == 0:  # torch: a 0-dim tensor takes dim 0 or -1, reducing nothing
        for d in dim if isinstance(dim, list | tuple) else (dim,):
            wrap_dim(d, ndim)
        return None
    if isinstance(dim, list | tuple):
        dims = tuple(wrap_dim(d, ndim) for d in dim)
        for d in dims:
            if dims.count(d) > 1:
                raise RuntimeError(
                    f"dim {d} appears multiple times in the list of dims"
                )
        return dims
    return wrap_dim(dim, ndim)


def _axes(dim: Any, ndim: int) -> tuple[int, ...]:
    """``dim`` as a tuple of axes (None: all of them)."""
    axis = _dim(dim, ndim)
    if axis is None:
        return tuple(range(ndim))
    return axis if isinstance(axis, tuple) else (axis,)


def _accumulate_dtype(input: Tensor, dtype: Any) -> str:
    """torch's sum/prod/cumsum dtype: integers and bool accumulate in int64."""
    if dtype is not None:
        return _dtype.to_dtype(dtype).np.name
    return input.dtype.np.name if input.dtype.is_floating_point else "int64"


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype=None):  # noqa: A001
    name = "SumBackward0" if dim is None else "SumBackward1"
    return apply(
        name,
        _reduce_fn,
        input,
        op=jnp.sum,
        axis=_dim(dim, input.dim()),
        keepdims=keepdim,
        dt=_accumulate_dtype(input, dtype),
    )


def prod(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype=None):
    name = "ProdBackward0" if dim is None else "ProdBackward1"
    axis = None if dim is None else _dim(wrap_dim(dim, input.dim()), input.dim())
    return apply(
        name,
        _reduce_fn,
        input,
        op=jnp.prod,
        axis=axis,
        keepdims=keepdim,
        dt=_accumulate_dtype(input, dtype),
    )


def _scan(name: str, op):
    def fn(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
        axis = wrap_dim(dim, input.dim())
        dt = _accumulate_dtype(input, dtype)
        return apply(name, _scan_fn, input, op=op, axis=axis, dt=dt)

    fn.__name__ = op.__name__
    return fn


cumsum = _scan("CumsumBackward0", jnp.cumsum)
cumprod = _scan("CumprodBackward0", jnp.cumprod)


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype=None):
    if not input.dtype.is_floating_point and dtype is None:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a "
            f"floating point or complex dtype. Got: {input.dtype.scalar_type}"
        )
    dtype = None if dtype is None else _dtype.to_dtype(dtype)
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Optional dtype must be either a "
            f"floating point or complex dtype. Got: {dtype.scalar_type}"
        )
    dt = None if dtype is None else dtype.np.name
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


def _moment(name: str, root: bool):
    def fn(
        input: Tensor,
        dim: Any = None,
        unbiased: bool | None = None,
        keepdim: bool = False,
        *,
        correction: Any = None,
    ) -> Tensor:
        if isinstance(dim, bool):  # x.var(False): the old unbiased argument
            dim, unbiased = None, dim
        if unbiased is not None and correction is not None:
            raise RuntimeError(
                f"{fn.__name__}: can't pass both unbiased and correction; use "
                "correction"
            )
        if correction is None:
            correction = 1 if unbiased is None else builtins.int(unbiased)
        if not input.dtype.is_floating_point:
            raise RuntimeError(
                "std and var only support floating point and complex dtypes"
            )
        axis = _axes(dim, input.dim())
        return apply(
            name,
            _var_fn,
            input,
            axis=axis,
            correction=correction,
            keepdims=keepdim,
            root=root,
        )

    fn.__name__ = "std" if root else "var"
    return fn


std = _moment("StdBackward0", root=True)
var = _moment("VarBackward0", root=False)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input), dim))`` without overflow; integers give floats."""
    dt = _default_float(input.dtype).np.name
    axis = _dim(dim, input.dim())
    return apply(
        "LogsumexpBackward0", _logsumexp_fn, input, axis=axis, keepdims=keepdim, dt=dt
    )


def _truth(op):
    def fn(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        dt = "uint8" if input.dtype is _dtype.uint8 else "bool"  # torch keeps uint8
        axis = _dim(dim, input.dim())
        return _no_grad(_truth_fn, input, op=op, axis=axis, keepdims=keepdim, dt=dt)

    fn.__name__ = op.__name__
    return fn


all = _truth(jnp.all)  # noqa: A001
any = _truth(jnp.any)  # noqa: A001


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


def _check_reducible(what: str, input: Tensor, axis: Any) -> None:
    """max/argmax-like reductions have no value over nothing: torch's errors."""
    if input.numel():
        return
    if axis is None:
        raise RuntimeError(
            f"{what}(): Expected reduction dim to be specified for input.numel() == "
            "0. Specify the reduction dim with the 'dim' argument."
        )
    for a in axis if isinstance(axis, tuple) else (axis,):
        if input.shape[a] == 0:
            raise IndexError(
                f"{what}(): Expected reduction dim {a} to have non-zero size."
            )


def _extreme(name: str, op, arg_op):
    result_type = type(name, (_ReturnType,), {"name": name})

    def reduce(input: Tensor, dim: Any = None, keepdim: bool = False):
        _require_tensors(name, input)
        if isinstance(dim, TensorBase):  # torch.max(a, b): elementwise
            return (maximum if name == "max" else minimum)(input, dim)
        axis = None if dim is None else _dim(wrap_dim(dim, input.dim()), input.dim())
        _check_reducible(name, input, axis)
        grad_fn = f"{name.title()}Backward{1 if dim is None else 0}"
        keepdim = keepdim and dim is not None
        static = dict(op=op, axis=axis, keepdims=keepdim, dt=None)
        values = apply(grad_fn, _reduce_fn, input, **static)
        if dim is None:
            return values
        indices = _no_grad(_argmax_fn, input, axis=axis, keepdims=keepdim, op=arg_op)
        return result_type(values, indices)

    reduce.__name__ = name
    return reduce


max = _extreme("max", jnp.max, jnp.argmax)  # noqa: A001
min = _extreme("min", jnp.min, jnp.argmin)  # noqa: A001


def _amax(name: str, op):
    def fn(
        input: Tensor, dim: Any = (), keepdim: bool = False, *, out: Any = None
    ) -> Tensor:
        axis = _dim(dim, input.dim())
        _check_reducible(fn.__name__, input, axis)
        if out is not None and out.dtype is not input.dtype:
            raise RuntimeError(
                "Expected the dtype for input and out to match, but got "
                f"{input.dtype.scalar_type} for input's dtype and "
                f"{out.dtype.scalar_type} for out's dtype."
            )
        result = apply(
            name, _reduce_fn, input, op=op, axis=axis, keepdims=keepdim, dt=None
        )
        return _to_out(result, out)

    fn.__name__ = name.removesuffix("Backward0").lower()  # AmaxBackward0: amax
    return fn


amax = _amax("AmaxBackward0", jnp.max)
amin = _amax("AminBackward0", jnp.min)


def _arg(op):
    def fn(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
        if input.dtype is _dtype.bool:
            raise RuntimeError(f"{op.__name__}(): does not support bool input")
        axis = None if dim is None else _dim(wrap_dim(dim, input.dim()), input.dim())
        _check_reducible(op.__name__, input, axis)
        return _no_grad(_argmax_fn, input, axis=axis, keepdims=keepdim, op=op)

    fn.__name__ = op.__name__
    return fn


argmax = _arg(jnp.argmax)
argmin = _arg(jnp.argmin)


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False):
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as "
            f"input. Got {input.dtype.scalar_type}"
        )
    p = 2 if p in ("fro", None) else p
    if p == "nuc":
        dim = (0, 1) if dim is None else dim
        if input.dim() < 2 or len(tuple(dim)) != 2:
            raise RuntimeError(
                f"linalg.matrix_norm: The input tensor A must have at least 2 "
                f"dimensions, and dim must have 2 entries, got {dim}"
            )
    elif isinstance(p, str):
        raise NotImplementedError(f"compat norm: p={p!r} is not supported")
    return apply(
        "LinalgVectorNormBackward0",
        _norm_fn,
        input,
        p=p,
        axis=_dim(dim, input.dim()),
        keepdims=keepdim,
    )


# ---------------------------------------------------------------------------
# As Tensor methods and operators
# ---------------------------------------------------------------------------


def _operator(fn, *, reflected: bool = False, numbers: bool = True):
    """``x + y`` is ``add(x, y)``, ``2 + x`` is ``x.__radd__(2)``; an operand that
    is not a number (``numbers=False``: not an array) gives NotImplemented, so
    Python raises its TypeError (and ``x == None`` is False), as torch."""

    def method(self: Tensor, other: Any) -> Any:
        if not isinstance(self, TensorBase):  # Tensor.__radd__(2, x), unbound
            raise TypeError(
                f"descriptor for 'Tensor' objects doesn't apply to a "
                f"'{type(self).__name__}' object"
            )
        if not _is_operand(other) or not (numbers or hasattr(other, "shape")):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)

    return method


def _rtruediv(self: Tensor, other: Any) -> Tensor:
    return mul(reciprocal(self), other)  # torch's __rdiv__ is exactly this


def _invert(self: Tensor) -> Tensor:
    if self.dtype.is_floating_point:
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type "
            "tensors"
        )
    return bitwise_not(self)


class MathMixin(AutogradMixin):
    """The functions above as methods (``x.add(y)``; see :data:`_METHODS`) and
    operators (``x + y``)."""

    __slots__ = ()

    def where(self, condition: Tensor, other: Any) -> Tensor:
        """``x.where(condition, y)`` is ``torch.where(condition, x, y)``."""
        return where(condition, self, other)

    __add__ = __radd__ = _operator(add)
    __sub__, __rsub__ = _operator(sub), _operator(rsub)
    __mul__ = __rmul__ = _operator(mul)
    __truediv__, __rtruediv__ = _operator(div), _operator(_rtruediv)
    __floordiv__ = _operator(floor_divide)
    __rfloordiv__ = _operator(floor_divide, reflected=True)
    __mod__, __rmod__ = _operator(remainder), _operator(remainder, reflected=True)
    __pow__, __rpow__ = _operator(pow), _operator(pow, reflected=True)
    __matmul__ = _operator(matmul, numbers=False)
    __rmatmul__ = _operator(matmul, reflected=True, numbers=False)
    __and__ = __rand__ = _operator(bitwise_and)
    __or__ = __ror__ = _operator(bitwise_or)
    __xor__ = __rxor__ = _operator(bitwise_xor)
    __lshift__ = _operator(bitwise_left_shift)
    __rlshift__ = _operator(bitwise_left_shift, reflected=True)
    __rshift__ = _operator(bitwise_right_shift)
    __rrshift__ = _operator(bitwise_right_shift, reflected=True)
    __eq__, __ne__ = _operator(eq), _operator(ne)
    __lt__, __le__, __gt__, __ge__ = map(_operator, (lt, le, gt, ge))
    __neg__, __pos__, __abs__, __invert__ = neg, positive, abs, _invert
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


# x.add(y) is add(x, y): the functions above, as Tensor methods of the same name.
_METHODS = """
    add sub mul div true_divide floor_divide remainder fmod pow square
    multiply divide subtract matmul mm mv dot bmm addmm addcmul addcdiv lerp
    neg negative abs absolute sign positive floor ceil round trunc fix frac
    exp exp2 expm1 log log2 log10 log1p sqrt rsqrt reciprocal erf sigmoid relu
    sin cos tan asin acos atan arcsin arccos arctan sinh cosh tanh
    clamp clip clamp_min clamp_max maximum minimum
    sum mean prod cumsum cumprod std var logsumexp max min amax amin norm
    argmax argmin all any
    eq ne lt le gt ge greater greater_equal less less_equal not_equal
    equal allclose isclose isnan isinf isfinite isposinf isneginf
    logical_and logical_or logical_xor logical_not
    bitwise_and bitwise_or bitwise_xor bitwise_not
    bitwise_left_shift bitwise_right_shift
""".split()  # noqa: SIM905 -- a word per method reads better than 120 quoted names
for _name in _METHODS:
    setattr(MathMixin, _name, globals()[_name])
