"""Blitz 4, "Training a classifier": ``torch.nn.utils.fusion`` -- fold an eval-mode
BatchNorm into the convolution or linear layer before it (one layer, the same
outputs)."""

from __future__ import annotations

import copy
from typing import Any

from jaxblitz.compat.nn.module import Parameter
from jaxblitz.compat.ops._unary import rsqrt
from jaxblitz.compat.tensor import Tensor, creation

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]


def _eval_only(layer: Any, bn: Any) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")


def _running_stats(bn: Any) -> tuple:
    """``bn``'s running mean and variance, eps, weight and bias."""
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    return bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias


def fuse_conv_bn_eval(conv: Any, bn: Any, transpose: bool = False) -> Any:
    """A copy of ``conv`` whose weight and bias include ``bn`` (both in eval)."""
    _eval_only(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, *_running_stats(bn), transpose
    )
    return fused


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
    transpose: bool = False,
) -> tuple[Parameter, Parameter]:
    """The fused convolution's ``(weight, bias)`` as Parameters."""
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    if conv_b is None:
        conv_b = creation.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = creation.ones_like(bn_rm)
    if bn_b is None:
        bn_b = creation.zeros_like(bn_rm)
    bn_var_rsqrt = rsqrt(bn_rv + bn_eps)
    rest = [1] * (len(conv_w.shape) - 2)
    shape = [1, -1, *rest] if transpose else [-1, 1, *rest]
    fused_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype=weight_dtype)
    fused_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=bias_dtype)
    return (
        Parameter(fused_w, conv_w.requires_grad),
        Parameter(fused_b, conv_b.requires_grad),
    )


def fuse_linear_bn_eval(linear: Any, bn: Any) -> Any:
    """A copy of ``linear`` whose weight and bias include ``bn`` (both in eval)."""
    _eval_only(linear, bn)
    fused = copy.deepcopy(linear)
    # bn's features broadcast against linear's last dimension
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == "
            f"1, got linear.out_features={linear.out_features} and "
            f"bn.num_features={bn.num_features}"
        )
    stats = _running_stats(bn)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, *stats)
    return fused


def fuse_linear_bn_weights(
    linear_w: Tensor,
    linear_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor,
    bn_b: Tensor,
) -> tuple[Parameter, Parameter]:
    """The fused linear layer's ``(weight, bias)`` as Parameters."""
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    if linear_b is None:
        linear_b = creation.zeros_like(bn_rm)
    bn_scale = bn_w * rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=weight_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=bias_dtype)
    return (
        Parameter(fused_w, linear_w.requires_grad),
        Parameter(fused_b, linear_b.requires_grad),
    )
