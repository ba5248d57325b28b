"""Blitz 3, "Neural Networks" (beyond it: the sliding blocks behind a convolution):
``torch.nn.functional.unfold`` / ``fold`` (torch's im2col and col2im) and the
``Unfold`` and ``Fold`` modules.

``unfold`` takes one strided slice of the zero-padded input per kernel offset and
stacks them channel-major, as torch's im2col orders its rows; ``fold`` adds each
row back at its offset, so overlapping blocks sum, as torch's col2im does. Each is
one recorded op (``Im2ColBackward0``, ``Col2ImBackward0``).
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.nn.padding import ntuple
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._tensor_base import wrap_dim

_pair = ntuple(2)

# -- pure JAX functions --------------------------------------------------------------


def _offsets(kernel, dilation, stride, blocks):
    """Per kernel offset (ki, kj), the strided slice of the padded input it reads."""
    for ki in range(kernel[0]):
        for kj in range(kernel[1]):
            top, left = ki * dilation[0], kj * dilation[1]
            rows = slice(top, top + stride[0] * (blocks[0] - 1) + 1, stride[0])
            cols = slice(left, left + stride[1] * (blocks[1] - 1) + 1, stride[1])
            yield rows, cols


def _unfold_fn(x, *, kernel, dilation, padding, stride, blocks):
    pads = ((0, 0),) * (x.ndim - 2) + tuple((p, p) for p in padding)
    x = jnp.pad(x, pads)
    rows = [x[..., r, c] for r, c in _offsets(kernel, dilation, stride, blocks)]
    out = jnp.stack(rows, axis=-3)  # (*, C, kh*kw, bh, bw): channel-major rows
    *batch, c, k, _, _ = out.shape
    return out.reshape(*batch, c * k, blocks[0] * blocks[1])


def _fold_fn(x, *, output_size, kernel, dilation, padding, stride, blocks):
    *batch, rows, _ = x.shape
    k = kernel[0] * kernel[1]
    cols = x.reshape(*batch, rows // k, k, *blocks)
    h, w = (n + 2 * p for n, p in zip(output_size, padding, strict=True))
    out = jnp.zeros((*batch, cols.shape[-4], h, w), x.dtype)
    for k, (r, c) in enumerate(_offsets(kernel, dilation, stride, blocks)):
        out = out.at[..., r, c].add(cols[..., k, :, :])
    return out[..., padding[0] : h - padding[0], padding[1] : w - padding[1]]


# -- checks --------------------------------------------------------------------------


def _two(name: str, value: Any) -> tuple[int, int]:
    value = _pair(value)
    if len(value) != 2:
        raise RuntimeError(
            f"It is expected {name} equals to 2, but got size {len(value)}"
        )
    return tuple(int(v) for v in value)


def _block_args(kernel_size, dilation, padding, stride) -> tuple:
    """(kernel, dilation, padding, stride) as pairs, with torch's im2col/col2im
    checks on them."""
    kernel, dilation = _two("kernel_size", kernel_size), _two("dilation", dilation)
    padding, stride = _two("padding", padding), _two("stride", stride)
    for value, what, verb in (
        (kernel, "kernel size", "greater than zero"),
        (dilation, "dilation", "greater than zero"),
        (padding, "padding", "non-negative"),
        (stride, "stride", "greater than zero"),
    ):
        if min(value) < (0 if what == "padding" else 1):
            prefix = {"kernel size": "kernel", "padding": "pad"}.get(what, what)
            raise RuntimeError(
                f"{what} should be {verb}, but got {prefix}_height: {value[0]} "
                f"{prefix}_width: {value[1]}"
            )
    return kernel, dilation, padding, stride


def _blocks(size, kernel, dilation, padding, stride) -> tuple[int, int]:
    return tuple(
        (n + 2 * p - (d * (k - 1) + 1)) // s + 1
        for n, k, d, p, s in zip(size, kernel, dilation, padding, stride, strict=True)
    )


# -- torch.nn.functional -------------------------------------------------------------


def unfold(
    input: Tensor,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:
    """(N, C, H, W) -> (N, C*kh*kw, L): every sliding block as a column."""
    kernel, dilation, padding, stride = _block_args(
        kernel_size, dilation, padding, stride
    )
    shape = list(input.shape)
    if input.dim() < 3:  # torch reads size(2) before checking the rank
        wrap_dim(2, input.dim())
    if input.dim() not in (3, 4) or not all(shape[input.dim() - 3 :]):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {shape}"
        )
    blocks = _blocks(shape[-2:], kernel, dilation, padding, stride)
    if min(blocks) < 1:
        raise RuntimeError(
            f"Given input with spatial size ({shape[-2]}, {shape[-1]}), "
            f"kernel_size=({kernel[0]}, {kernel[1]}), dilation=({dilation[0]}, "
            f"{dilation[1]}), padding=({padding[0]}, {padding[1]}), calculated shape "
            f"of the array of sliding blocks as ({blocks[0]}, {blocks[1]}), but its "
            "components must be at least one."
        )
    if not (input.dtype.is_floating_point or input.dtype.scalar_type == "Bool"):
        raise NotImplementedError(
            f"\"im2col_out_cpu\" not implemented for '{input.dtype.scalar_type}'"
        )
    return apply(
        "Im2ColBackward0",
        _unfold_fn,
        input,
        kernel=kernel,
        dilation=dilation,
        padding=padding,
        stride=stride,
        blocks=blocks,
    )


def fold(
    input: Tensor,
    output_size: Any,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:
    """(N, C*kh*kw, L) -> (N, C, H, W): the columns summed back into place."""
    size = _two("output_size", output_size)
    kernel, dilation, padding, stride = _block_args(
        kernel_size, dilation, padding, stride
    )
    shape = list(input.shape)
    if input.dim() not in (2, 3) or not all(shape[input.dim() - 2 :]):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
            f"size and non-zero dimensions for input, but got: {shape}"
        )
    if shape[-2] % (kernel[0] * kernel[1]):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={shape[-2]} and "
            f"kernel_size=({kernel[0]}, {kernel[1]})."
        )
    blocks = _blocks(size, kernel, dilation, padding, stride)
    if blocks[0] * blocks[1] != shape[-1] or min(blocks) < 1:
        raise RuntimeError(
            f"Given output_size=({size[0]}, {size[1]}), kernel_size=({kernel[0]}, "
            f"{kernel[1]}), dilation=({dilation[0]}, {dilation[1]}), padding="
            f"({padding[0]}, {padding[1]}), stride=({stride[0]}, {stride[1]}), "
            "expected size of input's dimension 2 to match the calculated number of "
            f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, "
            f"but got input.size(2)={shape[-1]}."
        )
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"col2im_out_cpu\" not implemented for '{input.dtype.scalar_type}'"
        )
    return apply(
        "Col2ImBackward0",
        _fold_fn,
        input,
        output_size=size,
        kernel=kernel,
        dilation=dilation,
        padding=padding,
        stride=stride,
        blocks=blocks,
    )


# -- torch.nn ------------------------------------------------------------------------


class Fold(Module):
    def __init__(
        self,
        output_size: Any,
        kernel_size: Any,
        dilation: Any = 1,
        padding: Any = 0,
        stride: Any = 1,
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return fold(
            input,
            self.output_size,
            self.kernel_size,
            self.dilation,
            self.padding,
            self.stride,
        )

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    def __init__(
        self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )
