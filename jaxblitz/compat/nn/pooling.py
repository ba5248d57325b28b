"""Blitz 3, "Neural Networks": average and adaptive pooling beside the Blitz's
``MaxPool2d`` (``torch.nn.AvgPool2d``, ``AdaptiveAvgPool2d``,
``AdaptiveMaxPool2d`` and their ``nn.functional`` twins).

Windows and divisors follow ATen's formulas: an average window is summed by
``lax.reduce_window`` and divided by torch's per-window divisor (padding counted
or not, ``divisor_override``); adaptive window ``i`` of ``n`` over a length ``L``
spans ``[floor(i*L/n), ceil((i+1)*L/n))``.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxblitz.compat.autograd.graph import apply, run
from jaxblitz.compat.nn.functional import _ints, _pool2d_check, _tensor, _two
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.tensor import Tensor

# -- pure JAX functions --------------------------------------------------------------


def _avg_pool_fn(x, divisor, *, window, stride, padding):
    lead = (1,) * (x.ndim - 2)
    pads = ((0, 0),) * (x.ndim - 2) + padding
    zero = np.zeros((), x.dtype)  # concrete: lax takes the differentiable sum
    sums = lax.reduce_window(x, zero, lax.add, lead + window, lead + stride, pads)
    if jnp.issubdtype(x.dtype, jnp.integer):  # C's integer division, as ATen's
        return lax.div(sums, jnp.broadcast_to(divisor.astype(x.dtype), sums.shape))
    return sums / divisor.astype(x.dtype)


def _adaptive_avg_fn(x, rows, cols, counts):
    # rows (oh, H), cols (ow, W): 0/1 window masks; sums / window sizes
    sums = jnp.einsum(
        "ih,...hw,jw->...ij", rows, x, cols, precision=lax.Precision.HIGHEST
    )
    return sums / counts


def _adaptive_argmax_fn(x, *, spans):
    h, w = x.shape[-2:]
    if not spans:  # an empty output
        return jnp.zeros((*x.shape[:-2], 0), jnp.int64)
    found = []
    for hs, he, ws, we in spans:
        window = x[..., hs:he, ws:we].reshape(*x.shape[:-2], -1)
        k = jnp.argmax(window, axis=-1)  # the first maximum; a NaN wins, as in ATen
        found.append((hs + k // (we - ws)) * w + ws + k % (we - ws))
    return jnp.stack(found, axis=-1).astype(jnp.int64)


def _gather_fn(x, index, *, out):
    flat = x.reshape(*x.shape[:-2], -1)
    picked = jnp.take_along_axis(flat, index, axis=-1)
    return picked.reshape(*x.shape[:-2], *out)


# -- torch.nn.functional -------------------------------------------------------------

_ARGS = {  # ATen's words for an argument of the wrong length
    "kernel_size": "must either be a single int, or a tuple of two ints",
    "stride": "must either be omitted, a single int, or a tuple of two ints",
    "padding": "must either be a single int, or a tuple of two ints",
}


def _arg(name: str, arg: str, position: int, value: Any) -> tuple[int, ...]:
    values = _ints(name, arg, position, value)
    if len(values) not in (1, 2):
        raise RuntimeError(f"{name}: {arg} {_ARGS[arg]}")
    return _two(values)


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    _tensor("avg_pool2d", input)
    k = _arg("avg_pool2d", "kernel_size", 2, kernel_size)
    no_stride = stride is None or (isinstance(stride, tuple | list) and not stride)
    s = k if no_stride else _arg("avg_pool2d", "stride", 3, stride)
    p = _arg("avg_pool2d", "padding", 4, padding)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if input.dtype.scalar_type == "Bool":
        raise NotImplementedError("\"avg_pool2d\" not implemented for 'Bool'")
    _, h, w, out = _pool2d_check("avg_pool2d", input, k, s, p, (1, 1), ceil_mode)
    # ATen's divisor per output (i, j): the window clipped to the padded input,
    # or to the input itself when padding is not counted.
    sizes = []
    for o, n, kk, ss, pp in zip(out, (h, w), k, s, p, strict=True):
        start = np.arange(o) * ss - pp
        end = np.minimum(start + kk, n + pp)
        padded = end - start
        inside = np.minimum(end, n) - np.maximum(start, 0)
        sizes.append(padded if count_include_pad else inside)
    if divisor_override is not None:
        divisor = np.full(out, divisor_override, np.int64)
    else:
        divisor = np.outer(*sizes)
    extra = [
        max(0, (o - 1) * ss + kk - (n + 2 * pp))
        for o, n, kk, ss, pp in zip(out, (h, w), k, s, p, strict=True)
    ]
    return apply(
        "AvgPool2DBackward0",
        _avg_pool_fn,
        input,
        divisor,
        window=k,
        stride=s,
        padding=((p[0], p[0] + extra[0]), (p[1], p[1] + extra[1])),
    )


def _adaptive_args(name: str, input: Tensor, output_size: Any) -> tuple[int, int]:
    _tensor(name, input)
    if isinstance(output_size, tuple | list):  # torch's _list_with_default
        if input.dim() <= len(output_size):
            raise ValueError(
                f"Input dimension should be at least {len(output_size) + 1}"
            )
        tail = input.shape[input.dim() - len(output_size) :]
        sizes = [n if o is None else o for o, n in zip(output_size, tail, strict=True)]
        if len(sizes) != 2:
            if name == "adaptive_max_pool2d":
                raise RuntimeError(
                    "adaptive_max_pool2d(): internal error: output_size.size() must "
                    "be 2"
                )
            raise RuntimeError(f"{name}: output_size must be 2")
    else:
        sizes = [output_size, output_size]
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"{name}(): Expected 3D or 4D tensor, but got {list(input.shape)}"
        )
    for d in range(1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(input.shape)} with "
                f"dimension {d} being empty"
            )
    oh, ow = int(sizes[0]), int(sizes[1])
    if min(oh, ow) < 0:
        if name == "adaptive_max_pool2d":  # ATen allocates the output first
            shape = [*input.shape[:-2], oh, ow]
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {min(oh, ow)}: "
                f"{shape}"
            )
        raise RuntimeError(
            f"{name}: elements of output_size must be greater than or equal to 0 "
            f"but received {{{oh}, {ow}}}"
        )
    return oh, ow


def _spans(o: int, n: int) -> list[tuple[int, int]]:
    return [((i * n) // o, -(-((i + 1) * n) // o)) for i in range(o)]


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    oh, ow = _adaptive_args("adaptive_avg_pool2d", input, output_size)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"adaptive_avg_pool2d\" not implemented for '{input.dtype.scalar_type}'"
        )
    if (oh, ow) == (1, 1):  # torch: a mean over (H, W)
        return input.mean((-1, -2), keepdim=True)
    h, w = input.shape[-2:]
    masks, lengths = [], []
    for o, n in ((oh, h), (ow, w)):
        mask = np.zeros((o, n), input.dtype.np)
        for i, (start, end) in enumerate(_spans(o, n)):
            mask[i, start:end] = 1
        masks.append(mask)
        lengths.append(mask.sum(1))
    counts = np.outer(*lengths).astype(input.dtype.np)
    return apply("AdaptiveAvgPool2DBackward0", _adaptive_avg_fn, input, *masks, counts)


def adaptive_max_pool2d(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> Any:
    oh, ow = _adaptive_args("adaptive_max_pool2d", input, output_size)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"adaptive_max_pool2d\" not implemented for '{input.dtype.scalar_type}'"
        )
    h, w = input.shape[-2:]
    spans = tuple(
        (hs, he, ws, we) for hs, he in _spans(oh, h) for ws, we in _spans(ow, w)
    )
    index = run(_adaptive_argmax_fn, input._data, spans=spans)  # (..., oh*ow)
    name = "AdaptiveMaxPool2DBackward0"
    values = apply(name, _gather_fn, input, index, out=(oh, ow))
    if not return_indices:
        return values
    return values, Tensor._wrap(index.reshape(*index.shape[:-1], oh, ow))


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any) -> Any:
    return adaptive_max_pool2d(input, output_size, return_indices=True)


# -- modules -------------------------------------------------------------------------


class AvgPool2d(Module):
    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = (
            count_include_pad,
            divisor_override,
        )

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding}"
        )


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(Module):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Any:
        return adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
