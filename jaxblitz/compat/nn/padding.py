"""Blitz 3, "Neural Networks" (beyond it, as convolutional models pad their inputs):
``torch.nn.functional.pad`` and the padding modules (``ConstantPad1d`` ...
``CircularPad3d``).

Each pad is one recorded op. Constant padding is ``lax.pad`` (a negative width
crops); reflect, replicate and circular gather every padded axis through the source
index torch's kernels compute for it, so widths up to the input's size, negative
widths and their gradients (scatter-adds) are torch's.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._tensor_base import _as_int

# torch's grad_fn per mode ("{k}" is the number of padded dims)
_GRAD_FN = {
    "constant": "ConstantPadNdBackward0",
    "reflect": "ReflectionPad{k}DBackward0",
    "replicate": "ReplicationPad{k}DBackward0",
    "circular": "CopySlices",
}
_KERNEL = {"reflect": "reflection_pad{k}d", "replicate": "replication_pad{k}d"}
_COMBINATIONS = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)

# -- pure JAX functions --------------------------------------------------------------


def source_index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """The input index each of the ``n + lo + hi`` outputs of one axis reads, as
    torch's reflection/replication kernels and its circular pad compute it."""
    j = np.arange(n + lo + hi) - lo  # the output's position in input coordinates
    if mode == "reflect":  # about the first and last element of the whole input
        return (n - 1) - np.abs((n - 1) - np.abs(j))
    if mode == "replicate":
        return np.clip(j, 0, n - 1)
    start, stop = max(-lo, 0), n - max(-hi, 0)  # circular: crop, then wrap
    return start + (j - start) % max(stop - start, 1)


def _pad_fn(x, *, pads, mode, value):
    # pads: ((lo, hi), ...) for the last len(pads) axes
    first = x.ndim - len(pads)
    if mode == "constant":
        widths = [(0, 0, 0)] * first + [(lo, hi, 0) for lo, hi in pads]
        return jax.lax.pad(x, jnp.asarray(value).astype(x.dtype), widths)
    for axis, (lo, hi) in enumerate(pads, start=first):
        index = source_index(x.shape[axis], lo, hi, mode)
        x = jnp.take(x, jnp.asarray(index, jnp.int32), axis=axis)
    return x


# -- checks --------------------------------------------------------------------------


def _pad_widths(pad: Any) -> tuple[int, ...]:
    if not isinstance(pad, tuple | list):
        raise TypeError(
            "pad(): argument 'pad' (position 2) must be tuple of ints, not "
            f"{type(pad).__name__}"
        )
    for i, v in enumerate(pad):
        if _as_int(v) is None:
            raise TypeError(
                "pad(): argument 'pad' (position 2) must be tuple of ints, but found "
                f"element of type {type(v).__name__} at pos {i}"
            )
    return tuple(int(v) for v in pad)


def _check_constant(shape: tuple, pads: tuple) -> None:
    """torch's constant_pad_nd narrows for a negative width first."""
    for n, (lo, hi) in zip(shape[len(shape) - len(pads) :], pads, strict=True):
        if n + min(lo, 0) < 0 or n + min(lo, 0) + min(hi, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")


def _check_kernel(input: Tensor, pads: tuple, mode: str) -> None:
    """reflection_pad{k}d / replication_pad{k}d's checks."""
    k, shape = len(pads), tuple(input.shape)
    if input.dtype.scalar_type == "Bool":
        raise NotImplementedError(
            f"\"{_KERNEL[mode].format(k=k)}\" not implemented for 'Bool'"
        )
    batched = len(shape) == k + 2
    if not all(shape[1 if batched else 0 :]):
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch "
            "size and other non-zero dimensions for input, but got: "
            f"{list(shape)}"
        )
    spatial = shape[-k:]
    if mode == "reflect":  # width first, then height, then depth
        for i in range(k):
            (lo, hi), n = pads[k - 1 - i], spatial[k - 1 - i]
            if lo >= n or hi >= n:
                raise RuntimeError(
                    f"Argument #{4 + 2 * i}: Padding size should be less than the "
                    f"corresponding input dimension, but got: padding ({lo}, {hi}) at "
                    f"dimension {len(shape) - 1 - i} of input {list(shape)}"
                )
    out = [n + lo + hi for n, (lo, hi) in zip(spatial, pads, strict=True)]
    if max(out) < 1:
        names = "DHW"[3 - k :]
        sizes = " ".join(f"{a}: {n}" for a, n in zip(names, spatial, strict=True))
        sizes = sizes.replace(" W:", ", W:") if k > 1 else sizes
        sizes += " " if (k, mode) == (2, "replicate") else ""
        calc = " ".join(f"{a}: {n}" for a, n in zip(names, out, strict=True))
        raise RuntimeError(f"input ({sizes}) is too small. Calculated output {calc}")
    if min(out) < 0:
        new = [*shape[:-k], *out]
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(out)}: {new}"
        )


def _check_circular(shape: tuple, pads: tuple) -> None:
    for n, (lo, hi) in zip(shape[len(shape) - len(pads) :], pads, strict=True):
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n + lo + hi < 0:
            raise RuntimeError(
                "Negative padding value is resulting in an empty dimension"
            )
        if max(lo, hi) > n + min(lo, 0) + min(hi, 0):  # torch reads unset memory
            raise NotImplementedError(
                f"pad: circular padding ({lo}, {hi}) wider than the {n} elements left "
                "after cropping is not supported by jaxblitz.compat"
            )


# -- torch.nn.functional -------------------------------------------------------------


def pad(
    input: Tensor, pad: Any, mode: str = "constant", value: float | None = None
) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims: ``pad`` is ``(last_lo, last_hi,
    second_last_lo, ...)``; a negative width crops."""
    if not isinstance(input, Tensor):
        raise TypeError(
            "pad(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    widths = _pad_widths(pad)
    if value is not None and not isinstance(value, int | float | np.number):
        raise TypeError(
            "pad(): argument 'value' (position 4) must be float, not "
            f"{type(value).__name__}"
        )
    if mode not in _GRAD_FN:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(widths) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    d, k = input.dim(), len(widths) // 2
    if k > d:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input "
            f"dimension but got padding length {len(widths)} and input of "
            f"dimension {d}"
        )
    pads = tuple((widths[2 * i], widths[2 * i + 1]) for i in reversed(range(k)))
    shape = tuple(input.shape)
    if mode == "constant":
        _check_constant(shape, pads)
        fill = 0 if value is None else value
        fill = bool(fill) if input.dtype.scalar_type == "Bool" else fill
        return apply(_GRAD_FN[mode], _pad_fn, input, pads=pads, mode=mode, value=fill)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if k not in (1, 2, 3) or d not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(widths)} is not supported for {d}D input tensor.\n"
            + _COMBINATIONS
        )
    if mode == "circular":
        _check_circular(shape, pads)
    else:
        _check_kernel(input, pads, mode)
    name = _GRAD_FN[mode].format(k=k)
    return apply(name, _pad_fn, input, pads=pads, mode=mode, value=None)


# -- torch.nn ------------------------------------------------------------------------


def ntuple(n: int):
    """torch's ``nn.modules.utils._ntuple``: an iterable as a tuple, else n copies."""

    def parse(x: Any) -> tuple:
        return tuple(x) if isinstance(x, Iterable) else tuple(repeat(x, n))

    return parse


class _PadNd(Module):
    """``F.pad(input, self.padding, mode)``; ``padding`` per side, last dim first."""

    mode = "constant"
    dims = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = ntuple(2 * self.dims)(padding)

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    dims = 1


class ConstantPad2d(_ConstantPadNd):
    dims = 2


class ConstantPad3d(_ConstantPadNd):
    dims = 3


class _Zero:
    """ZeroPad{n}d: a ConstantPad{n}d of 0.0, whose repr shows the padding only."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_Zero, ConstantPad1d):
    pass


class ZeroPad2d(_Zero, ConstantPad2d):
    pass


class ZeroPad3d(_Zero, ConstantPad3d):
    pass


class ReflectionPad1d(_PadNd):
    mode, dims = "reflect", 1


class ReflectionPad2d(_PadNd):
    mode, dims = "reflect", 2


class ReflectionPad3d(_PadNd):
    mode, dims = "reflect", 3


class ReplicationPad1d(_PadNd):
    mode, dims = "replicate", 1


class ReplicationPad2d(_PadNd):
    mode, dims = "replicate", 2


class ReplicationPad3d(_PadNd):
    mode, dims = "replicate", 3


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (self.dims + 1, self.dims + 2):
            raise ValueError(
                f"expected {self.dims + 1}D or {self.dims + 2}D input (got "
                f"{input.dim()}D input)"
            )
        return pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    dims = 1


class CircularPad2d(_CircularPadNd):
    dims = 2


class CircularPad3d(_CircularPadNd):
    dims = 3
