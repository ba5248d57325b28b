"""Blitz 3, "Neural Networks": normalisation layers (``torch.nn.BatchNorm1d``,
``BatchNorm2d``, ``BatchNorm3d``, ``LayerNorm``, ``GroupNorm``, ``RMSNorm``) and
their ``nn.functional`` twins.

The normalised output is one recorded op (``NativeBatchNormBackward0``,
``NativeLayerNormBackward0``, ``NativeGroupNormBackward0`` ...): its JAX function
computes the statistics itself, so the gradient flows through them exactly as in
torch. The running
statistics are updated in place, outside autograd, as torch's kernel does: the
biased variance normalises, the unbiased one (n / (n - 1)) updates
``running_var``.
"""

from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp
from jax import lax

from jaxblitz.compat import _autocast, ops
from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.autograd.graph import apply, run
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.tensor import Tensor, _dtype, creation
from jaxblitz.compat.tensor._fresh_layout import keeps_channels_last

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
    dtype, x = x.dtype, _opmath(x)
    axes = tuple(range(x.ndim - n, x.ndim))
    mean = x.mean(axes, keepdims=True)
    centred = x - mean
    y = centred * lax.rsqrt((centred * centred).mean(axes, keepdims=True) + eps)
    if weight is not None:
        y = y * weight
    y = y if bias is None else y + bias
    return y.astype(dtype)  # torch: a half input's float32 params keep it half


def _group_norm_fn(x, weight, bias, *, groups, eps):
    dtype, x = x.dtype, _opmath(x)
    per_group = math.prod(x.shape[1:]) // groups  # (-1 fails for an empty batch)
    grouped = x.reshape(x.shape[0], groups, per_group)
    mean = grouped.mean(-1, keepdims=True)
    centred = grouped - mean
    var = (centred * centred).mean(-1, keepdims=True)
    y = (centred * lax.rsqrt(var + eps)).reshape(x.shape)
    shape = (1, -1, *(1,) * (x.ndim - 2))
    if weight is not None:
        y = y * weight.reshape(shape)
    y = y if bias is None else y + bias.reshape(shape)
    return y.astype(dtype)


def _rms_norm_fn(x, weight, *, n, eps):
    dtype, x = x.dtype, _opmath(x)
    axes = tuple(range(x.ndim - n, x.ndim))
    y = x * lax.rsqrt((x * x).mean(axes, keepdims=True) + eps)
    return (y if weight is None else y * weight).astype(dtype)


# -- torch.nn.functional -------------------------------------------------------------


def _verify_batch_size(size: Any) -> None:
    if size[0] * math.prod(size[2:]) == 1:
        raise ValueError(
            "Expected more than 1 value per channel when training, got input "
            f"size {size}"
        )


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
    if training:
        _verify_batch_size(input.shape)
    if training and eps <= 0.0:
        raise ValueError(
            f"batch_norm eps must be positive during training, but got {eps}"
        )
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return aten_batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps
    )


@keeps_channels_last(1)
def aten_batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
) -> Tensor:
    """ATen's ``batch_norm`` (``torch.batch_norm``): ``F.batch_norm`` without
    its Python checks of the batch size and ``eps``."""
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
    _check_param_dtypes(input, weight, bias, running_mean, running_var)
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


def _check_normalized(
    input: Tensor, shape: tuple[int, ...], weight: Any, bias: Any, sep: str = ", "
) -> None:
    """layer_norm's and rms_norm's checks of the parameters and the input's shape."""
    if not shape:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing "
            "at least one element, but got normalized_shape = []"
        )
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
            f"[*{sep}{dims}], but got input of size{list(input.shape)}"
        )


def layer_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    if _autocast.on:
        return _autocast.run(
            "layer_norm", layer_norm, input, normalized_shape, weight, bias, eps
        )
    shape = _shape(normalized_shape)
    _check_normalized(input, shape, weight, bias)
    n = len(shape)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"LayerNormKernelImpl\" not implemented for '{input.dtype.scalar_type}'"
        )
    _check_param_dtypes(input, weight, bias)
    return apply(
        "NativeLayerNormBackward0", _layer_norm_fn, input, weight, bias, n=n, eps=eps
    )


def rms_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """``x / sqrt(mean(x ** 2) + eps)`` over the last ``len(normalized_shape)``
    dims, times ``weight``; ``eps`` None: the machine epsilon of the dtype torch
    computes in (float32 for half and bfloat16)."""
    shape = _shape(normalized_shape)
    _check_normalized(input, shape, weight, None, sep="")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"rms_norm\" not implemented for '{input.dtype.scalar_type}'"
        )
    if eps is None:
        eps = float(jnp.finfo(_opmath(jnp.zeros((), input.dtype.np)).dtype).eps)
    name = "MulBackward0"  # torch's composite: its last op
    return apply(name, _rms_norm_fn, input, weight, n=len(shape), eps=eps)


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    if _autocast.on:
        return _autocast.run(
            "group_norm", group_norm, input, num_groups, weight, bias, eps
        )
    if input.dim() < 2:
        raise RuntimeError(
            "Expected at least 2 dimensions for input tensor but received "
            f"{input.dim()}"
        )
    size = list(input.shape)
    _verify_batch_size([size[0] * size[1] // num_groups, num_groups, *size[2:]])
    if size[1] % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, "
            f"but got input of shape {size} and num_groups={num_groups}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != size[1]):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of "
                f"channels in input, but got {name} of shape {list(t.shape)} and "
                f"input of shape {size}"
            )
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"GroupNormKernelImpl\" not implemented for '{input.dtype.scalar_type}'"
        )
    _check_param_dtypes(input, weight, bias)
    return apply(
        "NativeGroupNormBackward0",
        _group_norm_fn,
        input,
        weight,
        bias,
        groups=num_groups,
        eps=eps,
    )


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Any = None
) -> Tensor:
    """``input`` over its ``p``-norm along ``dim``, the norm at least ``eps``."""
    denom = input.norm(p, dim, keepdim=True)
    if out is None:
        return input / denom.clamp_min(eps).expand_as(input)
    return ops.div(input, denom.clamp_min_(eps).expand_as(input), out=out)


def _check_param_dtypes(input: Tensor, *params: Tensor | None) -> None:
    """torch's CPU check of a norm's parameters (ATen's ``mixed_data_type.h``):
    the first given parameter decides; if its dtype is not the input's, every
    parameter must be float32 and the input half or bfloat16; else each must be
    of the input's dtype (the kernel reads them as such)."""
    given = [t for t in params if t is not None]
    if not given:
        return
    if given[0].dtype != input.dtype:
        if any(t.dtype != _dtype.float32 for t in given):
            raise RuntimeError(
                "mixed dtype (CPU): expect parameter to have scalar type of Float"
            )
        if input.dtype not in (_dtype.float16, _dtype.bfloat16):
            raise RuntimeError(
                "mixed dtype (CPU): all inputs must share same datatype."
            )
        return
    for t in given[1:]:
        if t.dtype != input.dtype:
            raise RuntimeError(
                f"expected scalar type {input.dtype.scalar_type} "
                f"but found {t.dtype.scalar_type}"
            )


# -- modules -------------------------------------------------------------------------


def _filled(value: float, shape: tuple, device: Any, dtype: Any) -> Tensor:
    dt = _dtype.to_dtype(dtype or _dtype.get_default_dtype())
    return creation.full(shape, value, dtype=dt, device=device)


def _register_affine(
    module: Module, shape: tuple, weight: bool, bias: bool, device: Any, dtype: Any
) -> None:
    """``weight`` (ones) and ``bias`` (zeros) of ``shape``, or None where off."""
    w = Parameter(_filled(1.0, shape, device, dtype)) if weight else None
    b = Parameter(_filled(0.0, shape, device, dtype)) if weight and bias else None
    module.register_parameter("weight", w)
    module.register_parameter("bias", b)


def _reset_affine(module: Module) -> None:
    with no_grad():
        if module.weight is not None:
            module.weight.fill_(1)
        if getattr(module, "bias", None) is not None:
            module.bias.zero_()


class _NormBase(Module):
    """torch's ``_NormBase``: the parameters and running statistics of the batch
    and instance norms."""

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
        _register_affine(self, shape, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _filled(0.0, shape, device, dtype))
            self.register_buffer("running_var", _filled(1.0, shape, device, dtype))
            tracked = creation.tensor(0, dtype=_dtype.int64, device=device)
            self.register_buffer("num_batches_tracked", tracked)
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    _version = 2  # torch's: version 2 added num_batches_tracked

    def _load_upgrade(
        self, state_dict: dict, prefix: str, version: int | None, errors: list[str]
    ) -> None:
        key = prefix + "num_batches_tracked"
        old = version is None or version < 2
        if old and self.track_running_stats and key not in state_dict:
            tracked = self.num_batches_tracked
            if tracked is None or tracked.is_meta:
                tracked = creation.tensor(0, dtype=_dtype.int64)
            state_dict[key] = tracked

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class _BatchNorm(_NormBase):
    """torch's ``_BatchNorm``: the 1d, 2d and 3d layers differ in the input's rank."""

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


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


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
        _register_affine(self, shape, elementwise_affine, bias, device, dtype)

    reset_parameters = _reset_affine

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


class GroupNorm(Module):
    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups "
                f"({num_groups})"
            )
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        _register_affine(self, (num_channels,), affine, bias, device, dtype)

    reset_parameters = _reset_affine

    def forward(self, input: Tensor) -> Tensor:
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
            f"affine={self.affine}, bias={self.bias is not None}"
        )


class RMSNorm(Module):
    def __init__(
        self,
        normalized_shape: Any,
        eps: float | None = None,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        weight = None
        if elementwise_affine:
            weight = Parameter(_filled(1.0, self.normalized_shape, device, dtype))
        self.register_parameter("weight", weight)

    reset_parameters = _reset_affine

    def forward(self, x: Tensor) -> Tensor:
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}"
        )
