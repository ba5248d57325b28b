"""Blitz 3, "Neural Networks": normalisation layers (``torch.nn.BatchNorm1d``,
``BatchNorm2d``, ``LayerNorm``) and their ``nn.functional`` twins.

The normalised output is one recorded op (``NativeBatchNormBackward0``,
``NativeLayerNormBackward0``): its JAX function computes the batch statistics
itself, so the gradient flows through them exactly as in torch. The running
statistics are updated in place, outside autograd, as torch's kernel does: the
biased variance normalises, the unbiased one (n / (n - 1)) updates
``running_var``.
"""

from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp
from jax import lax

from jaxblitz.compat import _dtype, creation
from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.autograd.graph import apply, run
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.tensor import Tensor

# -- pure JAX functions --------------------------------------------------------------


def _opmath(x):
    """torch computes half and bfloat16 normalisation in float32."""
    return x.astype(jnp.float32) if x.dtype in (jnp.float16, jnp.bfloat16) else x


def _channel_stats(x):  # mean and biased variance per channel (dim 1)
    x = _opmath(x)
    axes = (0, *range(2, x.ndim))
    mean = x.mean(axes)
    centred = x - mean.reshape(1, -1, *(1,) * (x.ndim - 2))
    return mean, (centred * centred).mean(axes)


def _batch_norm_fn(x, weight, bias, mean, var, *, training, eps):
    shape = (1, -1, *(1,) * (x.ndim - 2))
    dtype, x = x.dtype, _opmath(x)
    if training:
        mean, var = _channel_stats(x)
    y = (x - mean.reshape(shape)) * lax.rsqrt(var.reshape(shape) + eps)
    if weight is not None:
        y = y * weight.reshape(shape)
    y = y if bias is None else y + bias.reshape(shape)
    return y.astype(dtype)  # torch: a half input's float32 params keep it half


def _running_stats_fn(x, running_mean, running_var, *, momentum):
    mean, var = _channel_stats(x)
    n = x.size // x.shape[1]
    unbiased = var * (n / (n - 1))
    return (
        (momentum * mean + (1 - momentum) * running_mean).astype(running_mean.dtype),
        (momentum * unbiased + (1 - momentum) * running_var).astype(running_var.dtype),
    )


def _layer_norm_fn(x, weight, bias, *, n, eps):
    axes = tuple(range(x.ndim - n, x.ndim))
    mean = x.mean(axes, keepdims=True)
    centred = x - mean
    y = centred * lax.rsqrt((centred * centred).mean(axes, keepdims=True) + eps)
    if weight is not None:
        y = y * weight
    return y if bias is None else y + bias


# -- torch.nn.functional -------------------------------------------------------------


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    if training:  # torch's _verify_batch_size
        size = input.shape
        if size[0] * math.prod(size[2:]) == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input "
                f"size {size}"
            )
    if training and eps <= 0.0:
        raise ValueError(
            f"batch_norm eps must be positive during training, but got {eps}"
        )
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if not input.numel():  # torch: a clone, so that the gradient chain holds
        out = input.clone()
        out = out if weight is None else out * weight[0]
        return out if bias is None else out + bias[0]
    if input.dim() < 2:
        raise IndexError(
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
        )
    if not training and (running_mean is None or running_var is None):
        name = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(f"{name} must be defined in evaluation mode")
    channels = input.shape[1]
    for name, t in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        if t is not None and t.numel() != channels:
            raise RuntimeError(
                f"{name} should contain {channels} elements not {t.numel()}"
            )
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"batch_norm\" not implemented for '{input.dtype.scalar_type}'"
        )
    given = [t for t in (weight, bias, running_mean, running_var) if t is not None]
    low = input.dtype in (_dtype.float16, _dtype.bfloat16)  # torch: float32 params ok
    if any(t.dtype != input.dtype for t in given) and not (
        low and all(t.dtype == _dtype.float32 for t in given)
    ):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    if training and running_mean is not None and running_var is not None:
        mean, var = run(
            _running_stats_fn,
            input._value(),
            running_mean._value(),
            running_var._value(),
            momentum=momentum,
        )
        with no_grad():
            running_mean.copy_(Tensor._wrap(mean))
            running_var.copy_(Tensor._wrap(var))
    stats = (None, None) if training else (running_mean, running_var)
    return apply(
        "NativeBatchNormBackward0",
        _batch_norm_fn,
        input,
        weight,
        bias,
        *[None if s is None else s.detach() for s in stats],
        training=bool(training),
        eps=eps,
    )


def _shape(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(n) for n in normalized_shape)


def layer_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    shape = _shape(normalized_shape)
    dims = ", ".join(str(n) for n in shape)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got "
                f"{name} of shape {list(t.shape)} and normalized_shape = {list(shape)}"
            )
    n = len(shape)
    if input.dim() < n or tuple(input.shape[input.dim() - n :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {dims}], but got input of size{list(input.shape)}"
        )
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"LayerNormKernelImpl\" not implemented for '{input.dtype.scalar_type}'"
        )
    return apply(
        "NativeLayerNormBackward0", _layer_norm_fn, input, weight, bias, n=n, eps=eps
    )


# -- modules -------------------------------------------------------------------------


def _filled(value: float, shape: tuple, device: Any, dtype: Any) -> Tensor:
    dt = _dtype.to_dtype(dtype or _dtype.get_default_dtype())
    return creation.full(shape, value, dtype=dt, device=device)


class _BatchNorm(Module):
    """torch's ``_BatchNorm``: the 1d and 2d layers differ in the input's rank."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        shape = (num_features,)
        weight = Parameter(_filled(1.0, shape, device, dtype)) if affine else None
        self.register_parameter("weight", weight)
        with_bias = affine and bias
        bias_p = Parameter(_filled(0.0, shape, device, dtype)) if with_bias else None
        self.register_parameter("bias", bias_p)
        if track_running_stats:
            self.register_buffer("running_mean", _filled(0.0, shape, device, dtype))
            self.register_buffer("running_var", _filled(1.0, shape, device, dtype))
            tracked = creation.tensor(0, dtype=_dtype.int64, device=device)
            self.register_buffer("num_batches_tracked", tracked)
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        with no_grad():
            if self.weight is not None:
                self.weight.fill_(1)
            if self.bias is not None:
                self.bias.zero_()

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        tracked = self.num_batches_tracked
        if self.training and self.track_running_stats and tracked is not None:
            with no_grad():
                tracked.add_(1)
            if self.momentum is None:  # torch: the cumulative moving average
                factor = 1.0 / float(tracked)
        if self.training:
            use_batch = True
        else:
            use_batch = self.running_mean is None and self.running_var is None
        keep = not self.training or self.track_running_stats
        return batch_norm(
            input,
            self.running_mean if keep else None,
            self.running_var if keep else None,
            self.weight,
            self.bias,
            use_batch,
            factor,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class LayerNorm(Module):
    def __init__(
        self,
        normalized_shape: Any,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        shape = self.normalized_shape
        weight = bias_p = None
        if elementwise_affine:
            weight = Parameter(_filled(1.0, shape, device, dtype))
            if bias:
                bias_p = Parameter(_filled(0.0, shape, device, dtype))
        self.register_parameter("weight", weight)
        self.register_parameter("bias", bias_p)

    def reset_parameters(self) -> None:
        with no_grad():
            if self.weight is not None:
                self.weight.fill_(1)
            if self.bias is not None:
                self.bias.zero_()

    def forward(self, input: Tensor) -> Tensor:
        return layer_norm(
            input, self.normalized_shape, self.weight, self.bias, self.eps
        )

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, "
            f"bias={self.bias is not None}"
        )
