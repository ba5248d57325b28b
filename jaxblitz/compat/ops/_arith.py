"""Blitz 1, "Tensors": arithmetic (also the operators), bitwise and logical ops,
comparisons."""

from __future__ import annotations

import builtins
import numbers
from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _autocast
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._funnel import (
    _add_fn,
    _alpha_operand,
    _base_pow_fn,
    _binary_fn,
    _check_divisor,
    _default_float,
    _div_fn,
    _elementwise,
    _floor_divide_fn,
    _logical_fn,
    _no_grad,
    _not_implemented,
    _operand,
    _pow_fn,
    _promote,
    _remainder_fn,
    _require_a_tensor,
    _require_tensors,
    _rremainder_fn,
    _shift_fn,
    _sub_fn,
    _to_out,
    _unary_fn,
    _value,
)
from jaxblitz.compat.ops._scalars import kind, scalar_arg
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._fresh_layout import elementwise
from jaxblitz.compat.tensor._tensor_base import TensorBase

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

# ---------------------------------------------------------------------------
# Arithmetic (also the operators)
# ---------------------------------------------------------------------------


def _check_alpha(dt: _dtype.dtype, alpha: Any, what: str) -> None:
    alpha = kind(scalar_arg(alpha, what, "alpha"))
    if isinstance(alpha, bool) and dt is not _dtype.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not dt.is_floating_point and not isinstance(alpha, numbers.Integral):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating "
            "point number."
        )


@declare(method=True, inplace=True, augmented="iadd")
def add(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None):
    """``torch.add(input, other, alpha=1, out=None)``: ``input + alpha * other``."""
    input, other = _value(input), _value(other)
    dt = _promote(input, other)
    _check_alpha(dt, alpha, "add")
    scale, alpha = _alpha_operand(alpha)
    result = _elementwise(
        "AddBackward0", _add_fn, input, other, *scale, dt=dt, alpha=alpha
    )
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


@declare(method=True, inplace=True, augmented="isub")
def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input - alpha * other``."""
    input, other = _value(input), _value(other)
    _check_sub(input, other)
    dt = _promote(input, other)
    _check_alpha(dt, alpha, "sub")
    scale, alpha = _alpha_operand(alpha)
    return _elementwise(
        "SubBackward0", _sub_fn, input, other, *scale, dt=dt, alpha=alpha
    )


@declare
def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input`` (``2 - x``; torch: RsubBackward1)."""
    _require_tensors("rsub", input)
    input, other = _value(input), _value(other)
    _check_sub(input, other)
    dt = _promote(input, other)
    _check_alpha(dt, alpha, "rsub")
    scale, alpha = _alpha_operand(alpha)
    return _elementwise(
        "RsubBackward1", _sub_fn, other, input, *scale, dt=dt, alpha=alpha
    )


@declare(method=True, inplace=True, augmented="imul")
def mul(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    input, other = _value(input), _value(other)
    dt = _promote(input, other)
    result = _elementwise(
        "MulBackward0", _binary_fn, input, other, op=jnp.multiply, dt=dt
    )
    return _to_out(result, out)


saves("MulBackward0", (1, 0), (0, 1))


@declare(method=True, inplace=True, augmented="itruediv")
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


saves("DivBackward0", (1, 0), (1, 1), (0, 1))


@declare(method=True, inplace=True)
def true_divide(input: Any, other: Any) -> Tensor:
    return div(input, other)


@declare(method=True, inplace=True, augmented="ifloordiv")
def floor_divide(input: Any, other: Any) -> Tensor:
    """``input // other``: Python's floor division (torch has no derivative)."""
    input, other = _value(input), _value(other)
    dt = _promote(input, other)
    if dt is _dtype.bool:
        raise _not_implemented("div_floor_cpu", dt)
    if not dt.is_floating_point:
        _check_divisor(other, dt)
    return _elementwise("NotImplemented", _floor_divide_fn, input, other, dt=dt)


@declare(method=True, inplace=True, augmented="imod")
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


saves("RemainderBackward0", (0, 1), (1, 1))
saves("RemainderBackward1", (0, 1), (1, 1))


@declare(method=True, inplace=True)
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


saves("FmodBackward1", (0, 1), (1, 1))


@declare(method=True, inplace=True, augmented="ipow")
def pow(input: Any, exponent: Any) -> Tensor:  # noqa: A001 -- torch's name
    """``input ** exponent``; either may be a number (``torch.pow(2, x)``)."""
    if _autocast.on:
        return _autocast.run("pow", pow, input, exponent)
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
    fn = _pow_fn if isinstance(input, TensorBase) else _base_pow_fn
    return _elementwise(name, fn, input, exponent, dt=dt)


saves("PowBackward0", (0, None))
saves("PowBackward1", (0, None), (1, None), ("result", None))


@declare(method=True, inplace=True)
def square(input: Tensor) -> Tensor:
    return pow(input, 2)


multiply, divide, subtract = mul, div, sub
declare.alias("subtract", subtract, method=True, inplace=True)
declare.alias("divide", divide, method=True, inplace=True)
declare.alias("multiply", multiply, method=True, inplace=True)


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
        return _no_grad(_binary_fn, input, other, op=op, dt=dt.np_name)

    fn.__name__ = f"bitwise_{kernel}"
    return fn


bitwise_and = _bitwise("and", jnp.bitwise_and)
declare.alias("bitwise_and", bitwise_and, method=True, inplace=True, augmented="iand")
bitwise_or = _bitwise("or", jnp.bitwise_or)
declare.alias("bitwise_or", bitwise_or, method=True, inplace=True, augmented="ior")
bitwise_xor = _bitwise("xor", jnp.bitwise_xor)
declare.alias("bitwise_xor", bitwise_xor, method=True, inplace=True, augmented="ixor")


def _shift(kernel: str, left: bool):
    def fn(input: Any, other: Any) -> Tensor:
        _require_a_tensor(fn.__name__, input, other)
        input, other = _value(input), _value(other)
        dt = _promote(input, other)
        if dt.is_floating_point or dt is _dtype.bool:
            raise _not_implemented(f"{kernel}_cpu", dt)
        return _no_grad(_shift_fn, input, other, left=left, dt=dt.np_name)

    fn.__name__ = f"bitwise_{'left' if left else 'right'}_shift"
    return fn


bitwise_left_shift = _shift("lshift", left=True)
declare.alias(
    "bitwise_left_shift",
    bitwise_left_shift,
    method=True,
    inplace=True,
    augmented="ilshift",
)
bitwise_right_shift = _shift("rshift", left=False)
declare.alias(
    "bitwise_right_shift",
    bitwise_right_shift,
    method=True,
    inplace=True,
    augmented="irshift",
)


@declare(method=True, inplace=True)
def bitwise_not(input: Tensor) -> Tensor:
    if input.dtype.is_floating_point:
        raise _not_implemented("bitwise_not_cpu", input.dtype)
    return _no_grad(_unary_fn, input, op=jnp.invert, dt=input.dtype.np_name)


def _logical(op):
    def fn(input: Tensor, other: Tensor) -> Tensor:
        _require_tensors(op.__name__, input, other)
        return _no_grad(_logical_fn, input, other, op=op)

    fn.__name__ = op.__name__
    return fn


logical_and = _logical(jnp.logical_and)
declare.alias("logical_and", logical_and, method=True, inplace=True)
logical_or = _logical(jnp.logical_or)
declare.alias("logical_or", logical_or, method=True, inplace=True)
logical_xor = _logical(jnp.logical_xor)
declare.alias("logical_xor", logical_xor, method=True, inplace=True)


@declare(method=True, inplace=True)
def logical_not(input: Tensor) -> Tensor:
    return _no_grad(_unary_fn, input, op=jnp.logical_not, dt="bool")


def _comparison(name: str, op):
    def fn(input: Tensor, other: Any) -> Tensor:
        _require_tensors(name, input)
        input, other = _value(input), _value(other)
        dt = _promote(input, other)  # both are cast to it, as torch does
        return _no_grad(_binary_fn, input, other, op=op, dt=dt.np_name)

    fn.__name__ = name
    return fn


eq = _comparison("eq", jnp.equal)
declare.alias("eq", eq, method=True, inplace=True)
ne = _comparison("ne", jnp.not_equal)
declare.alias("ne", ne, method=True, inplace=True)
lt = _comparison("lt", jnp.less)
declare.alias("lt", lt, method=True, inplace=True)
le = _comparison("le", jnp.less_equal)
declare.alias("le", le, method=True, inplace=True)
gt = _comparison("gt", jnp.greater)
declare.alias("gt", gt, method=True, inplace=True)
ge = _comparison("ge", jnp.greater_equal)
declare.alias("ge", ge, method=True, inplace=True)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
declare.alias("not_equal", not_equal, method=True, inplace=True)
declare.alias("less_equal", less_equal, method=True, inplace=True)
declare.alias("less", less, method=True, inplace=True)
declare.alias("greater_equal", greater_equal, method=True, inplace=True)
declare.alias("greater", greater, method=True, inplace=True)


def _bool_unary(op):
    def fn(input: Tensor) -> Tensor:
        return _no_grad(_unary_fn, input, op=op, dt=input.dtype.np_name)

    fn.__name__ = op.__name__
    return fn


isnan = _bool_unary(jnp.isnan)
declare.alias("isnan", isnan, method=True)
isinf = _bool_unary(jnp.isinf)
declare.alias("isinf", isinf, method=True)
isfinite = _bool_unary(jnp.isfinite)
declare.alias("isfinite", isfinite, method=True)
isposinf = _bool_unary(jnp.isposinf)
declare.alias("isposinf", isposinf, method=True)
isneginf = _bool_unary(jnp.isneginf)
declare.alias("isneginf", isneginf, method=True)


@declare(method=True)
def equal(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and builtins.bool(
        np.array_equal(np.asarray(a), np.asarray(b))
    )


@elementwise
def _isclose_fn(a, b, *, rtol, atol, equal_nan, default):
    """ATen's isclose: equal, or both finite within ``atol + |rtol * b|``;
    integers and bools compared as the default float dtype, each step rounded
    to the dtype it runs in, a half's scalar steps computed in float32 (ATen's
    opmath)."""
    close = a == b
    if not jnp.issubdtype(a.dtype, jnp.floating):
        if rtol == 0 and atol == 0:
            return close
        a, b = a.astype(default), b.astype(default)
    elif equal_nan:
        close = close | (jnp.isnan(a) & jnp.isnan(b))
    if rtol == 0 and atol == 0:
        return close
    dt = a.dtype
    wide = jnp.promote_types(dt, jnp.float32)
    scaled = (b.astype(wide) * np.asarray(rtol, wide)).astype(dt)
    allowed = (np.asarray(atol, wide) + jnp.abs(scaled).astype(wide)).astype(dt)
    actual = jnp.abs(a - b)
    return close | (jnp.isfinite(actual) & (actual <= allowed))


def _check_close_args(what: str, a: Any, b: Any, rtol, atol, equal_nan) -> None:
    """torch's argument parser and ATen's checks for isclose and allclose."""
    _require_tensors(what, a, b)
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if not isinstance(tol, numbers.Real):
            raise TypeError(
                f"{what}(): argument '{name}' must be float, not {type(tol).__name__}"
            )
    if not isinstance(equal_nan, bool):
        raise TypeError(
            f"{what}(): argument 'equal_nan' must be bool, not "
            f"{type(equal_nan).__name__}"
        )
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{a.dtype.scalar_type} did not match {b.dtype.scalar_type}")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if tol < 0:
            raise RuntimeError(
                f"{name} must be greater than or equal to zero, but got {tol:g}"
            )


def _isclose(a: Tensor, b: Tensor, rtol, atol, equal_nan) -> Tensor:
    return _no_grad(
        _isclose_fn,
        a,
        b,
        rtol=float(rtol),
        atol=float(atol),
        equal_nan=equal_nan,
        default=_dtype.get_default_dtype().np,
    )


@declare(method=True)
def isclose(a: Tensor, b: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    _check_close_args("isclose", a, b, rtol, atol, equal_nan)
    return _isclose(a, b, rtol, atol, equal_nan)


@declare(method=True)
def allclose(a: Tensor, b: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    # torch: isclose(...).all().item() -- its dtype, broadcasting and tolerance
    # rules and errors, with allclose's name in the argument errors
    _check_close_args("allclose", a, b, rtol, atol, equal_nan)
    return builtins.bool(_isclose(a, b, rtol, atol, equal_nan).all())
