"""Blitz 3, "Neural Networks" (beyond it: DCGAN's generator):
``torch.nn.functional.conv_transpose2d`` and ``nn.ConvTranspose2d``.

A transposed convolution is the gradient of a convolution with respect to its
input: ``lax.conv_general_dilated`` with the input dilated by ``stride``
(``lhs_dilation``), the kernel flipped and its in/out axes swapped per group, and
``dilation * (k - 1) - padding`` padding on each side (``output_padding`` more at
the bottom/right). Gradients come from ``jax.vjp`` of that one function.
"""

from __future__ import annotations

import math
from typing import Any

import jax

from jaxblitz.compat import _dtype, creation
from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.nn import init
from jaxblitz.compat.nn._convnd import _pair, conv_extra_repr
from jaxblitz.compat.nn.functional import _conv_checks, _ints, _tensor, _two
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.tensor import Tensor


def _conv_transpose_fn(x, weight, bias, *, stride, pads, dilation, groups, precision):
    cin, cout_g, kh, kw = weight.shape  # torch: (in, out / groups, kH, kW)
    w = weight.reshape(groups, cin // groups, cout_g, kh, kw).transpose(0, 2, 1, 3, 4)
    w = w.reshape(groups * cout_g, cin // groups, kh, kw)[:, :, ::-1, ::-1]
    y = jax.lax.conv_general_dilated(
        x,
        w,
        window_strides=(1, 1),
        padding=pads,
        lhs_dilation=stride,
        rhs_dilation=dilation,
        feature_group_count=groups,
        dimension_numbers=("NCHW", "OIHW", "NCHW"),
        precision=precision,  # torch's flags on this device: backends._precision
    )
    return y if bias is None else y + bias[None, :, None, None]


def _args(stride: Any, padding: Any, output_padding: Any, dilation: Any):
    """The four int pairs, parsed as torch binds them (their values are checked by
    ``_conv_checks`` and :func:`_transposed_checks`)."""
    name = "conv_transpose2d"
    return (
        _two(_ints(name, "stride", 4, stride)),
        _two(_ints(name, "padding", 5, padding)),
        _two(_ints(name, "output_padding", 6, output_padding)),
        _two(_ints(name, "dilation", 8, dilation)),
    )


def _transposed_checks(weight: Tensor, s: tuple, op: tuple, d: tuple) -> None:
    """ATen's slow_conv_transpose2d shape check, after ``_conv_checks``: kernel,
    dilation, then the output padding against stride and dilation."""
    if min(weight.shape[2:]) <= 0:
        raise RuntimeError(
            "kernel size should be greater than zero, but got kernel_height: "
            f"{weight.shape[2]} kernel_width: {weight.shape[3]}"
        )
    if min(d) <= 0:
        raise RuntimeError(
            "dilation should be greater than zero, but got dilation_height: "
            f"{d[0]}, dilation_width: {d[1]}"
        )
    if any(o >= max(si, di) for o, si, di in zip(op, s, d, strict=True)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: {op[0]} output_padding_width: {op[1]} "
            f"stride_height: {s[0]} stride_width: {s[1]} dilation_height: {d[0]} "
            f"dilation_width: {d[1]}"
        )


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """``torch.nn.functional.conv_transpose2d``; ``weight`` is (in, out/groups, kH,
    kW)."""
    _tensor("conv_transpose2d", input)
    s, p, op, d = _args(stride, padding, output_padding, dilation)
    if input.dim() not in (3, 4):
        raise RuntimeError(
            "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but "
            f"got input of size: {list(input.shape)}"
        )
    if input.dim() == 3:  # torch: an unbatched (C, H, W) image
        return conv_transpose2d(
            input.unsqueeze(0), weight, bias, s, p, op, groups, d
        ).squeeze(0)
    _conv_checks(input, weight, bias, groups, s, p, d, output_padding=op)
    _transposed_checks(weight, s, op, d)
    k = weight.shape[2:]
    out = [
        (n - 1) * si - 2 * pi + di * (ki - 1) + oi + 1
        for n, si, pi, di, ki, oi in zip(input.shape[2:], s, p, d, k, op, strict=True)
    ]
    if min(out) <= 0:
        h, w = input.shape[2:]
        raise RuntimeError(
            f"Given input size per channel: ({h} x {w}). Calculated output size per "
            f"channel: ({out[0]} x {out[1]}). Output size is too small"
        )
    pads = tuple(
        (di * (ki - 1) - pi, di * (ki - 1) - pi + oi)
        for pi, di, ki, oi in zip(p, d, k, op, strict=True)
    )
    return apply(
        "ConvolutionBackward0",
        _conv_transpose_fn,
        input,
        weight,
        bias,
        stride=s,
        pads=pads,
        dilation=d,
        groups=int(groups),
        precision=_precision.of("conv", input, weight),
    )


class ConvTranspose2d(Module):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ):
        super().__init__()
        # torch's checks, in torch's order and words (nn.modules.conv).
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            raise NotImplementedError(
                f"ConvTranspose2d: padding={padding!r} is not supported (torch "
                "accepts only int padding for transposed convolutions)"
            )
        if padding_mode != "zeros":
            raise ValueError(
                'Only "zeros" padding mode is supported for ConvTranspose2d'
            )
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation = _pair(padding), _pair(dilation)
        self.output_padding, self.groups = _pair(output_padding), groups
        self.padding_mode = padding_mode
        shape = (in_channels, out_channels // groups, *self.kernel_size)
        dt = _dtype.to_dtype(dtype or _dtype.get_default_dtype())
        self.weight = Parameter(creation.empty(shape, dtype=dt, device=device))
        self.bias = (
            Parameter(creation.empty(out_channels, dtype=dt, device=device))
            if bias
            else None
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """torch's _ConvNd.reset_parameters: kaiming_uniform_(a=sqrt(5)), i.e.
        U(-b, b) with b = 1/sqrt(fan_in), fan_in = out/groups * kH * kW; the bias
        from the same bound."""
        with no_grad():
            init.kaiming_uniform_(self.weight, a=math.sqrt(5))
            if self.bias is not None:
                fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
                if fan_in:
                    bound = 1 / math.sqrt(fan_in)
                    init.uniform_(self.bias, -bound, bound)

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple[int, ...]:
        """torch: the output_padding that gives ``output_size`` (the last two)."""
        if output_size is None:
            return self.output_padding
        sizes = list(output_size)[-2:]
        spatial = list(input.shape[-2:])
        low = [
            (n - 1) * s - 2 * p + d * (k - 1) + 1
            for n, s, p, d, k in zip(
                spatial,
                self.stride,
                self.padding,
                self.dilation,
                self.kernel_size,
                strict=True,
            )
        ]
        high = [lo + s - 1 for lo, s in zip(low, self.stride, strict=True)]
        if any(not lo <= n <= hi for n, lo, hi in zip(sizes, low, high, strict=True)):
            raise ValueError(
                f"requested an output size of {tuple(output_size)}, but valid sizes "
                f"range from {low} to {high} (for an input of "
                f"{input.shape[-2:]})"
            )
        return tuple(n - lo for n, lo in zip(sizes, low, strict=True))

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        return conv_transpose2d(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            self._output_padding(input, output_size),
            self.groups,
            self.dilation,
        )

    def extra_repr(self) -> str:
        return conv_extra_repr(self)
