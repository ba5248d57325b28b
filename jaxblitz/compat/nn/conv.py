"""Beyond the Blitz's ``Conv2d``: ``torch.nn.functional.conv1d`` and ``conv3d``.

Both are one ``lax.conv_general_dilated`` of their rank (``_convnd.conv_nd_fn``),
after ``conv2d``'s checks in torch's words for that rank; an unbatched input gets
a batch of one, as in torch. The modules ``Conv1d``/``Conv2d``/``Conv3d`` are in
:mod:`.layers`.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from jaxblitz import kernels, models
from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply, apply_saving
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.nn._args import _by, _ints, _keep, _spread, _static
from jaxblitz.compat.nn._convnd import conv_nd_fn
from jaxblitz.compat.ops._funnel import _tensor
from jaxblitz.compat.tensor import Tensor, _dtype
from jaxblitz.compat.tensor._fresh_layout import keeps_channels_last
from jaxblitz.compat.tensor._tensor_base import TensorBase, _as_int


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
    if _autocast.on:
        return _autocast.run(
            "conv1d", conv1d, input, weight, bias, stride, padding, dilation, groups
        )
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
    if _autocast.on:
        return _autocast.run(
            "conv3d", conv3d, input, weight, bias, stride, padding, dilation, groups
        )
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def _bias(bias, weight, x):  # a conv's bias, zeros where it has none
    return jnp.zeros(weight.shape[:1], x.dtype) if bias is None else bias


def _conv_fn(x, weight, bias, *, stride, padding, precision):
    params = {"weight": weight, "bias": _bias(bias, weight, x)}
    with _precision.scope(precision):
        return models.conv2d(params, x, stride, padding)


# A stride-1 unpadded convolution runs the kernels' im2col formulation (channel-major
# patches and one matmul; NHWC ``patches @ weight`` measured slower, BENCHMARKS.md),
# and keeps the patches for the backward, which needs them for the weight's
# gradient: torch's kernels do not rebuild them either.
def _patches(x, k):  # (B, C, H, W) -> (C*k*k, B, Ho, Wo), channel-major as in lenet
    b, c, h, w = x.shape
    windows = kernels.window_stack(x.transpose(1, 0, 2, 3), k, 2, 1)
    return windows.reshape(c * k * k, b, h - k + 1, w - k + 1)


def _matmul_nchw(patches, weight, bias, precision):
    out_ch = weight.shape[0]
    rows = patches.reshape(patches.shape[0], -1)
    y = jnp.matmul(weight.reshape(out_ch, -1), rows, precision=precision)
    y = y if bias is None else y + bias[:, None]
    return y.reshape(out_ch, *patches.shape[1:]).transpose(1, 0, 2, 3)


def _im2col_forward(x, weight, bias, *, precision):
    patches = _patches(x, weight.shape[2])
    return _matmul_nchw(patches, weight, bias, precision), patches


def _im2col_fn(x, weight, bias, patches, *, precision):
    # The value is the forward's; the weight's gradient reads the saved patches,
    # and the input's gradient flows through a zero-valued term whose primal the
    # backward never needs (XLA drops it), so the patches are not rebuilt.
    y = _matmul_nchw(patches, weight, bias, precision)
    rebuilt = _patches(x, weight.shape[2])
    zero = rebuilt - jax.lax.stop_gradient(rebuilt)
    return y + _matmul_nchw(zero, jax.lax.stop_gradient(weight), None, precision)


def _chunked_fn(x, weight, bias, *, chunk, precision):
    with _precision.scope(precision):
        return kernels.conv2d_chunked(x, weight, _bias(bias, weight, x), chunk)


def _im2col_conv(
    input: Tensor, weight: Tensor, bias: Tensor | None, image_bytes: int
) -> Tensor:
    """A stride-1, unpadded convolution: patches chunked when a batch's would not
    fit in cache, else built whole (and kept for the backward, if any).
    ``image_bytes``: one image's patches' size (conv2d's plan has it)."""
    b = input._shape()[0]
    chunk = kernels.patch_chunk(b, image_bytes)
    precision = _precision.of("conv", input, weight)
    if chunk is not None:
        return apply(
            "ConvolutionBackward0",
            _chunked_fn,
            input,
            weight,
            bias,
            chunk=chunk,
            precision=precision,
        )
    return apply_saving(
        "ConvolutionBackward0",
        _im2col_forward,
        _im2col_fn,
        input,
        weight,
        bias,
        precision=precision,
    )


def _conv_args(stride: Any, padding: Any, dilation: Any, name: str = "conv2d"):
    """conv{n}d's stride, padding and dilation, parsed as torch binds them (their
    values are checked by :func:`_conv_checks`)."""
    n = int(name[-2])
    strides = _spread(_ints(name, "stride", 4, stride), n)
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        pads = padding
    else:
        pads = _spread(_ints(name, "padding", 5, padding), n)
    dilations = _spread(_ints(name, "dilation", 6, dilation), n)
    return strides, pads, dilations


def _conv_pads(pads: Any, weight: Tensor, dilations: tuple) -> tuple:
    """((lo, hi), ...) per spatial axis: 'same' pads the dilated kernel's size - 1,
    the odd one on the high side, as torch does."""
    n = weight.dim() - 2
    if pads == "valid":
        return ((0, 0),) * n
    if pads == "same":
        totals = [d * (k - 1) for d, k in zip(dilations, weight.shape[2:], strict=True)]
        return tuple((t // 2, t - t // 2) for t in totals)
    return tuple((p, p) for p in pads)


def _conv_checks(
    input: Tensor,
    weight: Tensor,
    bias: Any,
    groups: Any,
    strides: tuple,
    pads: Any,
    dilations: tuple,
    output_padding: tuple | None = None,
) -> None:
    """ATen's checks of a (batched) convolution, in ATen's order and words, for
    ``conv2d`` and (``output_padding`` given) ``conv_transpose2d``: groups; each
    int list against the weight's spatial rank; the arguments' signs
    (check_shape_forward); the operands' sizes; for a plain convolution, a
    kernel no larger than the padded input."""
    if _as_int(groups) is None or groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    transposed = output_padding is not None
    args = {"stride": strides, "padding": pads, "dilation": dilations}
    if transposed:
        args["output_padding"] = output_padding
    n = weight.dim() - 2
    for arg, values in args.items():
        if not isinstance(values, str) and len(values) != n:
            raise RuntimeError(
                f"expected {arg} to be a single integer value or a list of {n} values "
                f"to match the convolution dimensions, but got {arg}={list(values)}"
            )
    if not isinstance(pads, str) and min(pads) < 0:
        raise RuntimeError("negative padding is not supported")
    if transposed and min(output_padding) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if min(strides) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilations) < 0:
        raise RuntimeError("dilation should be greater than zero")
    if weight.dim() != input.dim():
        raise RuntimeError(
            f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional "
            f"weight {list(weight.shape)}, but got {input.dim()}-dimensional input of "
            f"size {list(input.shape)} instead"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.dtype is not input.dtype:
            raise RuntimeError(
                f"expected scalar type {input.dtype.scalar_type} but found "
                f"{t.dtype.scalar_type}"
                if transposed
                else f"Input type ({input.dtype.scalar_type}) and {name} type "
                f"({t.dtype.scalar_type}) should be the same"
            )
    _check_conv_devices(input, weight, bias)
    size = list(weight.shape)
    if size[0] < groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at "
            f"dimension 0, but got weight of size {size} instead"
        )
    if size[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at "
            f"dimension 0, but got weight of size [{size}] instead"
        )
    given = "transposed=1" if transposed else f"groups={groups}"
    channels = size[0] if transposed else size[1] * groups
    if input.shape[1] != channels:
        raise RuntimeError(
            f"Given {given}, weight of size {size}, expected input"
            f"{list(input.shape)} to have {channels} channels, but got "
            f"{input.shape[1]} channels instead"
        )
    outputs = size[1] * groups if transposed else size[0]
    if bias is not None and tuple(bias.shape) != (outputs,):
        head = "Given transposed=1, weight" if transposed else "Given weight"
        raise RuntimeError(
            f"{head} of size {size}, expected bias to be 1-dimensional with "
            f"{outputs} elements, but got bias of size {list(bias.shape)} instead"
        )
    if transposed or pads == "same":  # "same" pads the dilated kernel's size - 1
        return
    padded = [
        m + lo + hi
        for m, (lo, hi) in zip(
            input.shape[2:], _conv_pads(pads, weight, dilations), strict=True
        )
    ]
    kernel = [d * (k - 1) + 1 for d, k in zip(dilations, size[2:], strict=True)]
    if any(m < k for m, k in zip(padded, kernel, strict=True)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({_by(padded)}). "
            f"Kernel size: ({_by(kernel)}). Kernel size can't be greater "
            "than actual input size"
        )


def _check_conv_devices(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """torch's check that a convolution's input and parameters are of one type,
    device included: a CPU input to a CUDA model is refused by its type names
    (only where JAX has an accelerator: elsewhere all is on the CPU)."""
    here = _dtype.tensor_device(input) if _dtype.home() is not None else None
    if here is None:
        return
    for name, t in (("weight", weight), ("bias", bias)):
        there = None if t is None else _dtype.tensor_device(t)
        if there is not None and there != here:
            # torch's CPU float32 convolution is oneDNN's, whose check says more
            mkldnn = here.type == "cpu" and input.dtype is _dtype.float32
            raise RuntimeError(
                f"Input type ({input.type()}) and {name} type ({t.type()}) should be "
                "the same"
                + (
                    f" or input should be a MKLDNN tensor and {name} is a dense tensor"
                    if mkldnn
                    else ""
                )
            )


def _conv_sizes_check(input: Tensor, weight: Tensor, dilations: tuple) -> None:
    """ATen's checks after :func:`_conv_checks` for ``conv2d``: an empty image (only
    an empty batch or channel axis is allowed), then the kernel's and dilation's
    sizes (in the words of the kernel ATen picks: a zero dilation selects another)."""
    shape = list(input.shape)
    if input.numel() == 0 and shape[0] and shape[1]:
        raise RuntimeError(
            "Only zero batch or zero channel inputs are supported, but got input "
            f"shape: {shape}"
        )
    kernel = list(weight.shape[2:])
    if len(kernel) == 1:  # ATen runs a 1-d convolution as a 2-d one of height 1
        kernel, dilations = [1, *kernel], (1, *dilations)
    if min(dilations) == 0:
        if min(kernel) <= 0:
            raise RuntimeError(
                f"kernel size should be greater than zero, but got {kernel}"
            )
        raise RuntimeError(
            f"dilation should be greater than zero, but got {list(dilations)}"
        )
    if min(kernel) <= 0 and len(kernel) == 3:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got: {_by(kernel)} (TxHxW)"
        )
    if min(kernel) <= 0:
        raise RuntimeError(
            "kernel size should be greater than zero, but got kernel_height: "
            f"{kernel[0]} kernel_width: {kernel[1]}"
        )


# conv2d's checked plans, by everything the checks read but the devices: the
# shapes and dtypes of input, weight and bias, and stride, padding, dilation
# and groups (only plain ones, see _static). Checks that fail cache nothing.
_PLANS: dict[tuple, Any] = {}
_UNBATCHED = "unbatched"


def _conv2d_plan(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: Any,
) -> Any:
    """conv2d's checks, in torch's order and words (the devices' included), then
    the path the convolution takes: ``_UNBATCHED`` for a 3-d input, else
    ``(strides, pairs, dilations, im2col, nonempty, core, image_bytes)``."""
    strides, pads, dilations = _conv_args(stride, padding, dilation)
    if input.dim() not in (3, 4):
        raise RuntimeError(
            "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input "
            f"of size: {list(input.shape)}"
        )
    if input.dim() == 3:  # torch: an unbatched (C, H, W) image
        return _UNBATCHED
    if pads == "same" and strides != (1, 1):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    _conv_checks(input, weight, bias, groups, strides, pads, dilations)
    _conv_sizes_check(input, weight, dilations)
    pairs = _conv_pads(pads, weight, dilations)
    square = weight.shape[2] == weight.shape[3]
    plain = dilations == (1, 1) and groups == 1 and square
    unpadded = pairs == ((0, 0), (0, 0))
    im2col = plain and strides == (1, 1) and unpadded
    nonempty = bool(input.numel() and weight.numel())
    even = len(set(strides)) == 1 and len({p for pair in pairs for p in pair}) == 1
    image_bytes = None  # one image's patches, for the im2col path
    if im2col:
        b, c, h, w = input.shape
        k = weight.shape[2]
        image_bytes = c * k * k * (h - k + 1) * (w - k + 1) * input.dtype.itemsize
    return strides, pairs, dilations, im2col, nonempty, plain and even, image_bytes


@keeps_channels_last(2)
def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    if _autocast.on:
        return _autocast.run(
            "conv2d", conv2d, input, weight, bias, stride, padding, dilation, groups
        )
    _tensor("conv2d", input)
    key = None
    if (
        isinstance(weight, TensorBase)
        and (bias is None or isinstance(bias, TensorBase))
        and type(groups) is int
        and _static(stride)
        and _static(padding)
        and _static(dilation)
    ):
        key = (
            input._shape(),
            input.dtype,
            weight._shape(),
            weight.dtype,
            None if bias is None else (bias._shape(), bias.dtype),
            stride,
            padding,
            dilation,
            groups,
        )
        plan = _PLANS.get(key)
    if key is None or plan is None:
        plan = _keep(
            _PLANS,
            key,
            _conv2d_plan(input, weight, bias, stride, padding, dilation, groups),
        )
    else:  # the cached checks passed for these; the devices are checked each call
        _check_conv_devices(input, weight, bias)
    if plan is _UNBATCHED:
        return conv2d(
            input.unsqueeze(0), weight, bias, stride, padding, dilation, groups
        ).squeeze(0)
    strides, pairs, dilations, im2col, nonempty, core, image_bytes = plan
    if im2col and kernels.im2col_backend() and nonempty:
        return _im2col_conv(input, weight, bias, image_bytes)
    precision = _precision.of("conv", input, weight)
    if core:  # the core's conv2d (square stride and padding)
        return apply(
            "ConvolutionBackward0",
            _conv_fn,
            input,
            weight,
            bias,
            stride=strides[0],
            padding=pairs[0][0],
            precision=precision,
        )
    return apply(
        "ConvolutionBackward0",
        conv_nd_fn,  # dilated, grouped, asymmetric or non-square: lax's, as it is
        input,
        weight,
        bias,
        stride=strides,
        padding=pairs,
        lhs_dilation=(1, 1),
        dilation=dilations,
        groups=groups,
        precision=precision,
    )
