"""Pooling's shared parts: the pure JAX window, pick and index functions of 2-d
max pooling and average pooling, and the argument checks (kernel, stride,
padding, dilation) every pooling op makes in torch's words."""

from __future__ import annotations

import itertools
import math
from typing import Any

import jax.numpy as jnp

from jaxblitz import kernels, models
from jaxblitz.compat.nn._args import _ints, _two
from jaxblitz.compat.tensor import Tensor


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


def _pool_windows(x, fill, *, window, stride, padding, dilation):
    """(..., K, *out): the K = prod(window) strided slices of the padded input, one
    per window element, so that [..., k, i, j] is element k of output (i, j)'s
    window (for a 2-d window; one output axis per window axis)."""
    n = len(window)
    xp = jnp.pad(x, ((0, 0),) * (x.ndim - n) + padding, constant_values=fill)
    outs = [
        (m - d * (k - 1) - 1) // s + 1
        for m, k, s, d in zip(xp.shape[-n:], window, stride, dilation, strict=True)
    ]
    picks = [
        xp[
            (...,)
            + tuple(
                slice(i * d, i * d + s * (o - 1) + 1, s)
                for i, d, s, o in zip(at, dilation, stride, outs, strict=True)
            )
        ]
        for at in itertools.product(*(range(k) for k in window))
    ]
    return jnp.stack(picks, axis=-n - 1)


def _lowest(dtype):
    floating = jnp.issubdtype(dtype, jnp.floating)
    return -float("inf") if floating else int(jnp.iinfo(dtype).min)


def _pool_choice_fn(x, **how):
    axis = -len(how["window"]) - 1
    return jnp.argmax(_pool_windows(x, _lowest(x.dtype), **how), axis=axis)


def _pool_pick_fn(x, choice, **how):
    axis = -len(how["window"]) - 1
    windows = _pool_windows(x, _lowest(x.dtype), **how)
    picked = jnp.take_along_axis(windows, jnp.expand_dims(choice, axis), axis=axis)
    return picked.squeeze(axis)


def _pool_index_fn(choice, *, size, **how):
    axis = -len(how["window"]) - 1
    flat = jnp.arange(math.prod(size), dtype=jnp.int64).reshape(size)
    windows = _pool_windows(flat, -1, **how)
    windows = jnp.broadcast_to(windows, (*choice.shape[: axis + 1], *windows.shape))
    picked = jnp.take_along_axis(windows, jnp.expand_dims(choice, axis), axis=axis)
    return picked.squeeze(axis)


def _pool_arg(arg: str, position: int, value: Any) -> tuple[int, ...]:
    values = _ints("max_pool2d", arg, position, value)
    if len(values) not in (1, 2):
        raise RuntimeError(f"max_pool2d: {arg} {_POOL_ARGS[arg]}")
    return _two(values)


def _half(n: int) -> int:
    """``n / 2`` rounded toward zero, as C++ divides."""
    return -(-n // 2) if n < 0 else n // 2


def _pool2d_check(
    name: str, input: Tensor, k: tuple, s: tuple, p: tuple, d: tuple, ceil: bool
) -> tuple[int, int, int, list[int]]:
    """ATen's checks for ``max_pool2d`` and ``avg_pool2d``, in ATen's order, then
    ``(C, H, W)`` and the output's ``[H', W']``.

    The input's rank; per axis (H, then W) a zero stride, a negative pad, a pad
    over half the dilated kernel (pooling_output_shape); then pool2d_shape_check:
    kernel, stride, dilation above zero, no empty axis but the batch (a batch of
    0 images pools to 0 images), an output of at least one element.
    """
    if input.dim() not in (3, 4):
        if name == "max_pool2d":
            raise RuntimeError(
                "non-empty 3D or 4D (batch mode) tensor expected for input"
            )
        if input.dim() < 3:  # avg_pool2d reads input.size(-3) first
            n = max(input.dim(), 1)
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}]"
                ", but got -3)"
            )
    _pool_axes_check(k, s, p, d)
    if min(k) <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}"
        )
    if min(s) <= 0:
        raise RuntimeError(
            f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}"
        )
    if min(d) <= 0:
        raise RuntimeError(
            "dilation should be greater than zero, but got dilationH: "
            f"{d[0]} dilationW: {d[1]}"
        )
    shape = tuple(input.shape)
    if input.dim() not in (3, 4) or 0 in shape[-3:]:
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{list(shape)}"
        )
    c, h, w = shape[-3:]
    out = [
        _pool_size(n, kk, ss, pp, dd, ceil)
        for n, kk, ss, pp, dd in zip((h, w), k, s, p, d, strict=True)
    ]
    if min(out) < 1:
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}). Output size is too small"
        )
    return c, h, w, out


def _pool_axes_check(k: tuple, s: tuple, p: tuple, d: tuple) -> None:
    """ATen's pooling_output_shape checks, axis by axis: a zero stride, a negative
    pad, a pad over half the dilated kernel."""
    for kk, ss, pp, dd in zip(k, s, p, d, strict=True):
        if ss == 0:
            raise RuntimeError("stride should not be zero")
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > _half((kk - 1) * dd + 1):
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={pp}, kernel_size={kk} and dilation={dd}"
            )


def _pool_size(n: int, k: int, stride: int, pad: int, dil: int, ceil: bool) -> int:
    """torch's pooling_output_shape: a ceil_mode window must start inside."""
    span = n + 2 * pad - dil * (k - 1) - 1 + (stride - 1 if ceil else 0)
    out = span // stride + 1
    if ceil and (out - 1) * stride >= n + pad:
        out -= 1
    return out


_POOL_ARGS = {  # torch's words for a max_pool2d argument of the wrong length
    "kernel_size": "must either be a single int, or a tuple of two ints",
    "stride": "must either be omitted, a single int, or a tuple of two ints",
    "padding": "must either be a single int, or a tuple of two ints",
    "dilation": "must be either a single int, or a tuple of two ints",
}
