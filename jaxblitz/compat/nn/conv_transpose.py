"""Blitz 3, "Neural Networks" (beyond it: DCGAN's generator):
``torch.nn.functional.conv_transpose1d``/``2d``/``3d`` and ``nn.ConvTranspose1d``/
``2d``/``3d``.

A transposed convolution is the gradient of a convolution with respect to its
input: ``lax.conv_general_dilated`` with the input dilated by ``stride``
(``lhs_dilation``), the kernel flipped and its in/out axes swapped per group, and
``dilation * (k - 1) - padding`` padding on each side (``output_padding`` more on
the high side). Gradients come from ``jax.vjp`` of that one function.
"""

from __future__ import annotations

import math
from typing import Any

from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor import creation
from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.nn import init
from jaxblitz.compat.nn._convnd import _ntuple, conv_extra_repr, conv_nd_fn
from jaxblitz.compat.nn.functional import _by, _conv_checks, _ints, _spread, _tensor
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.tensor import Tensor


def _conv_transpose_fn(x, weight, bias, *, stride, pads, dilation, groups, precision):
    cin, cout_g, *k = weight.shape  # torch: (in, out / groups, *kernel)
    n = len(k)
    w = weight.reshape(groups, cin // groups, cout_g, *k).swapaxes(1, 2)
    w = w.reshape(groups * cout_g, cin // groups, *k)
    w = w[(slice(None), slice(None)) + (slice(None, None, -1),) * n]
    return conv_nd_fn(
        x,
        w,
        bias,
        stride=(1,) * n,
        padding=pads,
        lhs_dilation=stride,
        dilation=dilation,
        groups=groups,
        precision=precision,  # torch's flags on this device: backends._precision
    )


_AXES = {3: ("depth", "height", "width"), 2: ("height", "width")}


def _named(what: str, values: tuple, sep: str = " ") -> str:
    """ATen's ``what_depth: a what_height: b ...`` (a 1-d one is 2-d, height 1)."""
    names = _AXES[max(len(values), 2)]
    return sep.join(f"{what}_{a}: {v}" for a, v in zip(names, values, strict=True))


def _transposed_checks(weight: Tensor, s: tuple, op: tuple, d: tuple) -> None:
    """ATen's slow_conv_transpose{2,3}d shape check, after ``_conv_checks``: kernel,
    dilation, then the output padding against stride and dilation (a 1-d one is
    checked as 2-d, of height 1, in ATen's words)."""
    k = tuple(weight.shape[2:])
    if len(k) == 1:
        k, s, op, d = (1, *k), (1, *s), (0, *op), (1, *d)
    if min(k) <= 0:
        if len(k) == 3:
            raise RuntimeError(
                "non-empty 5D (n_output_plane x n_input_plane x kernel_depth x "
                "kernel_height x kernel_width) tensor expected for weight, but got: "
                f"{list(weight.shape)}"
            )
        raise RuntimeError(
            f"kernel size should be greater than zero, but got {_named('kernel', k)}"
        )
    if min(d) <= 0:
        raise RuntimeError(
            "dilation should be greater than zero, but got "
            + _named("dilation", d, ", ")
        )
    if any(o >= max(si, di) for o, si, di in zip(op, s, d, strict=True)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"{_named('output_padding', op)} {_named('stride', s)} "
            f"{_named('dilation', d)}"
        )


def _conv_transpose(
    n: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    output_padding: Any,
    groups: int,
    dilation: Any,
) -> Tensor:
    name = f"conv_transpose{n}d"
    _tensor(name, input)
    s = _spread(_ints(name, "stride", 4, stride), n)
    p = _spread(_ints(name, "padding", 5, padding), n)
    op = _spread(_ints(name, "output_padding", 6, output_padding), n)
    d = _spread(_ints(name, "dilation", 8, dilation), n)
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(
            f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, "
            f"but got input of size: {list(input.shape)}"
        )
    if input.dim() == n + 1:  # torch: an unbatched (C, *spatial) input
        batched = input.unsqueeze(0)
        out = _conv_transpose(n, batched, weight, bias, s, p, op, groups, d)
        return out.squeeze(0)
    _conv_checks(input, weight, bias, groups, s, p, d, output_padding=op)
    _transposed_checks(weight, s, op, d)
    k = weight.shape[2:]
    out = [
        (m - 1) * si - 2 * pi + di * (ki - 1) + oi + 1
        for m, si, pi, di, ki, oi in zip(input.shape[2:], s, p, d, k, op, strict=True)
    ]
    if min(out) <= 0:
        given = list(input.shape[2:])
        if n == 1:  # ATen's 2-d words, height 1
            given, out = [1, *given], [1, *out]
        raise RuntimeError(
            f"Given input size per channel: ({_by(given)}). Calculated output size "
            f"per channel: ({_by(out)}). Output size is too small"
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


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """``torch.nn.functional.conv_transpose1d``; ``weight`` is (in, out/groups, k)."""
    return _conv_transpose(
        1, input, weight, bias, stride, padding, output_padding, groups, dilation
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
    return _conv_transpose(
        2, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """``torch.nn.functional.conv_transpose3d``; ``weight`` is (in, out/groups, kD,
    kH, kW)."""
    return _conv_transpose(
        3, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


class _ConvTransposeNd(Module):
    """torch's ``_ConvTransposeNd``: ``_n`` spatial axes, ``_conv`` the functional
    form."""

    _n: int
    _conv: Any

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
        name = type(self).__name__
        # torch's checks, in torch's order and words (nn.modules.conv).
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            raise NotImplementedError(
                f"{name}: padding={padding!r} is not supported by jaxblitz.compat "
                "(torch accepts only int padding for transposed convolutions)"
            )
        spread = _ntuple(self._n)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = spread(kernel_size), spread(stride)
        self.padding, self.dilation = spread(padding), spread(dilation)
        self.output_padding, self.groups = spread(output_padding), groups
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
        U(-b, b) with b = 1/sqrt(fan_in), fan_in = out/groups * prod(kernel); the
        bias from the same bound."""
        with no_grad():
            init.kaiming_uniform_(self.weight, a=math.sqrt(5))
            if self.bias is not None:
                fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
                if fan_in:
                    bound = 1 / math.sqrt(fan_in)
                    init.uniform_(self.bias, -bound, bound)

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple[int, ...]:
        """torch's ``_ConvTransposeNd._output_padding``: the output_padding that
        gives ``output_size`` (its spatial sizes, or all of them)."""
        if output_size is None:
            return self.output_padding
        n = self._n
        lead = 2 if input.dim() == n + 2 else 1
        sizes = list(output_size)
        if len(sizes) == lead + n:
            sizes = sizes[lead:]
        if len(sizes) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have "
                f"{n} or {lead + n} elements (got {len(sizes)})"
            )
        low = [
            (input.shape[i + lead] - 1) * self.stride[i]
            - 2 * self.padding[i]
            + self.dilation[i] * (self.kernel_size[i] - 1)
            + 1
            for i in range(n)
        ]
        high = [lo + s - 1 for lo, s in zip(low, self.stride, strict=True)]
        if any(not lo <= m <= hi for m, lo, hi in zip(sizes, low, high, strict=True)):
            raise ValueError(
                f"requested an output size of {sizes}, but valid sizes range "
                f"from {low} to {high} (for an input of {input.shape[2:]})"
            )
        return tuple(m - lo for m, lo in zip(sizes, low, strict=True))

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        return type(self)._conv(
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


class ConvTranspose1d(_ConvTransposeNd):
    _n, _conv = 1, conv_transpose1d


class ConvTranspose2d(_ConvTransposeNd):
    _n, _conv = 2, conv_transpose2d


class ConvTranspose3d(_ConvTransposeNd):
    _n, _conv = 3, conv_transpose3d
