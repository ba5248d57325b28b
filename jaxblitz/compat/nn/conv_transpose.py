"""Blitz 3, "Neural Networks" (beyond it: DCGAN's generator):
``torch.nn.functional.conv_transpose1d``/``2d``/``3d`` and ``nn.ConvTranspose1d``/
``2d``/``3d``.

A transposed convolution is the gradient of a convolution with respect to its
input: ``lax.conv_general_dilated`` with the input dilated by ``stride``
(``lhs_dilation``), the kernel flipped and its in/out axes swapped per group, and
``dilation * (k - 1) - padding`` padding on each side (``output_padding`` more on
the high side). On the CPU, a 3-d one that torch runs as ATen's
``slow_conv_transpose3d`` (float64, and float32 where oneDNN does not take it)
is computed in that kernel's order instead, so its rounding is torch's: one
product over input channels gives each kernel tap's "column", and col2vol adds
the columns into the output tap by tap, in row-major order, then the bias.
Gradients come from ``jax.vjp`` of the one function.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np
from jax import lax
from jax import numpy as jnp

from jaxblitz.compat import _autocast, _threads
from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.nn import init
from jaxblitz.compat.nn._args import _by, _ints, _spread
from jaxblitz.compat.nn._convnd import _ntuple, conv_extra_repr, conv_nd_fn
from jaxblitz.compat.nn.conv import _conv_checks
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.ops._funnel import _tensor
from jaxblitz.compat.tensor import Tensor, _dtype, creation


def _conv_transpose_fn(x, weight, bias, *, slow, **options):
    """(N, C_in, *spatial) * (C_in, C_out/groups, *kernel): on the CPU in the order of
    ATen's ``slow_conv_transpose3d`` where ``slow``, elsewhere as a convolution
    (``options``: stride, padding, output_padding, dilation, groups, precision)."""
    conv = partial(_as_convolution, **options)
    if not slow:
        return conv(x, weight, bias)
    col2vol = partial(_columns_added, **options)
    return lax.platform_dependent(x, weight, bias, cpu=col2vol, default=conv)


def _as_convolution(
    x, weight, bias, *, stride, padding, output_padding, dilation, groups, precision
):
    cin, cout_g, *k = weight.shape  # torch: (in, out / groups, *kernel)
    n = len(k)
    w = weight.reshape(groups, cin // groups, cout_g, *k).swapaxes(1, 2)
    w = w.reshape(groups * cout_g, cin // groups, *k)
    w = w[(slice(None), slice(None)) + (slice(None, None, -1),) * n]
    pads = tuple(
        (di * (ki - 1) - pi, di * (ki - 1) - pi + oi)
        for pi, di, ki, oi in zip(padding, dilation, k, output_padding, strict=True)
    )
    return conv_nd_fn(
        x,
        w,
        bias,
        stride=(1,) * n,
        padding=pads,
        lhs_dilation=stride,
        dilation=dilation,
        groups=groups,
        precision=precision,
    )


def _columns_added(
    x, weight, bias, *, stride, padding, output_padding, dilation, groups, precision
):
    """ATen's ``slow_conv_transpose3d`` (any rank): the columns, one product over
    each group's input channels, then col2vol and the bias."""
    batch, cin, *size = x.shape  # (N, C_in, *spatial)
    _, cout_g, *k = weight.shape  # (C_in, C_out/groups, *kernel)
    n, cin_g, taps = len(size), cin // groups, math.prod(k)
    positions = math.prod(size)

    def product(xg, wg):  # (N, C, positions) x (C, C_out * taps), one group's
        # laid out where XLA's CPU dot sums the channels in the order torch's BLAS
        # does: (columns, positions) in float32, (positions, columns) in float64
        if x.dtype == jnp.float32:
            return jnp.einsum("ncp,cm->nmp", xg, wg, precision=precision)
        return jnp.einsum("ncp,cm->npm", xg, wg, precision=precision).swapaxes(1, 2)

    cols = jnp.concatenate(  # torch runs a grouped one group by group
        [
            product(
                x[:, g * cin_g : (g + 1) * cin_g].reshape(batch, cin_g, positions),
                weight[g * cin_g : (g + 1) * cin_g].reshape(cin_g, -1),
            )
            for g in range(groups)
        ],
        axis=1,
    )
    cols = cols.reshape(batch, groups * cout_g, taps, *size)
    # A tap's column lands every ``stride`` along each axis of an extended output
    # (the positions ``input * stride + tap * dilation``, before the padding is
    # cropped): dilated by the stride, it is added at ``tap * dilation``.
    spread = [(m - 1) * s + 1 for m, s in zip(size, stride, strict=True)]
    out = [
        e + (d * (ki - 1)) - 2 * p + o
        for e, d, ki, p, o in zip(
            spread, dilation, k, padding, output_padding, strict=True
        )
    ]
    ext = [
        max(e + d * (ki - 1), p + m)
        for e, d, ki, p, m in zip(spread, dilation, k, padding, out, strict=True)
    ]
    zero = jnp.zeros((), x.dtype)
    dilate = [(0, 0, 0)] * 2 + [(0, 0, s - 1) for s in stride]
    offsets = np.array(list(np.ndindex(*k)), np.int32) * np.array(dilation, np.int32)

    def add_tap(vol, tap):  # torch: col2vol, one tap after another
        offset, col = tap
        at = (np.int32(0),) * 2 + tuple(offset[a] for a in range(n))
        col = lax.pad(col, zero, dilate)
        added = lax.dynamic_slice(vol, at, col.shape) + col
        return lax.dynamic_update_slice(vol, added, at), None

    vol = jnp.zeros((batch, groups * cout_g, *ext), x.dtype)
    vol, _ = lax.scan(add_tap, vol, (offsets, jnp.moveaxis(cols, 2, 0)))
    y = vol[
        (slice(None),) * 2
        + tuple(slice(p, p + m) for p, m in zip(padding, out, strict=True))
    ]
    if bias is None:
        return y
    return y + bias.reshape(-1, *(1,) * n)


def _slow_on_cpu(
    input: Tensor, weight: Tensor, s: tuple, d: tuple, op: tuple, groups: int
) -> bool:
    """Whether torch's CPU runs this 3-d transposed convolution as
    ``slow_conv_transpose3d``: float64 always, float32 where ATen's ``use_mkldnn``
    leaves it (a small single-image ungrouped one, or an output padding not below
    the stride); other dtypes keep the convolution."""
    if len(s) != 3 or input.dtype not in (_dtype.float32, _dtype.float64):
        return False
    if input.dtype is _dtype.float64 or any(
        o >= si for o, si in zip(op, s, strict=True)
    ):
        return True
    batch, channels, depth, height = input.shape[:4]
    kh, kw = weight.shape[-2:]
    worth = (  # torch: "For 1x1 filters, MKLDNN is faster ... when multi-threaded"
        max(s) > 1
        or max(d) > 1
        or batch >= 16
        or kw != 1
        or kh != 1
        or _threads.get_num_threads() > 1
    )
    takes = (  # torch: "for some case, native is faster"
        groups > 1
        or (kw > 3 and kh > 3)
        or batch > 1
        or batch * channels * depth * height > 20480
    )
    return not (worth and takes)


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
    return apply(
        "ConvolutionBackward0",
        _conv_transpose_fn,
        input,
        weight,
        bias,
        stride=s,
        padding=p,
        output_padding=op,
        dilation=d,
        groups=int(groups),
        precision=_precision.of("conv", input, weight),  # torch's flags, this device
        slow=_slow_on_cpu(input, weight, s, d, op, int(groups)),
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
    if _autocast.on:
        return _autocast.run(
            "conv_transpose1d",
            conv_transpose1d,
            input,
            weight,
            bias,
            stride,
            padding,
            output_padding,
            groups,
            dilation,
        )
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
    if _autocast.on:
        return _autocast.run(
            "conv_transpose2d",
            conv_transpose2d,
            input,
            weight,
            bias,
            stride,
            padding,
            output_padding,
            groups,
            dilation,
        )
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
    if _autocast.on:
        return _autocast.run(
            "conv_transpose3d",
            conv_transpose3d,
            input,
            weight,
            bias,
            stride,
            padding,
            output_padding,
            groups,
            dilation,
        )
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
        if len(output_size) == lead + n:
            output_size = output_size[lead:]  # torch's error shows it as sliced
        sizes = list(output_size)
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
                f"requested an output size of {output_size}, but valid sizes range "
                f"from {low} to {high} (for an input of {input.size()[2:]})"
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
