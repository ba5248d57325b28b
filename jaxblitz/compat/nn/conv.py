"""Beyond the Blitz's ``Conv2d``: ``torch.nn.functional.conv1d`` and ``conv3d``.

Both are one ``lax.conv_general_dilated`` of their rank (``_convnd.conv_nd_fn``),
after ``conv2d``'s checks in torch's words for that rank; an unbatched input gets
a batch of one, as in torch. The modules ``Conv1d``/``Conv2d``/``Conv3d`` are in
:mod:`.layers`.
"""

from __future__ import annotations

from typing import Any

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.nn._convnd import conv_nd_fn
from jaxblitz.compat.nn.functional import (
    _conv_args,
    _conv_checks,
    _conv_pads,
    _conv_sizes_check,
    _tensor,
)
from jaxblitz.compat.tensor import Tensor


def _conv(
    n: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> Tensor:
    name = f"conv{n}d"
    _tensor(name, input)
    strides, pads, dilations = _conv_args(stride, padding, dilation, name)
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(
            f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, "
            f"but got input of size: {list(input.shape)}"
        )
    if input.dim() == n + 1:  # torch: an unbatched (C, *spatial) input
        batched = input.unsqueeze(0)
        out = _conv(n, batched, weight, bias, stride, padding, dilation, groups)
        return out.squeeze(0)
    if pads == "same" and any(s != 1 for s in strides):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    _conv_checks(input, weight, bias, groups, strides, pads, dilations)
    _conv_sizes_check(input, weight, dilations)
    return apply(
        "ConvolutionBackward0",
        conv_nd_fn,
        input,
        weight,
        bias,
        stride=strides,
        padding=_conv_pads(pads, weight, dilations),
        lhs_dilation=(1,) * n,
        dilation=dilations,
        groups=int(groups),
        precision=_precision.of("conv", input, weight),
    )


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """``torch.nn.functional.conv1d``: (N, C, L) * (O, C/groups, K)."""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """``torch.nn.functional.conv3d``: (N, C, D, H, W) * (O, C/groups, kD, kH, kW)."""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)
