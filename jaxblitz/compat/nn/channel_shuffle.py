"""Blitz 3, "Neural Networks" (beyond it: ShuffleNet's block): ``F.channel_shuffle``,
``F.native_channel_shuffle`` and ``nn.ChannelShuffle`` -- (N, g*k, *) channels
regrouped as (N, k*g, *), one recorded op (``ChannelShuffleBackward0``; the native
op, as in torch, has no derivative)."""

from __future__ import annotations

from typing import Any

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.ops._funnel import _without_derivative
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._tensor_base import _as_int


def _shuffle_fn(x, *, groups):
    n, c, *rest = x.shape
    x = x.reshape(n, groups, c // groups, *rest)
    return x.swapaxes(1, 2).reshape(n, c, *rest)


def _native_fn(x, *, groups):
    return _without_derivative(
        "native_channel_shuffle", lambda v: _shuffle_fn(v, groups=groups), x
    )


def _check(name: str, input: Any, groups: Any) -> int:
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    if _as_int(groups) is None:
        raise TypeError(
            f"{name}(): argument 'groups' (position 2) must be int, not "
            f"{type(groups).__name__}"
        )
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError(
            "Number of groups to divide channels in must be positive. Value of "
            f"groups:{groups}"
        )
    if input.dim() <= 2:
        raise RuntimeError(
            "channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(input.shape)}"
        )
    if input.shape[1] % groups:
        raise RuntimeError(
            "Number of channels must be divisible by groups. Got "
            f"{input.shape[1]} channels and {groups} groups."
        )
    return groups


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    groups = _check("channel_shuffle", input, groups)
    return apply("ChannelShuffleBackward0", _shuffle_fn, input, groups=groups)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    groups = _check("native_channel_shuffle", input, groups)
    return apply("NotImplemented", _native_fn, input, groups=groups)


class ChannelShuffle(Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
