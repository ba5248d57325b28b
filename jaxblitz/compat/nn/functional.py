"""Blitz 3, "Neural Networks": ``torch.nn.functional`` over the core's layers.

Each function is one recorded op whose JAX function calls :mod:`jaxblitz.models`
(``conv2d``, ``linear``, ``max_pool2d``, ``relu``) or :mod:`jaxblitz.kernels`; the
losses (``cross_entropy``, ``mse_loss`` ...) are :mod:`.losses`'s, with torch's
reductions, weights and checks. A stride-1, unpadded convolution uses
the kernels' im2col formulation (channel-major ``kernels.window_stack`` patches
and one matmul, ``weight @ patches``), faster on CPU than ``lax.conv``, and keeps
its patches for the backward (:func:`~jaxblitz.compat.autograd.graph.apply_saving`);
2x2 pooling is ``kernels.max_pool2x2``, with torch's gradient on ties.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from jaxblitz import kernels, models
from jaxblitz.compat import ops
from jaxblitz.compat._tensor_base import _as_int, wrap_dim
from jaxblitz.compat.autograd.graph import apply, apply_saving
from jaxblitz.compat.creation import rand
from jaxblitz.compat.nn.losses import (  # noqa: F401 -- torch.nn.functional's losses
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from jaxblitz.compat.tensor import Tensor

# -- pure JAX functions --------------------------------------------------------


def _conv_fn(x, weight, bias, *, stride, padding):
    bias = jnp.zeros(weight.shape[:1], x.dtype) if bias is None else bias
    return models.conv2d({"weight": weight, "bias": bias}, x, stride, padding)


# A stride-1 unpadded convolution runs the kernels' im2col formulation (channel-major
# patches and one matmul; NHWC ``patches @ weight`` measured slower, BENCHMARKS.md),
# and keeps the patches for the backward, which needs them for the weight's
# gradient: torch's kernels do not rebuild them either.


def _patches(x, k):  # (B, C, H, W) -> (C*k*k, B, Ho, Wo), channel-major as in lenet
    b, c, h, w = x.shape
    windows = kernels.window_stack(x.transpose(1, 0, 2, 3), k, 2, 1)
    return windows.reshape(c * k * k, b, h - k + 1, w - k + 1)


def _matmul_nchw(patches, weight, bias):
    out_ch = weight.shape[0]
    y = weight.reshape(out_ch, -1) @ patches.reshape(patches.shape[0], -1)
    y = y if bias is None else y + bias[:, None]
    return y.reshape(out_ch, *patches.shape[1:]).transpose(1, 0, 2, 3)


def _im2col_forward(x, weight, bias):
    patches = _patches(x, weight.shape[2])
    return _matmul_nchw(patches, weight, bias), patches


def _im2col_fn(x, weight, bias, patches):
    # The value is the forward's; the weight's gradient reads the saved patches,
    # and the input's gradient flows through a zero-valued term whose primal the
    # backward never needs (XLA drops it), so the patches are not rebuilt.
    y = _matmul_nchw(patches, weight, bias)
    rebuilt = _patches(x, weight.shape[2])
    zero = rebuilt - jax.lax.stop_gradient(rebuilt)
    return y + _matmul_nchw(zero, jax.lax.stop_gradient(weight), None)


def _addmm_fn(bias, x, weight_t):
    return models.linear({"weight": weight_t.T, "bias": bias}, x)


def _mm_fn(x, weight_t):
    return x @ weight_t


def _pool_fn(x, *, kernel_size, stride):
    if stride != kernel_size:  # overlapping windows: reduce_window
        return models.max_pool2d(x, kernel_size, stride)
    if kernel_size == 2:  # the Blitz's MaxPool2d(2, 2): torch's gradient on ties
        if x.ndim == 4:  # pooled channel-major, the layout conv2d's matmul produced
            return kernels.max_pool2x2(x.transpose(1, 0, 2, 3), 2).transpose(1, 0, 2, 3)
        return kernels.max_pool2x2(x, x.ndim - 2)
    # Non-overlapping windows (the Blitz's MaxPool2d(2, 2)): crop, reshape and max,
    # as the core's lenet does; its gradient is much cheaper than reduce_window's.
    k, (h, w) = kernel_size, x.shape[-2:]
    x = x[..., : h // k * k, : w // k * k]
    return x.reshape(*x.shape[:-2], h // k, k, w // k, k).max(axis=(-3, -1))


def _relu_fn(x):
    return models.relu(x)


def _softmax_fn(x, *, axis, log):
    return jax.nn.log_softmax(x, axis) if log else jax.nn.softmax(x, axis)


def _dropout_fn(x, mask, *, scale):
    return x * mask * scale


# -- torch.nn.functional -------------------------------------------------------------


def _tensor(name: str, input: Any) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )


def _ints(name: str, arg: str, position: int, value: Any) -> tuple[int, ...]:
    """An int or a sequence of ints (stride, padding ...), as torch parses it."""
    if not isinstance(value, tuple | list):
        if _as_int(value) is None:
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be tuple of "
                f"ints, not {type(value).__name__}"
            )
        return (int(value),)
    for i, v in enumerate(value):
        if _as_int(v) is None:
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be tuple of "
                f"ints, but found element of type {type(v).__name__} at pos {i}"
            )
    return tuple(int(v) for v in value)


def _two(values: tuple[int, ...]) -> tuple[int, ...]:
    return values * 2 if len(values) == 1 else values


def _square(name: str, values: tuple) -> int:
    if len(set(values)) != 1:
        raise NotImplementedError(
            f"{name}: only square kernels/strides/padding are supported by "
            f"jaxblitz.compat, got {values}"
        )
    return values[0]


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    _tensor("conv2d", input)
    strides = _two(_ints("conv2d", "stride", 4, stride))
    pads = _two(_ints("conv2d", "padding", 5, padding))
    dilations = _two(_ints("conv2d", "dilation", 6, dilation))
    if len(strides) != 2:
        raise RuntimeError(
            "expected stride to be a single integer value or a list of 2 values to "
            f"match the convolution dimensions, but got stride={list(strides)}"
        )
    if len(pads) != 2:
        raise RuntimeError(
            "expected padding to be a single integer value or a list of 2 values to "
            f"match the convolution dimensions, but got padding={list(pads)}"
        )
    if min(strides) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(pads) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(dilations) <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got {list(dilations)}"
        )
    if input.dim() == 3:  # torch: an unbatched (C, H, W) image
        return conv2d(
            input.unsqueeze(0), weight, bias, stride, padding, dilation, groups
        ).squeeze(0)
    if input.dim() != 4:
        raise RuntimeError(
            "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input "
            f"of size: {list(input.shape)}"
        )
    if weight.shape[0] == 0:
        raise RuntimeError(
            "Given groups=1, expected weight to be at least 1 at dimension 0, but "
            f"got weight of size {list(weight.shape)} instead"
        )
    if min(weight.shape[2:]) <= 0:
        raise RuntimeError(
            "kernel size should be greater than zero, but got kernel_height: "
            f"{weight.shape[2]} kernel_width: {weight.shape[3]}"
        )
    if input.shape[1] != weight.shape[1]:
        raise RuntimeError(
            f"Given groups=1, weight of size {list(weight.shape)}, expected input"
            f"{list(input.shape)} to have {weight.shape[1]} channels, but got "
            f"{input.shape[1]} channels instead"
        )
    if max(dilations) != 1 or groups != 1:
        raise NotImplementedError("conv2d: dilation and groups are not supported")
    stride, padding = _square("conv2d", strides), _square("conv2d", pads)
    h, w = (s + 2 * padding for s in input.shape[2:])
    k = weight.shape[2:]
    if h < k[0] or w < k[1]:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({h} x {w}). Kernel size: "
            f"({k[0]} x {k[1]}). Kernel size can't be greater than actual input size"
        )
    square = weight.shape[2] == weight.shape[3]
    if stride == 1 and padding == 0 and square and input.numel() and weight.numel():
        return apply_saving(
            "ConvolutionBackward0", _im2col_forward, _im2col_fn, input, weight, bias
        )
    return apply(
        "ConvolutionBackward0",
        _conv_fn,
        input,
        weight,
        bias,
        stride=stride,
        padding=padding,
    )


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    _tensor("linear", input)
    if input.dim() == 0:
        raise RuntimeError(
            "both arguments to linear need to be at least 1D, but they are 0D and "
            f"{weight.dim()}D"
        )
    if input.shape[-1] != weight.shape[1]:
        rows = input.numel() // input.shape[-1] if input.shape[-1] else 1
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} "
            f"and {weight.shape[1]}x{weight.shape[0]})"
        )
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got "
            f"{input.dtype.scalar_type} and {weight.dtype.scalar_type}"
        )
    weight_t = weight.t()  # torch records TBackward0 here too (next_functions)
    if bias is None:
        return apply("MmBackward0", _mm_fn, input, weight_t)
    return apply("AddmmBackward0", _addmm_fn, bias, input, weight_t)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    _tensor("relu", input)
    out = apply("ReluBackward0", _relu_fn, input)
    return input._inplace(out) if inplace else out


_POOL_ARGS = {  # torch's words for a max_pool2d argument of the wrong length
    "kernel_size": "must either be a single int, or a tuple of two ints",
    "stride": "must either be omitted, a single int, or a tuple of two ints",
    "padding": "must either be a single int, or a tuple of two ints",
    "dilation": "must be either a single int, or a tuple of two ints",
}


def _pool_arg(arg: str, position: int, value: Any) -> tuple[int, ...]:
    values = _ints("max_pool2d", arg, position, value)
    if len(values) not in (1, 2):
        raise RuntimeError(f"max_pool2d: {arg} {_POOL_ARGS[arg]}")
    return _two(values)


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    _tensor("max_pool2d", input)
    # torch's checks, in torch's order (aten's max_pool2d shape check).
    kh, kw = _pool_arg("kernel_size", 2, kernel_size)
    no_stride = stride is None or (isinstance(stride, tuple | list) and not stride)
    dh, dw = (kh, kw) if no_stride else _pool_arg("stride", 3, stride)
    ph, pw = _pool_arg("padding", 4, padding)
    lh, lw = _pool_arg("dilation", 5, dilation)
    if dh == 0 or dw == 0:
        raise RuntimeError("stride should not be zero")
    if kh <= 0 or kw <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}"
        )
    if dh <= 0 or dw <= 0:
        raise RuntimeError(
            f"stride should be greater than zero, but got dH: {dh} dW: {dw}"
        )
    if lh <= 0 or lw <= 0:
        raise RuntimeError(
            "dilation should be greater than zero, but got dilationH: "
            f"{lh} dilationW: {lw}"
        )
    if min(ph, pw) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(ph, pw)}")
    if ph > kh // 2 or pw > kw // 2:
        raise RuntimeError(
            "pad should be at most half of effective kernel size, but got "
            f"pad={max(ph, pw)}, kernel_size={max(kh, kw)} and dilation={lh}"
        )
    if input.dim() not in (3, 4) or not input.numel():
        raise RuntimeError(
            "non-empty 3D or 4D (batch mode) tensor expected for input, got "
            f"{input.dim()}D"
        )
    if (ph, pw, lh, lw) != (0, 0, 1, 1) or ceil_mode or return_indices:
        raise NotImplementedError(
            "max_pool2d: padding, dilation, ceil_mode and return_indices are not "
            "supported"
        )
    k, s = _square("max_pool2d", (kh, kw)), _square("max_pool2d", (dh, dw))
    c, h, w = input.shape[-3:]
    out = [(size - k) // s + 1 if size >= k else 0 for size in (h, w)]
    if min(out) < 1:
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}). Output size is too small"
        )
    return apply(
        "MaxPool2DWithIndicesBackward0", _pool_fn, input, kernel_size=k, stride=s
    )


def softmax(input: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    dim = dim if dim is None else wrap_dim(dim, input.dim())
    return apply("SoftmaxBackward0", _softmax_fn, input, axis=dim, log=False)


def log_softmax(input: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    dim = dim if dim is None else wrap_dim(dim, input.dim())
    return apply("LogSoftmaxBackward0", _softmax_fn, input, axis=dim, log=True)


def dropout(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    keep = (rand(*input.shape, dtype=input.dtype) >= p).to(input.dtype)
    return apply("MulBackward0", _dropout_fn, input, keep, scale=1.0 / (1 - p))


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    return input.flatten(start_dim, end_dim)


sigmoid, tanh = ops.sigmoid, ops.tanh
