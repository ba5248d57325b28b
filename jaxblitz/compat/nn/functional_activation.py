"""Blitz 3, "Neural Networks": ``torch.nn.functional``'s activations beyond the
Blitz's ReLU (``leaky_relu``, ``gelu``, ``elu``, ``celu``, ``selu``, ``softplus``,
``silu``, ``mish``, ``relu6``, ``hardtanh``, ``hardsigmoid``, ``hardswish``,
``hardshrink``, ``softshrink``, ``threshold``, ``glu``, ``prelu``, ``rrelu``,
``logsigmoid``), their in-place ``_`` twins, and those torch writes in Python
over other ops (``softsign``, ``tanhshrink``, ``softmin``, ``gumbel_softmax``).

Each of the former is one recorded op through compat's funnel (:func:`apply`)
whose JAX function gives torch's value and torch's gradient, kinks included.
"""

from __future__ import annotations

import warnings
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops import _funnel
from jaxblitz.compat.ops._arrange import _implicit_dim, _softmax
from jaxblitz.compat.ops._funnel import _tensor
from jaxblitz.compat.ops._scalars import number
from jaxblitz.compat.ops._unary import _check_fits
from jaxblitz.compat.tensor import Tensor, _dtype, _info
from jaxblitz.compat.tensor._fresh_layout import elementwise, laid_out
from jaxblitz.compat.tensor._tensor_base import wrap_dim
from jaxblitz.compat.tensor.creation import rand, zeros_like

# -- pure JAX functions --------------------------------------------------------------


@elementwise
def _leaky_relu_fn(x, *, slope):
    # torch: the gradient at 0 is the slope (leaky_relu_backward: x > 0 ? 1 : slope)
    return jnp.where(x > 0, x, x * slope)


@elementwise
def _gelu_fn(x, *, approximate):
    return jax.nn.gelu(x, approximate=approximate == "tanh")


@elementwise
def _elu_fn(x, *, alpha, scale=1.0, input_scale=1.0):
    # torch's elu kernel (celu and selu too): scale * alpha * (exp(x * input_scale)
    # - 1) for x <= 0, so the gradient at 0 is that branch's
    neg = jnp.expm1(jnp.where(x > 0, 0, x) * input_scale)
    return jnp.where(x > 0, x * scale, neg * (alpha * scale))


@elementwise
def _softplus_fn(x, *, beta, threshold):
    # torch: linear where beta * x > threshold, log1p(exp(beta * x)) / beta else
    bx = x * beta
    soft = jnp.log1p(jnp.exp(jnp.where(bx > threshold, 0, bx))) / beta
    return jnp.where(bx > threshold, x, soft)


@elementwise
def _silu_fn(x):
    return x * jax.nn.sigmoid(x)


def _hardtanh_fn(x, *, lo, hi):
    # torch's hardtanh_backward: the gradient passes strictly inside (lo, hi) only
    clipped = lax.stop_gradient(jnp.clip(x, lo, hi))
    return jnp.where((x > lo) & (x < hi), x, clipped)


def _logsigmoid_fn(x):
    return jax.nn.log_sigmoid(x)


@elementwise
def _mish_fn(x):
    return x * jnp.tanh(jax.nn.softplus(x))


@elementwise
def _hardsigmoid_fn(x):
    # torch's hardsigmoid_backward: 1/6 strictly inside (-3, 3), 0 elsewhere
    return jnp.where(x <= -3, 0, jnp.where(x >= 3, 1, (x + 3) / 6)).astype(x.dtype)


@elementwise
def _hardswish_fn(x):
    # torch's hardswish_backward: 0 below -3, x / 3 + 0.5 up to 3 included, 1 above
    inner = x * (x + 3) / 6
    return jnp.where(x < -3, 0, jnp.where(x <= 3, inner, x)).astype(x.dtype)


@elementwise
def _hardshrink_fn(x, *, lambd):
    return jnp.where((x >= -lambd) & (x <= lambd), 0, x).astype(x.dtype)


@elementwise
def _softshrink_fn(x, *, lambd):
    shrunk = jnp.where(x > lambd, x - lambd, x + lambd)
    return jnp.where((x >= -lambd) & (x <= lambd), 0, shrunk).astype(x.dtype)


@elementwise
def _threshold_fn(x, *, threshold, value):
    return jnp.where(x > threshold, x, jnp.asarray(value, x.dtype))


def _glu_fn(x, *, axis):
    a, b = jnp.split(x, 2, axis)
    return a * jax.nn.sigmoid(b)


def _prelu_fn(x, weight):
    # torch: the slope applies where x <= 0 (the gradient at 0 is the slope's)
    # one slope, or one per channel (dim 1)
    shape = () if weight.size == 1 else (-1, *(1,) * (x.ndim - 2))
    weight = weight.reshape(shape)
    return jnp.where(x > 0, x, weight * x)


def _rrelu_fn(x, noise):
    # torch's rrelu_with_noise: x * noise where x <= 0 (noise is 1 above)
    return jnp.where(x > 0, x, x * noise)


# -- torch.nn.functional -------------------------------------------------------------


def _floating(name: str, kernel: str, input: Any) -> None:
    _tensor(name, input)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{input.dtype.scalar_type}'"
        )


def _like_input(out: Tensor, input: Tensor) -> Tensor:
    """``out`` laid out as torch's kernels that write into ``empty_like(input)``
    lay theirs (hardtanh, prelu), not as an elementwise op's."""
    if input._view is None:
        return out
    return laid_out(out, _info.preserve_format, input)


def _run(name: str, fn, input: Tensor, inplace: bool, *args, **static: Any) -> Tensor:
    if inplace:
        input._check_inplace()
    out = apply(name, fn, input, *args, **static)
    return input._inplace(out) if inplace else out


def leaky_relu(
    input: Tensor, negative_slope: float = 0.01, inplace: bool = False
) -> Tensor:
    _floating("leaky_relu_" if inplace else "leaky_relu", "leaky_relu_cpu", input)
    return _run(
        "LeakyReluBackward0", _leaky_relu_fn, input, inplace, slope=negative_slope
    )


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _floating("gelu", "GeluKernelImpl", input)
    return apply("GeluBackward0", _gelu_fn, input, approximate=approximate)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    _floating("elu_" if inplace else "elu", "elu_cpu", input)
    return _run("EluBackward0", _elu_fn, input, inplace, alpha=alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    _floating("celu_" if inplace else "celu", "elu_cpu", input)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _run(
        "CeluBackward0", _elu_fn, input, inplace, alpha=alpha, input_scale=1 / alpha
    )


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    _floating("selu_" if inplace else "selu", "elu_cpu", input)
    return _run(
        "EluBackward0", _elu_fn, input, inplace, alpha=_SELU_ALPHA, scale=_SELU_SCALE
    )


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    if _autocast.on:
        return _autocast.run("softplus", softplus, input, beta, threshold)
    _floating("softplus", "softplus_cpu", input)
    return apply(
        "SoftplusBackward0", _softplus_fn, input, beta=beta, threshold=threshold
    )


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    _floating("silu_" if inplace else "silu", "silu_cpu", input)
    return _run("SiluBackward0", _silu_fn, input, inplace)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    _tensor("hardtanh_" if inplace else "hardtanh", input)
    min_val = number(min_val, "hardtanh", "min_val", 2)
    max_val = number(max_val, "hardtanh", "max_val", 3)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype.is_floating_point:
        out = _run(
            "HardtanhBackward0", _hardtanh_fn, input, inplace, lo=min_val, hi=max_val
        )
        return out if inplace else _like_input(out, input)
    if input.dtype.scalar_type == "Bool":
        raise NotImplementedError("\"clamp_scalar_cpu\" not implemented for 'Bool'")
    # torch: an integer input is clamped to the bounds cast to its dtype
    out = input.clamp(int(min_val), int(max_val))
    return input.copy_(out) if inplace else out


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def relu_(input: Tensor) -> Tensor:
    return relu(input, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


def logsigmoid(input: Tensor) -> Tensor:
    _floating("logsigmoid", "log_sigmoid_cpu", input)
    return apply("LogSigmoidBackward0", _logsigmoid_fn, input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    _floating("mish_" if inplace else "mish", "mish_cpu", input)
    return _run("MishBackward0", _mish_fn, input, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    _floating("hardsigmoid_" if inplace else "hardsigmoid", "hardsigmoid_cpu", input)
    return _run("HardsigmoidBackward0", _hardsigmoid_fn, input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    _floating("hardswish_" if inplace else "hardswish", "hardswish_cpu", input)
    return _run("HardswishBackward0", _hardswish_fn, input, inplace)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    _floating("hardshrink", "hardshrink_cpu", input)
    return apply("HardshrinkBackward0", _hardshrink_fn, input, lambd=lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    _floating("softshrink", "softshrink_check", input)
    top = float(jnp.finfo(input.dtype.np).max)
    if not 0 <= lambd <= top:  # NaN included
        raise RuntimeError(
            f"lambda must be in range [0, {top:g}] for input dtype "
            f"{input.dtype.scalar_type}, but found {lambd:g}"
        )
    return apply("SoftshrinkBackward0", _softshrink_fn, input, lambd=lambd)


def _threshold(
    input: Tensor, threshold: float, value: float, inplace: bool = False
) -> Tensor:
    _tensor("threshold_" if inplace else "threshold", input)
    threshold = number(threshold, "threshold", "threshold", 2)
    value = number(value, "threshold", "value", 3)
    dt = input.dtype
    if dt.scalar_type == "Bool":
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    if not dt.is_floating_point:  # torch: both converted to the integer dtype
        for v in (threshold, value):
            _check_fits(v, dt)
        threshold, value = int(threshold), int(value)
    return _run(
        "ThresholdBackward0",
        _threshold_fn,
        input,
        inplace,
        threshold=threshold,
        value=value,
    )


threshold = _threshold  # torch's name (its argument shadows it inside)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _threshold(input, threshold, value, inplace=True)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    _floating("glu", "glu_cpu", input)
    if input.dim() == 0:
        raise RuntimeError(
            "glu does not support scalars because halving size must be even"
        )
    axis = wrap_dim(dim, input.dim())
    if input.shape[axis] % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {axis} is size "
            f"{input.shape[axis]}"
        )
    return apply("GluBackward0", _glu_fn, input, axis=axis)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    if _autocast.on:
        return _autocast.run("prelu", prelu, input, weight)
    _tensor("prelu", input)
    if input.dtype != weight.dtype:
        raise RuntimeError(
            "prelu: Type promoting not supported. Got "
            f"{input.dtype.scalar_type} and {weight.dtype.scalar_type}"
        )
    if weight.dim() > 1:
        raise RuntimeError(
            "prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
            f"ndim = {weight.dim()}"
        )
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"prelu_cpu\" not implemented for '{input.dtype.scalar_type}'"
        )
    n = weight.numel()
    if n != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() >= 2 else 1
        if n != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found "
                f"parameter numbers = {n} and channel size = {channels}."
            )
    return _like_input(apply("PreluKernelBackward0", _prelu_fn, input, weight), input)


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Training: a slope drawn from U(lower, upper) per element where the input is
    at most 0; evaluation: leaky_relu with the mean slope, as torch."""
    kernel = "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu"
    _floating("rrelu_" if inplace else "rrelu", kernel, input)
    if lower > upper:
        raise RuntimeError(
            "Lower bound should be less than or equal to the upper bound"
        )
    name = "RreluWithNoiseBackward0"
    if not training:
        slope = (lower + upper) / 2
        return _run(name, _leaky_relu_fn, input, inplace, slope=slope)
    noise = rand(*input.shape, dtype=input.dtype, device=_dtype.tensor_device(input))
    noise = noise * (upper - lower) + lower
    return _run(name, _rrelu_fn, input, inplace, noise)


def rrelu_(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
) -> Tensor:
    return rrelu(input, lower, upper, training, inplace=True)


# -- written over other ops, as torch writes them ------------------------------------


def softsign(input: Tensor) -> Tensor:
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    return input - input.tanh()


def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    _tensor("softmin", input)
    if dim is None:
        dim = _implicit_dim("softmin", input.dim())
    return _softmax("softmax", -input, dim, dtype, log=False)


def gumbel_softmax(
    logits: Tensor,
    tau: float = 1,
    hard: bool = False,
    eps: float = 1e-10,
    dim: int = -1,
) -> Tensor:
    """Softmax of ``(logits + g) / tau`` with Gumbel(0, 1) noise ``g``; ``hard``:
    the one-hot of its argmax, with the soft sample's gradient (straight through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    # torch: -log(Exp(1)); an Exp(1) draw is -log(U), U ~ U(0, 1]
    uniform = 1 - rand(
        *logits.shape, dtype=logits.dtype, device=_dtype.tensor_device(logits)
    )
    gumbels = -(-uniform.log()).log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


@elementwise
def _relu_fn(x):
    return _funnel._relu(x)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    _tensor("relu", input)
    if inplace:
        input._check_inplace()
    out = apply("ReluBackward0", _relu_fn, input)
    return input._inplace(out) if inplace else out
