"""``torch.finfo`` / ``torch.iinfo`` (a dtype's numeric limits) and the memory
formats (``torch.contiguous_format``, ``channels_last``, ...)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from jaxblitz.compat.tensor import _dtype


class TorchName:
    """A named constant of torch's (``torch.strided``, ``torch.channels_last``):
    printed and pickled by its name."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self) -> str:
        return self._name


__all__ = [
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "finfo",
    "iinfo",
    "memory_format",
    "preserve_format",
]


class finfo:  # noqa: N801 -- torch's name
    """A floating dtype's limits, as ``torch.finfo`` gives them (floats)."""

    def __init__(self, type: Any = None) -> None:  # noqa: A002 -- torch's name
        dt = _dtype.to_dtype(type if type is not None else _dtype.get_default_dtype())
        if not dt.is_floating_point:
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use torch.iinfo "
                "to handle 'torch.finfo'"
            )
        info = ml_dtypes.finfo(dt.np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # torch's, in double
        self.dtype = str(dt).removeprefix("torch.")

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, "
            f"max={self.max:g}, eps={self.eps:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:  # noqa: N801 -- torch's name
    """An integer dtype's limits, as ``torch.iinfo`` gives them (ints)."""

    def __init__(self, type: Any) -> None:  # noqa: A002 -- torch's name
        dt = _dtype.to_dtype(type)
        if dt.np == np.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if dt.is_floating_point:
            raise TypeError(
                "torch.iinfo() requires an integer input type. Use torch.finfo to "
                "handle 'torch.iinfo'"
            )
        info = np.iinfo(dt.np)
        self.bits, self.max, self.min = int(info.bits), int(info.max), int(info.min)
        self.dtype = str(dt).removeprefix("torch.")

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


class memory_format(TorchName):  # noqa: N801 -- torch's name
    """How a tensor's strides order its dimensions."""


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


# innermost dim first: torch's channels-last orders (C, W, H, N) and (C, W, H, D, N)
_INNER_FIRST = {channels_last: (1, 3, 2, 0), channels_last_3d: (1, 4, 3, 2, 0)}


def channels_last_order(fmt: Any, rank: int) -> tuple[int, ...] | None:
    """A channels-last format's dims, innermost first (None: another format);
    torch's error for a tensor of the wrong rank."""
    order = _INNER_FIRST.get(fmt)
    if order is not None and rank != len(order):
        name = "channels_last" if fmt is channels_last else "channels_last_3d"
        raise RuntimeError(f"required rank {len(order)} tensor to use {name} format")
    return order


def is_dense_in(order: tuple[int, ...], shape: tuple, stride: tuple) -> bool:
    """torch's ``compute_channels_last_contiguous``: the strides count up in
    ``order`` (innermost first), size-1 dims skipped."""
    expected = 1
    for d in order:
        if shape[d] != 1:
            if stride[d] != expected:
                return False
            expected *= shape[d]
    return True


def strides_in(order: tuple[int, ...], shape: tuple) -> tuple[int, ...]:
    """The dense strides that lay ``shape`` out in ``order`` (innermost first)."""
    stride = [0] * len(shape)
    step = 1
    for d in order:
        stride[d] = step
        step *= max(shape[d], 1)
    return tuple(stride)
