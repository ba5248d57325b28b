"""Blitz 3, "Neural Networks": local response normalisation across channels
(``torch.nn.LocalResponseNorm``, ``nn.functional.local_response_norm``) and
torch's legacy ``CrossMapLRN2d``.

``local_response_norm`` divides by ``(k + alpha * mean of the squares in a window
of `size` channels) ** beta``, the window zero-padded as torch pads it.
``CrossMapLRN2d`` is torch's own Function, reproduced as it computes: its forward
window always keeps channel 0 and its backward is its hand-written formula (not
the forward's derivative), so values and gradients match torch's.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.tensor import Tensor

# -- pure JAX functions --------------------------------------------------------------


def _lrn_denominator_fn(x, *, size, alpha, beta, k):
    # torch: avg_pool over channels (dim 1) of the squares, padded
    # (size // 2, (size - 1) // 2), the count including the padding
    pad = [(0, 0)] * x.ndim
    pad[1] = (size // 2, (size - 1) // 2)
    squares = jnp.pad(x * x, pad)
    channels = x.shape[1]
    total = sum(squares[:, i : i + channels] for i in range(1, size))
    total = squares[:, :channels] + total
    if jnp.issubdtype(x.dtype, jnp.floating):
        mean = total / size
    else:  # torch: an integer mean, made float32 by the float multiplication
        mean = (total // size).astype(jnp.float32)
    return (mean * alpha + k) ** beta


def _forward_window(channels: int, size: int, dtype) -> np.ndarray:
    """(C, C): which squares torch's loop sums into each channel's scale."""
    pre_pad = int((size - 1) / 2 + 1)
    rows = np.zeros((channels, channels), dtype)
    rows[0, : min(pre_pad, channels)] = 1
    for c in range(1, channels):
        rows[c] = rows[c - 1]
        if c < channels - pre_pad + 1:
            rows[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            rows[c, c - pre_pad] -= 1
    return rows


def _backward_window(channels: int, size: int, dtype) -> np.ndarray:
    """(C, C): which ratios torch's backward accumulates for each channel."""
    inverse_pre_pad = int(size - (size - 1) / 2)
    c = np.arange(channels)
    offset = c[None, :] + inverse_pre_pad - c[:, None]
    return ((offset >= 0) & (offset <= size - 1)).astype(dtype)


def _across(window: np.ndarray, x):  # sum over the channels a window row names
    return jnp.einsum("dc,nchw->ndhw", window, x)


def _cross_map_scale(x, size, alpha, k):
    window = _forward_window(x.shape[1], size, x.dtype)
    return k + alpha / size * _across(window, x * x)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3, 4))
def _cross_map(x, size, alpha, beta, k):
    return x * _cross_map_scale(x, size, alpha, k) ** -beta


def _cross_map_fwd(x, size, alpha, beta, k):
    scale = _cross_map_scale(x, size, alpha, k)
    out = x * scale**-beta
    return out, (x, out, scale)


def _cross_map_bwd(size, alpha, beta, k, saved, grad):
    x, out, scale = saved
    channels = x.shape[1]
    if size == 1:  # torch's backward narrows past its padded buffer
        raise RuntimeError(
            f"start (1) + length ({channels}) exceeds dimension size ({channels})."
        )
    accum = _across(_backward_window(channels, size, x.dtype), grad * out / scale)
    return (scale**-beta * grad - 2 * alpha * beta / size * x * accum,)


_cross_map.defvjp(_cross_map_fwd, _cross_map_bwd)


def _cross_map_fn(x, *, size, alpha, beta, k):
    return _cross_map(x, size, alpha, beta, k)


# -- torch.nn.functional -------------------------------------------------------------


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    dim = input.dim()
    if dim < 3:
        raise ValueError(
            "Expected 3D or higher dimensionality                          input "
            f"(got {dim} dimensions)"
        )
    if input.numel() == 0:
        return input
    if size <= 0:  # torch's avg_pool2d / avg_pool3d check
        sizes = f"kH: {size} kW: 1" if dim == 3 else f"kT: {size} kH: 1 kW: 1"
        raise RuntimeError(f"kernel size should be greater than zero, but got {sizes}")
    if input.dtype.scalar_type == "Bool":
        raise NotImplementedError(
            "local_response_norm: a torch.bool input is not supported by "
            "jaxblitz.compat"
        )
    how = {"size": size, "alpha": alpha, "beta": beta, "k": k}
    return input / apply("PowBackward0", _lrn_denominator_fn, input, **how)


# -- modules -------------------------------------------------------------------------


class _ChannelWindow(Module):
    def __init__(
        self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
    ) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LocalResponseNorm(_ChannelWindow):
    def forward(self, input: Tensor) -> Tensor:
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)


class CrossMapLRN2d(_ChannelWindow):
    def __init__(
        self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1
    ) -> None:  # torch's default k is the int 1 here (its repr says k=1)
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError(
                f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead."
            )
        if not input.dtype.is_floating_point:
            raise RuntimeError(
                "result type Float can't be cast to the desired output type "
                f"{input.dtype.scalar_type}"
            )
        how = {"size": self.size, "alpha": self.alpha, "beta": self.beta, "k": self.k}
        return apply("CrossMapLRN2dBackward", _cross_map_fn, input, **how)
