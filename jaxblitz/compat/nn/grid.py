"""Blitz 3, "Neural Networks" (beyond it: the spatial transformer tutorial):
``torch.nn.functional.affine_grid`` and ``grid_sample``.

``affine_grid`` is torch's base grid of normalised coordinates times each theta.
``grid_sample`` follows torch's CPU kernels formula by formula: unnormalise each
coordinate, apply the padding mode (border clips, reflection folds), then read the
2**k corners (bilinear), the nearest point (``nearbyint``) or the 4x4 neighbours
(bicubic, A = -0.75) with zeros outside. Both are one recorded op each
(``AffineGridGeneratorBackward0``, ``GridSampler{2,3}DBackward0``); gradients
for the input and the grid come from those same formulas, with torch's choices
where the math is undefined (a clipped or reflected coordinate's slope at the
edge).
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor.creation import _TORCH_POINTS, torch_linspace

_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDING = {"zeros": 0, "border": 1, "reflection": 2}
_DEFAULT_CHANGED = (
    "Default grid_sample and affine_grid behavior has changed to "
    "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
    "behavior is desired. See the documentation of grid_sample for details."
)

# -- affine_grid ---------------------------------------------------------------------


def _linspace(n: int, align_corners: bool, dtype):
    """torch's linspace_from_neg_one."""
    if n <= 1:
        return jnp.zeros((1,), dtype)
    dt = np.dtype(dtype)
    if dt in _TORCH_POINTS:  # torch's points, bit for bit: a grid on pixel centres
        r = jnp.asarray(torch_linspace(-1, 1, n, dt))
    else:
        r = jnp.linspace(-1, 1, n, dtype=dtype)
    return r if align_corners else r * (n - 1) / n


def _affine_grid_fn(theta, *, spatial, align_corners):
    axes = [_linspace(n, align_corners, theta.dtype) for n in reversed(spatial)]
    coords = jnp.meshgrid(*axes, indexing="xy" if len(spatial) == 2 else "ij")
    if len(spatial) == 3:  # (W, H, D) ij-grids -> (D, H, W)
        coords = [c.transpose(2, 1, 0) for c in coords]
    ones = jnp.ones_like(coords[0])
    base = jnp.stack([*coords, ones], axis=-1).reshape(-1, len(spatial) + 1)
    out = jnp.einsum("pk,njk->npj", base, theta, precision=jax.lax.Precision.HIGHEST)
    return out.reshape(theta.shape[0], *spatial, len(spatial))


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """(N, 2, 3) or (N, 3, 4) thetas -> (N, H, W, 2) or (N, D, H, W, 3) sampling
    coordinates in [-1, 1] for an output of ``size``."""
    if align_corners is None:
        warnings.warn(_DEFAULT_CHANGED, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(
            f"Expected theta to have floating point type, but got {theta.dtype}"
        )
    given, size = size, list(size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(
                "Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                f"{given}. Got {theta.shape}."
            )
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(
                "Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                f"{given}. Got {theta.shape}."
            )
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
            f"transforms, respectively. Got size {given}."
        )
    spatial = tuple(int(n) for n in size[2:])
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size "
            "grids when align_corners=True. This is not an intended use case of "
            "affine_grid. See the documentation of affine_grid for details.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    if size[0] != theta.shape[0]:  # torch's bmm of the base grid and theta
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{size[0]}, {len(spatial) + 1}] but got: [{theta.shape[0]}, "
            f"{len(spatial) + 1}]."
        )
    return apply(
        "AffineGridGeneratorBackward0",
        _affine_grid_fn,
        theta,
        spatial=spatial,
        align_corners=bool(align_corners),
    )


# -- grid_sample ---------------------------------------------------------------------


def _clip(coord, size):
    """torch's clip_coordinates, with its zero slope at and beyond either edge."""
    top = size - 1
    return jnp.where(coord <= 0, 0.0, jnp.where(coord >= top, top, coord))


def _reflect(coord, twice_low, twice_high):
    """torch's reflect_coordinates (and its slope: +-1, +1 at the fold's start)."""
    if twice_low == twice_high:
        return jnp.zeros_like(coord)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    coord = coord - low
    coord = jnp.where(coord < 0, -coord, coord)
    extra = jnp.fmod(coord, span)
    flips = jnp.floor(coord / span)
    return jnp.where(flips % 2 == 0, extra + low, span - extra + low)


def _source(coord, size, padding, align_corners, *, pad=True):
    """torch's grid_sampler_compute_source_index (unnormalise, then the padding
    mode; ``pad=False``: unnormalise only, as bicubic does)."""
    if align_corners:
        coord = (coord + 1) / 2 * (size - 1)
    else:
        coord = ((coord + 1) * size - 1) / 2
    if pad:
        coord = _padded(coord, size, padding, align_corners)
    return coord


def _padded(coord, size, padding, align_corners):
    if padding == "border":
        coord = _clip(coord, size)
    elif padding == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        coord = _clip(coord, size)
    # torch's safe_downgrade_to_int_range: a non-finite coordinate reads -100
    return jnp.where(jnp.isfinite(coord) & (jnp.abs(coord) < 2.0**31), coord, -100.0)


def _read(flat, spatial, index):
    """Values of flat (N, C, P) at per-sample integer coordinates (k arrays of
    (N, Q)); zeros where a coordinate falls outside."""
    inside = jnp.ones(index[0].shape, bool)
    linear = jnp.zeros(index[0].shape, jnp.int32)
    for i, n in zip(index, spatial, strict=True):
        inside &= (i >= 0) & (i < n)
        linear = linear * n + jnp.clip(i, 0, n - 1).astype(jnp.int32)
    values = jnp.take_along_axis(flat, linear[:, None, :], axis=2)  # (N, C, Q)
    return jnp.where(inside[:, None, :], values, 0)


def _cubic_weights(t):
    """torch's get_cubic_upsample_coefficients, A = -0.75."""
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _grid_sample_fn(x, grid, *, mode, padding, align_corners):
    out_dtype = x.dtype
    if x.dtype in (jnp.float16, jnp.bfloat16):  # torch computes in float
        x, grid = x.astype(jnp.float32), grid.astype(jnp.float32)
    n, c, *spatial = x.shape
    out_spatial = grid.shape[1:-1]
    flat = x.reshape(n, c, -1)
    g = grid.reshape(n, -1, len(spatial))
    # grid's last axis is (x, y[, z]): the last spatial axis first
    coords = [g[..., len(spatial) - 1 - a] for a in range(len(spatial))]
    if mode == "bicubic":
        out = _bicubic(flat, spatial, coords, padding, align_corners)
    else:
        src = [
            _source(co, s, padding, align_corners)
            for co, s in zip(coords, spatial, strict=True)
        ]
        if mode == "nearest":  # nearbyint: halves to even
            out = _read(flat, spatial, [jnp.round(s) for s in src])
        else:
            low = [jnp.floor(s) for s in src]
            out = 0
            for corner in itertools.product((0, 1), repeat=len(spatial)):
                index, weight = [], 1
                for s, lo, up in zip(src, low, corner, strict=True):
                    index.append(lo + up)
                    weight = weight * (s - lo if up else lo + 1 - s)
                out = out + _read(flat, spatial, index) * weight[:, None, :]
    return out.reshape(n, c, *out_spatial).astype(out_dtype)


def _bicubic(flat, spatial, coords, padding, align_corners):
    (h, w), (cy, cx) = spatial, coords
    iy = _source(cy, h, padding, align_corners, pad=False)
    ix = _source(cx, w, padding, align_corners, pad=False)
    y0, x0 = jnp.floor(iy), jnp.floor(ix)
    wy, wx = _cubic_weights(iy - y0), _cubic_weights(ix - x0)
    out = 0
    for i in range(4):
        for j in range(4):
            yy = _padded(y0 - 1 + i, h, padding, align_corners)
            xx = _padded(x0 - 1 + j, w, padding, align_corners)
            # torch's get_value_bounded reads the padded integer coordinate
            yy, xx = jax.lax.stop_gradient(yy), jax.lax.stop_gradient(xx)
            value = _read(flat, spatial, [yy, xx])
            out = out + value * (wy[i] * wx[j])[:, None, :]
    return out


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample (N, C, H, W) ``input`` at (N, Ho, Wo, 2) ``grid`` coordinates in
    [-1, 1] (or (N, C, D, H, W) at (N, Do, Ho, Wo, 3))."""
    if _autocast.on:
        return _autocast.run(
            "grid_sampler", grid_sample, input, grid, mode, padding_mode, align_corners
        )
    if mode not in _MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
            f"or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in _PADDING:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
            f"'border', or 'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_DEFAULT_CHANGED, stacklevel=2)
        align_corners = False
    _check_grid(input, grid, mode)
    k = input.dim() - 2
    return apply(
        f"GridSampler{k}DBackward0",
        _grid_sample_fn,
        input,
        grid,
        mode=mode,
        padding=padding_mode,
        align_corners=bool(align_corners),
    )


def _check_grid(input: Tensor, grid: Tensor, mode: str) -> None:
    """torch's grid_sampler checks."""
    for name, t in (("input", input), ("grid", grid)):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"grid_sampler(): argument '{name}' must be Tensor, not "
                f"{type(t).__name__}"
            )
    if input.dtype != grid.dtype:
        raise RuntimeError(
            "grid_sampler(): expected input and grid to have same dtype, but input "
            f"has {input.dtype} and grid has {grid.dtype}"
        )
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but "
            f"got input with sizes {list(input.shape)} and grid with sizes "
            f"{list(grid.shape)}"
        )
    k = input.dim() - 2
    if grid.shape[-1] != k:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {k} in last dimension, but "
            f"got grid with sizes {list(grid.shape)}"
        )
    for i in range(2, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial "
                f"dimensions, but input has sizes {list(input.shape)} with "
                f"dimension {i} being empty"
            )
    if input.dim() not in (4, 5) or input.dim() != grid.dim():
        raise RuntimeError(
            f"grid_sampler(): expected {4 if input.dim() == 4 else 5}D input and grid "
            "with same number of dimensions, but got input with sizes "
            f"{list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if mode == "bicubic" and k != 2:
        raise RuntimeError(
            "grid_sampler(): bicubic interpolation only supports 4D input"
        )
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f'"grid_sampler_{k}d_cpu_kernel_impl" not implemented for '
            f"'{input.dtype.scalar_type}'"
        )
