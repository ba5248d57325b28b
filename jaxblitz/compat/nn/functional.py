"""Blitz 3, "Neural Networks": ``torch.nn.functional`` over the core's layers.

Each function is one recorded op whose JAX function calls :mod:`jaxblitz.models`
(``conv2d``, ``linear``, ``max_pool2d``, ``relu``) or :mod:`jaxblitz.kernels`; the
losses (``cross_entropy``, ``mse_loss`` ...) are :mod:`.losses`'s, with torch's
reductions, weights and checks. A stride-1, unpadded convolution uses
the kernels' im2col formulation (channel-major ``kernels.window_stack`` patches
and one matmul, ``weight @ patches``), faster on CPU than ``lax.conv``, and keeps
its patches for the backward (:func:`~jaxblitz.compat.autograd.graph.apply_saving`),
or, for a batch whose patches would not fit in cache, runs ``kernels.conv2d_chunked``;
2x2 pooling is ``kernels.max_pool2x2``, with torch's gradient on ties.
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import jax
import jax.numpy as jnp

from jaxblitz import kernels, models
from jaxblitz.compat import _not_offered, ops
from jaxblitz.compat.autograd.graph import apply, apply_saving
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.nn._convnd import conv_nd_fn
from jaxblitz.compat.nn.bilinear import bilinear  # noqa: F401
from jaxblitz.compat.nn.ctc import ctc_loss  # noqa: F401
from jaxblitz.compat.nn.distance import (  # noqa: F401 -- torch.nn.functional's
    cosine_similarity,
    pairwise_distance,
    pdist,
)
from jaxblitz.compat.nn.losses import (  # noqa: F401 -- torch.nn.functional's losses
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from jaxblitz.compat.nn.losses_likelihood import (  # noqa: F401
    gaussian_nll_loss,
    kl_div,
    poisson_nll_loss,
)
from jaxblitz.compat.nn.losses_margin import (  # noqa: F401
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from jaxblitz.compat.ops import _funnel
from jaxblitz.compat.ops._funnel import _check_arguments
from jaxblitz.compat.tensor import Tensor, _dtype
from jaxblitz.compat.tensor._tensor_base import _as_int, wrap_dim

# -- pure JAX functions --------------------------------------------------------
# ``precision``: what torch's float32 flags give the op on its device
# (compat.backends._precision); ``_precision.scope`` hands it to the core's layers.


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


def _im2col_conv(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """A stride-1, unpadded convolution: patches chunked when a batch's would not
    fit in cache, else built whole (and kept for the backward, if any)."""
    b, c, h, w = input.shape
    k = weight.shape[2]
    image_bytes = c * k * k * (h - k + 1) * (w - k + 1) * input.dtype.itemsize
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


def _addmm_fn(bias, x, weight_t, *, precision):
    with _precision.scope(precision):
        return models.linear({"weight": weight_t.T, "bias": bias}, x)


def _mm_fn(x, weight_t, *, precision):
    return jnp.matmul(x, weight_t, precision=precision)


def _pool_fn(x, *, kernel_size, stride):
    if stride != kernel_size:  # overlapping windows: reduce_window
        return models.max_pool2d(x, kernel_size, stride)
    if kernel_size == 2:  # the Blitz's MaxPool2d(2, 2): torch's gradient on ties
        if x.ndim == 4:  # pooled channel-major, the layout conv2d's matmul produced
            return kernels.max_pool2x2(x.transpose(1, 0, 2, 3), 2).transpose(1, 0, 2, 3)
        return kernels.max_pool2x2(x, x.ndim - 2)
    # Non-overlapping windows (the Blitz's MaxPool2d(2, 2)): crop, reshape and max,
    # as the core's lenet does; its gradient is much cheaper than reduce_window's.
    k, (h, w) = kernel_size, x.shape[-2:]
    x = x[..., : h // k * k, : w // k * k]
    return x.reshape(*x.shape[:-2], h // k, k, w // k, k).max(axis=(-3, -1))


def _pool_windows(x, fill, *, window, stride, padding, dilation):
    """(..., K, *out): the K = prod(window) strided slices of the padded input, one
    per window element, so that [..., k, i, j] is element k of output (i, j)'s
    window (for a 2-d window; one output axis per window axis)."""
    n = len(window)
    xp = jnp.pad(x, ((0, 0),) * (x.ndim - n) + padding, constant_values=fill)
    outs = [
        (m - d * (k - 1) - 1) // s + 1
        for m, k, s, d in zip(xp.shape[-n:], window, stride, dilation, strict=True)
    ]
    picks = [
        xp[
            (...,)
            + tuple(
                slice(i * d, i * d + s * (o - 1) + 1, s)
                for i, d, s, o in zip(at, dilation, stride, outs, strict=True)
            )
        ]
        for at in itertools.product(*(range(k) for k in window))
    ]
    return jnp.stack(picks, axis=-n - 1)


def _lowest(dtype):
    floating = jnp.issubdtype(dtype, jnp.floating)
    return -float("inf") if floating else int(jnp.iinfo(dtype).min)


def _pool_choice_fn(x, **how):
    axis = -len(how["window"]) - 1
    return jnp.argmax(_pool_windows(x, _lowest(x.dtype), **how), axis=axis)


def _pool_pick_fn(x, choice, **how):
    axis = -len(how["window"]) - 1
    windows = _pool_windows(x, _lowest(x.dtype), **how)
    picked = jnp.take_along_axis(windows, jnp.expand_dims(choice, axis), axis=axis)
    return picked.squeeze(axis)


def _pool_index_fn(choice, *, size, **how):
    axis = -len(how["window"]) - 1
    flat = jnp.arange(math.prod(size), dtype=jnp.int64).reshape(size)
    windows = _pool_windows(flat, -1, **how)
    windows = jnp.broadcast_to(windows, (*choice.shape[: axis + 1], *windows.shape))
    picked = jnp.take_along_axis(windows, jnp.expand_dims(choice, axis), axis=axis)
    return picked.squeeze(axis)


def _relu_fn(x):
    return _funnel._relu(x)


def _softmax_fn(x, *, axis, log):
    flat = x.reshape(1) if x.ndim == 0 else x  # torch: a 0-d tensor is one entry
    y = jax.nn.log_softmax(flat, axis) if log else jax.nn.softmax(flat, axis)
    return y.reshape(x.shape)


# -- torch.nn.functional -------------------------------------------------------------


def _tensor(name: str, input: Any) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )


def _ints(name: str, arg: str, position: int, value: Any) -> tuple[int, ...]:
    """An int or a sequence of ints (stride, padding ...), as torch parses it."""
    if not isinstance(value, tuple | list):
        if _as_int(value) is None:
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be tuple of "
                f"ints, not {type(value).__name__}"
            )
        return (int(value),)
    for i, v in enumerate(value):
        if _as_int(v) is None:
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be tuple of "
                f"ints, but found element of type {type(v).__name__} at pos {i}"
            )
    return tuple(int(v) for v in value)


def _two(values: tuple[int, ...]) -> tuple[int, ...]:
    return values * 2 if len(values) == 1 else values


def _square(name: str, values: tuple) -> int:
    if len(set(values)) != 1:
        raise NotImplementedError(
            f"{name}: only square kernels/strides/padding are supported by "
            f"jaxblitz.compat, got {values}"
        )
    return values[0]


def _spread(values: tuple[int, ...], n: int) -> tuple[int, ...]:
    """One value for each of ``n`` axes, as torch expands a single int."""
    return values * n if len(values) == 1 else values


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


def _by(sizes: Any) -> str:
    return " x ".join(str(n) for n in sizes)


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


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    _tensor("conv2d", input)
    strides, pads, dilations = _conv_args(stride, padding, dilation)
    if input.dim() not in (3, 4):
        raise RuntimeError(
            "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input "
            f"of size: {list(input.shape)}"
        )
    if input.dim() == 3:  # torch: an unbatched (C, H, W) image
        return conv2d(
            input.unsqueeze(0), weight, bias, stride, padding, dilation, groups
        ).squeeze(0)
    if pads == "same" and strides != (1, 1):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    _conv_checks(input, weight, bias, groups, strides, pads, dilations)
    _conv_sizes_check(input, weight, dilations)
    pairs = _conv_pads(pads, weight, dilations)
    square = weight.shape[2] == weight.shape[3]
    plain = dilations == (1, 1) and groups == 1 and square
    unpadded = pairs == ((0, 0), (0, 0))
    im2col = plain and strides == (1, 1) and unpadded and kernels.im2col_backend()
    if im2col and input.numel() and weight.numel():
        return _im2col_conv(input, weight, bias)
    even = len(set(strides)) == 1 and len({p for pair in pairs for p in pair}) == 1
    precision = _precision.of("conv", input, weight)
    if plain and even:  # the core's conv2d (square stride and padding)
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


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    _tensor("linear", input)
    if input.dim() == 0:
        raise RuntimeError(
            "both arguments to linear need to be at least 1D, but they are 0D and "
            f"{weight.dim()}D"
        )
    if input.shape[-1] != weight.shape[1]:
        rows = input.numel() // input.shape[-1] if input.shape[-1] else 1
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} "
            f"and {weight.shape[1]}x{weight.shape[0]})"
        )
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got "
            f"{input.dtype.scalar_type} and {weight.dtype.scalar_type}"
        )
    weight_t = weight.t()  # torch records TBackward0 here too (next_functions)
    precision = _precision.of("matmul", input, weight)
    if bias is None:
        _check_arguments("mm", self=input, mat2=weight)
        return apply("MmBackward0", _mm_fn, input, weight_t, precision=precision)
    _check_arguments("addmm", self=bias, mat1=input, mat2=weight)
    return apply(
        "AddmmBackward0", _addmm_fn, bias, input, weight_t, precision=precision
    )


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    _tensor("relu", input)
    if inplace:
        input._check_inplace()
    out = apply("ReluBackward0", _relu_fn, input)
    return input._inplace(out) if inplace else out


_POOL_ARGS = {  # torch's words for a max_pool2d argument of the wrong length
    "kernel_size": "must either be a single int, or a tuple of two ints",
    "stride": "must either be omitted, a single int, or a tuple of two ints",
    "padding": "must either be a single int, or a tuple of two ints",
    "dilation": "must be either a single int, or a tuple of two ints",
}


def _pool_arg(arg: str, position: int, value: Any) -> tuple[int, ...]:
    values = _ints("max_pool2d", arg, position, value)
    if len(values) not in (1, 2):
        raise RuntimeError(f"max_pool2d: {arg} {_POOL_ARGS[arg]}")
    return _two(values)


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    _tensor("max_pool2d", input)
    kh, kw = _pool_arg("kernel_size", 2, kernel_size)
    no_stride = stride is None or (isinstance(stride, tuple | list) and not stride)
    dh, dw = (kh, kw) if no_stride else _pool_arg("stride", 3, stride)
    ph, pw = _pool_arg("padding", 4, padding)
    lh, lw = _pool_arg("dilation", 5, dilation)
    c, h, w, out = _pool2d_check(
        "max_pool2d", input, (kh, kw), (dh, dw), (ph, pw), (lh, lw), ceil_mode
    )
    plain = (ph, pw, lh, lw) == (0, 0, 1, 1) and not ceil_mode
    square = kh == kw and dh == dw and (dh == kh or input.dim() == 4)
    if plain and square and not return_indices:  # the Blitz's: the fast paths
        return apply(
            "MaxPool2DWithIndicesBackward0", _pool_fn, input, kernel_size=kh, stride=dh
        )
    return _max_pool(
        "MaxPool2DWithIndicesBackward0",
        input,
        (kh, kw),
        (dh, dw),
        (ph, pw),
        (lh, lw),
        (h, w),
        out,
        return_indices,
    )


def _max_pool(
    grad_fn: str,
    input: Tensor,
    k: tuple,
    s: tuple,
    p: tuple,
    d: tuple,
    size: tuple,
    out: list[int],
    return_indices: bool,
) -> Any:
    """Max pooling over the last ``len(k)`` axes (their ``size``; the output's
    ``out``, checked), torch's values, gradient and flat indices."""
    # The padding that makes the windows' floor give torch's size (ceil_mode).
    extra = tuple(
        max(0, (o - 1) * st + dd * (kk - 1) + 1 - (n + 2 * pp))
        for o, n, kk, st, pp, dd in zip(out, size, k, s, p, d, strict=True)
    )
    how = {
        "window": tuple(k),
        "stride": tuple(s),
        "padding": tuple((pp, pp + e) for pp, e in zip(p, extra, strict=True)),
        "dilation": tuple(d),
    }
    # Which window element is the maximum (torch's: the first; a NaN wins), then
    # the values picked there (the gradient goes to that element only, as in
    # torch; JAX's reduce_window has no gradient with dilation) and its flat
    # index in the input's spatial axes.
    choice = apply(grad_fn, _pool_choice_fn, input.detach(), **how)
    values = apply(grad_fn, _pool_pick_fn, input, choice, **how)
    if not return_indices:
        return values
    return values, apply(grad_fn, _pool_index_fn, choice, size=tuple(size), **how)


def _half(n: int) -> int:
    """``n / 2`` rounded toward zero, as C++ divides."""
    return -(-n // 2) if n < 0 else n // 2


def _pool2d_check(
    name: str, input: Tensor, k: tuple, s: tuple, p: tuple, d: tuple, ceil: bool
) -> tuple[int, int, int, list[int]]:
    """ATen's checks for ``max_pool2d`` and ``avg_pool2d``, in ATen's order, then
    ``(C, H, W)`` and the output's ``[H', W']``.

    The input's rank; per axis (H, then W) a zero stride, a negative pad, a pad
    over half the dilated kernel (pooling_output_shape); then pool2d_shape_check:
    kernel, stride, dilation above zero, no empty axis but the batch (a batch of
    0 images pools to 0 images), an output of at least one element.
    """
    if input.dim() not in (3, 4):
        if name == "max_pool2d":
            raise RuntimeError(
                "non-empty 3D or 4D (batch mode) tensor expected for input"
            )
        if input.dim() < 3:  # avg_pool2d reads input.size(-3) first
            n = max(input.dim(), 1)
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}]"
                ", but got -3)"
            )
    _pool_axes_check(k, s, p, d)
    if min(k) <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}"
        )
    if min(s) <= 0:
        raise RuntimeError(
            f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}"
        )
    if min(d) <= 0:
        raise RuntimeError(
            "dilation should be greater than zero, but got dilationH: "
            f"{d[0]} dilationW: {d[1]}"
        )
    shape = tuple(input.shape)
    if input.dim() not in (3, 4) or 0 in shape[-3:]:
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{list(shape)}"
        )
    c, h, w = shape[-3:]
    out = [
        _pool_size(n, kk, ss, pp, dd, ceil)
        for n, kk, ss, pp, dd in zip((h, w), k, s, p, d, strict=True)
    ]
    if min(out) < 1:
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}). Output size is too small"
        )
    return c, h, w, out


def _pool_axes_check(k: tuple, s: tuple, p: tuple, d: tuple) -> None:
    """ATen's pooling_output_shape checks, axis by axis: a zero stride, a negative
    pad, a pad over half the dilated kernel."""
    for kk, ss, pp, dd in zip(k, s, p, d, strict=True):
        if ss == 0:
            raise RuntimeError("stride should not be zero")
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > _half((kk - 1) * dd + 1):
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={pp}, kernel_size={kk} and dilation={dd}"
            )


def _pool_size(n: int, k: int, stride: int, pad: int, dil: int, ceil: bool) -> int:
    """torch's pooling_output_shape: a ceil_mode window must start inside."""
    span = n + 2 * pad - dil * (k - 1) - 1 + (stride - 1 if ceil else 0)
    out = span // stride + 1
    if ceil and (out - 1) * stride >= n + pad:
        out -= 1
    return out


def _implicit_dim(name: str, ndim: int) -> int:
    """torch's legacy implicit softmax dim (deprecated there, with a warning)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the "
        "call to include dim=X as an argument.",
        UserWarning,
        stacklevel=4,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _softmax(name: str, input: Tensor, dim: Any, dtype: Any, log: bool) -> Tensor:
    _tensor(name, input)
    if dim is None:
        dim = _implicit_dim(name, input.dim())
    dim = wrap_dim(dim, input.dim())
    if dtype is not None:  # torch casts the input first
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f'"{name}_lastdim_kernel_impl" not implemented for '
            f"'{input.dtype.scalar_type}'"
        )
    grad_fn = "LogSoftmaxBackward0" if log else "SoftmaxBackward0"
    return apply(grad_fn, _softmax_fn, input, axis=dim, log=log)


def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    # torch's signature: a third positional argument is _stacklevel, not dtype
    return _softmax("softmax", input, dim, dtype, log=False)


def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    # torch's signature: a third positional argument is _stacklevel, not dtype
    return _softmax("log_softmax", input, dim, dtype, log=True)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    return input.flatten(start_dim, end_dim)


sigmoid, tanh = ops.sigmoid, ops.tanh


# Defined beside their modules (each imports this module's helpers, hence last).
from jaxblitz.compat.nn import padding as _padding  # noqa: E402
from jaxblitz.compat.nn.attention import (  # noqa: E402, F401
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
from jaxblitz.compat.nn.channel_shuffle import (  # noqa: E402, F401
    channel_shuffle,
    native_channel_shuffle,
)
from jaxblitz.compat.nn.conv import conv1d, conv3d  # noqa: E402, F401
from jaxblitz.compat.nn.conv_transpose import (  # noqa: E402, F401
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from jaxblitz.compat.nn.dropout import (  # noqa: E402, F401
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from jaxblitz.compat.nn.fold import (  # noqa: E402, F401
    fold,
    unfold,
)
from jaxblitz.compat.nn.functional_activation import (  # noqa: E402, F401
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    logsigmoid,
    mish,
    prelu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    silu,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
    threshold_,
)
from jaxblitz.compat.nn.grid import (  # noqa: E402, F401
    affine_grid,
    grid_sample,
)
from jaxblitz.compat.nn.instancenorm import instance_norm  # noqa: E402, F401
from jaxblitz.compat.nn.local_response import local_response_norm  # noqa: E402, F401
from jaxblitz.compat.nn.max_pooling import (  # noqa: E402, F401
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from jaxblitz.compat.nn.normalization import (  # noqa: E402, F401
    batch_norm,
    group_norm,
    layer_norm,
    normalize,
    rms_norm,
)
from jaxblitz.compat.nn.pixel_shuffle import (  # noqa: E402, F401
    pixel_shuffle,
    pixel_unshuffle,
)
from jaxblitz.compat.nn.pooling import (  # noqa: E402, F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
)
from jaxblitz.compat.nn.shaping import one_hot  # noqa: E402, F401
from jaxblitz.compat.nn.sparse import embedding, embedding_bag  # noqa: E402, F401
from jaxblitz.compat.nn.upsampling import (  # noqa: E402, F401
    interpolate,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)

pad = _padding.pad  # assigned: importing it would clash with _pool_size's 'pad'

# torch names compat does not offer: refused by name, with the reason
__getattr__ = _not_offered.refuser(__name__, "torch.nn.functional")
