"""Blitz 3, "Neural Networks" (beyond it, as segmentation and super-resolution
models resize feature maps): ``torch.nn.functional.interpolate``, the deprecated
``upsample``, ``upsample_nearest`` and ``upsample_bilinear``, and the modules
``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d``.

Every mode resamples one spatial axis at a time: per output position a few input
positions (taps) and their weights, computed in NumPy exactly as torch's CPU
kernels compute them (the same float32 or float64 arithmetic, so a nearest
neighbour or a tap near a boundary is torch's), then one gather and weighted sum
per axis in JAX, whose gradient is the scatter-add torch's backward does. ``area``
is adaptive average pooling, as in torch.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn import pooling
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._tensor_base import _as_int

_MODES = (
    "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
)
_BOTH = ("nearest", "nearest-exact", "area")
_VALID = {  # input rank -> the modes torch resamples it with
    3: {*_BOTH, "linear"},
    4: {*_BOTH, "bilinear", "bicubic", "lanczos"},
    5: {*_BOTH, "trilinear"},
}
_NEEDS = {"linear": 3, "bilinear": 4, "trilinear": 5}
_LINEAR = {"linear", "bilinear", "trilinear"}
_GRAD_NAME = {
    "nearest": "UpsampleNearest{k}DBackward0",
    "nearest-exact": "UpsampleNearestExact{k}DBackward0",
    "linear": "UpsampleLinear1DBackward0",
    "bilinear": "UpsampleBilinear2DBackward0",
    "trilinear": "UpsampleTrilinear3DBackward0",
    "bicubic": "UpsampleBicubic2DBackward0",
    "bilinear-aa": "UpsampleBilinear2DAaBackward0",
    "bicubic-aa": "UpsampleBicubic2DAaBackward0",
    "lanczos-aa": "UpsampleLanczos2DAaBackward0",
}
_KERNEL = {  # (mode, rank of the input) -> the kernel torch names refusing a dtype
    ("nearest", 4): "upsample_nearest2d_channels_last",
    ("nearest-exact", 4): "upsample_nearest2d_channels_last",
    ("bilinear", 4): "upsample_bilinear2d_channels_last",
    ("bicubic", 4): "compute_indices_weights_cubic",
    ("linear", 3): "compute_indices_weights_linear",
    ("trilinear", 5): "compute_indices_weights_linear",
}

# -- taps and weights (NumPy, torch's arithmetic) ----------------------------------


def _scale(n_in: int, n_out: int, align_corners: bool, scale: float | None, dt):
    """torch's area_pixel_compute_scale<dt>."""
    if align_corners:
        return dt(n_in - 1) / dt(n_out - 1) if n_out > 1 else dt(0)
    if scale is not None and scale > 0:
        return dt(1.0 / scale)
    return dt(n_in) / dt(n_out)


def _source(scale, n_out: int, align_corners: bool, cubic: bool, dt) -> np.ndarray:
    """torch's area_pixel_compute_source_index<dt> for every output index."""
    i = np.arange(n_out)
    if align_corners:
        return scale * i.astype(dt)
    real = (np.float64(scale) * (i + 0.5) - 0.5).astype(dt)
    return real if cubic else np.maximum(real, dt(0))


def _floor(real: np.ndarray, n_in: int) -> np.ndarray:
    """torch: ``min(int64(floorf(real)), n_in - 1)`` (floorf rounds to float)."""
    return np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), n_in - 1)


def _cubic(x, a):
    """torch's cubic convolution kernel (Keys), for |x| in [0, 2)."""
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0))


def _sinc(x):
    return np.where(x == 0, 1.0, np.sin(np.pi * x) / np.where(x == 0, 1, np.pi * x))


_AA_FILTERS = {  # (taps of the filter at scale 1, filter)
    "bilinear": (2, lambda x: np.maximum(1 - np.abs(x), 0)),
    "bicubic": (4, lambda x: _cubic(x, -0.5)),
    "lanczos": (6, lambda x: np.where(np.abs(x) < 3, _sinc(x) * _sinc(x / 3), 0)),
}


def _aa_taps(mode, n_in, n_out, align_corners, given, dt):
    """torch's _compute_indices_min_size_weights_aa: a filter widened by the
    downscale factor, its weights normalised per output."""
    size, fn = _AA_FILTERS[mode]
    scale = _scale(n_in, n_out, align_corners, given, dt)
    support = dt(size * 0.5 * scale if scale >= 1 else size * 0.5)
    width = math.ceil(support) * 2 + 1
    center = (scale * (np.arange(n_out) + 0.5)).astype(dt)
    support, center = np.float64(support), center.astype(np.float64)
    xmin = np.maximum((center - support + 0.5).astype(np.int64), 0)
    xsize = np.minimum((center + support + 0.5).astype(np.int64), n_in) - xmin
    xsize = np.clip(xsize, 0, width)
    j = np.arange(width)
    invscale = 1.0 / scale if scale >= 1 else 1.0
    w = fn((j + xmin[:, None] - center[:, None] + 0.5) * invscale)
    w = np.where(j < xsize[:, None], w, 0).astype(dt)
    total = w.sum(axis=1, keepdims=True)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w)
    return np.minimum(xmin[:, None] + j, n_in - 1), w


def nearest_index(
    mode: str, n_in: int, n_out: int, scale: float | None, dt: Any, kernel: bool
) -> np.ndarray:
    """The input index of each output for the nearest modes. ``kernel``: torch's
    nearest_idx / nearest_exact_idx (float math; the 2-D forward and every
    backward), else its generic kernel's arithmetic in ``dt`` (the 1-D and 3-D
    forward)."""
    i = np.arange(n_out)
    if kernel:
        if mode == "nearest" and n_out == n_in:
            return i
        if mode == "nearest" and n_out == 2 * n_in:
            return i >> 1
        scale = _scale(n_in, n_out, False, scale, np.float32)
        real = scale * (i.astype(np.float32) if mode == "nearest" else i + 0.5)
        return _floor(real, n_in)
    scale = _scale(n_in, n_out, False, scale, dt)
    if mode == "nearest":
        return _floor((scale * i.astype(dt)).astype(dt), n_in)
    return _floor(_source(scale, n_out, False, False, dt) + 0.5, n_in)


def axis_taps(
    mode: str, n_in: int, n_out: int, align_corners: bool, scale: Any, dt: Any
) -> tuple[np.ndarray, np.ndarray]:
    """(index, weight) arrays of shape (n_out, taps) for one axis of an
    interpolating mode; ``dt`` is the dtype torch computes in."""
    if mode.endswith("-aa"):
        return _aa_taps(mode[:-3], n_in, n_out, align_corners, scale, dt)
    if mode in _LINEAR and n_out == n_in:  # torch copies
        i = np.arange(n_out)
        return np.stack([i, i], 1), np.stack([np.ones(n_out), np.zeros(n_out)], 1)
    scale = _scale(n_in, n_out, align_corners, scale, dt)
    real = _source(scale, n_out, align_corners, mode == "bicubic", dt)
    i0 = _floor(real, n_in)
    lam = np.clip(real - i0.astype(dt), 0, 1).astype(dt)
    if mode == "bicubic":  # torch: A = -0.75, taps i0 - 1 .. i0 + 2 clamped
        w = np.stack([_cubic(lam + 1, -0.75), _cubic(lam, -0.75)], 1)
        w = np.concatenate([w, _cubic(np.stack([1 - lam, 2 - lam], 1), -0.75)], 1)
        idx = np.clip(i0[:, None] + np.arange(-1, 3), 0, n_in - 1)
        return idx, w.astype(dt)
    i1 = i0 + (i0 < n_in - 1)
    return np.stack([i0, i1], 1), np.stack([1 - lam, lam], 1).astype(dt)


# -- the pure JAX function -----------------------------------------------------------


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2))
def _split(x, forward, backward):
    """``forward(x)``, differentiated as ``backward`` (both linear in ``x``)."""
    return forward(x)


def _split_fwd(x, forward, backward):
    return forward(x), x


def _split_bwd(forward, backward, x, g):
    return jax.vjp(backward, x)[1](g)


_split.defvjp(_split_fwd, _split_bwd)


def _gather(x, axis, index):
    return jnp.take(x, jnp.asarray(index.reshape(-1), jnp.int32), axis=axis)


def _weighted(x, axis, index, weight):
    taps = _gather(x, axis, index)
    taps = taps.reshape(*x.shape[:axis], *index.shape, *x.shape[axis + 1 :])
    w = jnp.asarray(weight, x.dtype).reshape(index.shape + (1,) * (x.ndim - axis - 1))
    return (taps * w).sum(axis=axis + 1)


def _resample_fn(x, *, mode, sizes, align_corners, scales, kernel_forward):
    out_dtype = x.dtype
    compute = np.float64 if x.dtype == jnp.float64 else np.float32
    nearest = mode in ("nearest", "nearest-exact")
    if not nearest:
        x = x.astype(compute)
    first = x.ndim - len(sizes)
    for axis, n_out, scale in zip(range(first, x.ndim), sizes, scales, strict=True):
        n_in = x.shape[axis]
        if nearest:
            fwd = nearest_index(mode, n_in, n_out, scale, compute, kernel_forward)
            bwd = nearest_index(mode, n_in, n_out, scale, compute, True)
            forward = functools.partial(_gather, axis=axis, index=fwd)
            backward = functools.partial(_gather, axis=axis, index=bwd)
        else:
            idx, w = axis_taps(mode, n_in, n_out, align_corners, scale, compute)
            forward = backward = functools.partial(
                _weighted, axis=axis, index=idx, weight=w
            )
            if mode.endswith("-aa") and n_out == n_in:
                # torch's forward skips an axis that keeps its size; its backward
                # still resamples it with the given scale
                forward, fwd, bwd = (lambda v: v), None, idx
            else:
                fwd = bwd = None
        same = fwd is bwd or (fwd is not None and np.array_equal(fwd, bwd))
        x = forward(x) if same else _split(x, forward, backward)
    return x.astype(out_dtype)


# -- torch.nn.functional -------------------------------------------------------------


def _output_sizes(input, size, scale_factor, dim):
    """torch's interpolate: (output sizes or None, scale factors or None)."""
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, tuple | list):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial "
                    "dimensions, but got input with spatial dimensions of "
                    f"{list(input.shape[2:])} and output size of {size}. Please "
                    "provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format."
                )
            if any(_as_int(s) is None for s in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] "
                    "or Tuple[int, int, int], but got size with types "
                    f"{[type(s) for s in size]}"
                )
            return [int(s) for s in size], None
        return [int(size)] * dim, None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, tuple | list):
        if len(scale_factor) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial "
                "dimensions, but got input with spatial dimensions of "
                f"{list(input.shape[2:])} and scale_factor of shape {scale_factor}. "
                "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                "scale_factor in (s1, s2, ...,sK) format."
            )
        return None, [float(s) for s in scale_factor]
    return None, [float(scale_factor)] * dim


def _check_shapes(input: Tensor, sizes: list[int]) -> None:
    """torch's upsample_{1,2,3}d_shape_check."""
    spatial = list(input.shape[2:])
    names = "DHW"[3 - len(sizes) :]
    if min(spatial) <= 0 or min(sizes) <= 0:
        got_in = ", ".join(f"{a}: {n}" for a, n in zip(names, spatial, strict=True))
        got_out = ", ".join(f"{a}: {n}" for a, n in zip(names, sizes, strict=True))
        joint = " and output" if len(sizes) == 1 else " output"
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input "
            f"({got_in}){joint} ({got_out})"
        )
    if input.shape[1] == 0:  # an empty batch is allowed, nothing else
        raise RuntimeError(
            f"Non-empty {input.dim()}D data tensor expected but got a tensor with "
            f"sizes {list(input.shape)}"
        )


def _area(input: Tensor, sizes: list[int]) -> Tensor:
    pool = getattr(pooling, f"adaptive_avg_pool{len(sizes)}d", None)
    if pool is None:
        raise NotImplementedError(
            f"interpolate: mode='area' on a {input.dim()}-D input is not supported "
            f"by jaxblitz.compat (it needs F.adaptive_avg_pool{len(sizes)}d)"
        )
    return pool(input, sizes)


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims of (N, C, *spatial) ``input`` to ``size``, or by
    ``scale_factor``, with torch's modes, index arithmetic and errors."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"interpolate(): argument 'input' must be Tensor, not "
            f"{type(input).__name__}"
        )
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    sizes, scales = _output_sizes(input, size, scale_factor, dim)
    if recompute_scale_factor and size is not None:
        raise ValueError(
            "recompute_scale_factor is not meaningful with an explicit size."
        )
    if mode == "area" and sizes is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        sizes = [int(n * s) for n, s in zip(input.shape[2:], scales, strict=True)]
        scales = None
    if antialias and not (
        mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4
    ):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
            "and requires a 4-D tensor as input"
        )
    if mode == "lanczos" and input.dim() == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if mode not in _VALID.get(input.dim(), ()):
        if input.dim() in _VALID and mode in _NEEDS:
            raise NotImplementedError(
                f"Got {input.dim()}D input, but {mode} mode needs {_NEEDS[mode]}D input"
            )
        raise NotImplementedError(
            "Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{input.dim()}D) for the modes: {_MODES} (got {mode})"
        )
    if sizes is None:  # torch's compute_output_size
        sizes = [int(n * s) for n, s in zip(input.shape[2:], scales, strict=True)]
    if mode == "area":
        return _area(input, sizes)
    _check_dtype(input, mode, antialias)
    _check_shapes(input, sizes)
    key = f"{mode}-aa" if antialias else mode
    return apply(
        _GRAD_NAME[key].format(k=dim),
        _resample_fn,
        input,
        mode=key,
        sizes=tuple(sizes),
        align_corners=bool(align_corners),
        scales=tuple(scales) if scales is not None else (None,) * dim,
        kernel_forward=dim == 2,
    )


def _check_dtype(input: Tensor, mode: str, antialias: bool) -> None:
    kind = input.dtype.scalar_type
    if input.dtype.is_floating_point and not (
        antialias and kind in ("Half", "BFloat16")
    ):
        return
    if kind == "Byte" and mode in ("nearest", "nearest-exact"):
        return
    if kind == "Byte":  # torch resamples uint8 with int16 fixed-point weights
        raise NotImplementedError(
            f"interpolate: uint8 input with mode='{mode}' is not supported by "
            "jaxblitz.compat (torch's fixed-point uint8 kernel); convert to float"
        )
    name = _KERNEL.get((mode, input.dim()), "compute_indices_weights_nearest")
    name = "compute_index_ranges_weights" if antialias else name
    raise NotImplementedError(f"\"{name}\" not implemented for '{kind}'")


def _deprecated(name: str) -> None:
    warnings.warn(
        f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
        "instead.",
        stacklevel=3,
    )


def upsample(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None):
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None):
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- torch.nn ------------------------------------------------------------------------


class Upsample(Module):
    def __init__(
        self,
        size: Any = None,
        scale_factor: Any = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
