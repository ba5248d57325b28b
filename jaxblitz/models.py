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

``lenet(params, x, impl=...)`` picks how its two conv -> relu -> pool stages run:
``"xla"`` exactly as above, ``"im2col"`` by the fast formulations of
:mod:`jaxblitz.kernels` (the default on CPU, where they measure faster); tests
hold the two equal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxblitz import kernels

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
    return {name: tuple(leaf.shape) for name, leaf in flatten_params(params).items()}


def path_name(path: tuple) -> str:
    """A pytree path as torch names it: ``("conv1", "weight")`` -> ``"conv1.weight"``
    (dict keys, list indices and attributes alike)."""
    parts = []
    for k in path:
        if isinstance(k, jax.tree_util.DictKey):
            parts.append(str(k.key))
        elif isinstance(k, jax.tree_util.SequenceKey):
            parts.append(str(k.idx))
        elif isinstance(k, jax.tree_util.GetAttrKey):
            parts.append(k.name)
        else:
            parts.append(str(k))
    return ".".join(parts)


def flatten_params(params: Params) -> dict[str, Any]:
    """``{"conv1": {"weight": w}}`` -> ``{"conv1.weight": w}`` (torch's
    ``state_dict`` names), the leaves as they are."""
    flat = jax.tree_util.tree_flatten_with_path(params)[0]
    return {path_name(path): leaf for path, leaf in flat}


def unflatten_params(flat: dict[str, Any]) -> Params:
    """``{"conv1.weight": w}`` -> ``{"conv1": {"weight": w}}``."""
    params: Params = {}
    for name, value in flat.items():
        node = params
        *parents, leaf = name.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return params


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
# LeNet: the Blitz's Net.
# ---------------------------------------------------------------------------

Impl = Literal["im2col", "xla"]


def default_impl() -> Impl:
    """The ``lenet`` implementation for JAX's default backend: the im2col kernels
    on CPU, where they measure faster (BENCHMARKS.md); ``lax.conv`` elsewhere
    until a measurement there says otherwise."""
    return "im2col" if kernels.im2col_backend() else "xla"


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
        advice = (
            "These look channels-last (B, H, W, C), as NumPy, TensorFlow and "
            "PIL store images: transpose them with x.transpose(0, 3, 1, 2) "
            "(torch: x.permute(0, 3, 1, 2))."
            if x.shape[3] == in_ch and x.shape[1:3] == (32, 32)
            else f"Initialise with init_lenet(key, in_channels={x.shape[1]}) or "
            "convert the images."
        )
        raise ValueError(
            f"lenet's conv1 expects {in_ch} input channel(s), shape {expected}; got "
            f"{x.shape[1]} channel(s), shape {tuple(x.shape)}. {advice}"
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


def lenet(
    params: Params,
    x: jax.Array,
    impl: Impl | None = None,
    chunk: int | None = None,
) -> jax.Array:
    """The Blitz's ``Net.forward``: images ``(B, C, 32, 32)`` -> logits ``(B, 10)``.

    ``impl`` picks how the convolutions run, with the same logits either way:
    ``"xla"`` as written below with ``lax.conv_general_dilated``; ``"im2col"`` by
    :func:`jaxblitz.kernels.lenet_features` (channel-major ``weight @ patches``);
    None (default): :func:`default_impl`, by backend. ``chunk`` (im2col only,
    ``"xla"`` ignores it; must divide B) runs the convolutions ``chunk`` images at
    a time, for inference (:func:`jaxblitz.kernels.eval_chunk` picks it).
    """
    _check_images(params, x)
    impl = default_impl() if impl is None else impl
    if impl == "xla":
        x = max_pool2d(relu(conv2d(params["conv1"], x)))  # (B, 6, 14, 14)
        x = max_pool2d(relu(conv2d(params["conv2"], x)))  # (B, 16, 5, 5)
    elif impl == "im2col":  # the same two stages, fused and channel-major
        x = kernels.lenet_features(params, x, chunk)  # (B, 16, 5, 5)
    else:
        raise ValueError(f"impl must be None, 'im2col' or 'xla', got {impl!r}.")
    x = flatten(x)  # (B, 400) in torch's (C, H, W) order
    x = relu(linear(params["fc1"], x))  # (B, 120)
    x = relu(linear(params["fc2"], x))  # (B, 84)
    return linear(params["fc3"], x)  # (B, 10)


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
