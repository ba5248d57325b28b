"""Blitz 3, "Neural Networks": ``torch.nn.functional``'s activations beyond the
Blitz's ReLU (``leaky_relu``, ``gelu``, ``elu``, ``softplus``, ``silu``,
``relu6``, ``hardtanh``, ``logsigmoid``).

Each is one recorded op through compat's funnel (:func:`apply`) whose JAX
function gives torch's value and torch's gradient, kinks included.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.tensor import Tensor

# -- pure JAX functions --------------------------------------------------------------


def _leaky_relu_fn(x, *, slope):
    # torch: the gradient at 0 is the slope (leaky_relu_backward: x > 0 ? 1 : slope)
    return jnp.where(x > 0, x, x * slope)


def _gelu_fn(x, *, approximate):
    return jax.nn.gelu(x, approximate=approximate == "tanh")


def _elu_fn(x, *, alpha):
    # torch: alpha * (exp(x) - 1) for x <= 0, so the gradient at 0 is alpha
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0, x)))


def _softplus_fn(x, *, beta, threshold):
    # torch: linear where beta * x > threshold, log1p(exp(beta * x)) / beta else
    bx = x * beta
    soft = jnp.log1p(jnp.exp(jnp.where(bx > threshold, 0, bx))) / beta
    return jnp.where(bx > threshold, x, soft)


def _silu_fn(x):
    return x * jax.nn.sigmoid(x)


def _hardtanh_fn(x, *, lo, hi):
    # torch's hardtanh_backward: the gradient passes strictly inside (lo, hi) only
    clipped = lax.stop_gradient(jnp.clip(x, lo, hi))
    return jnp.where((x > lo) & (x < hi), x, clipped)


def _logsigmoid_fn(x):
    return jax.nn.log_sigmoid(x)


# -- torch.nn.functional -------------------------------------------------------------


def _floating(name: str, kernel: str, input: Any) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{input.dtype.scalar_type}'"
        )


def _run(name: str, fn, input: Tensor, inplace: bool, **static: Any) -> Tensor:
    if inplace:
        input._check_inplace()
    out = apply(name, fn, input, **static)
    return input._inplace(out) if inplace else out


def leaky_relu(
    input: Tensor, negative_slope: float = 0.01, inplace: bool = False
) -> Tensor:
    _floating("leaky_relu", "leaky_relu_cpu", input)
    return _run(
        "LeakyReluBackward0", _leaky_relu_fn, input, inplace, slope=negative_slope
    )


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _floating("gelu", "GeluKernelImpl", input)
    return apply("GeluBackward0", _gelu_fn, input, approximate=approximate)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    _floating("elu", "elu_cpu", input)
    return _run("EluBackward0", _elu_fn, input, inplace, alpha=alpha)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    _floating("softplus", "softplus_cpu", input)
    return apply(
        "SoftplusBackward0", _softplus_fn, input, beta=beta, threshold=threshold
    )


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    _floating("silu", "silu_cpu", input)
    return _run("SiluBackward0", _silu_fn, input, inplace)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    if not isinstance(input, Tensor):
        _floating("hardtanh", "", input)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype.is_floating_point:
        return _run(
            "HardtanhBackward0", _hardtanh_fn, input, inplace, lo=min_val, hi=max_val
        )
    if input.dtype.scalar_type == "Bool":
        raise NotImplementedError("\"clamp_scalar_cpu\" not implemented for 'Bool'")
    # torch: an integer input is clamped to the bounds cast to its dtype
    out = input.clamp(int(min_val), int(max_val))
    return input.copy_(out) if inplace else out


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


def logsigmoid(input: Tensor) -> Tensor:
    _floating("logsigmoid", "log_sigmoid_cpu", input)
    return apply("LogSigmoidBackward0", _logsigmoid_fn, input)
