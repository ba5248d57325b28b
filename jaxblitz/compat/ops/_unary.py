"""Blitz 1, "Tensors": elementwise unary ops, clamping, selection,
interpolation, dtype casts."""

from __future__ import annotations

import builtins
import math
import warnings
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._funnel import (
    _abs,
    _addcdiv_fn,
    _addcmul_fn,
    _binary_fn,
    _cast_fn,
    _clamp_fn,
    _default_float,
    _elementwise,
    _frac,
    _lerp_fn,
    _not_implemented,
    _promote,
    _relu,
    _require_tensors,
    _round_fn,
    _sign,
    _unary_fn,
    _value,
    _where_fn,
)
from jaxblitz.compat.ops._scalars import scalar_arg
from jaxblitz.compat.tensor import _dtype, _info
from jaxblitz.compat.tensor._dtype import _CPP
from jaxblitz.compat.tensor._fresh_layout import laid_out
from jaxblitz.compat.tensor._tensor_base import TensorBase

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

# ---------------------------------------------------------------------------
# Unary ops
# ---------------------------------------------------------------------------


def _floating_unary(name: str, op):
    """An op that gives floats: integer and bool inputs become the default dtype."""

    def fn(input: Tensor) -> Tensor:
        if _autocast.on:
            return _autocast.run(fn.__name__, fn, input)
        dt = _default_float(input.dtype)
        return apply(name, _unary_fn, input, op=op, dt=dt.np_name)

    fn.__name__ = name.removesuffix("Backward0").lower()  # ExpBackward0: exp
    return fn


exp = _floating_unary("ExpBackward0", jnp.exp)
declare.alias("exp", exp, method=True, inplace=True)
saves("ExpBackward0", ("result", None))
exp2 = _floating_unary("Exp2Backward0", jnp.exp2)
declare.alias("exp2", exp2, method=True, inplace=True)
saves("Exp2Backward0", ("result", None))
expm1 = _floating_unary("Expm1Backward0", jnp.expm1)
declare.alias("expm1", expm1, method=True, inplace=True)
saves("Expm1Backward0", ("result", None))
log = _floating_unary("LogBackward0", jnp.log)
declare.alias("log", log, method=True, inplace=True)
saves("LogBackward0", (0, None))
log2 = _floating_unary("Log2Backward0", jnp.log2)
declare.alias("log2", log2, method=True, inplace=True)
saves("Log2Backward0", (0, None))
log10 = _floating_unary("Log10Backward0", jnp.log10)
declare.alias("log10", log10, method=True, inplace=True)
saves("Log10Backward0", (0, None))
log1p = _floating_unary("Log1PBackward0", jnp.log1p)
declare.alias("log1p", log1p, method=True, inplace=True)
saves("Log1PBackward0", (0, None))
sqrt = _floating_unary("SqrtBackward0", jnp.sqrt)
declare.alias("sqrt", sqrt, method=True, inplace=True)
saves("SqrtBackward0", ("result", None))
rsqrt = _floating_unary("RsqrtBackward0", lax.rsqrt)
declare.alias("rsqrt", rsqrt, method=True, inplace=True)
saves("RsqrtBackward0", ("result", None))
sin = _floating_unary("SinBackward0", jnp.sin)
declare.alias("sin", sin, method=True, inplace=True)
saves("SinBackward0", (0, None))
cos = _floating_unary("CosBackward0", jnp.cos)
declare.alias("cos", cos, method=True, inplace=True)
saves("CosBackward0", (0, None))
tan = _floating_unary("TanBackward0", jnp.tan)
declare.alias("tan", tan, method=True, inplace=True)
saves("TanBackward0", ("result", None))
asin = _floating_unary("AsinBackward0", jnp.arcsin)
declare.alias("asin", asin, method=True, inplace=True)
saves("AsinBackward0", (0, None))
acos = _floating_unary("AcosBackward0", jnp.arccos)
declare.alias("acos", acos, method=True, inplace=True)
saves("AcosBackward0", (0, None))
atan = _floating_unary("AtanBackward0", jnp.arctan)
declare.alias("atan", atan, method=True, inplace=True)
saves("AtanBackward0", (0, None))
sinh = _floating_unary("SinhBackward0", jnp.sinh)
declare.alias("sinh", sinh, method=True, inplace=True)
saves("SinhBackward0", (0, None))
cosh = _floating_unary("CoshBackward0", jnp.cosh)
declare.alias("cosh", cosh, method=True, inplace=True)
saves("CoshBackward0", (0, None))
tanh = _floating_unary("TanhBackward0", jnp.tanh)
declare.alias("tanh", tanh, method=True, inplace=True)
saves("TanhBackward0", ("result", None))
sigmoid = _floating_unary("SigmoidBackward0", jax.nn.sigmoid)
declare.alias("sigmoid", sigmoid, method=True, inplace=True)
saves("SigmoidBackward0", ("result", None))
erf = _floating_unary("ErfBackward0", jax.scipy.special.erf)
declare.alias("erf", erf, method=True, inplace=True)
saves("ErfBackward0", (0, None))
reciprocal = _floating_unary("ReciprocalBackward0", jnp.reciprocal)
declare.alias("reciprocal", reciprocal, method=True, inplace=True)
saves("ReciprocalBackward0", ("result", None))
arcsin, arccos, arctan = asin, acos, atan
declare.alias("arctan", arctan, method=True, inplace=True)
declare.alias("arccos", arccos, method=True, inplace=True)
declare.alias("arcsin", arcsin, method=True, inplace=True)


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
            return apply(name, _cast_fn, input, dt=dt.np_name)
        return apply(name, _unary_fn, input, op=op, dt=dt.np_name)

    fn.__name__ = name.removesuffix("Backward0").lower()  # NegBackward0: neg
    return fn


_IDENTITY_ON_INTS = {jnp.floor, jnp.ceil, jnp.round, jnp.trunc}
_BOOL_NEG = (
    "Negation, the `-` operator, on a bool tensor is not supported. If you are "
    "trying to invert a mask, use the `~` or `logical_not()` operator instead.",
)
neg = _same_unary("NegBackward0", jnp.negative, bools=_BOOL_NEG)
declare.alias("neg", neg, method=True, inplace=True)
abs = _same_unary("AbsBackward0", _abs, bools="abs_cpu")  # noqa: A001
declare.alias("abs", abs, method=True, inplace=True)
saves("AbsBackward0", (0, None))
sign = _same_unary("SignBackward0", _sign)
declare.alias("sign", sign, method=True, inplace=True)
floor = _same_unary("FloorBackward0", jnp.floor, bools="floor_vml_cpu")
declare.alias("floor", floor, method=True, inplace=True)
ceil = _same_unary("CeilBackward0", jnp.ceil, bools="ceil_vml_cpu")
declare.alias("ceil", ceil, method=True, inplace=True)
trunc = _same_unary("TruncBackward0", jnp.trunc, bools="trunc_vml_cpu")
declare.alias("trunc", trunc, method=True, inplace=True)
frac = _same_unary("FracBackward0", _frac, ints=False, bools="frac_cpu")
declare.alias("frac", frac, method=True, inplace=True)
relu = _same_unary(
    "ReluBackward0",
    _relu,
    bools=("Boolean inputs not supported for relu",),
)
declare.alias("relu", relu, method=True, inplace=True)
saves("ReluBackward0", ("result", None))
negative, absolute, fix = neg, abs, trunc
declare.alias("fix", fix, method=True, inplace=True)
declare.alias("absolute", absolute, method=True, inplace=True)
declare.alias("negative", negative, method=True, inplace=True)
_round0 = _same_unary("RoundBackward0", jnp.round, bools="round_cpu")


@declare(method=True, inplace=True)
def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001
    """``torch.round``: half to even; ``decimals`` scales by 10**decimals first."""
    if decimals == 0:
        return _round0(input)
    if not input.dtype.is_floating_point:
        raise _not_implemented("round_cpu", input.dtype)
    return apply("RoundBackward1", _round_fn, input, decimals=decimals)


@declare(method=True)
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


saves("ClampBackward1", (0, None))
saves("ClampBackward0", (0, None), (1, None), (2, None))
saves("ClampMinBackward1", (0, None), (1, None))
saves("ClampMaxBackward1", (0, None), (2, None))


@declare(method=True, inplace=True)
def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """``torch.clamp``: bounds are numbers or Tensors; the dtype is promoted."""
    return _clamp("clamp", input, min, max)


@declare(method=True, inplace=True)
def clamp_min(input: Tensor, min: Any) -> Tensor:  # noqa: A002
    return _clamp("clamp_min", input, min, None)


@declare(method=True, inplace=True)
def clamp_max(input: Tensor, max: Any) -> Tensor:  # noqa: A002
    return _clamp("clamp_max", input, None, max)


clip = clamp
declare.alias("clip", clip, method=True, inplace=True)


def _binary_tensors(name: str, op, what: str):
    def fn(input: Tensor, other: Tensor) -> Tensor:
        _require_tensors(what, input, other)
        dt = _promote(input, other)
        return _elementwise(name, _binary_fn, input, other, op=op, dt=dt)

    fn.__name__ = what
    return fn


maximum = _binary_tensors("MaximumBackward0", jnp.maximum, "maximum")
declare.alias("maximum", maximum, method=True)
saves("MaximumBackward0", (0, None), (1, None))
minimum = _binary_tensors("MinimumBackward0", jnp.minimum, "minimum")
declare.alias("minimum", minimum, method=True)
saves("MinimumBackward0", (0, None), (1, None))


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


# torch's where saves its condition (logdet's node, named as torch's, saves the
# matrix: its argument 0 too)
saves("WhereBackward0", (0, None))


def _same_dtype(input: Tensor, other: Any, what: str) -> None:
    if isinstance(other, TensorBase) and other.dtype is not input.dtype:
        raise RuntimeError(
            f"expected dtype {_CPP[input.dtype.name]} for `{what}` but got dtype "
            f"{_CPP[other.dtype.name]}"
        )


@declare(method=True, inplace=True)
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


@declare(method=True, inplace=True)
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1):
    """``input + value * tensor1 * tensor2``, all three promoted together."""
    if _autocast.on:
        return _autocast.run("addcmul", addcmul, input, tensor1, tensor2, value=value)
    dt = _promote(input, tensor1, tensor2)
    if dt is _dtype.bool:
        raise _not_implemented("addcmul_cpu_out", dt)
    value = scalar_arg(value, "addcmul", "value")
    scale, value = ((value,), None) if isinstance(value, TensorBase) else ((), value)
    return _elementwise(
        "AddcmulBackward0",
        _addcmul_fn,
        *(input, tensor1, tensor2, *scale),
        dt=dt,
        value=value,
    )


saves("AddcmulBackward0", (2, 1), (1, 2))


@declare(method=True, inplace=True)
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1):
    """``input + value * tensor1 / tensor2``; integer tensor1/tensor2 are refused."""
    if _autocast.on:
        return _autocast.run("addcdiv", addcdiv, input, tensor1, tensor2, value=value)
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
    value = scalar_arg(value, "addcdiv", "value")
    scale, value = ((value,), None) if isinstance(value, TensorBase) else ((), value)
    return _elementwise(
        "AddcdivBackward0",
        _addcdiv_fn,
        *(input, tensor1, tensor2, *scale),
        dt=dt,
        value=value,
    )


saves("AddcdivBackward0", (2, None), (1, 2))


def _to_copy_fn(x, *, dt):
    # not elementwise's layout: torch's _to_copy preserves its input's (laid_out)
    return _cast_fn(x, dt=dt)


def to_dtype(input: Tensor, dt: _dtype.dtype, *, memory_format: Any = None) -> Tensor:
    """``x.float()``, ``x.double()``, ...; ``memory_format`` lays the result out
    as ``x.to(dtype, memory_format=...)`` does (the default preserves)."""
    out = input
    if input.dtype is not dt:
        if not dt.is_floating_point:  # torch: an integer or bool result has no grad
            input = input.detach()
        out = apply("ToCopyBackward0", _to_copy_fn, input, dt=dt.np_name)
        if memory_format is None or memory_format is _info.preserve_format:
            return laid_out(out, _info.preserve_format, input)  # torch keeps strides
    return _formatted(out, memory_format)


def _formatted(t: Tensor, memory_format: Any) -> Tensor:
    """``t``, or a copy laid out in ``memory_format`` where it is not already."""
    if memory_format is None or memory_format is _info.preserve_format:
        return t
    if not isinstance(memory_format, _info.memory_format):
        raise TypeError(
            "to(): argument 'memory_format' must be torch.memory_format, not "
            f"{type(memory_format).__name__}"
        )
    return t if t.is_contiguous(memory_format) else t.clone(memory_format=memory_format)
