"""Blitz 4, Training a classifier: the JAX kernels behind the tensor transforms.

Each is a pure function of the image array run through compat's autograd funnel,
so a transform of a tensor that requires grad has a ``grad_fn``, as in torch.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.tensor import Tensor

_FLOATS = (jnp.float32, jnp.float64)
_JAX_METHOD = {"bilinear": "linear", "bicubic": "cubic"}
_GRAD_NAME = {  # (mode, antialias) -> torch's grad_fn name
    ("nearest", False): "UpsampleNearest2DBackward0",
    ("nearest-exact", False): "UpsampleNearestExact2DBackward0",
    ("bilinear", False): "UpsampleBilinear2DBackward0",
    ("bilinear", True): "UpsampleBilinear2DAaBackward0",
    ("bicubic", True): "UpsampleBicubic2DAaBackward0",
}
_PAD_NAME = {
    "constant": "ConstantPadNdBackward0",
    "edge": "ReplicationPad2DBackward0",
    "reflect": "ReflectionPad2DBackward0",
    "symmetric": "IndexBackward0",
}


def _nearest_index(n_in: int, n_out: int, exact: bool) -> np.ndarray:
    """torch's ``nearest_idx`` / ``nearest_neighbor_exact_compute_source_index``."""
    if n_out == n_in:
        return np.arange(n_out)
    if n_out == 2 * n_in and not exact:
        return np.arange(n_out) >> 1
    scale = np.float32(n_in) / np.float32(n_out)  # compute_scales_value<float>
    if exact:
        src = ((np.arange(n_out) + 0.5) * np.float64(scale)).astype(np.float32)
    else:
        src = np.arange(n_out).astype(np.float32) * scale
    return np.minimum(np.floor(src).astype(np.int64), n_in - 1)


def _resize_fn(x, *, size, mode, antialias):
    out_dtype = x.dtype
    if out_dtype not in _FLOATS:  # torch: _cast_squeeze_in(img, [float32, float64])
        x = x.astype(jnp.float32)
    if mode in ("nearest", "nearest-exact"):
        rows = _nearest_index(x.shape[-2], size[0], mode == "nearest-exact")
        cols = _nearest_index(x.shape[-1], size[1], mode == "nearest-exact")
        y = x[..., rows[:, None], cols[None, :]]
    else:
        shape = x.shape[:-2] + tuple(size)
        y = jax.image.resize(x, shape, _JAX_METHOD[mode], antialias=antialias)
    if mode == "bicubic" and out_dtype == jnp.uint8:
        y = jnp.clip(y, 0, 255)
    if out_dtype not in _FLOATS:  # torch: _cast_squeeze_out
        if jnp.issubdtype(out_dtype, jnp.integer):
            y = jnp.round(y)
        y = y.astype(out_dtype)
    return y


def resize(img: Tensor, size: list[int], mode: str, antialias: bool) -> Tensor:
    """torch: ``interpolate(img, size, mode, align_corners=False, antialias)``."""
    if (mode, False) not in _GRAD_NAME and (mode, True) not in _GRAD_NAME:
        raise NotImplementedError(
            f"resizing a tensor with interpolation={mode!r} is not supported by "
            "jaxblitz.compat.vision (torch's interpolate has no such mode either); "
            "use bilinear, bicubic, nearest or nearest-exact, or a PIL image"
        )
    if mode == "bicubic" and not antialias:
        raise NotImplementedError(
            "resizing a tensor with bicubic interpolation and antialias=False (torch's "
            "a=-0.75 cubic kernel) is not supported by jaxblitz.compat.vision; use "
            "antialias=True or a PIL image"
        )
    if img.ndim not in (3, 4):
        raise NotImplementedError(
            f"resizing a {img.ndim}-D tensor is not supported; torchvision resizes "
            "(C, H, W) and (N, C, H, W) tensors"
        )
    antialias = antialias and mode in ("bilinear", "bicubic")
    name = _GRAD_NAME[mode, antialias]
    return apply(
        name, _resize_fn, img, size=tuple(size), mode=mode, antialias=antialias
    )


def _pad_fn(x, *, widths, fill, mode):
    pads = ((0, 0),) * (x.ndim - 2) + ((widths[0], widths[1]), (widths[2], widths[3]))
    if mode == "constant":
        return jnp.pad(x, pads, constant_values=jnp.asarray(fill).astype(x.dtype))
    return jnp.pad(x, pads, mode=mode)


def pad(img: Tensor, widths: tuple[int, ...], fill: float, mode: str) -> Tensor:
    """``widths`` (top, bottom, left, right) >= 0 around the last two dims."""
    top, bottom, left, right = widths
    h, w = img.shape[-2:]
    if mode == "reflect" and (max(top, bottom) >= h or max(left, right) >= w):
        raise RuntimeError(
            f"Argument #4: Padding size should be less than the corresponding input "
            f"dimension, but got: padding ({left}, {right}) at dimension "
            f"{img.ndim - 1} of input {list(img.shape)}"
        )
    return apply(_PAD_NAME[mode], _pad_fn, img, widths=widths, fill=fill, mode=mode)


def _flip_fn(x):
    return jnp.flip(x, -1)


def flip_last(img: Tensor) -> Tensor:
    """torch: ``img.flip(-1)``."""
    return apply("FlipBackward0", _flip_fn, img)
