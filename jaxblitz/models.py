"""Blitz 3, "Neural Networks": layers and LeNet as pure functions.

A layer is two pure functions, as in ``jax.example_libraries.stax``:
``init_*(key, ...) -> params`` and ``layer(params, x) -> y``. Parameters are nested
dicts named and shaped like PyTorch's ``state_dict`` (``params["conv1"]["weight"]``
is OIHW, a linear weight is ``(out, in)``) and drawn like PyTorch's default
initialisation, so weights move between jaxblitz and PyTorch with no guesswork.

The Blitz's ``Net.forward`` is :func:`lenet`::

    x = max_pool2d(relu(conv2d(params["conv1"], x)))   # (B, 6, 14, 14)
    x = max_pool2d(relu(conv2d(params["conv2"], x)))   # (B, 16, 5, 5)
    x = flatten(x)                                     # (B, 400)
    x = relu(linear(params["fc1"], x))                 # (B, 120)
    x = relu(linear(params["fc2"], x))                 # (B, 84)
    return linear(params["fc3"], x)                    # (B, 10)

:func:`lenet` computes exactly that, but internally channel-major ``(C, B, H, W)``
with each 5x5 convolution written as 25 shifted slices (built in two levels,
with a backward of its own: :func:`_window_stack`) and one matmul
``weight (O, C*25) @ patches (C*25, B*H'*W')`` (im2col) and pooling as the max of
the window corners: on CPU that measured about twice as fast as
``lax.conv_general_dilated`` for these tiny convolutions, and channel-major 10-25 %
faster than NHWC ``patches @ weight`` at every batch size on an AVX2 host;
chunked inference builds conv1 from 5x smaller row patches
(:func:`_conv2d_rows_cm`). ``lenet(..., impl="xla")`` runs the straight-line
version above; tests hold the two equal.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any, Literal

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

Params = dict[str, Any]

# ---------------------------------------------------------------------------
# Initialisation: PyTorch's defaults.
# ---------------------------------------------------------------------------


def _uniform(key: jax.Array, shape: tuple[int, ...], bound: float, dtype) -> jax.Array:
    return jax.random.uniform(key, shape, dtype, minval=-bound, maxval=bound)


def _check_sizes(who: str, **sizes: int) -> None:
    """Sizes are ints; fan-in ones >= 1 (its sqrt is the bound), outputs >= 0."""
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise TypeError(
                f"{who}: {name} must be an int, got {type(value).__name__} {value!r}."
            )
        least = 0 if name.startswith("out_") else 1
        if value < least:
            raise ValueError(f"{who}: {name} must be >= {least}, got {value}.")


def init_linear(
    key: jax.Array, in_features: int, out_features: int, dtype=jnp.float32
) -> Params:
    """``nn.Linear(in_features, out_features)``: weight ``(out, in)``, bias ``(out,)``.

    torch draws both from U(-1/sqrt(in), 1/sqrt(in)) (kaiming_uniform with a=sqrt(5)).
    """
    _check_sizes("init_linear", in_features=in_features, out_features=out_features)
    wkey, bkey = jax.random.split(key)
    bound = 1.0 / math.sqrt(in_features)
    return {
        "weight": _uniform(wkey, (out_features, in_features), bound, dtype),
        "bias": _uniform(bkey, (out_features,), bound, dtype),
    }


def init_conv2d(
    key: jax.Array,
    in_channels: int,
    out_channels: int,
    kernel_size: int,
    dtype=jnp.float32,
) -> Params:
    """``nn.Conv2d(in, out, k)``: weight OIHW ``(out, in, k, k)``, bias ``(out,)``."""
    _check_sizes(
        "init_conv2d",
        in_channels=in_channels,
        out_channels=out_channels,
        kernel_size=kernel_size,
    )
    wkey, bkey = jax.random.split(key)
    bound = 1.0 / math.sqrt(in_channels * kernel_size * kernel_size)
    shape = (out_channels, in_channels, kernel_size, kernel_size)
    return {
        "weight": _uniform(wkey, shape, bound, dtype),
        "bias": _uniform(bkey, (out_channels,), bound, dtype),
    }


def init_lenet(
    key: jax.Array,
    in_channels: int = 1,
    widths: Sequence[int] = (6, 16),
    num_classes: int = 10,
    dtype=jnp.float32,
) -> Params:
    """The Blitz's ``Net()``: 1-channel (section 3) or 3-channel CIFAR (section 4).

    ``widths`` are the two convolutions' output channels; the Blitz's exercise
    "make the network wider" is ``widths=(32, 64)``.

    >>> params = init_lenet(jax.random.key(0), in_channels=3)
    >>> count_params(params)
    62006
    """
    if in_channels < 1:
        raise ValueError(f"in_channels must be >= 1, got {in_channels}.")
    if len(widths) != 2 or min(widths) < 1:
        raise ValueError(f"widths must be two positive ints, got {tuple(widths)}.")
    w1, w2 = (int(w) for w in widths)
    k1, k2, k3, k4, k5 = jax.random.split(key, 5)
    return {
        "conv1": init_conv2d(k1, in_channels, w1, 5, dtype),
        "conv2": init_conv2d(k2, w1, w2, 5, dtype),
        "fc1": init_linear(k3, w2 * 5 * 5, 120, dtype),
        "fc2": init_linear(k4, 120, 84, dtype),
        "fc3": init_linear(k5, 84, num_classes, dtype),
    }


def count_params(params: Params) -> int:
    """Number of scalars in a params tree (torch: ``sum(p.numel() for p in ...)``)."""
    return sum(int(leaf.size) for leaf in jax.tree.leaves(params))


def named_shapes(params: Params) -> dict[str, tuple[int, ...]]:
    """``{"conv1.weight": (6, 1, 5, 5), ...}``: torch's ``state_dict`` names."""
    flat = jax.tree_util.tree_flatten_with_path(params)[0]
    return {
        ".".join(str(getattr(k, "key", k)) for k in path): tuple(leaf.shape)
        for path, leaf in flat
    }


# ---------------------------------------------------------------------------
# Layers (NCHW in, NCHW out, like torch).
# ---------------------------------------------------------------------------


def linear(params: Params, x: jax.Array) -> jax.Array:
    """``nn.Linear``: ``x @ weight.T + bias``; x ``(..., in)`` -> ``(..., out)``."""
    return x @ params["weight"].T + params["bias"]


def conv2d(
    params: Params, x: jax.Array, stride: int = 1, padding: int = 0
) -> jax.Array:
    """``nn.Conv2d``: x ``(B, C, H, W)`` with OIHW weight -> ``(B, O, H', W')``."""
    y = lax.conv_general_dilated(
        x,
        params["weight"],
        window_strides=(stride, stride),
        padding=[(padding, padding), (padding, padding)],
        dimension_numbers=("NCHW", "OIHW", "NCHW"),
    )
    return y + params["bias"][None, :, None, None]


def max_pool2d(x: jax.Array, kernel_size: int = 2, stride: int | None = None):
    """``F.max_pool2d`` on ``(B, C, H, W)`` with no padding (floor, like torch)."""
    stride = kernel_size if stride is None else stride
    return lax.reduce_window(
        x,
        -jnp.inf,
        lax.max,
        (1, 1, kernel_size, kernel_size),
        (1, 1, stride, stride),
        "VALID",
    )


def relu(x: jax.Array) -> jax.Array:
    """``F.relu``, with torch's gradient: 0 at x = 0 (``jnp.maximum``'s is 0.5),
    and a select rather than a tie test in the backward."""
    return jax.nn.relu(x)


def flatten(x: jax.Array) -> jax.Array:
    """``torch.flatten(x, 1)``: keep the batch axis, flatten the rest."""
    return x.reshape(x.shape[0], math.prod(x.shape[1:]))  # -1 fails at B = 0


# ---------------------------------------------------------------------------
# The fast formulation: channel-major im2col (lenet and the compat layer's conv2d).
# ---------------------------------------------------------------------------


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3))
def _window_stack(x: jax.Array, k: int, axis: int, at: int) -> jax.Array:
    """The k x k windows of the spatial axes ``axis, axis + 1`` (valid, stride 1),
    their offsets ``(ki, kj)`` as two new axes at ``at`` of the output, e.g.
    ``(C, B, H, W)``, axis 2, at 1 -> ``(C, k, k, B, Ho, Wo)``.

    Built in two levels (5 column shifts, then 5 row shifts of those): XLA fuses
    each level into one loop, where one 25-way stack became 25 fusions and a
    concatenate. The backward is the matching two-level sum of shifted slices of
    a padded cotangent (JAX's own transpose, 25 pads and adds, became ~10 fusions,
    some recomputing others' sums): 131 -> 62 fusions per training step at batch 4.
    """
    h, w = x.shape[axis : axis + 2]
    cols = jnp.stack(
        [lax.slice_in_dim(x, j, j + w - k + 1, axis=axis + 1) for j in range(k)], at
    )  # kj at `at`
    h_axis = axis + (at <= axis)
    return jnp.stack(
        [lax.slice_in_dim(cols, i, i + h - k + 1, axis=h_axis) for i in range(k)], at
    )  # ki at `at`, kj after it


def _window_stack_fwd(x, k, axis, at):
    return _window_stack(x, k, axis, at), x.shape


def _shift_sum(g: jax.Array, k: int, at: int, axis: int, size: int) -> jax.Array:
    """Transpose of ``k`` shifted slices stacked at ``at``: ``out[..., p, ...] =
    sum_i g[i][..., p - i, ...]`` along ``axis`` (of ``g`` without ``at``)."""
    pad = [(0, 0)] * g.ndim
    pad[axis + (at <= axis)] = (k - 1, k - 1)
    g = jnp.pad(g, pad)
    return sum(
        lax.slice_in_dim(
            lax.index_in_dim(g, i, at, False), k - 1 - i, k - 1 - i + size, axis=axis
        )
        for i in range(k)
    )


def _window_stack_bwd(k, axis, at, shape, g):
    h, w = shape[axis : axis + 2]
    cols = _shift_sum(g, k, at, axis + (at <= axis), h)  # the row shifts undone
    return (_shift_sum(cols, k, at, axis + 1, w),)  # then the column shifts


_window_stack.defvjp(_window_stack_fwd, _window_stack_bwd)


def _windows(x: jax.Array, axis: int) -> tuple[jax.Array, tuple[int, ...]]:
    """Crop the two spatial axes ``axis, axis + 1`` to even sizes and split each
    into (size // 2, 2): the 2x2 windows on axes ``axis + 1`` and ``axis + 3``."""
    h, w = x.shape[axis : axis + 2]
    crop = (slice(None),) * axis + (slice(0, h // 2 * 2), slice(0, w // 2 * 2))
    x = x[crop]
    return x.reshape(*x.shape[:axis], h // 2, 2, w // 2, 2, *x.shape[axis + 2 :]), (
        h,
        w,
    )


def _corner(x6: jax.Array, axis: int, a: int, b: int) -> jax.Array:
    """Element ``(a, b)`` of every 2x2 window of ``x6`` (from :func:`_windows`)."""
    index = (slice(None),) * axis + (slice(None), a, slice(None), b)
    return x6[index]


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2))
def max_pool2x2(x: jax.Array, axis: int = 2, relu_after: bool = False) -> jax.Array:
    """2x2, stride-2 max pooling over axes ``axis, axis + 1`` (floor, like torch),
    optionally followed by ReLU (equal to pooling ``relu(x)``: both are monotone).

    Its gradient goes, as PyTorch's does, to the *first* maximum of each window in
    row-major order (JAX's own ``max`` splits it among ties, which differ from
    torch on flat regions such as a padded image's border), and the backward is
    one elementwise select instead of a reduction and division per window.
    """
    return _max_pool2x2_fwd(x, axis, relu_after)[0]


def _max_pool2x2_fwd(x, axis, relu_after):
    x6, size = _windows(x, axis)
    corners = [_corner(x6, axis, a, b) for a in (0, 1) for b in (0, 1)]
    y = jnp.maximum(jnp.maximum(corners[0], corners[1]), jnp.maximum(*corners[2:]))
    # int8 constants: under x64 (the compat layer) Python ints would make these
    # selects, and the backward's comparison, 64-bit.
    i8 = functools.partial(jnp.asarray, dtype=jnp.int8)
    first = jnp.where(
        corners[0] == y,
        i8(0),
        jnp.where(corners[1] == y, i8(1), jnp.where(corners[2] == y, i8(2), i8(3))),
    )
    if relu_after:
        y = jnp.maximum(y, 0)
        first = jnp.where(y > 0, first, i8(-1))  # -1: no gradient
    return y, (first, size)


def _max_pool2x2_bwd(axis, relu_after, residuals, g):
    first, (h, w) = residuals
    expand = (slice(None),) * axis + (slice(None), None, slice(None), None)
    window = jnp.arange(4, dtype=jnp.int8).reshape(
        2, 1, 2, *(1,) * (first.ndim - axis - 2)
    )  # (2, 1, 2, 1...) -> each corner's position 2*a + b
    dx6 = jnp.where(window == first[expand], g[expand], jnp.zeros((), g.dtype))
    dx = dx6.reshape(*dx6.shape[:axis], h // 2 * 2, w // 2 * 2, *dx6.shape[axis + 4 :])
    if h % 2 or w % 2:  # the rows/columns the floor dropped get no gradient
        pad = [(0, 0)] * dx.ndim
        pad[axis], pad[axis + 1] = (0, h % 2), (0, w % 2)
        dx = jnp.pad(dx, pad)
    return (dx,)


max_pool2x2.defvjp(_max_pool2x2_fwd, _max_pool2x2_bwd)


def _check_images(params: Params, x: jax.Array) -> None:
    in_ch = params["conv1"]["weight"].shape[1]
    expected = f"(B, {in_ch}, 32, 32)"
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        raise TypeError(f"lenet expects an array {expected}; got {type(x).__name__}.")
    if x.ndim != 4:
        hint = (
            " lenet only supports mini-batches: add a batch axis with x[None]"
            " (torch: input.unsqueeze(0))."
            if x.ndim == 3
            else ""
        )
        raise ValueError(
            f"lenet expects a batch of images shaped {expected}; got shape "
            f"{tuple(x.shape)}.{hint}"
        )
    if x.shape[1] != in_ch:
        raise ValueError(
            f"lenet's conv1 expects {in_ch} input channel(s), shape {expected}; got "
            f"{x.shape[1]} channel(s), shape {tuple(x.shape)}. Initialise with "
            f"init_lenet(key, in_channels={x.shape[1]}) or convert the images."
        )
    if tuple(x.shape[2:]) != (32, 32):
        raise ValueError(
            f"lenet expects 32x32 images, shape {expected}; got "
            f"{x.shape[2]}x{x.shape[3]}. Pad or resize them to 32x32 (the data "
            "module pads 28x28 MNIST to 32x32)."
        )
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(
            f"lenet expects floating-point images; got dtype {x.dtype}. Normalise "
            "them first, e.g. x.astype(jnp.float32) / 127.5 - 1."
        )


def _pool_relu(x: jax.Array, axis: int) -> jax.Array:
    """relu(max_pool2d(x)) over axes ``axis, axis + 1``: equal to max_pool2d(relu(x)),
    since both are monotone, with the ReLU on a quarter of the values.

    The max of the four window corners by ``jnp.maximum``, which propagates NaN as
    torch does (XLA's CPU reduce-max returns -inf for an all-NaN window, and ReLU
    would then hide it). JAX splits the gradient among exact ties where torch (and
    :func:`max_pool2x2`) gives it to the first; measured in separate processes this
    makes a training step about 15-20 % faster at batch 4 and 512 than
    :func:`max_pool2x2`, and exact ties are rare in conv outputs.
    """
    x6 = _windows(x, axis)[0]
    top = jnp.maximum(_corner(x6, axis, 0, 0), _corner(x6, axis, 0, 1))
    bottom = jnp.maximum(_corner(x6, axis, 1, 0), _corner(x6, axis, 1, 1))
    return relu(jnp.maximum(top, bottom))


def _conv2d_cm(params: Params, x: jax.Array) -> jax.Array:
    """Valid, stride-1 convolution of channel-major ``x`` ``(C, B, H, W)``.

    ``weight (O, C*k*k) @ patches (C*k*k, B*Ho*Wo)``: the OIHW weight is used as
    it is, and the long axis (images x positions) is the matmul's wide one.
    """
    weight = params["weight"]
    out_ch, in_ch, k, _ = weight.shape
    _, b, h, w = x.shape
    ho, wo = h - k + 1, w - k + 1
    patches = _window_stack(x, k, 2, 1)  # (C, k, k, B, Ho, Wo)
    y = weight.reshape(out_ch, in_ch * k * k) @ patches.reshape(in_ch * k * k, -1)
    return (y + params["bias"][:, None]).reshape(out_ch, b, ho, wo)


def _conv2d_rows_cm(params: Params, x: jax.Array) -> jax.Array:
    """:func:`_conv2d_cm` with 5x smaller patches, for inference: the k column
    shifts of the flattened rows, one matmul for every (output channel, kernel
    row) pair, then the k row shifts of its result summed.

    ``cols[c, j, n] = x.flat[c, n + j]`` (contiguous slices of the flattened
    ``(C, B*H*W)``, which XLA copies fast; positions that wrap into the next row
    feed only output columns that are cut off), ``z = weight (O*k, C*k) @ cols``
    with rows ``(o, i)``, and ``y[o, b, r] = sum_i z[o, i, b, r + i]``. About
    1.5x faster than :func:`_conv2d_cm` for conv1 in chunked inference on CPU; in
    training its weight gradient (a product contracted over every position) is
    no faster, so training keeps :func:`_conv2d_cm`.
    """
    weight = params["weight"]
    out_ch, in_ch, k, _ = weight.shape
    _, b, h, w = x.shape
    n = b * h * w
    flat = jnp.pad(x.reshape(in_ch, n), ((0, 0), (0, k - 1)))
    cols = jnp.stack([flat[:, j : j + n] for j in range(k)], 1)  # (C, k, n)
    rows = weight.transpose(0, 2, 1, 3).reshape(out_ch * k, in_ch * k)  # (o,i)x(c,j)
    z = (rows @ cols.reshape(in_ch * k, n)).reshape(out_ch, k, b, h, w)
    y = sum(z[:, i, :, i : i + h - k + 1, : w - k + 1] for i in range(k))
    return y + params["bias"][:, None, None, None]


def _conv_stack_cm(params: Params, x: jax.Array, rows: bool = False) -> jax.Array:
    """conv1 -> relu -> pool -> conv2 -> relu -> pool on ``(C, B, 32, 32)``;
    ``rows``: conv1 by :func:`_conv2d_rows_cm` (inference)."""
    conv1 = _conv2d_rows_cm if rows else _conv2d_cm
    x = _pool_relu(conv1(params["conv1"], x), 2)  # (6, B, 14, 14)
    return _pool_relu(_conv2d_cm(params["conv2"], x), 2)  # (16, B, 5, 5)


def lenet(
    params: Params,
    x: jax.Array,
    impl: Literal["im2col", "xla"] = "im2col",
    chunk: int | None = None,
) -> jax.Array:
    """The Blitz's ``Net.forward``: images ``(B, C, 32, 32)`` -> logits ``(B, 10)``.

    ``impl="im2col"`` (default) is the fast channel-major formulation
    (``weight @ patches``); ``impl="xla"`` the straight-line one with
    ``lax.conv_general_dilated``. Both give the same logits. ``chunk`` (im2col
    only; must divide B) runs the convolutions ``chunk`` images at a time with
    ``lax.map``, so each chunk's patches stay in cache, and builds conv1 from
    row patches (:func:`_conv2d_rows_cm`): about 10x faster for inference at
    batch 1000 on a 2-core CPU than unchunked (see ``benchmarks/``).
    """
    _check_images(params, x)
    if impl == "xla":
        x = max_pool2d(relu(conv2d(params["conv1"], x)))  # (B, 6, 14, 14)
        x = max_pool2d(relu(conv2d(params["conv2"], x)))  # (B, 16, 5, 5)
        x = flatten(x)  # (B, 400)
    elif impl == "im2col":
        b = x.shape[0]
        if chunk is None or chunk >= b:
            x = _conv_stack_cm(params, x.transpose(1, 0, 2, 3))  # (16, B, 5, 5)
            x = x.transpose(1, 0, 2, 3)  # (B, 16, 5, 5)
        elif b % chunk:
            raise ValueError(f"chunk {chunk} must divide the batch size {b}.")
        else:  # chunks of the same channel-major stack, each chunk's patches in cache
            chunks = x.reshape(b // chunk, chunk, *x.shape[1:])
            chunks = chunks.transpose(0, 2, 1, 3, 4)  # (n, C, c, 32, 32)
            x = lax.map(
                lambda c: _conv_stack_cm(params, c, rows=True), chunks
            )  # (n, 16, c, 5, 5)
            x = x.transpose(0, 2, 1, 3, 4)  # (n, c, 16, 5, 5)
            x = x.reshape(b, *x.shape[2:])  # (B, 16, 5, 5)
        x = flatten(x)  # (B, 400) in torch's (C, H, W) order
    else:
        raise ValueError(f"impl must be 'im2col' or 'xla', got {impl!r}.")
    x = relu(linear(params["fc1"], x))  # (B, 120)
    x = relu(linear(params["fc2"], x))  # (B, 84)
    return linear(params["fc3"], x)  # (B, 10)


def eval_chunk(batch_size: int) -> int | None:
    """The ``chunk`` for fast inference at ``batch_size`` (None: no chunking)."""
    return next((c for c in (50, 40, 25, 20, 10, 8, 5, 4) if batch_size % c == 0), None)


# ---------------------------------------------------------------------------
# Losses.
# ---------------------------------------------------------------------------


def mse_loss(prediction: jax.Array, target: jax.Array) -> jax.Array:
    """``nn.MSELoss()``: mean of squared differences; shapes must match."""
    if prediction.shape != target.shape:
        raise ValueError(
            f"mse_loss needs equal shapes; got prediction {tuple(prediction.shape)} "
            f"and target {tuple(target.shape)}. Reshape the target, e.g. "
            "target.reshape(prediction.shape) (torch: target.view(1, -1))."
        )
    return jnp.mean(jnp.square(prediction - target))


def cross_entropy(
    logits: jax.Array, labels: jax.Array, mask: jax.Array | None = None
) -> jax.Array:
    """``nn.CrossEntropyLoss()``: mean over the batch of -log softmax[label].

    Args:
      logits: ``(B, K)`` unnormalised scores.
      labels: ``(B,)`` integer class indices in ``[0, K)``. Concrete labels out
        of range are a ValueError (torch: "Target 10 is out of bounds."). Inside
        ``jit`` they cannot be checked: an out-of-range label (kept by ``mask``)
        makes the loss nan, never a wrong finite number, so ``fit``'s
        non-finite-loss check stops on it.
      mask: optional ``(B,)`` weights (1 keeps an example, 0 drops it); the mean is
        taken over the kept examples. Used for padded batches.
    """
    if logits.ndim != 2:
        raise ValueError(
            f"cross_entropy expects logits shaped (B, K); got {tuple(logits.shape)}."
        )
    if labels.shape != logits.shape[:1]:
        raise ValueError(
            f"cross_entropy expects labels shaped ({logits.shape[0]},) to match "
            f"logits {tuple(logits.shape)}; got {tuple(labels.shape)}."
        )
    if not jnp.issubdtype(labels.dtype, jnp.integer):
        raise TypeError(
            f"cross_entropy expects integer class labels; got dtype {labels.dtype}."
        )
    k = logits.shape[1]
    bad = _out_of_range(labels, mask, k)
    if bad is not None:
        raise ValueError(
            f"cross_entropy: label {bad} is out of range for {k} classes (labels "
            f"must be in [0, {k})); torch: Target {bad} is out of bounds."
        )
    log_probs = jax.nn.log_softmax(logits, axis=-1)
    picked = jnp.take_along_axis(log_probs, jnp.clip(labels, 0, k - 1)[:, None], -1)
    nll = jnp.where((labels >= 0) & (labels < k), -picked[:, 0], jnp.nan)  # (B,)
    if mask is None:
        return jnp.mean(nll)
    mask = mask.astype(nll.dtype)
    kept = jnp.where(mask != 0, nll * mask, 0)  # padding's label is not checked
    return jnp.sum(kept) / jnp.maximum(jnp.sum(mask), 1)


def _out_of_range(labels: jax.Array, mask: jax.Array | None, k: int) -> int | None:
    """The first kept label outside ``[0, k)``, when the values are known here."""
    try:
        values = np.asarray(labels)
        if mask is not None:
            values = values[np.asarray(mask) != 0]
    except jax.errors.JAXTypeError:  # traced under jit: nothing to look at yet
        return None
    bad = values[(values < 0) | (values >= k)]
    return int(bad[0]) if bad.size else None
